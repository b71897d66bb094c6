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
 *   per 10x is read from the cold figures;
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
 * The checks against the targets (`targets.ts`), the summary and the printed
 * report are `report.ts`. Exits 1 when a target is missed (a cold ratio over
 * its limit, growth per 10× over 12×, peak RSS over its limit, …), else 0.
 *
 * Options: `--json`, `--only <substring>` (inputs whose name contains it),
 * `--no-synthetic`, `--sizes 1000,10000` (synthetic sizes).
 */
import { fileURLToPath } from "node:url";
import {
  coldFigures,
  inputSpecs,
  measure,
  measureCold,
  runChild,
  runCold,
  type ChildFailure,
  type Measurement,
} from "./measure.js";
import { measurementLine, printReport, summarize } from "./report.js";

async function parent(args: string[]): Promise<void> {
  const json = args.includes("--json");
  const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined;
  const sizes = args.includes("--sizes")
    ? args[args.indexOf("--sizes") + 1]!.split(",").map(Number)
    : args.includes("--no-synthetic")
      ? []
      : [1_000, 10_000, 100_000];
  const specs = inputSpecs(sizes, only);
  const results: Measurement[] = [];
  const failures: ChildFailure[] = [];
  const started = Date.now();
  for (const spec of specs) {
    if (!json) process.stderr.write(`measuring ${spec.replace(/^file:.*\//, "")} ...\n`);
    const entry = fileURLToPath(import.meta.url);
    const warm = runChild(entry, spec);
    const cold = "failed" in warm ? warm : runCold(entry, spec);
    if ("failed" in cold) {
      failures.push(cold);
      if (json) console.log(JSON.stringify(cold));
      continue;
    }
    const m: Measurement = { ...(warm as Measurement), ...coldFigures(cold) };
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
