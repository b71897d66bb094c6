/**
 * The benchmark: `npm run bench` (a table) or `npm run bench -- --json` (one
 * JSON object per measured input, one per line, then a summary object).
 *
 * Inputs: every session file of the corpus (all formats, through the
 * importers; the live context of the active path is compacted) and synthetic
 * sessions of 1k, 10k and 100k messages (`synthetic.ts`). Each input is
 * measured in its own child process (this script run with `--child SPEC`), so
 * that peak RSS figures do not mix.
 *
 * Per input (`measure.ts`), `compactMessagesSafe` with the extractive
 * summarizer and a target of 30 % of the estimated size, timed (in CPU time of
 * the process: a shared machine's load stretches wall-clock time) against
 * `JSON.parse` of the same input's JSON text (JSONL: every line; synthetic:
 * `JSON.stringify(messages)`; the text is decoded before timing):
 * - cold, the headline (`cold_ms`, `cold_parse_ms`, `cold_ratio`): a
 *   compaction of freshly parsed messages, nothing of them cached (what every
 *   command-line run and a host that rebuilds its history each turn pay), in
 *   3 fresh processes (`--cold SPEC`), 7 timed pairs of parse and compaction
 *   each, interleaved, after the code is at JIT steady state (untimed runs
 *   on fresh copies, up to 500 within about 1.5 s); the medians. `first_ms`
 *   is a process's very first compaction, which also compiles the library's
 *   code (a start-up cost whatever the size), reported beside it; the growth
 *   per 10x is read from the cold figures. All this is one run; the cold
 *   figures are measured in 3 runs (`--runs N`), every input in turn before
 *   the next run, and each figure judged is the median of the runs'
 *   figures (`cold_ratio_runs` lists them): from one run to the next
 *   on this shared machine the ratio of a small session moves by a fifth to
 *   a half, so one run alone judges the machine's minute as much as the
 *   code;
 * - warm (`warm_ms`, `parse_ms`, `warm_ratio`): the median of repeated
 *   compactions of the same messages at JIT steady state (the same untimed
 *   warm-up first), against the median parse;
 * - `peak_rss_mb` (the child's `maxRSS` after reading, importing, parsing and
 *   compacting the input once, before the o200k tokenizer is loaded for the
 *   estimator comparison) against 3 × input size + 100 MB;
 * - tokens before and after, path, ok, and whether the replacement passes
 *   `validateSurvivalContract`;
 * - for Claude Code files, the estimator error against the billed prompts
 *   (`billed.ts`), fast and o200k;
 * - fact retention over the summarized span (`retention.ts`).
 *
 * The bars (`targets.ts`; checked, summarized and printed by `report.ts`):
 * the cold compaction at most 1.0x parse at the median of the corpus sessions
 * and at most 2.0x on every one; its growth per 10x (synthetic 1k→10k→100k)
 * at most 1.25x the growth of `JSON.parse` of the same inputs in the same run;
 * peak RSS, estimator error, retention, a valid result. The `--json` summary
 * carries `cold_ratio_median`, `cold_ratio_max` and, per step of `scaling`,
 * `growth` and `parse_growth`. Exits 1 when a bar is missed, else 0.
 *
 * Options: `--json`, `--only <substring>` (inputs whose name contains it),
 * `--no-synthetic`, `--sizes 1000,10000` (synthetic sizes), `--runs N` (cold
 * runs, default 3).
 */
import { fileURLToPath } from "node:url";
import {
  coldOverRuns,
  inputSpecs,
  measure,
  measureCold,
  runChild,
  runCold,
  type ChildFailure,
  type ColdRun,
  type Measurement,
} from "./measure.js";
import { measurementLine, printReport, summarize } from "./report.js";

/** Runs of the cold measurement over every input (`--runs N`): each input's cold bar is judged on their median. */
export const COLD_ROUNDS = 3;

async function parent(args: string[]): Promise<void> {
  const json = args.includes("--json");
  const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined;
  const sizes = args.includes("--sizes")
    ? args[args.indexOf("--sizes") + 1]!.split(",").map(Number)
    : args.includes("--no-synthetic")
      ? []
      : [1_000, 10_000, 100_000];
  const rounds = args.includes("--runs") ? Number(args[args.indexOf("--runs") + 1]) : COLD_ROUNDS;
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 9) {
    console.error("bench: --runs needs an integer from 1 to 9");
    process.exitCode = 2;
    return;
  }
  const specs = inputSpecs(sizes, only);
  const entry = fileURLToPath(import.meta.url);
  const warms = new Map<string, Measurement>();
  /** Per input, the cold processes of each run (a run: COLD_RUNS fresh processes, every input in turn). */
  const colds = new Map<string, ColdRun[][]>();
  const failures: ChildFailure[] = [];
  const started = Date.now();
  // The first run measures everything; the later ones the cold figures again, every input in
  // turn, so that a loaded minute of this shared machine falls on one run of an input, not all.
  for (let round = 0; round < rounds; round++) {
    for (const spec of specs) {
      if (round > 0 && !warms.has(spec)) continue;
      const name = spec.replace(/^file:.*\//, "");
      if (!json)
        process.stderr.write(`measuring ${name}${rounds > 1 ? ` (run ${round + 1}/${rounds})` : ""} ...\n`);
      if (round === 0) {
        const warm = runChild(entry, spec);
        if ("failed" in warm) {
          failures.push(warm);
          if (json) console.log(JSON.stringify(warm));
          continue;
        }
        warms.set(spec, warm);
      }
      const cold = runCold(entry, spec);
      if ("failed" in cold) {
        failures.push(cold);
        warms.delete(spec);
        if (json) console.log(JSON.stringify(cold));
        continue;
      }
      colds.set(spec, [...(colds.get(spec) ?? []), cold]);
    }
  }
  const results: Measurement[] = [];
  for (const spec of specs) {
    const warm = warms.get(spec);
    if (!warm) continue;
    const m: Measurement = { ...warm, ...coldOverRuns(colds.get(spec)!) };
    results.push(m);
    if (json) console.log(measurementLine(m));
  }
  const summary = summarize(results, failures, (Date.now() - started) / 1000);
  if (json) console.log(JSON.stringify(summary));
  else printReport(results, summary);
  process.exitCode = summary.pass ? 0 : 1;
}

const argv = process.argv.slice(2);
if (argv[0] === "--cold") {
  process.stdout.write(`${JSON.stringify(await measureCold(argv[1]!))}\n`);
} else if (argv[0] === "--child") {
  const m = await measure(argv[1]!);
  process.stdout.write(`${JSON.stringify(m)}\n`);
} else {
  await parent(argv);
}
