/**
 * The extractive summarizer lives in `./extractive/` (collect, fold, render
 * and the sections table). This module re-exports it, so that imports of
 * `summarizers/extractive.js` keep working.
 */
export * from "./extractive/index.js";
