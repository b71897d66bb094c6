/**
 * The benchmark: `npm run bench` (a table) or `npm run bench -- --json` (one
 * JSON object per measured input, one per line, then a summary object).
 *
 * Inputs: every session file of the corpus (all formats, through the
 * importers; the live context of the active path is compacted) and synthetic
 * sessions of 1k, 10k and 100k messages (`synthetic.ts`). Each input is
 * measured in its own child process, so that peak RSS figures do not mix.
 *
 * Per input:
 * - `compact_ms`: `compactMessagesSafe` with the extractive summarizer and a
 *   target of 30 % of the estimated size: the median of the timed
 *   repetitions, taken at JIT steady state (up to 20 untimed warm-up runs,
 *   about 2 s at most, first); `compact_ms_cold` is the very first run;
 * - `parse_ms`: `JSON.parse` of the same input's JSON text (JSONL: every line;
 *   synthetic: `JSON.stringify(messages)`), median of the repetitions; the
 *   text is decoded before timing; `ratio` = compact / parse;
 * - `peak_rss_mb` (the child's `maxRSS` after reading, importing, parsing and
 *   compacting the input, before the o200k tokenizer is loaded for the
 *   estimator comparison) against 3 × input size + 100 MB;
 * - tokens before and after, path, ok, and whether the replacement passes
 *   `validateSurvivalContract`;
 * - for Claude Code files, the estimator error against the billed prompts
 *   (`billed.ts`), fast and o200k;
 * - fact retention over the summarized span (`retention.ts`).
 *
 * Options: `--json`, `--only <substring>` (inputs whose name contains it),
 * `--no-synthetic`, `--sizes 1000,10000` (synthetic sizes).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { importFile } from "../src/formats/index.js";
import type { JournalEntry, Message } from "../src/model/index.js";
import { liveContext } from "../src/journal/tree.js";
import { compactMessagesSafe, type CompactResult } from "../src/engine/compact.js";
import { estimateTokens, exactEstimator, fastEstimator } from "../src/engine/tokens.js";
import { validateSurvivalContract } from "../src/contract/validate.js";
import { billedRequests, estimatorError, median } from "./billed.js";
import { measureRetention, type RetentionFigure } from "./retention.js";
import { syntheticSession } from "./synthetic.js";

const MB = 1024 * 1024;
const TARGET_FRACTION = 0.3;
const TARGETS = {
  corpusRatio: 2.0,
  synthetic100kRatio: 3.0,
  scaling: 12,
  rssFactor: 3,
  rssBaseMb: 100,
  mape: 0.1,
  paths: 1,
  users: 1,
  errors: 0.9,
};

interface EstimatorFigures {
  requests: number;
  mape: number;
  mape_single_anchor: number;
  mape_no_overhead: number;
  mape_fitted_overhead: number;
  overhead: number;
  apes: number[];
}

interface RetentionOut {
  total: number;
  found: number;
  rate: number;
  missed: string[];
}

export interface Measurement {
  input: string;
  kind: "corpus" | "synthetic";
  format: string;
  bytes: number;
  messages: number;
  reps: number;
  parse_ms: number;
  compact_ms: number;
  /** The untimed first (cold) run, for reference. */
  compact_ms_cold: number;
  ratio: number;
  ratio_target: number | null;
  peak_rss_mb: number;
  rss_limit_mb: number;
  ok: boolean;
  path: string | null;
  error: string | null;
  valid: boolean;
  tokens_before: number;
  tokens_after: number;
  target_tokens: number;
  target_reached: boolean;
  estimator_fast: EstimatorFigures | null;
  estimator_o200k: EstimatorFigures | null;
  retention: {
    span_messages: number;
    paths: RetentionOut;
    user_messages: RetentionOut;
    errors: RetentionOut;
  } | null;
}

const here = fileURLToPath(import.meta.url);
const corpusDir = process.env.COMPACT_SAFE_CORPUS ?? join(here, "../../../../shared/corpus");

function corpusFiles(): string[] {
  const out: string[] = [];
  for (const dir of readdirSync(corpusDir).sort()) {
    const d = join(corpusDir, dir);
    if (!statSync(d).isDirectory() || dir === "LICENSES") continue;
    for (const f of readdirSync(d).sort())
      if (f.endsWith(".jsonl") || f.endsWith(".json") || f.endsWith(".traj")) out.push(join(d, f));
  }
  return out.filter((f) => !f.endsWith(".metadata.json"));
}

function timeMs(fn: () => void): number {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

async function timeMsAsync<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = process.hrtime.bigint();
  const value = await fn();
  return { ms: Number(process.hrtime.bigint() - t) / 1e6, value };
}

const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

function parseJsonl(text: string): number {
  let n = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      JSON.parse(line);
      n++;
    } catch {
      // broken lines are part of the corpus; they cost their parse attempt
    }
  }
  return n;
}

/**
 * Timed repetitions per input (each after one untimed warm-up; the median is
 * reported). Small inputs take a few milliseconds, where one run is mostly
 * JIT warm-up and scheduler noise on a shared machine, so they get more runs.
 */
/** Untimed warm-up runs after the cold run: up to 20, within about 2 seconds (so large inputs get a few). */
const WARMUP_RUNS = 20;
const WARMUP_MS = 2000;

function repsFor(messages: number): number {
  if (messages <= 20_000) return 15;
  return 7;
}

function trimRetention(f: RetentionFigure): RetentionOut {
  return { total: f.total, found: f.found, rate: f.rate, missed: f.missed };
}

async function measure(spec: string): Promise<Measurement> {
  let messages: Message[];
  let entries: JournalEntry[] | undefined;
  let format: string;
  let kind: Measurement["kind"];
  let input: string;
  let bytes: number;
  /** The input's JSON text, re-created for the parse timing after the compaction (so it does not count in the peak). */
  let jsonText: () => { text: string; jsonl: boolean };
  if (spec.startsWith("synthetic:")) {
    const n = Number(spec.slice("synthetic:".length));
    messages = syntheticSession(n);
    // Size of JSON.stringify(messages), measured without holding the whole string.
    bytes = 2 + Math.max(0, messages.length - 1);
    for (const m of messages) bytes += Buffer.byteLength(JSON.stringify(m), "utf8");
    format = "synthetic";
    kind = "synthetic";
    input = `synthetic-${n >= 1000 ? `${n / 1000}k` : n}`;
    jsonText = () => ({ text: JSON.stringify(messages), jsonl: false });
  } else {
    const file = spec.slice("file:".length);
    bytes = statSync(file).size;
    const imported = await importFile(file);
    entries = imported.entries;
    format = imported.report.format;
    messages = liveContext(entries);
    kind = "corpus";
    input = basename(file);
    jsonText = () => ({
      text: readFileSync(file, "utf8"),
      jsonl: !(file.endsWith(".json") || file.endsWith(".traj")),
    });
  }
  const reps = repsFor(messages.length);

  const tokensBefore = estimateTokens(messages);
  const target = Math.floor(tokensBefore * TARGET_FRACTION);
  // One untimed warm-up run (JIT; it also fills the per-message token cache, as the
  // host's pressure checks do before it compacts), then the timed repetitions.
  gc();
  const cold = await timeMsAsync(() => compactMessagesSafe(messages, { target }));
  // Warm the JIT to steady state first (up to 20 runs, about 2 s at most), so the
  // figure compares the pass's steady cost with the native parser's, at every size alike.
  const warmStart = performance.now();
  for (let i = 0; i < WARMUP_RUNS && performance.now() - warmStart < WARMUP_MS; i++) {
    await compactMessagesSafe(messages, { target });
    gc();
  }
  const compactTimes: number[] = [];
  let result: CompactResult = cold.value;
  for (let i = 0; i < reps; i++) {
    gc();
    const r = await timeMsAsync(() => compactMessagesSafe(messages, { target }));
    compactTimes.push(r.ms);
    result = r.value;
  }
  const compact_ms = median(compactTimes);
  const res = result;
  // Peak RSS of holding the input and compacting it, taken before the parse timing
  // (which holds a second copy) and before the o200k tokenizer is loaded.
  const peakRssMb = process.resourceUsage().maxRSS / 1024;

  const { text, jsonl } = jsonText();
  JSON.parse(jsonl ? (text.split("\n", 1)[0] ?? "null") || "null" : "null"); // warm the parser entry
  const parseTimes: number[] = [];
  for (let i = 0; i < Math.max(reps, 3); i++) {
    gc();
    parseTimes.push(timeMs(() => (jsonl ? parseJsonl(text) : JSON.parse(text))));
  }
  const parse_ms = median(parseTimes);

  let valid = false;
  let retention: Measurement["retention"] = null;
  if (res.ok) {
    valid = validateSurvivalContract(messages, res.replacement, { path: res.path }).valid;
    const r = measureRetention(messages, res.replacement, res.path === "summary" ? res.checkpoint : null);
    retention = {
      span_messages: r.span_messages,
      paths: trimRetention(r.paths),
      user_messages: trimRetention(r.user_messages),
      errors: trimRetention(r.errors),
    };
  }

  let estimator_fast: EstimatorFigures | null = null;
  let estimator_o200k: EstimatorFigures | null = null;
  if (format === "claude-code" && entries) {
    const reqs = billedRequests(entries);
    if (reqs.length > 1) {
      const pick = (e: ReturnType<typeof estimatorError>): EstimatorFigures => ({
        requests: e.requests,
        mape: e.mape,
        mape_single_anchor: e.mape_single_anchor,
        mape_no_overhead: e.mape_no_overhead,
        mape_fitted_overhead: e.mape_fitted_overhead,
        overhead: e.overhead,
        apes: e.apes,
      });
      estimator_fast = pick(estimatorError(reqs, fastEstimator));
      estimator_o200k = pick(estimatorError(reqs, await exactEstimator()));
    }
  }

  const isBig = input === "synthetic-100k";
  return {
    input,
    kind,
    format,
    bytes,
    messages: messages.length,
    reps,
    parse_ms,
    compact_ms,
    compact_ms_cold: cold.ms,
    ratio: compact_ms / parse_ms,
    ratio_target: kind === "corpus" ? TARGETS.corpusRatio : isBig ? TARGETS.synthetic100kRatio : null,
    peak_rss_mb: peakRssMb,
    rss_limit_mb: (TARGETS.rssFactor * bytes) / MB + TARGETS.rssBaseMb,
    ok: res.ok,
    path: res.ok ? res.path : null,
    error: res.ok ? null : `${res.error.kind}: ${res.error.message}`,
    valid,
    tokens_before: tokensBefore,
    tokens_after: res.ok ? res.tokens_after : tokensBefore,
    target_tokens: target,
    target_reached: res.ok ? res.target_reached : false,
    estimator_fast,
    estimator_o200k,
    retention,
  };
}

// ---------------------------------------------------------------- parent

interface Check {
  name: string;
  value: string;
  target: string;
  pass: boolean;
}

const pct = (x: number): string => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : "-");
const fix = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : "-");
const pf = (b: boolean): string => (b ? "PASS" : "FAIL");

function runChild(spec: string): Measurement | { input: string; failed: string } {
  const r = spawnSync(process.execPath, ["--expose-gc", "--max-old-space-size=4096", here, "--child", spec], {
    encoding: "utf8",
    maxBuffer: 256 * MB,
  });
  const lines = (r.stdout ?? "").trim().split("\n");
  const last = lines[lines.length - 1];
  if (r.status === 0 && last) {
    try {
      return JSON.parse(last) as Measurement;
    } catch {
      /* fall through */
    }
  }
  return {
    input: spec,
    failed: `child exited ${r.status ?? r.signal}: ${(r.stderr ?? "").trim().split("\n").slice(-3).join(" | ")}`,
  };
}

function rowChecks(m: Measurement): Check[] {
  const checks: Check[] = [];
  checks.push({
    name: "ok+valid",
    value: m.ok ? (m.valid ? `${m.path}` : "invalid") : String(m.error),
    target: "ok",
    pass: m.ok && m.valid,
  });
  if (m.ratio_target !== null)
    checks.push({
      name: "ratio",
      value: fix(m.ratio, 2),
      target: `<= ${m.ratio_target}`,
      pass: m.ratio <= m.ratio_target,
    });
  checks.push({
    name: "rss",
    value: `${fix(m.peak_rss_mb, 0)} MB`,
    target: `<= ${fix(m.rss_limit_mb, 0)} MB`,
    pass: m.peak_rss_mb <= m.rss_limit_mb,
  });
  if (m.estimator_fast)
    checks.push({
      name: "est err",
      value: pct(m.estimator_fast.mape),
      target: "<= 10%",
      pass: m.estimator_fast.mape <= TARGETS.mape,
    });
  // Retention targets apply to the corpus sessions; on synthetic sessions (thousands of
  // distinct paths against a ~2,000-token summary bound) the figures are informational.
  if (m.retention && m.kind === "corpus") {
    const r = m.retention;
    checks.push({
      name: "paths",
      value: `${r.paths.found}/${r.paths.total}`,
      target: "100%",
      pass: r.paths.rate >= TARGETS.paths,
    });
    checks.push({
      name: "users",
      value: `${r.user_messages.found}/${r.user_messages.total}`,
      target: "100%",
      pass: r.user_messages.rate >= TARGETS.users,
    });
    checks.push({
      name: "errors",
      value: `${r.errors.found}/${r.errors.total}`,
      target: ">= 90%",
      pass: r.errors.rate >= TARGETS.errors,
    });
  }
  return checks;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  "))
    .join("\n");
}

async function parent(args: string[]): Promise<void> {
  const json = args.includes("--json");
  const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined;
  const sizes = args.includes("--sizes")
    ? args[args.indexOf("--sizes") + 1]!.split(",").map(Number)
    : args.includes("--no-synthetic")
      ? []
      : [1_000, 10_000, 100_000];
  const specs = [...corpusFiles().map((f) => `file:${f}`), ...sizes.map((n) => `synthetic:${n}`)].filter(
    (s) => !only || s.includes(only),
  );
  const results: Measurement[] = [];
  const failures: { input: string; failed: string }[] = [];
  const started = Date.now();
  for (const spec of specs) {
    if (!json) process.stderr.write(`measuring ${spec.replace(/^file:.*\//, "")} ...\n`);
    const m = runChild(spec);
    if ("failed" in m) {
      failures.push(m);
      if (json) console.log(JSON.stringify(m));
      continue;
    }
    results.push(m);
    if (json) {
      const { estimator_fast, estimator_o200k, ...rest } = m;
      const strip = (e: EstimatorFigures | null) => (e ? { ...e, apes: undefined } : null);
      console.log(
        JSON.stringify({
          ...rest,
          estimator_fast: strip(estimator_fast),
          estimator_o200k: strip(estimator_o200k),
          checks: rowChecks(m),
        }),
      );
    }
  }

  // Summary.
  const cc = results.filter((m) => m.estimator_fast);
  const pooledFast = median(cc.flatMap((m) => m.estimator_fast!.apes));
  const pooledExact = median(cc.flatMap((m) => m.estimator_o200k?.apes ?? []));
  const syn = new Map(results.filter((m) => m.kind === "synthetic").map((m) => [m.messages, m]));
  const scaling: Check[] = [];
  for (const [a, b] of [
    [1_000, 10_000],
    [10_000, 100_000],
  ] as const) {
    const x = syn.get(a);
    const y = syn.get(b);
    if (x && y) {
      const f = y.compact_ms / x.compact_ms;
      // For reference, the same ratio for the native parser and for the input bytes (memory and
      // cache effects make even JSON.parse grow faster than the input at these sizes).
      const parse = y.parse_ms / x.parse_ms;
      const bytes = y.bytes / x.bytes;
      scaling.push({
        name: `time ${a / 1000}k->${b / 1000}k`,
        value: `${fix(f, 2)}x (JSON.parse ${fix(parse, 2)}x; bytes ${fix(bytes, 2)}x)`,
        target: `<= ${TARGETS.scaling}x`,
        pass: f <= TARGETS.scaling,
      });
    }
  }
  const sum = (f: (m: Measurement) => RetentionOut | undefined) => {
    let total = 0;
    let found = 0;
    for (const m of results) {
      const r = f(m);
      if (r) {
        total += r.total;
        found += r.found;
      }
    }
    return { total, found, rate: total === 0 ? 1 : found / total };
  };
  const corpusOnly = (f: (r: NonNullable<Measurement["retention"]>) => RetentionOut) => (m: Measurement) =>
    m.kind === "corpus" && m.retention ? f(m.retention) : undefined;
  const retentionTotals = {
    paths: sum(corpusOnly((r) => r.paths)),
    user_messages: sum(corpusOnly((r) => r.user_messages)),
    errors: sum(corpusOnly((r) => r.errors)),
  };
  const allChecks = results.flatMap((m) => rowChecks(m).map((c) => ({ ...c, input: m.input })));
  const overall: Check[] = [
    {
      name: "estimator error, pooled (fast)",
      value: pct(pooledFast),
      target: "<= 10%",
      pass: pooledFast <= TARGETS.mape,
    },
    ...scaling,
    {
      name: "paths retained (corpus)",
      value: `${retentionTotals.paths.found}/${retentionTotals.paths.total}`,
      target: "100%",
      pass: retentionTotals.paths.rate >= 1,
    },
    {
      name: "user messages retained (corpus)",
      value: `${retentionTotals.user_messages.found}/${retentionTotals.user_messages.total}`,
      target: "100%",
      pass: retentionTotals.user_messages.rate >= 1,
    },
    {
      name: "error lines retained (corpus)",
      value: `${retentionTotals.errors.found}/${retentionTotals.errors.total} (${pct(retentionTotals.errors.rate)})`,
      target: ">= 90%",
      pass: retentionTotals.errors.rate >= TARGETS.errors,
    },
  ];
  const failed = [
    ...allChecks.filter((c) => !c.pass).map((c) => `${c.input}: ${c.name} ${c.value} (target ${c.target})`),
    ...overall.filter((c) => !c.pass).map((c) => `${c.name} ${c.value} (target ${c.target})`),
    ...failures.map((f) => `${f.input}: ${f.failed}`),
  ];
  const summary = {
    summary: true,
    inputs: results.length,
    child_failures: failures.length,
    seconds: (Date.now() - started) / 1000,
    estimator: {
      pooled_mape_fast: pooledFast,
      pooled_mape_o200k: pooledExact,
      median_of_file_mapes_fast_single_anchor: median(
        cc.flatMap((m) => (m.estimator_fast ? [m.estimator_fast.mape_single_anchor] : [])),
      ),
      requests: cc.reduce((n, m) => n + m.estimator_fast!.requests, 0),
      method:
        "median |estimate + overhead - billed| / billed; overhead = billed - estimate of the first billed request after the latest compaction (anchors not scored); prior-turn thinking dropped for models that drop it",
    },
    scaling: scaling.map((c) => ({ name: c.name, value: c.value, pass: c.pass })),
    retention: retentionTotals,
    checks: overall,
    failed,
    pass: failed.length === 0,
  };
  if (json) {
    console.log(JSON.stringify(summary));
    return;
  }

  const head = [
    "input",
    "format",
    "MB",
    "msgs",
    "parse ms",
    "compact ms",
    "cold ms",
    "ratio",
    "target",
    "",
    "RSS MB",
    "limit",
    "",
    "tokens before->after",
    "path",
    "ok",
    "est err",
    "o200k",
    "",
    "paths",
    "users",
    "errors",
    "",
  ];
  const rows = [head];
  for (const m of results) {
    const checks = rowChecks(m);
    const get = (n: string) => checks.find((c) => c.name === n);
    const ret = m.retention;
    const retPass = ["paths", "users", "errors"].every((n) => get(n)?.pass ?? true);
    rows.push([
      m.input.length > 40 ? `${m.input.slice(0, 37)}...` : m.input,
      m.format,
      fix(m.bytes / MB, 2),
      String(m.messages),
      fix(m.parse_ms, 1),
      fix(m.compact_ms, 1),
      fix(m.compact_ms_cold, 1),
      fix(m.ratio, 2),
      m.ratio_target === null ? "-" : `<=${m.ratio_target}`,
      m.ratio_target === null ? "" : pf(m.ratio <= m.ratio_target),
      fix(m.peak_rss_mb, 0),
      fix(m.rss_limit_mb, 0),
      pf(m.peak_rss_mb <= m.rss_limit_mb),
      `${m.tokens_before}->${m.tokens_after}`,
      m.path ?? "-",
      m.ok && m.valid ? "yes" : "NO",
      m.estimator_fast ? pct(m.estimator_fast.mape) : "-",
      m.estimator_o200k ? pct(m.estimator_o200k.mape) : "-",
      m.estimator_fast ? pf(m.estimator_fast.mape <= TARGETS.mape) : "",
      ret ? `${ret.paths.found}/${ret.paths.total}` : "-",
      ret ? `${ret.user_messages.found}/${ret.user_messages.total}` : "-",
      ret ? `${ret.errors.found}/${ret.errors.total}` : "-",
      ret ? (m.kind === "corpus" ? pf(retPass) : "info") : "",
    ]);
  }
  console.log(table(rows));
  console.log("");
  console.log("Estimator error (median absolute percentage error against billed Claude Code prompts):");
  console.log(`  method: ${summary.estimator.method}`);
  const erows = [
    [
      "file",
      "requests",
      "fast",
      "fast, 1 anchor",
      "fast, no overhead",
      "fast, fitted overhead",
      "o200k",
      "overhead",
    ],
  ];
  for (const m of cc) {
    const f = m.estimator_fast!;
    const x = m.estimator_o200k!;
    erows.push([
      m.input,
      String(f.requests),
      pct(f.mape),
      pct(f.mape_single_anchor),
      pct(f.mape_no_overhead),
      pct(f.mape_fitted_overhead),
      pct(x.mape),
      String(f.overhead),
    ]);
  }
  erows.push([
    "pooled",
    String(summary.estimator.requests),
    pct(pooledFast),
    "",
    "",
    "",
    pct(pooledExact),
    "",
  ]);
  console.log(table(erows));
  console.log("");
  console.log(
    table([
      ["target", "value", "wanted", ""],
      ...overall.map((c) => [c.name, c.value, c.target, pf(c.pass)]),
    ]),
  );
  const missed = results.filter(
    (m) =>
      m.retention &&
      (m.retention.paths.missed.length ||
        m.retention.user_messages.missed.length ||
        m.retention.errors.missed.length),
  );
  if (missed.length > 0) {
    console.log("\nMissed facts (first 5 per kind):");
    for (const m of missed) {
      const r = m.retention!;
      for (const [k, f] of [
        ["path", r.paths],
        ["user", r.user_messages],
        ["error", r.errors],
      ] as const) {
        for (const s of f.missed.slice(0, 5))
          console.log(`  ${m.input} ${k}: ${JSON.stringify(s.slice(0, 120))}`);
      }
    }
  }
  console.log(`\n${failed.length === 0 ? "ALL TARGETS PASS" : `${failed.length} target(s) FAIL:`}`);
  for (const f of failed) console.log(`  - ${f}`);
  console.log(`(${results.length} inputs in ${fix(summary.seconds, 0)} s)`);
}

const argv = process.argv.slice(2);
if (argv[0] === "--child") {
  const m = await measure(argv[1]!);
  process.stdout.write(`${JSON.stringify(m)}\n`);
} else {
  await parent(argv);
}
