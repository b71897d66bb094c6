export * from "./types.js";
export * from "./schema.js";
export * from "./blocks.js";
export * from "./files.js";
export * from "./depth.js";
export * from "./errors.js";
export * from "./constants.js";
export * from "./plain.js";
