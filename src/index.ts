/**
 * compact-safe: compacts a coding agent's conversation history and proves
 * that what must survive did survive (compaction survival contract, schema
 * version 2).
 */
export * from "./model/index.js";
export * from "./contract/index.js";
export * from "./engine/index.js";
export * from "./summarizers/index.js";
export * from "./journal/index.js";
export * from "./formats/index.js";
export * from "./route/index.js";
