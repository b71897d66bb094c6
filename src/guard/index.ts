/** The guard (`compact-safe/guard`): the local proxy on the agent's base-URL seam, its core and their types. */
export * from "./types.js";
export * from "./server.js";
export { createGuardCore } from "./core.js";
