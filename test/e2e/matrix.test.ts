/**
 * One matrix runner: `validate --matrix` prints what the library's
 * `runMatrix` returns, on both matrices (the project's and the reference's
 * peers), and on a copy where some cases are made to disagree.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadMatrix, runMatrix } from "../../src/contract/index.js";
import { peerMatrix as peers, projectMatrix as own } from "../support.js";
import { run, tempDir } from "./helpers.js";

test("validate --matrix and runMatrix give the same verdict on every case of both matrices", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  // A copy with three verdicts flipped: both must name the same three cases.
  const m = JSON.parse(readFileSync(own, "utf8")) as { cases: { id: string; expect: string }[] };
  for (const k of [0, 7, 42]) m.cases[k]!.expect = m.cases[k]!.expect === "pass" ? "fail" : "pass";
  const flipped = join(dir, "flipped.json");
  writeFileSync(flipped, JSON.stringify(m));
  for (const file of [own, peers, flipped]) {
    const lib = runMatrix(loadMatrix(file));
    const cli = await run(["validate", "--matrix", file]);
    const disagree = lib.filter((r) => !r.agrees);
    assert.equal(cli.code, disagree.length === 0 ? 0 : 1, cli.stderr);
    const lines = cli.stdout.trim().split("\n");
    assert.deepEqual(
      lines.filter((l) => l.startsWith("DISAGREE")),
      disagree.map((r) => `DISAGREE ${file} ${r.id}: ${r.problem}`),
    );
    assert.equal(lines.at(-1), `ok ${lib.length - disagree.length} survival-contract fixtures`);
    if (file === flipped)
      assert.deepEqual(
        disagree.map((r) => r.id),
        [0, 7, 42].map((k) => m.cases[k]!.id),
      );
    else assert.equal(disagree.length, 0);
  }
});
