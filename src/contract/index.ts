export * from "./markers.js";
export * from "./classify.js";
export * from "./rounds.js";
export * from "./bounds.js";
export * from "./placeholder.js";
export * from "./validate.js";
export * from "./rules.js";
export * from "./matrix.js";
