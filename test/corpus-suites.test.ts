/**
 * Only the corpus suites read ../shared, so that `npm test` passes on a clone without it: a test that
 * reads the corpus or the peer matrix lives in a file named corpus.test.ts, whose tests are registered
 * through `corpusSuite` (skipped, saying why, when the corpus is missing).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { repoRoot } from "./support.js";

/** Files that read ../shared without being a corpus suite, because they fall back when it is missing. */
const FALLS_BACK = new Set([
  "test/support.ts", // defines the paths and the skip
  "test/fuzz/generate.ts", // generated histories only
  "test/fuzz/crash-campaign.ts", // the bundled example only
  "test/clients/run.ts", // npm run test:clients, not npm test: without the corpus it stops with exit 2, naming it
  "test/browser/run.ts", // npm run test:browser, not npm test: without the corpus it stops with exit 1, naming it
  "test/browser/team.ts", // npm run test:browser's team page, likewise
]);
/** What reading ../shared looks like in the code: the support names, or a path literal into it. */
const READS_SHARED = /\b(corpusDir|corpusFiles|peerMatrix|sharedDir)\b|["'`][^"'`\n]*\.\.\/shared\b/;

function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) sources(p, out);
    else if (e.name.endsWith(".ts")) out.push(relative(repoRoot, p));
  }
  return out;
}

const files = [...sources(join(repoRoot, "src")), ...sources(join(repoRoot, "test"))].sort();

test("only the corpus suites (corpus.test.ts) read ../shared", () => {
  const readers = files.filter(
    (f) =>
      !f.endsWith("/corpus.test.ts") &&
      !FALLS_BACK.has(f) &&
      f !== "test/corpus-suites.test.ts" &&
      READS_SHARED.test(readFileSync(join(repoRoot, f), "utf8")),
  );
  assert.deepEqual(
    readers,
    [],
    "move these tests into their layer's corpus.test.ts, or use a fixture of the repo",
  );
});

test("every corpus suite registers its tests through corpusSuite (skipped, saying why, without the corpus)", () => {
  const suites = files.filter((f) => f.endsWith("/corpus.test.ts"));
  assert.ok(suites.length >= 5, `found ${suites.join(", ")}`);
  for (const f of suites) assert.match(readFileSync(join(repoRoot, f), "utf8"), /\bcorpusSuite\(/, f);
});
