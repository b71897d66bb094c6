/**
 * One matrix runner: `validate --matrix` prints what the library's
 * `runMatrix` returns, on the project's matrix and on a copy where some cases
 * are made to disagree (the peers' matrix is checked by the corpus suite).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectMatrix } from "../support.js";
import { cliMatchesRunMatrix, tempDir } from "./helpers.js";

test("validate --matrix and runMatrix give the same verdict on every case (the project's matrix, and a copy with flipped verdicts)", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  assert.deepEqual(await cliMatchesRunMatrix(projectMatrix), []);
  const m = JSON.parse(readFileSync(projectMatrix, "utf8")) as { cases: { id: string; expect: string }[] };
  for (const k of [0, 7, 42]) m.cases[k]!.expect = m.cases[k]!.expect === "pass" ? "fail" : "pass";
  const flipped = join(dir, "flipped.json");
  writeFileSync(flipped, JSON.stringify(m));
  assert.deepEqual(
    await cliMatchesRunMatrix(flipped),
    [0, 7, 42].map((k) => m.cases[k]!.id),
  );
});
