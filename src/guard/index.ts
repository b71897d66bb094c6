/** The guard (`compact-safe/guard`): the local proxy on the agent's base-URL seam, its core and their types. */
export { createGuardCore } from "./core.js";
export type {
  GuardCore,
  GuardCounts,
  GuardCoreOptions,
  GuardMode,
  GuardOutcome,
  GuardResponse,
  GuardVerdict,
  GuardWire,
  WireRequest,
} from "./types.js";
export type { GuardAgent, SessionIdentity } from "./sessions/session.js";
export { sessionOf, sessionFileName } from "./sessions/session.js";
export { routeOf } from "./reading/wires.js";
export { extractiveAnswer, EXTRACTIVE_ANALYSIS } from "./judging/answer.js";
export * from "./server/server.js";
export { keepYoungGenerationSmall } from "./server/process-heap.js";
