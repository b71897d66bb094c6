/** Test helpers: the fake provider server (for the engine's and the CLI's tests). Not part of the public API. */
export * from "./fake-provider.js";
