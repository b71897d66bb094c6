#!/usr/bin/env node
// Runs every compiled test file under dist/ with Node's built-in test runner.
// Node 20's `--test` takes no globs, so the file list is collected here.
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { spawnSync } from "node:child_process";

function collect(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) collect(p, out);
    else if (entry.name.endsWith(".test.js")) out.push(p);
  }
  return out;
}

const filter = process.argv.slice(2);
// A compiled test whose source is gone (moved or deleted since the last build: tsc leaves its old output) is not run.
let files = collect("dist", [])
  .filter((f) => existsSync(f.replace(/^dist[\\/]/, "").replace(/\.js$/, ".ts")))
  .sort();
if (filter.length > 0) files = files.filter((f) => filter.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error("run-tests: no compiled test files found under dist/ (run `npm run build` first)");
  process.exit(2);
}
// The corpus suites (corpus.test.ts) need ../shared beside the clone; without it they are skipped, and this
// says so once, at the end. COMPACT_SAFE_REQUIRE_CORPUS=1 makes a missing corpus an error instead.
let corpusMissing = false;
try {
  ({ corpusMissing } = await import(pathToFileURL(resolve("dist", "test", "support.js")).href));
} catch (e) {
  console.error(`run-tests: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
console.log(`run-tests: ${files.length} test files on Node ${process.version} (${process.execPath})`);
const r = spawnSync(process.execPath, ["--test", "--test-reporter=spec", "--test-concurrency=2", ...files], {
  stdio: "inherit",
});
if (corpusMissing) console.log(`run-tests: the corpus suites were SKIPPED: ${corpusMissing}`);
process.exit(r.status ?? 1);
