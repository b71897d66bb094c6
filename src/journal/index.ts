export * from "./tree.js";
export * from "./read.js";
export * from "./lock.js";
export * from "./write.js";
export * from "./output-file.js";
