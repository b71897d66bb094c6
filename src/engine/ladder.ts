/**
 * The summary path's failure ladder: retries with backoff within a time
 * budget, the oldest unit dropped on "prompt too long", one corrective retry
 * for an unusable summary.
 */
import type { Message } from "../model/types.js";
import { isToolResult, isToolUse } from "../model/blocks.js";
import { isCheckpoint } from "../contract/classify.js";
import { placeholderKind, isPunctuationOnly } from "../contract/placeholder.js";
import type { BackgroundHandle, SummaryResult } from "../summarizers/types.js";
import { SummarizerError } from "../summarizers/types.js";
import { type LazyAbort, MAX_TIMEOUT_MS, withWholeRequestTimeoutLazy } from "../summarizers/llm-common.js";
import { runsInProcess } from "../summarizers/extractive/index.js";
import { defaultSummarizer } from "../summarizers/factory.js";
import { fastEstimator } from "./tokens.js";
import { CONSTANTS } from "../model/constants.js";
import { errorResult, type CompactErrorKind, type CompactOptions, type CompactResult } from "./result.js";

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Why a summary cannot be used, or undefined when it can. */
export function unusableSummaryReason(r: SummaryResult): string | undefined {
  if (r.toolCallRequested) return "the summarizer asked to call tools instead of writing a summary";
  if (r.truncated) return "the summary was cut off at the token limit";
  const kind = placeholderKind(r.text);
  if (kind === "empty") return "the summary was empty";
  if (kind === "punctuation" || isPunctuationOnly(r.text)) return "the summary was punctuation only";
  if (kind === "placeholder")
    return `the summary was a placeholder (${JSON.stringify(r.text.trim().slice(0, 40))})`;
  if (kind === "refusal") return "the summary was a refusal with no substance";
  return undefined;
}

/** Splits a span into units that never separate a call from its result. */
export function completeUnits(span: readonly Message[]): Message[][] {
  const units: Message[][] = [];
  let current: Message[] = [];
  const open = new Set<string>();
  for (const m of span) {
    current.push(m);
    for (const b of m.content) {
      if (isToolUse(b)) open.add(b.id);
      else if (isToolResult(b)) open.delete(b.tool_use_id);
    }
    if (open.size === 0) {
      units.push(current);
      current = [];
    }
  }
  if (current.length > 0) units.push(current);
  return units;
}

/** Drops the oldest unit that holds no checkpoint; undefined when none is left to drop. */
function dropOldestUnit(units: Message[][]): Message[][] | undefined {
  const i = units.findIndex((u) => !u.some(isCheckpoint));
  if (i < 0 || units.length <= 1) return undefined;
  return [...units.slice(0, i), ...units.slice(i + 1)];
}

export type LadderOutcome =
  { ok: true; summary: SummaryResult; attempts: number } | { ok: false; result: CompactResult };

/** The longest wait the ladder sleeps, whatever `retry-after` asks (ms): 60 s. */
export const MAX_RETRY_AFTER_MS = CONSTANTS.maxRetryAfterMs;
/** Default time budget of the whole summary ladder (ms): 5 minutes. */
export const DEFAULT_LADDER_BUDGET_MS = CONSTANTS.ladderBudgetMs;

const seconds = (ms: number): string => `${Number((Math.max(0, ms) / 1000).toFixed(3))} s`;

/** Raised inside the ladder when its budget runs out during a call. */
class BudgetSpent extends Error {}

/** `sleep(ms)`, cut short when `signal` aborts. */
async function sleepUnlessAborted(
  sleep: (ms: number) => Promise<void>,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (!signal) return sleep(ms);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<void>((resolve) => {
    onAbort = () => resolve();
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    await Promise.race([sleep(ms), aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort!);
  }
}

/**
 * The request with its `signal` read from `abort` when the summarizer reads it (an enumerable
 * property like the others): a summarizer that never reads it costs no abort controller.
 */
function withSignal<R extends object>(request: R, abort: LazyAbort): R & { readonly signal: AbortSignal } {
  return Object.defineProperty({ ...request }, "signal", {
    enumerable: true,
    get: () => abort.signal,
  }) as R & { readonly signal: AbortSignal };
}

/**
 * The failure ladder: transient errors retried up to 3 times with exponential
 * backoff (or the server's `retry-after`, capped at 60 s); deterministic errors
 * fail at once; "prompt too long" drops the oldest complete unit (never a
 * checkpoint) and retries; an unusable summary gets one corrective retry. The
 * whole ladder runs within a time budget (default 5 minutes).
 */
export async function summarizeWithLadder(
  span: readonly Message[],
  following: readonly Message[],
  options: CompactOptions,
  counted: boolean,
  retained: readonly Message[] = [],
): Promise<LadderOutcome> {
  const summarizer = options.summarizer ?? defaultSummarizer();
  const estimator = options.estimator ?? fastEstimator;
  const sleep = options.sleep ?? defaultSleep;
  const maxRetries = options.maxRetries ?? CONSTANTS.maxRetries;
  const backoff = options.backoffMs ?? CONSTANTS.backoffMs;
  const maxWait = options.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS;
  const now = options.now ?? Date.now;
  const budget = options.budgetMs ?? DEFAULT_LADDER_BUDGET_MS;
  const deadline = now() + budget;
  const label = `${summarizer.name} summarizer`;
  const background: readonly BackgroundHandle[] | undefined = options.liveState?.background;
  // Units are only cut when a prompt-too-long error asks to drop one.
  let input: readonly Message[] = span;
  let transientRetries = 0;
  let correction: string | undefined;
  let attempts = 0;
  const fail = (kind: CompactErrorKind, message: string): LadderOutcome => ({
    ok: false,
    result: errorResult(kind, message, attempts),
  });

  const budgetSpent = (): LadderOutcome =>
    fail(
      "summarizer_failed",
      `${label} (model ${summarizer.model}): no answer within the ${seconds(budget)} time budget of the summary ladder (transient; ${attempts} call${attempts === 1 ? "" : "s"} made; try again later)`,
    );

  for (;;) {
    if (options.signal?.aborted) return fail("summarizer_failed", "compaction aborted");
    const left = deadline - now();
    if (!(left > 0)) return budgetSpent();
    attempts++;
    let result: SummaryResult;
    try {
      const request = {
        messages: input,
        following,
        // The older user messages the replacement keeps verbatim: the note refers to them, never quotes them again.
        retained,
        focus: options.focus,
        maxTokens: options.summaryMaxTokens,
        ...(counted ? { countTokens: (text: string) => estimator.text(text) } : {}),
        correction,
        background,
      };
      // The call is aborted (and abandoned, should the summarizer ignore its signal) when the budget runs out.
      // The embedded extractive summarizer answers before a timer could fire: it gets no timer (setting
      // one up was a sixth of compacting a 10-message history).
      result =
        left > MAX_TIMEOUT_MS || runsInProcess(summarizer)
          ? await summarizer.summarize({ ...request, signal: options.signal })
          : await withWholeRequestTimeoutLazy(
              left,
              options.signal,
              () => new BudgetSpent(),
              (abort) => summarizer.summarize(withSignal(request, abort)),
            );
    } catch (e) {
      if (e instanceof BudgetSpent) return budgetSpent();
      const err = e instanceof SummarizerError ? e : undefined;
      const raw = (e as Error)?.message ?? String(e);
      // Summarizers usually name themselves; the label is added only when they do not.
      const message = (raw.startsWith(label) ? raw : `${label}: ${raw}`).replace(/\s*\n\s*/g, " ");
      if (options.signal?.aborted)
        return fail("summarizer_failed", err ? `compaction aborted (${message})` : "compaction aborted");
      if (err?.kind === "transient") {
        if (transientRetries >= maxRetries)
          return fail("summarizer_failed", `${message} (gave up after ${maxRetries} retries)`);
        const wait = Math.min(err.retryAfterMs ?? backoff * 2 ** transientRetries, maxWait);
        const remaining = deadline - now();
        if (wait >= remaining)
          return fail(
            "summarizer_failed",
            `${message} (transient; not retried: a ${seconds(wait)} wait would overrun the ${seconds(budget)} time budget of the summary ladder, ${seconds(remaining)} left; try again later)`,
          );
        transientRetries++;
        await sleepUnlessAborted(sleep, wait, options.signal);
        if (options.signal?.aborted) return fail("summarizer_failed", `compaction aborted (${message})`);
        continue;
      }
      if (err?.kind === "prompt_too_long") {
        const fewer = dropOldestUnit(completeUnits(input));
        if (!fewer)
          return fail("summarizer_failed", `${message} (nothing left to drop from the summarizer's input)`);
        input = fewer.flat();
        continue;
      }
      return fail("summarizer_failed", message);
    }
    const unusable = unusableSummaryReason(result);
    if (!unusable) return { ok: true, summary: result, attempts };
    if (correction !== undefined) return fail("unusable_summary", `${unusable} (after one corrective retry)`);
    correction = `Your previous answer was refused: ${unusable}. Write the handoff summary as plain text with the requested sections; do not call tools.`;
  }
}
