/**
 * Reporting: the checks of each measurement against the targets, the
 * summary (pooled estimator error, scaling, retention totals, what failed),
 * and the printed report (one table per figure kind, then the targets) or
 * its JSON lines. Nothing here measures; `measure.ts` does.
 */
import { median, table, type Check } from "./harness.js";
import {
  MB,
  type ChildFailure,
  type EstimatorFigures,
  type Measurement,
  type RetentionOut,
} from "./measure.js";
import { TARGETS } from "./targets.js";

const pct = (x: number): string => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : "-");
const fix = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : "-");
const pf = (b: boolean): string => (b ? "PASS" : "FAIL");

/** The checks of one measurement against its targets. */
export function rowChecks(m: Measurement): Check[] {
  const checks: Check[] = [];
  checks.push({
    name: "ok+valid",
    value: m.ok ? (m.valid ? `${m.path}` : "invalid") : String(m.error),
    target: "ok",
    pass: m.ok && m.valid,
  });
  if (m.cold_ratio_target !== null)
    checks.push({
      name: "cold ratio",
      value:
        m.cold_ratio_runs.length > 1
          ? `${fix(m.cold_ratio, 2)} (median of runs ${m.cold_ratio_runs.map((x) => fix(x, 2)).join(", ")})`
          : fix(m.cold_ratio, 2),
      target: `<= ${m.cold_ratio_target}`,
      pass: m.cold_ratio <= m.cold_ratio_target,
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

/** The JSON line of one measurement (`--json`): its figures without the per-request errors, and its checks. */
export function measurementLine(m: Measurement): string {
  const { estimator_fast, estimator_o200k, ...rest } = m;
  const strip = (e: EstimatorFigures | null) => (e ? { ...e, apes: undefined } : null);
  return JSON.stringify({
    ...rest,
    estimator_fast: strip(estimator_fast),
    estimator_o200k: strip(estimator_o200k),
    checks: rowChecks(m),
  });
}

/** The cold bars over the corpus sessions: the median of their cold ratios, and the largest. */
export function coldBars(results: readonly Measurement[]) {
  const ratios = results.filter((m) => m.kind === "corpus").map((m) => m.cold_ratio);
  const cold = {
    cold_ratio_median: ratios.length > 0 ? median(ratios) : NaN,
    cold_ratio_max: ratios.length > 0 ? Math.max(...ratios) : NaN,
  };
  const coldChecks: Check[] = [
    {
      name: "cold ratio, median of the corpus sessions",
      value: fix(cold.cold_ratio_median, 2),
      target: `<= ${TARGETS.corpusRatioMedian}`,
      pass: cold.cold_ratio_median <= TARGETS.corpusRatioMedian,
    },
    {
      name: "cold ratio, largest of the corpus sessions",
      value: fix(cold.cold_ratio_max, 2),
      target: `<= ${TARGETS.corpusRatioMax}`,
      pass: cold.cold_ratio_max <= TARGETS.corpusRatioMax,
    },
  ];
  return { cold, coldChecks };
}

/**
 * The growth per 10x of the cold compaction (synthetic 1k→10k, 10k→100k; cold: a first call also pays for
 * compiling the code, which would hide how the work grows), against the growth of `JSON.parse` of the same
 * inputs in the same run (memory and cache effects make even the native parser grow faster than its input).
 */
export function growthBars(results: readonly Measurement[]) {
  const syn = new Map(results.filter((m) => m.kind === "synthetic").map((m) => [m.messages, m]));
  const steps: {
    name: string;
    growth: number;
    parse_growth: number;
    bytes_growth: number;
    limit: number;
    pass: boolean;
  }[] = [];
  for (const [a, b] of [
    [1_000, 10_000],
    [10_000, 100_000],
  ] as const) {
    const x = syn.get(a);
    const y = syn.get(b);
    if (!x || !y) continue;
    const parse_growth = y.cold_parse_ms / x.cold_parse_ms;
    const growth = y.cold_ms / x.cold_ms;
    const limit = TARGETS.growthOverParse * parse_growth;
    steps.push({
      name: `time ${a / 1000}k->${b / 1000}k`,
      growth,
      parse_growth,
      bytes_growth: y.bytes / x.bytes,
      limit,
      pass: growth <= limit,
    });
  }
  const scaling: Check[] = steps.map((s) => ({
    name: s.name,
    value: `${fix(s.growth, 2)}x (JSON.parse ${fix(s.parse_growth, 2)}x; bytes ${fix(s.bytes_growth, 2)}x)`,
    target: `<= ${TARGETS.growthOverParse} x JSON.parse's = ${fix(s.limit, 2)}x`,
    pass: s.pass,
  }));
  return { steps, scaling };
}

/** The summary of every measurement: pooled estimator error, scaling, retention totals, the checks and what failed. */
export function summarize(results: Measurement[], failures: ChildFailure[], seconds: number) {
  // Summary.
  const cc = results.filter((m) => m.estimator_fast);
  const pooledFast = median(cc.flatMap((m) => m.estimator_fast!.apes));
  const pooledExact = median(cc.flatMap((m) => m.estimator_o200k?.apes ?? []));
  const { coldChecks, cold } = coldBars(results);
  const { steps, scaling } = growthBars(results);
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
    ...coldChecks,
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
    seconds,
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
    ...cold,
    scaling: steps,
    retention: retentionTotals,
    checks: overall,
    failed,
    pass: failed.length === 0,
  };
  return summary;
}

export type Summary = ReturnType<typeof summarize>;

/** The report as text: the figures per input, the estimator error per file, the targets, the missed facts, what failed. */
export function printReport(results: Measurement[], summary: Summary): void {
  const cc = results.filter((m) => m.estimator_fast);
  const pooledFast = summary.estimator.pooled_mape_fast;
  const pooledExact = summary.estimator.pooled_mape_o200k;
  const overall = summary.checks;
  const failed = summary.failed;
  const head = [
    "input",
    "format",
    "MB",
    "msgs",
    "parse ms",
    "cold ms",
    "cold ratio",
    "runs",
    "target",
    "",
    "first ms",
    "first ratio",
    "warm ms",
    "warm ratio",
    "RSS MB",
    "limit",
    "",
    "tokens before->after",
    "LLM in (chars/tok)",
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
      fix(m.cold_parse_ms, 1),
      fix(m.cold_ms, 1),
      fix(m.cold_ratio, 2),
      m.cold_ratio_runs.map((x) => fix(x, 2)).join("/"),
      m.cold_ratio_target === null ? "-" : `<=${m.cold_ratio_target}`,
      m.cold_ratio_target === null ? "" : pf(m.cold_ratio <= m.cold_ratio_target),
      fix(m.first_ms, 1),
      fix(m.first_ratio, 1),
      fix(m.warm_ms, 1),
      fix(m.warm_ratio, 2),
      fix(m.peak_rss_mb, 0),
      fix(m.rss_limit_mb, 0),
      pf(m.peak_rss_mb <= m.rss_limit_mb),
      `${m.tokens_before}->${m.tokens_after}`,
      m.summarizer_input_chars === null ? "-" : `${m.summarizer_input_chars}/${m.summarizer_input_tokens}`,
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
