/** The figures `npm run bench` must reach (see the table at the end of its report). */
export const TARGETS = {
  corpusRatio: 1.0,
  synthetic100kRatio: 1.0,
  scaling: 12,
  rssFactor: 3,
  rssBaseMb: 100,
  mape: 0.1,
  paths: 1,
  users: 1,
  errors: 0.9,
};
