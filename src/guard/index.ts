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
export type { GuardAgent, SessionIdentity } from "./session.js";
export { sessionOf, sessionFileName } from "./session.js";
export { routeOf } from "./wires.js";
export { extractiveAnswer, EXTRACTIVE_ANALYSIS } from "./answer.js";
export * from "./server.js";
export { keepYoungGenerationSmall } from "./process-heap.js";
