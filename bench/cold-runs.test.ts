import { test } from "node:test";
import assert from "node:assert/strict";
import { coldOverRuns, type ColdRun } from "./measure.js";
import { coldBars, growthBars, rowChecks } from "./report.js";
import type { Measurement } from "./measure.js";

/** One fresh process's cold figures with the given ratio (parse 10 ms). */
const proc = (ratio: number, first_ms = 40): ColdRun => ({
  first_ms,
  first_parse_ms: 10,
  parse_ms: 10,
  cold_ms: 10 * ratio,
  ratio,
});

test("coldOverRuns: each figure the median of the runs' figures (each run the median of its processes)", () => {
  const runs = [
    [proc(0.8), proc(0.9), proc(1.6)], // run 1: 0.9
    [proc(1.3), proc(1.2), proc(1.4)], // run 2 (a loaded minute): 1.3
    [proc(0.7), proc(0.95), proc(0.6)], // run 3: 0.7
  ];
  const c = coldOverRuns(runs);
  assert.deepEqual(c.cold_ratio_runs, [0.9, 1.3, 0.7]);
  assert.equal(c.cold_ratio, 0.9);
  assert.equal(c.cold_ms, 9);
  assert.equal(c.cold_parse_ms, 10);
  assert.equal(c.first_ms, 40);
  assert.equal(c.first_ratio, 4);
  // One run: its own figures.
  assert.deepEqual(coldOverRuns([runs[1]!]).cold_ratio_runs, [1.3]);
  assert.equal(coldOverRuns([runs[1]!]).cold_ratio, 1.3);
  assert.throws(() => coldOverRuns([]), /no runs/);
});

test("rowChecks: the cold bar is judged on the median of the runs, and names them", () => {
  const m = {
    ok: true,
    valid: true,
    path: "summary",
    error: null,
    cold_ratio: 0.9,
    cold_ratio_runs: [0.9, 1.3, 0.7],
    cold_ratio_target: 1,
    peak_rss_mb: 90,
    rss_limit_mb: 200,
    estimator_fast: null,
    retention: null,
    kind: "corpus",
  } as unknown as Measurement;
  const cold = rowChecks(m).find((c) => c.name === "cold ratio")!;
  assert.equal(cold.pass, true);
  assert.equal(cold.value, "0.90 (median of runs 0.90, 1.30, 0.70)");
  const over = rowChecks({ ...m, cold_ratio: 1.3, cold_ratio_runs: [1.3, 1.2, 1.4] }).find(
    (c) => c.name === "cold ratio",
  )!;
  assert.equal(over.pass, false);
});

const corpusRow = (input: string, cold_ratio: number) =>
  ({ input, kind: "corpus", cold_ratio }) as unknown as Measurement;
const synRow = (messages: number, cold_ms: number, cold_parse_ms: number) =>
  ({
    input: `s${messages}`,
    kind: "synthetic",
    messages,
    bytes: messages * 100,
    cold_ms,
    cold_parse_ms,
  }) as unknown as Measurement;

test("coldBars: the median of the corpus sessions at most 1.0x, the largest at most 2.0x", () => {
  const ok = coldBars([corpusRow("a", 0.6), corpusRow("b", 0.9), corpusRow("c", 1.9), synRow(1000, 99, 1)]);
  assert.deepEqual(ok.cold, { cold_ratio_median: 0.9, cold_ratio_max: 1.9 });
  assert.deepEqual(
    ok.coldChecks.map((c) => c.pass),
    [true, true],
  );
  const over = coldBars([corpusRow("a", 0.6), corpusRow("b", 1.1), corpusRow("c", 2.1)]);
  assert.deepEqual(
    over.coldChecks.map((c) => c.pass),
    [false, false],
  );
});

test("growthBars: growth per 10x judged against 1.25x JSON.parse's growth on the same inputs", () => {
  const { steps } = growthBars([synRow(1000, 1, 1), synRow(10_000, 12, 10), synRow(100_000, 160, 120)]);
  assert.deepEqual(
    steps.map((s) => [s.name, s.growth, s.parse_growth, s.pass]),
    [
      ["time 1k->10k", 12, 10, true],
      ["time 10k->100k", 160 / 12, 12, true],
    ],
  );
  const slow = growthBars([synRow(1000, 1, 1), synRow(10_000, 13, 10)]).steps[0]!;
  assert.equal(slow.limit, 12.5);
  assert.equal(slow.pass, false);
});
