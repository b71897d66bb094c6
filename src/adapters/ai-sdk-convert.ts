/**
 * The AI SDK conversion lives in the formats layer (the command line reads
 * `ModelMessage[]` files with it, as `--format ai-sdk`); the adapter uses it
 * from there.
 */
export * from "../formats/common/ai-sdk-convert.js";
