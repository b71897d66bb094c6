export * from "./tree.js";
export * from "./read.js";
