/** The recall server over a session's saved history (`compact-safe mcp`); the MCP SDK is loaded only by `server.ts`. */
export * from "./find.js";
export * from "./history.js";
export * from "./source.js";
export * from "./tools.js";
