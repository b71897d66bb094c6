/**
 * What `compact-safe hook AGENT` loads, in one module: the hook command and the output setup. `npm run
 * build` bundles it with everything it imports into dist/src/cli/hook-bundle.js (scripts/bundle-hook.mjs),
 * which main.ts loads when it is there.
 */
export { runHookCommand } from "./commands/hook.js";
export { ignoreClosedPipes } from "./output.js";
