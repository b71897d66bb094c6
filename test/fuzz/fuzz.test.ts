/**
 * The fuzz slice of `npm test`: 1,000 generated and mutated histories through
 * the library in process and 24 through the command line (fixed seed, so a
 * failure reproduces; FUZZ_SEED, FUZZ_CASES and FUZZ_CLI_CASES override).
 * Every outcome must be a clear error (exit 2), a refusal, or a compaction
 * that both validators and the direct checks accept. The campaign runs once;
 * each class of failure is its own test, so the report names what broke, and
 * every failure prints its reproducer. `npm run fuzz` runs 10,000+.
 */
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { formatReport, groupFailures, reproducerLine, runCampaign, type CampaignReport } from "./harness.js";

const seed = Number(process.env.FUZZ_SEED ?? 20261201);
const cases = Number(process.env.FUZZ_CASES ?? 1000);
const cliCases = Number(process.env.FUZZ_CLI_CASES ?? 24);

let report: CampaignReport;
before(async () => {
  report = await runCampaign({
    seed,
    cases,
    cliCases,
    profile: "test",
    caseTimeoutMs: 60_000,
    cliTimeoutMs: 60_000,
  });
  console.log(formatReport(report));
});

/** Fails with one reproducer per group of failures whose class matches. */
function noFailures(match: (cls: string) => boolean) {
  const groups = groupFailures(report.failures.filter((f) => match(f.cls)));
  assert.equal(
    groups.length,
    0,
    `${groups.reduce((n, g) => n + g.count, 0)} failures:\n` +
      groups.map((g) => `${g.count}× ${g.key}\n${reproducerLine(g.first)}`).join("\n"),
  );
}

test(`fuzz (seed ${seed}): every case ran and ended in a known outcome`, () => {
  const total = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
  assert.equal(total(report.inProcess), cases);
  assert.equal(total(report.cli), Math.min(cliCases, Math.max(cases, cliCases)));
  assert.ok(
    report.inProcess.compacted > 0 && report.inProcess.refusal > 0,
    "the slice exercises both outcomes",
  );
});

test("fuzz: no crash or hang in process (import, compaction, validators)", () =>
  noFailures((c) => c.startsWith("crash:") || c.startsWith("hang:")));

test("fuzz: the command line never crashes, hangs, exits outside 0–4 or prints more than one error line", () =>
  noFailures((c) => c.startsWith("cli-") && !c.startsWith("cli-validate-rejects-export")));

test("fuzz: both validators accept every compaction the library returns", () =>
  noFailures((c) => c === "ts-validator" || c === "mjs-validator"));

test("fuzz: every compaction passes the direct checks (protected messages, bounds, one checkpoint, pairing)", () =>
  noFailures((c) => c.startsWith("direct:") && c !== "direct:request-size" && c !== "direct:invented-call"));

test("fuzz: no invented calls in a compaction (kept inputs outside the protected round may be redacted)", () =>
  noFailures((c) => c === "direct:invented-call"));

test("fuzz: the exported request is never larger after a compaction", () =>
  noFailures((c) => c === "direct:request-size"));

test("fuzz: validate(export(before), export(after)) passes for every compaction", () =>
  noFailures((c) => c.startsWith("export-validate:") || c.startsWith("cli-validate-rejects-export")));
