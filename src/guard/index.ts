/** The guard's library entry: the core the proxy calls, and its types. */
export { createGuardCore } from "./core.js";
export type {
  GuardCore,
  GuardCoreOptions,
  GuardMode,
  GuardOutcome,
  GuardVerdict,
  GuardWire,
  WireRequest,
} from "./types.js";
export type { GuardAgent, SessionIdentity } from "./session.js";
export { sessionOf, sessionFileName } from "./session.js";
export { routeOf } from "./wires.js";
