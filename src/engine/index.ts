export * from "./tokens.js";
export * from "./replacement.js";
export * from "./prune.js";
export * from "./pressure.js";
export * from "./compact.js";
export * from "../redact/redact.js";
