/**
 * Measuring: the figures of one input (`measure`, run in a child process of
 * its own by `runChild`, so that peak RSS figures do not mix), and the list
 * of inputs. Nothing here prints a report; `report.ts` does.
 */
import { readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { importFile } from "../src/formats/index.js";
import type { JournalEntry, Message } from "../src/model/index.js";
import { liveContext } from "../src/journal/tree.js";
import { compactMessagesSafe, type CompactResult } from "../src/engine/compact.js";
import { estimateTokens, exactEstimator, fastEstimator } from "../src/engine/tokens.js";
import { validateSurvivalContract } from "../src/contract/validate.js";
import { billedRequests, estimatorError, type EstimatorError } from "./billed.js";
import { measureRetention, type RetentionFigure } from "./retention.js";
import { syntheticSession } from "./synthetic.js";
import { extractiveSummarizer } from "../src/summarizers/index.js";
import { SYSTEM_PROMPT, buildUserPrompt } from "../src/summarizers/prompt.js";
import { TARGETS } from "./targets.js";
import {
  corpusFiles,
  gc,
  isJsonl,
  median,
  parseSessionText,
  runJsonChild,
  timedPairs,
  timeMs,
  timeMsAsync,
  warmUp,
} from "./harness.js";

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
   * Cold, the headline: a compaction of freshly parsed messages (nothing of
   * them cached, as every command-line run and a host that rebuilds its
   * history each turn have them), against `JSON.parse` of the input timed
   * just before it; per fresh process (`measureCold`) the median of
   * COLD_REPS such pairs after the code is compiled, then the median over
   * COLD_RUNS processes. `cold_ratio` is the median of the pairs' own ratios.
   */
  cold_ms: number;
  cold_parse_ms: number;
  cold_ratio: number;
  /** The cold ratio of each run (`npm run bench -- --runs N`); `cold_ratio` is their median. */
  cold_ratio_runs: number[];
  cold_ratio_target: number | null;
  /**
   * The process's very first compaction (the median over the processes), on
   * fresh messages too: it also pays for compiling the library's code, a
   * start-up cost of its own whatever the input's size; and its ratio.
   */
  first_ms: number;
  first_ratio: number;
  /** Warm: the median of repeated compactions of the same messages at JIT steady state (caches filled). */
  parse_ms: number;
  warm_ms: number;
  warm_ratio: number;
  peak_rss_mb: number;
  rss_limit_mb: number;
  /**
   * What an LLM summarizer would be sent for this compaction (its system
   * prompt and the user turn built from the same request): characters and
   * estimated tokens; null when the compaction took no summary.
   */
  summarizer_input_chars: number | null;
  summarizer_input_tokens: number | null;
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
  /** The process's first compaction and the parse timed before it. */
  first_ms: number;
  first_parse_ms: number;
  /** Medians of the timed pairs that followed (parse, then a compaction of fresh messages). */
  parse_ms: number;
  cold_ms: number;
  ratio: number;
}

/** Fresh processes per input for the cold figures (their median is reported). */
export const COLD_RUNS = 3;
/**
 * Timed pairs per process, after untimed compactions of fresh copies that
 * bring the code to JIT steady state (as for the warm figures: WARMUP_RUNS
 * within WARMUP_MS).
 */
export const COLD_REPS = 7;

const here = fileURLToPath(import.meta.url);
const corpusDir = process.env.COMPACT_SAFE_CORPUS ?? join(here, "../../../../shared/corpus");

/** The inputs to measure: every corpus session file, then synthetic sessions of the given sizes. */
export function inputSpecs(sizes: readonly number[], only: string | undefined): string[] {
  return [...corpusFiles(corpusDir).map((f) => `file:${f}`), ...sizes.map((n) => `synthetic:${n}`)].filter(
    (s) => !only || s.includes(only),
  );
}

/**
 * Timed repetitions per input after the warm-up (their median is reported):
 * small inputs get more, one run of them being mostly scheduler noise on a
 * shared machine.
 */
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
  parseSessionText(text, jsonl);
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
    input = { text: readFileSync(file, "utf8"), jsonl: isJsonl(file) };
  }
  const target = Math.floor(estimateTokens(structuredClone(messages)) * TARGET_FRACTION);
  return { messages, input, target };
}

/**
 * The cold figures of one input in this (fresh) process: the parse of the
 * input, then the process's first compaction; then, once the code is
 * compiled, COLD_REPS pairs of a parse and a compaction of messages parsed
 * afresh (nothing of them cached), interleaved so that both meet the same
 * machine load.
 */
export async function measureCold(spec: string): Promise<ColdRun> {
  const first = await freshInput(spec);
  gc();
  const first_parse_ms = timeMs(() => parseText(first.input));
  const firstRun = await timeMsAsync(() => compactMessagesSafe(first.messages, { target: first.target }));
  const json = JSON.stringify(first.messages);
  const copy = (): Message[] => JSON.parse(json) as Message[];
  await warmUp(() => compactMessagesSafe(copy(), { target: first.target }));
  const cold = await timedPairs(
    () => parseText(first.input),
    () => {
      const messages = copy();
      return () => compactMessagesSafe(messages, { target: first.target });
    },
    COLD_REPS,
  );
  return {
    first_ms: firstRun.ms,
    first_parse_ms,
    parse_ms: cold.parse_ms,
    cold_ms: cold.compact_ms,
    ratio: cold.ratio,
  };
}

/** `measureCold(spec)` in `COLD_RUNS` fresh processes of `entry` (run as `entry --cold spec`). */
export function runCold(entry: string, spec: string, runs = COLD_RUNS): ColdRun[] | ChildFailure {
  const out: ColdRun[] = [];
  for (let i = 0; i < runs; i++) {
    const r = runJsonChild<ColdRun>([entry, "--cold", spec], { maxBufferMB: 16, name: "cold run" });
    if (!("report" in r)) return { input: spec, failed: r.why };
    out.push(r.report);
  }
  return out;
}

/** The cold figures of `runs` (medians; the ratio is the median of each process's own ratio). */
export function coldFigures(
  runs: readonly ColdRun[],
): Pick<Measurement, "cold_ms" | "cold_parse_ms" | "cold_ratio" | "first_ms" | "first_ratio"> {
  return {
    cold_ms: median(runs.map((r) => r.cold_ms)),
    cold_parse_ms: median(runs.map((r) => r.parse_ms)),
    cold_ratio: median(runs.map((r) => r.ratio)),
    first_ms: median(runs.map((r) => r.first_ms)),
    first_ratio: median(runs.map((r) => r.first_ms / r.first_parse_ms)),
  };
}

/**
 * The cold figures of several runs of one input (each run: its fresh processes, `coldFigures`):
 * each figure the median of the runs' figures, and the runs' own ratios in `cold_ratio_runs`.
 */
export function coldOverRuns(
  runs: readonly (readonly ColdRun[])[],
): Pick<
  Measurement,
  "cold_ms" | "cold_parse_ms" | "cold_ratio" | "cold_ratio_runs" | "first_ms" | "first_ratio"
> {
  if (runs.length === 0) throw new Error("coldOverRuns: no runs");
  const each = runs.map(coldFigures);
  const med = (f: (c: (typeof each)[number]) => number): number => median(each.map(f));
  return {
    cold_ms: med((c) => c.cold_ms),
    cold_parse_ms: med((c) => c.cold_parse_ms),
    cold_ratio: med((c) => c.cold_ratio),
    cold_ratio_runs: each.map((c) => c.cold_ratio),
    first_ms: med((c) => c.first_ms),
    first_ratio: med((c) => c.first_ratio),
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
    jsonText = () => ({ text: readFileSync(file, "utf8"), jsonl: isJsonl(file) });
  }
  const reps = repsFor(messages.length);

  const tokensBefore = estimateTokens(messages);
  const target = Math.floor(tokensBefore * TARGET_FRACTION);
  // One untimed warm-up run (JIT; it also fills the per-message token cache, as the
  // host's pressure checks do before it compacts), then the timed repetitions.
  gc();
  const cold = await timeMsAsync(() => compactMessagesSafe(messages, { target })); // untimed warm-up
  // Peak RSS of holding the input and compacting it once, taken before the warm-up runs (whose
  // garbage is not collected between runs), the parse timing (which holds a second copy) and the
  // o200k tokenizer.
  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  // Warm the JIT to steady state first, so the figure compares the pass's steady cost with the
  // native parser's, at every size alike; then pairs of a parse and a compaction of the same messages.
  const res: CompactResult = cold.value;
  const { text, jsonl } = jsonText();
  await warmUp(() => compactMessagesSafe(messages, { target }));
  const warm = await timedPairs(
    () => parseSessionText(text, jsonl),
    () => () => compactMessagesSafe(messages, { target }),
    reps,
    { gcBeforeCall: true },
  );
  const compact_ms = warm.compact_ms;
  const parse_ms = warm.parse_ms;

  // The LLM summarizers' input for the same compaction: the request the engine makes, rendered as they
  // render it (the extractive summarizer then answers, so the compaction is the same).
  const llm: { input: string | null } = { input: null };
  const extractive = extractiveSummarizer();
  await compactMessagesSafe(messages, {
    target,
    summarizer: {
      name: extractive.name,
      model: extractive.model,
      summarize: (req) => {
        llm.input = `${SYSTEM_PROMPT}\n${buildUserPrompt(req)}`;
        return extractive.summarize(req);
      },
    },
  });
  const sent = llm.input;

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
    cold_ratio_runs: [],
    cold_ratio_target: kind === "corpus" ? TARGETS.corpusRatioMax : null,
    first_ms: NaN,
    first_ratio: NaN,
    warm_ms: compact_ms,
    warm_ratio: warm.ratio,
    peak_rss_mb: peakRssMb,
    rss_limit_mb: (TARGETS.rssFactor * bytes) / MB + TARGETS.rssBaseMb,
    summarizer_input_chars: sent === null ? null : sent.length,
    summarizer_input_tokens: sent === null ? null : fastEstimator.text(sent),
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
  const r = runJsonChild<Measurement>([entry, "--child", spec], { maxBufferMB: 256 });
  return "report" in r ? r.report : { input: spec, failed: r.why };
}
