/**
 * Measuring: the figures of one input (`measure`, run in a child process of
 * its own by `runChild`, so that peak RSS figures do not mix), and the list
 * of inputs. Nothing here prints a report; `report.ts` does.
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
import { billedRequests, estimatorError, median, type EstimatorError } from "./billed.js";
import { measureRetention, type RetentionFigure } from "./retention.js";
import { syntheticSession } from "./synthetic.js";
import { TARGETS } from "./targets.js";

export const MB = 1024 * 1024;
const TARGET_FRACTION = 0.3;

/** An estimator's error on one session's billed requests, as the report shows it. */
export type EstimatorFigures = Pick<
  EstimatorError,
  | "requests"
  | "mape"
  | "mape_single_anchor"
  | "mape_no_overhead"
  | "mape_fitted_overhead"
  | "overhead"
  | "apes"
>;

export interface RetentionOut {
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
  /**
   * Cold, the headline: the first compaction in a fresh process, on freshly
   * parsed messages, against `JSON.parse` of the input timed just before it in
   * the same process; medians over COLD_RUNS processes (`measureCold`).
   */
  cold_ms: number;
  cold_parse_ms: number;
  /** The median of the processes' own cold / parse ratios. */
  cold_ratio: number;
  cold_ratio_target: number | null;
  /** A second compaction in the same processes, on fresh messages again (code warm, nothing cached). */
  fresh_ms: number;
  fresh_ratio: number;
  /** Warm: the median of repeated compactions of the same messages at JIT steady state (caches filled). */
  parse_ms: number;
  warm_ms: number;
  warm_ratio: number;
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

export type ChildFailure = { input: string; failed: string };

/** One cold run (`measureCold`): the figures of one fresh process. */
export interface ColdRun {
  parse_ms: number;
  cold_ms: number;
  parse2_ms: number;
  fresh_ms: number;
}

/** Fresh processes per input for the cold figures (their median is reported). */
export const COLD_RUNS = 5;

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

/** The inputs to measure: every corpus session file, then synthetic sessions of the given sizes. */
export function inputSpecs(sizes: readonly number[], only: string | undefined): string[] {
  return [...corpusFiles().map((f) => `file:${f}`), ...sizes.map((n) => `synthetic:${n}`)].filter(
    (s) => !only || s.includes(only),
  );
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

/** The JSON text of an input, for the parse baseline. */
interface InputText {
  text: string;
  jsonl: boolean;
}

function parseText({ text, jsonl }: InputText): void {
  if (jsonl) parseJsonl(text);
  else JSON.parse(text);
}

/**
 * Freshly parsed messages of an input, as a command-line run has them (the
 * importer's output for a session file; a synthetic history re-parsed from
 * its JSON), with the input's JSON text and the compaction target. The
 * target is computed on a copy, so that nothing of these messages is cached.
 */
async function freshInput(spec: string): Promise<{ messages: Message[]; input: InputText; target: number }> {
  let messages: Message[];
  let input: InputText;
  if (spec.startsWith("synthetic:")) {
    const json = JSON.stringify(syntheticSession(Number(spec.slice("synthetic:".length))));
    messages = JSON.parse(json) as Message[];
    input = { text: json, jsonl: false };
  } else {
    const file = spec.slice("file:".length);
    messages = liveContext((await importFile(file)).entries);
    input = { text: readFileSync(file, "utf8"), jsonl: !(file.endsWith(".json") || file.endsWith(".traj")) };
  }
  const target = Math.floor(estimateTokens(structuredClone(messages)) * TARGET_FRACTION);
  return { messages, input, target };
}

/**
 * The cold figures of one input in this (fresh) process: `JSON.parse` of the
 * input, then the process's first compaction, on messages nothing has
 * touched; then the same again on a second fresh copy (code warm).
 */
export async function measureCold(spec: string): Promise<ColdRun> {
  const first = await freshInput(spec);
  gc();
  const parse_ms = timeMs(() => parseText(first.input));
  const cold = await timeMsAsync(() => compactMessagesSafe(first.messages, { target: first.target }));
  const second = await freshInput(spec);
  gc();
  const parse2_ms = timeMs(() => parseText(second.input));
  const fresh = await timeMsAsync(() => compactMessagesSafe(second.messages, { target: second.target }));
  return { parse_ms, cold_ms: cold.ms, parse2_ms, fresh_ms: fresh.ms };
}

/** `measureCold(spec)` in `COLD_RUNS` fresh processes of `entry` (run as `entry --cold spec`). */
export function runCold(entry: string, spec: string, runs = COLD_RUNS): ColdRun[] | ChildFailure {
  const out: ColdRun[] = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, ["--expose-gc", "--max-old-space-size=4096", entry, "--cold", spec], {
      encoding: "utf8",
      maxBuffer: 16 * MB,
    });
    const last = (r.stdout ?? "").trim().split("\n").at(-1);
    try {
      if (r.status === 0 && last) {
        out.push(JSON.parse(last) as ColdRun);
        continue;
      }
    } catch {
      /* fall through */
    }
    return {
      input: spec,
      failed: `cold run exited ${r.status ?? r.signal}: ${(r.stderr ?? "").trim().split("\n").slice(-3).join(" | ")}`,
    };
  }
  return out;
}

/** The cold figures of `runs` (medians; the ratio is the median of each process's own ratio). */
export function coldFigures(runs: readonly ColdRun[]): Pick<
  Measurement,
  "cold_ms" | "cold_parse_ms" | "cold_ratio" | "fresh_ms" | "fresh_ratio"
> {
  return {
    cold_ms: median(runs.map((r) => r.cold_ms)),
    cold_parse_ms: median(runs.map((r) => r.parse_ms)),
    cold_ratio: median(runs.map((r) => r.cold_ms / r.parse_ms)),
    fresh_ms: median(runs.map((r) => r.fresh_ms)),
    fresh_ratio: median(runs.map((r) => r.fresh_ms / r.parse2_ms)),
  };
}

/** The warm figures of one input (`file:PATH` or `synthetic:N`); the cold ones are added by the caller. */
export async function measure(spec: string): Promise<Measurement> {
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
  const cold = await timeMsAsync(() => compactMessagesSafe(messages, { target })); // untimed warm-up
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
    // Filled in by the parent from the cold processes.
    cold_ms: NaN,
    cold_parse_ms: NaN,
    cold_ratio: NaN,
    cold_ratio_target: kind === "corpus" ? TARGETS.corpusRatio : isBig ? TARGETS.synthetic100kRatio : null,
    fresh_ms: NaN,
    fresh_ratio: NaN,
    warm_ms: compact_ms,
    warm_ratio: compact_ms / parse_ms,
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

/** `measure(spec)` in a child process of `entry` (run as `entry --child spec`, printing the Measurement as JSON). */
export function runChild(entry: string, spec: string): Measurement | ChildFailure {
  const r = spawnSync(
    process.execPath,
    ["--expose-gc", "--max-old-space-size=4096", entry, "--child", spec],
    {
      encoding: "utf8",
      maxBuffer: 256 * MB,
    },
  );
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
