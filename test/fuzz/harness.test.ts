/** The fuzz harness itself: cases are reproducible, and hangs and bad exits are caught. */
import { test } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { makeCase } from "./generate.js";
import { processProblems } from "./cli.js";
import { runCampaign } from "./harness.js";
import { caseSeed } from "./rng.js";

test("a case is a pure function of (seed, index, profile)", () => {
  for (const i of [0, 1, 7, 123]) {
    const a = makeCase(42, i, "test");
    const b = makeCase(42, i, "test");
    assert.ok(a.bytes.equals(b.bytes), `case ${i} differs between two runs`);
    assert.deepEqual({ ...a, bytes: null }, { ...b, bytes: null });
  }
  assert.ok(!makeCase(42, 0, "test").bytes.equals(makeCase(43, 0, "test").bytes));
});

test("a case that does not finish in time is a hang failure, and the campaign goes on", async (t) => {
  // Seed 7740's first three cases are generated histories (the same with or without the corpus), two of them
  // over 100 KB, so that a case outlasts the 1 ms limit however fast the machine.
  // Its reproducers go to a folder of the test's own, removed after (nothing left in the temp folder).
  const dir = mkdtempSync(join(tmpdir(), "cs-fuzz-harness-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = await runCampaign({
    seed: 7740,
    cases: 3,
    cliCases: 0,
    profile: "test",
    caseTimeoutMs: 1,
    reproducerDir: join(dir, "compact-safe-fuzz"),
  });
  assert.equal(
    r.inProcess.failure + r.inProcess.compacted + r.inProcess.refusal + r.inProcess["clear-error"],
    3,
  );
  assert.ok(
    r.failures.some((f) => f.cls === "hang:in-process"),
    JSON.stringify(r.failures),
  );
  assert.ok(r.failures.every((f) => f.file.includes("compact-safe-fuzz")));
});

test("process checks: hang, signal, exit code, stack trace, error lines, raw JavaScript errors", () => {
  const run = (o: Partial<Parameters<typeof processProblems>[1]>) =>
    processProblems("x", { code: 0, signal: null, stdout: "", stderr: "", timedOut: false, ...o }, 1000).map(
      (f) => f.cls,
    );
  assert.deepEqual(run({}), []);
  assert.deepEqual(run({ code: 2, stderr: "compact-safe: a.json: not JSON\n" }), []);
  assert.deepEqual(run({ timedOut: true, code: null, signal: "SIGKILL" }), ["cli-hang:x"]);
  assert.deepEqual(run({ code: null, signal: "SIGSEGV" }), ["cli-crash:x"]);
  assert.deepEqual(run({ code: 7, stderr: "compact-safe: boom\n" }), ["cli-exit:x"]);
  assert.deepEqual(run({ code: 2, stderr: "compact-safe: boom\n    at f (file.js:1:1)\n" }), [
    "cli-stack:x",
    "cli-error-lines:x",
  ]);
  assert.deepEqual(run({ code: 1, stderr: "compact-safe: one\ncompact-safe: two\n" }), ["cli-error-lines:x"]);
  assert.deepEqual(
    run({ code: 2, stderr: "compact-safe: Cannot read properties of undefined (reading 'trim')\n" }),
    ["cli-raw-error:x"],
  );
  assert.deepEqual(
    run({ code: 2, stderr: "compact-safe: warning: x:3: bad line (skipped)\ncompact-safe: no entries\n" }),
    [],
  );
});

test("campaigns with neighbouring seeds run different cases", () => {
  const a = new Set(Array.from({ length: 10_000 }, (_, i) => caseSeed(20261202, i)));
  const shared = Array.from({ length: 10_000 }, (_, i) => caseSeed(20261203, i)).filter((s) => a.has(s));
  assert.equal(shared.length, 0);
});
