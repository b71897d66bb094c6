/**
 * compactMessagesSafe: the safe compaction pass. Prune-only first, then the
 * summary path with its failure ladder; the replacement is validated against
 * the survival contract and must be smaller than the original before the
 * result is `ok`. It never mutates its input; a failure leaves the caller's
 * history untouched (the host commits only an `ok` result).
 */
import type {
  CompactionPath,
  CompactionPayload,
  CompactionTrigger,
  CoverageReceipt,
  Message,
} from "../model/types.js";
import { isToolResult, isToolUse } from "../model/blocks.js";
import { parseMessages } from "../model/schema.js";
import { isCheckpoint } from "../contract/classify.js";
import { protectedRound, type ProtectedRound } from "../contract/rounds.js";
import { validateSurvivalContract } from "../contract/validate.js";
import { placeholderKind, isPunctuationOnly } from "../contract/placeholder.js";
import type { BackgroundHandle, Summarizer, SummaryResult } from "../summarizers/types.js";
import { SummarizerError } from "../summarizers/types.js";
import { MAX_TIMEOUT_MS, withWholeRequestTimeout } from "../summarizers/llm-common.js";
import { extractiveSummarizer, runsInProcess } from "../summarizers/extractive/index.js";
import {
  addSentTokens,
  estimateTokens,
  fastEstimator,
  sentTokens,
  type SentTokens,
  type TokenEstimator,
} from "./tokens.js";
import {
  boundMessage,
  buildReplacementHistory,
  coverageReceipt,
  replacementParts,
  verbatimTokens,
} from "./replacement.js";
import { pruneOldResults, type PruneStats } from "./prune.js";
import { clearBilledUsage, defaultTarget } from "./pressure.js";
import { openRedactionScope, redactSecrets } from "../redact/redact.js";
import type { LiveState } from "./live-state.js";
import { CONSTANTS } from "../model/constants.js";

export interface CompactOptions {
  /** The summarizer; default: the embedded extractive summarizer (offline). */
  summarizer?: Summarizer;
  /** Size to reach, in estimated tokens (default: `defaultTarget(current size, window)`). */
  target?: number;
  /** The model's context window, in tokens: the default target is half of it (see `defaultTarget`). */
  window?: number;
  trigger?: CompactionTrigger;
  /** What the summary should keep in focus. */
  focus?: string;
  /** The user's pinned anchors, restated verbatim in the checkpoint. */
  anchors?: string;
  /** Live state re-read by the host at compaction time (git, background work). */
  liveState?: LiveState;
  /** Token budget for older plain user messages (default 20,000). */
  retainedUserTokens?: number;
  /** Only try the prune-only path. */
  pruneOnly?: boolean;
  /**
   * Size bound of the summary, in tokens. Default: the budget the target leaves (the target minus what
   * the replacement keeps verbatim: the protected round, system content, retained user messages, the
   * checkpoint's frame), held between 1,200 and 2,000; 2,000 when the verbatim parts alone reach the
   * target; never over half of what the note summarizes (`summaryBudget`).
   */
  summaryMaxTokens?: number;
  signal?: AbortSignal;
  /** Waits between retries (tests pass a fake; default: setTimeout). */
  sleep?: (ms: number) => Promise<void>;
  /** First backoff delay in ms (doubled each retry; default 1,000). */
  backoffMs?: number;
  /** Transient-error retries (default 3). */
  maxRetries?: number;
  /**
   * Time budget of the whole summary ladder, in ms: every summarizer call, retry and wait (default
   * 300,000 = 5 minutes). A call still running when it is spent is aborted; a wait that would overrun
   * it is not slept; either way the pass fails as `summarizer_failed` with a message saying the
   * failure is transient. `Infinity`: no budget.
   */
  budgetMs?: number;
  /** The longest server-asked wait (`retry-after`) or backoff delay honoured, in ms (default 60,000). */
  maxRetryAfterMs?: number;
  /** The clock of the budget (tests pass a fake; default `Date.now`). */
  now?: () => number;
  estimator?: TokenEstimator;
  /**
   * What the request each provider would receive for a message array measures
   * (named figures, e.g. `{ anthropic, openai }`, in the same unit before and
   * after). When given, no figure of the replacement may be larger than the
   * history's: shrinking is judged on what is actually sent, on top of the
   * estimator's own figures. The CLI passes its exporters' bodies, estimated
   * (`providerRequestTokens`); a host passes what its own conversion sends.
   */
  requestSizes?: (messages: readonly Message[]) => Readonly<Record<string, number>>;
}

/**
 * Why a pass returned no replacement. `nothing_to_compact` is an honest
 * outcome, not a failure: the history cannot shrink (it is all protected
 * round, or the protected round and the anchors are not smaller than what the
 * provider receives now); the message says which.
 */
export type CompactErrorKind =
  "summarizer_failed" | "unusable_summary" | "contract_violation" | "nothing_to_compact";

export interface CompactError {
  kind: CompactErrorKind;
  /** One line naming the cause. */
  message: string;
  /** Summarizer calls made. */
  attempts: number;
}

export interface CompactSuccess {
  ok: true;
  /** The ready `compaction` payload: the journal layer turns it into an entry (`compactionEntry`). */
  payload: CompactionPayload;
  path: CompactionPath;
  replacement: Message[];
  /** The checkpoint written (summary path) or kept (prune-only; null when there is none). */
  checkpoint: Message | null;
  coverage: CoverageReceipt;
  tokens_before: number;
  tokens_after: number;
  target: number;
  target_reached: boolean;
  /** Why the target was not reached (absent when it was). */
  target_missed?: string;
  /** The summary's size bound, in tokens (summary path): `summaryMaxTokens`, or the budget the target left. */
  summary_budget?: number;
  /** The summary text (empty on prune-only). */
  summary: string;
  /** The model that wrote the summary (`prune-only` when none did). */
  model: string;
  trigger: CompactionTrigger;
  /** Summarizer calls made. */
  attempts: number;
  prune: PruneStats;
}

export type CompactResult = CompactSuccess | { ok: false; error: CompactError };

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

/** A success, with its ready `compaction` payload. */
function succeed(r: Omit<CompactSuccess, "ok" | "payload">): CompactSuccess {
  const payload: CompactionPayload = {
    summary: r.summary,
    tokens_before: r.tokens_before,
    tokens_after: r.tokens_after,
    model: r.model,
    path: r.path,
    coverage: r.coverage,
    trigger: r.trigger,
    replacement: r.replacement,
  };
  return { ok: true, payload, ...r };
}

function errorResult(kind: CompactErrorKind, message: string, attempts: number): CompactResult {
  return { ok: false, error: { kind, message, attempts } };
}

/**
 * The history's estimated size, what each provider would receive of it, and
 * an upper bound on what pruning can save: every message before the region
 * that carries tool results shrinks at most to its framing plus one stub per
 * result. One pass over the messages.
 */
export function measureForPrune(
  messages: readonly Message[],
  regionStart: number,
  estimator: TokenEstimator,
): { tokens: number; sent: SentTokens; pruneSavingsBound: number } {
  let tokens = 0;
  let pruneSavingsBound = 0;
  const sent: SentTokens = { anthropic: 0, openai: 0 };
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const cost = estimator.message(m);
    tokens += cost;
    addSentTokens(sent, m, cost, estimator);
    if (i >= regionStart) continue;
    let results = 0;
    for (const b of m.content) if (isToolResult(b)) results++;
    if (results > 0) pruneSavingsBound += Math.max(0, cost - results * CONSTANTS.stubTokens);
  }
  return { tokens, sent, pruneSavingsBound };
}

/** Why `after` does not shrink what a provider receives from `before`, or undefined when it does. */
function notSmaller(before: SentTokens, after: SentTokens): string | undefined {
  if (after.anthropic >= before.anthropic)
    return `the Anthropic request would be ${after.anthropic} tokens, not smaller than its ${before.anthropic} now`;
  if (after.openai >= before.openai)
    return `the OpenAI request would be ${after.openai} tokens, not smaller than its ${before.openai} now`;
  return undefined;
}

/** Why `after` makes a request larger than `before` does, or undefined when none grows. */
function requestGrows(
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
): string | undefined {
  for (const [name, was] of Object.entries(before)) {
    const now = after[name];
    if (now !== undefined && now > was)
      return `the ${name} request would grow from ${was} to ${now} tokens as sent`;
  }
  return undefined;
}

/** Judges a candidate replacement against the history in every measure given (memoizing the history's). */
function shrinkJudge(
  messages: readonly Message[],
  sentBefore: SentTokens,
  estimator: TokenEstimator,
  requestSizes: CompactOptions["requestSizes"],
): (candidate: readonly Message[]) => string | undefined {
  let requestsBefore: Readonly<Record<string, number>> | undefined;
  return (candidate) => {
    const estimate = notSmaller(sentBefore, sentTokens(candidate, estimator));
    if (estimate !== undefined || !requestSizes) return estimate;
    requestsBefore ??= requestSizes(messages);
    return requestGrows(requestsBefore, requestSizes(candidate));
  };
}

/**
 * The summary's size bound when none is given (`summaryMaxTokens`):
 * - when the verbatim parts (the protected round, system content, retained
 *   user messages, the checkpoint's frame) alone already reach the target, it
 *   is missed whatever the note's size, so the note gets its full budget,
 *   `CONSTANTS.summaryMaxTokens` (starving it would buy nothing), and the
 *   result's `target_missed` says so and why;
 * - otherwise the note gets what the target leaves, held between
 *   `CONSTANTS.summaryMinTokens` and `CONSTANTS.summaryMaxTokens` (the floor
 *   wins over the target: a note too small to hand the work over is worse
 *   than a missed target).
 * Either way it is held under half of what the note summarizes (`spanTokens`):
 * a note as large as the messages it replaces would shrink nothing.
 * The floor (1,200 tokens) is the smallest summary an agent wrote for itself
 * on the corpus's real compactions (pi's, 1,184 to 1,473 tokens; Claude
 * Code's were 2,645 to 5,433; `npm run bench:fidelity` prints them): below
 * it, no agent judged a hand-over enough for the state of the work.
 *
 * A span that holds an earlier checkpoint (`carriedTokens`, its size) is a
 * second compaction: the new note must keep what the earlier one knew, so
 * the earlier note's size is carried over whole (it is already a summary;
 * compressing it again would lose what is still true) and the rule above
 * budgets only what is new, with the carried size counted as verbatim and
 * the half-span limit applied to the new messages alone. The sum is held
 * under `CONSTANTS.summaryCarriedMaxTokens`, so notes do not grow without
 * end over many compactions.
 */
export function summaryBudget(
  target: number,
  verbatimTokens: number,
  spanTokens = Infinity,
  carriedTokens = 0,
): number {
  const carried = Math.max(0, Math.floor(carriedTokens));
  const left = Math.floor(target - verbatimTokens - carried);
  const budget =
    left <= 0
      ? CONSTANTS.summaryMaxTokens
      : Math.min(CONSTANTS.summaryMaxTokens, Math.max(CONSTANTS.summaryMinTokens, left));
  const fresh = Math.max(1, Math.min(budget, Math.floor((spanTokens - carried) / 2)));
  if (carried === 0) return fresh;
  return Math.min(CONSTANTS.summaryCarriedMaxTokens, carried + fresh);
}

/** The size of the latest checkpoint in a span (what a second compaction carries over), 0 when none. */
function carriedCheckpointTokens(span: readonly Message[], e: TokenEstimator): number {
  for (let i = span.length - 1; i >= 0; i--) if (isCheckpoint(span[i]!)) return e.message(span[i]!);
  return 0;
}

/** Why a summary-path replacement is over its target, in one clause. */
function targetMissed(
  target: number,
  verbatim: number,
  budget: number,
  messages: readonly Message[],
  regionStart: number,
  anchors: string,
  e: TokenEstimator,
): string {
  const kept = `what is kept verbatim (the protected round, system content, retained user messages, the checkpoint's frame) is ${verbatim} tokens`;
  const got = (what: string) => `the note got ${what}${budget} tokens; `;
  if (verbatim >= target)
    return (
      `${kept}, over the target of ${target} by itself, so the target cannot be reached and ` +
      got(budget === CONSTANTS.summaryMaxTokens ? "its full budget of " : "") +
      fixedCost(messages, regionStart, anchors, e)
    );
  if (verbatim + CONSTANTS.summaryMinTokens > target)
    return (
      `${kept}, leaving less than the note's floor of ${CONSTANTS.summaryMinTokens} under the target of ${target}; ` +
      got(budget === CONSTANTS.summaryMinTokens ? "its floor of " : "") +
      fixedCost(messages, regionStart, anchors, e)
    );
  return `the note came to more than its budget of ${budget} tokens left by the verbatim parts (${verbatim} tokens)`;
}

function fixedCost(
  messages: readonly Message[],
  regionStart: number,
  anchors: string,
  e: TokenEstimator,
): string {
  let region = 0;
  for (let i = regionStart; i < messages.length; i++) region += e.message(messages[i]!);
  const anchorTokens = anchors.length > 0 ? e.text(anchors) : 0;
  return (
    `the protected last round alone is ${region} tokens` +
    (anchorTokens > 0 ? ` and the pinned anchors (restated in every checkpoint) ${anchorTokens} tokens` : "")
  );
}

interface PruneContext {
  judge: (candidate: readonly Message[]) => string | undefined;
  tokensBefore: number;
  target: number;
  anchors: string;
  trigger: CompactionTrigger;
  estimator: TokenEstimator;
  round: ProtectedRound;
}

/** The prune-only path: ok when it shrinks the history and passes the contract (path `prune-only`). */
function tryPruneOnly(messages: readonly Message[], regionStart: number, c: PruneContext): CompactResult {
  const pruned = pruneOldResults(messages, regionStart, c.round.instructionIndices);
  // The protected round is bounded as on the summary path (8 KiB results, nested blocks dropped).
  for (let i = regionStart; i < pruned.messages.length; i++)
    pruned.messages[i] = boundMessage(pruned.messages[i]!);
  const prunedMessages = clearBilledUsage(pruned.messages);
  const prunedTokens = estimateTokens(prunedMessages, c.estimator);
  const grows =
    prunedTokens >= c.tokensBefore
      ? "it found nothing to prune outside the protected round"
      : c.judge(prunedMessages);
  if (grows !== undefined)
    return errorResult("nothing_to_compact", `nothing to compact by prune-only: ${grows}`, 0);
  const verdict = validateSurvivalContract(messages, prunedMessages, {
    anchors: c.anchors,
    path: "prune-only",
    round: c.round,
  });
  if (!verdict.valid) return errorResult("contract_violation", `prune-only refused: ${verdict.reason}`, 0);
  const region = prunedMessages.slice(regionStart);
  return succeed({
    path: "prune-only",
    replacement: prunedMessages,
    checkpoint: prunedMessages.find(isCheckpoint) ?? null,
    coverage: coverageReceipt("prune-only", region, c.anchors),
    tokens_before: c.tokensBefore,
    tokens_after: prunedTokens,
    target: c.target,
    target_reached: prunedTokens <= c.target,
    ...(prunedTokens <= c.target
      ? {}
      : { target_missed: `pruning alone (old tool results stubbed) comes to ${prunedTokens} tokens` }),
    summary: "",
    model: "prune-only",
    trigger: c.trigger,
    attempts: 0,
    prune: pruned.stats,
  });
}

/**
 * Compacts `messages` (validated first: a malformed message or one nested
 * deeper than `MAX_MESSAGE_DEPTH` throws a `ModelError` naming its path).
 */
export async function compactMessagesSafe(
  messages: readonly Message[],
  options: CompactOptions = {},
): Promise<CompactResult> {
  // A text redacted twice in this compaction (an older user message kept, and quoted in the note)
  // is redacted once; nothing is remembered past the compaction.
  const closeScope = openRedactionScope();
  try {
    return await compact(messages, options);
  } finally {
    closeScope();
  }
}

async function compact(messages: readonly Message[], options: CompactOptions): Promise<CompactResult> {
  parseMessages(messages, "messages");
  const estimator = options.estimator ?? fastEstimator;
  const trigger = options.trigger ?? "auto";
  const round = protectedRound(messages);
  const {
    tokens: tokensBefore,
    sent: sentBefore,
    pruneSavingsBound,
  } = measureForPrune(messages, round.regionStart, estimator);
  const target = options.target ?? defaultTarget(tokensBefore, options.window);
  const anchors = options.anchors?.trim() ?? "";
  const judge = shrinkJudge(messages, sentBefore, estimator, options.requestSizes);

  if (round.regionStart === 0) {
    return errorResult(
      "nothing_to_compact",
      `nothing to compact: the whole history (${tokensBefore} tokens) is the protected last round`,
      0,
    );
  }

  // 1. Prune-only.
  // When even stubbing every old result could not reach the target, the prune-only history is not
  // built at all (it would be thrown away for the summary path).
  if (options.pruneOnly || tokensBefore - pruneSavingsBound <= target) {
    const pruned = tryPruneOnly(messages, round.regionStart, {
      judge,
      tokensBefore,
      target,
      anchors,
      trigger,
      estimator,
      round,
    });
    if (options.pruneOnly || (pruned.ok && pruned.target_reached)) return pruned;
  }

  // 2. Summary: everything outside the protected round, plus any checkpoint inside it (folded in, never stacked).
  const span = [
    ...messages.slice(0, round.regionStart),
    ...messages.slice(round.regionStart).filter(isCheckpoint),
  ];
  const parts = replacementParts(messages, {
    anchors,
    liveState: options.liveState,
    retainedUserTokens: options.retainedUserTokens,
    estimator,
    round,
  });
  const verbatim = verbatimTokens(parts, options.liveState, estimator);
  const budget =
    options.summaryMaxTokens ??
    summaryBudget(
      target,
      verbatim,
      estimateTokens(span, estimator),
      carriedCheckpointTokens(span, estimator),
    );
  // A size that was asked for, or a target with little room to spare (under twice the cap after the
  // verbatim parts), is held in the estimator's count; with room to spare the note keeps its own measure
  // (about four characters a token), as it always had: dense text then gets its full note.
  const counted =
    options.summaryMaxTokens !== undefined || target - verbatim < 2 * CONSTANTS.summaryMaxTokens;
  // What stays verbatim after the span: the summarizer reads it for the state at the cut (the next step).
  const following = messages.slice(round.regionStart).filter((m) => !isCheckpoint(m));
  const outcome = await summarizeWithLadder(
    span,
    following,
    { ...options, summaryMaxTokens: budget },
    counted,
    parts.users,
  );
  if (!outcome.ok) return outcome.result;

  const summary = outcome.summary.redacted
    ? outcome.summary.text.trim()
    : redactSecrets(outcome.summary.text.trim());
  const built = buildReplacementHistory(messages, {
    summary,
    anchors,
    liveState: options.liveState,
    retainedUserTokens: options.retainedUserTokens,
    estimator,
    round,
    parts,
  });
  if (!built.ok) return errorResult("contract_violation", built.error, outcome.attempts);
  const replacement = clearBilledUsage(built.replacement);
  const tokensAfter = estimateTokens(replacement, estimator);
  const grows =
    tokensAfter >= tokensBefore
      ? `the replacement would be ${tokensAfter} tokens, not smaller than the history's ${tokensBefore}`
      : judge(replacement);
  if (grows !== undefined) {
    return errorResult(
      "nothing_to_compact",
      `nothing to compact: ${grows}; ${fixedCost(messages, round.regionStart, anchors, estimator)}`,
      outcome.attempts,
    );
  }
  return succeed({
    path: "summary",
    replacement,
    checkpoint: built.checkpoint,
    coverage: built.coverage,
    tokens_before: tokensBefore,
    tokens_after: tokensAfter,
    target,
    target_reached: tokensAfter <= target,
    ...(tokensAfter <= target
      ? {}
      : {
          target_missed: targetMissed(
            target,
            verbatim,
            budget,
            messages,
            round.regionStart,
            anchors,
            estimator,
          ),
        }),
    summary_budget: budget,
    summary,
    model: outcome.summary.model,
    trigger,
    attempts: outcome.attempts,
    prune: { stubbed: 0, deduplicated: 0, imagesDropped: 0, bytesRemoved: 0 },
  });
}

type LadderOutcome =
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
 * The failure ladder: transient errors retried up to 3 times with exponential
 * backoff (or the server's `retry-after`, capped at 60 s); deterministic errors
 * fail at once; "prompt too long" drops the oldest complete unit (never a
 * checkpoint) and retries; an unusable summary gets one corrective retry. The
 * whole ladder runs within a time budget (default 5 minutes).
 */
async function summarizeWithLadder(
  span: readonly Message[],
  following: readonly Message[],
  options: CompactOptions,
  counted: boolean,
  retained: readonly Message[] = [],
): Promise<LadderOutcome> {
  const summarizer = options.summarizer ?? extractiveSummarizer();
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
          : await withWholeRequestTimeout(
              left,
              options.signal,
              () => new BudgetSpent(),
              (signal) => summarizer.summarize({ ...request, signal }),
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
