/** The figures `npm run bench` must reach (see the table at the end of its report). */
export const TARGETS = {
  /** Cold compaction against `JSON.parse` of the same session: at most this at the median of the corpus sessions… */
  corpusRatioMedian: 1.0,
  /** …and at most this on every one. */
  corpusRatioMax: 2.0,
  /** Growth per 10x (synthetic 1k→10k→100k): at most this times the growth of `JSON.parse` of the same inputs. */
  growthOverParse: 1.25,
  rssFactor: 3,
  rssBaseMb: 100,
  mape: 0.1,
  paths: 1,
  users: 1,
  errors: 0.9,
};
