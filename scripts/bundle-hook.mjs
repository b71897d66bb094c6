#!/usr/bin/env node
// Part of `npm run build`, after tsc: bundles what the `hook` command loads (dist/src/cli/hook-entry.js and
// the project modules it imports) into one file, dist/src/cli/hook-bundle.js, which `compact-safe hook AGENT`
// loads instead of its ~40 modules. An agent runs the hook on every compaction; resolving and loading the
// modules one by one cost about 50 ms of its CPU time (measured with bench:host's hook rows). Packages are
// left external (the hook uses none); the bundle sits in dist/src/cli, at the depth of every src module, so
// a path one of them makes from `import.meta.url` (the prompts, the templates) resolves as it does unbundled.
import { build } from "esbuild";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const entry = join(root, "dist", "src", "cli", "hook-entry.js");
if (!existsSync(entry)) {
  console.error(`bundle-hook: ${entry} is missing (run tsc first)`);
  process.exit(2);
}
await build({
  entryPoints: [entry],
  outfile: join(root, "dist", "src", "cli", "hook-bundle.js"),
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  logLevel: "warning",
  legalComments: "none",
});
