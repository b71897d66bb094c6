/**
 * compactMessagesSafe: the safe compaction pass. Prune-only first, then the
 * summary path with its failure ladder; the replacement is validated against
 * the survival contract and must be smaller than the original before the
 * result is `ok`. It never mutates its input; a failure leaves the caller's
 * history untouched (the host commits only an `ok` result).
 */
import type { CompactionPath, CompactionTrigger, CoverageReceipt, Message } from "../model/types.js";
import { isAssistantRole, isToolResult, isToolUse } from "../model/blocks.js";
import { isCheckpoint } from "../contract/classify.js";
import { protectedRound, type ProtectedRound } from "../contract/rounds.js";
import { validateSurvivalContract } from "../contract/validate.js";
import { placeholderKind, isPunctuationOnly } from "../contract/placeholder.js";
import type { BackgroundHandle, Summarizer, SummaryResult } from "../summarizers/types.js";
import { SummarizerError } from "../summarizers/types.js";
import { extractiveSummarizer } from "../summarizers/extractive.js";
import { estimateTokens, fastEstimator, type TokenEstimator } from "./tokens.js";
import { buildReplacementHistory } from "./replacement.js";
import { pruneOldResults, type PruneStats } from "./prune.js";
import { clearBilledUsage } from "./pressure.js";
import { redactSecrets } from "./redact.js";
import type { LiveState } from "./live-state.js";

export interface CompactOptions {
  /** The summarizer; default: the embedded extractive summarizer (offline). */
  summarizer?: Summarizer;
  /** Size to reach, in estimated tokens (default: half the current size). */
  target?: number;
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
  /** Size bound of the summary, in tokens (default 2,000). */
  summaryMaxTokens?: number;
  signal?: AbortSignal;
  /** Waits between retries (tests pass a fake; default: setTimeout). */
  sleep?: (ms: number) => Promise<void>;
  /** First backoff delay in ms (doubled each retry; default 1,000). */
  backoffMs?: number;
  /** Transient-error retries (default 3). */
  maxRetries?: number;
  estimator?: TokenEstimator;
}

export type CompactErrorKind =
  "summarizer_failed" | "unusable_summary" | "contract_violation" | "no_shrink" | "nothing_to_compact";

export interface CompactError {
  kind: CompactErrorKind;
  /** One line naming the cause. */
  message: string;
  /** Summarizer calls made. */
  attempts: number;
}

export interface CompactSuccess {
  ok: true;
  path: CompactionPath;
  replacement: Message[];
  /** The checkpoint written (summary path) or kept (prune-only; null when there is none). */
  checkpoint: Message | null;
  coverage: CoverageReceipt;
  tokens_before: number;
  tokens_after: number;
  target: number;
  target_reached: boolean;
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

function errorResult(kind: CompactErrorKind, message: string, attempts: number): CompactResult {
  return { ok: false, error: { kind, message, attempts } };
}

/** Tokens a stub costs at most (its text is about 200 characters). */
const STUB_TOKENS = 80;

/**
 * The history's estimated size, and an upper bound on what pruning can save:
 * every message before the region that carries tool results shrinks at most
 * to its framing plus one stub per result. One pass over the messages.
 */
export function measureForPrune(
  messages: readonly Message[],
  regionStart: number,
  estimator: TokenEstimator,
): { tokens: number; pruneSavingsBound: number } {
  let tokens = 0;
  let pruneSavingsBound = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const cost = estimator.message(m);
    tokens += cost;
    if (i >= regionStart) continue;
    let results = 0;
    for (const b of m.content) if (isToolResult(b)) results++;
    if (results > 0) pruneSavingsBound += Math.max(0, cost - results * STUB_TOKENS);
  }
  return { tokens, pruneSavingsBound };
}

interface PruneContext {
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
  const prunedMessages = clearBilledUsage(pruned.messages);
  const prunedTokens = estimateTokens(prunedMessages, c.estimator);
  if (prunedTokens >= c.tokensBefore) {
    return errorResult("no_shrink", "prune-only found nothing to prune outside the protected round", 0);
  }
  const verdict = validateSurvivalContract(messages, prunedMessages, {
    anchors: c.anchors,
    path: "prune-only",
    round: c.round,
  });
  if (!verdict.valid) return errorResult("contract_violation", `prune-only refused: ${verdict.reason}`, 0);
  const region = prunedMessages.slice(regionStart);
  return {
    ok: true,
    path: "prune-only",
    replacement: prunedMessages,
    checkpoint: prunedMessages.find(isCheckpoint) ?? null,
    coverage: {
      path: "prune-only",
      last_round_messages: region.length,
      last_round_tool_results: region.reduce((n, m) => n + m.content.filter(isToolResult).length, 0),
      last_round_assistant: region.filter(isAssistantRole).length,
      anchors_chars: c.anchors.length,
    },
    tokens_before: c.tokensBefore,
    tokens_after: prunedTokens,
    target: c.target,
    target_reached: prunedTokens <= c.target,
    summary: "",
    model: "prune-only",
    trigger: c.trigger,
    attempts: 0,
    prune: pruned.stats,
  };
}

export async function compactMessagesSafe(
  messages: readonly Message[],
  options: CompactOptions = {},
): Promise<CompactResult> {
  const estimator = options.estimator ?? fastEstimator;
  const trigger = options.trigger ?? "auto";
  const round = protectedRound(messages);
  const { tokens: tokensBefore, pruneSavingsBound } = measureForPrune(messages, round.regionStart, estimator);
  const target = options.target ?? Math.floor(tokensBefore / 2);
  const anchors = options.anchors?.trim() ?? "";

  if (round.regionStart === 0) {
    return errorResult(
      "nothing_to_compact",
      "nothing to compact: the whole history is the protected last round",
      0,
    );
  }

  // 1. Prune-only.
  // When even stubbing every old result could not reach the target, the prune-only history is not
  // built at all (it would be thrown away for the summary path).
  if (options.pruneOnly || tokensBefore - pruneSavingsBound <= target) {
    const pruned = tryPruneOnly(messages, round.regionStart, {
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
  const outcome = await summarizeWithLadder(span, options);
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
  });
  if (!built.ok) return errorResult("contract_violation", built.error, outcome.attempts);
  const replacement = clearBilledUsage(built.replacement);
  const tokensAfter = estimateTokens(replacement, estimator);
  if (tokensAfter >= tokensBefore) {
    return errorResult(
      "no_shrink",
      `the replacement (${tokensAfter} tokens) is not smaller than the history (${tokensBefore} tokens)`,
      outcome.attempts,
    );
  }
  return {
    ok: true,
    path: "summary",
    replacement,
    checkpoint: built.checkpoint,
    coverage: built.coverage,
    tokens_before: tokensBefore,
    tokens_after: tokensAfter,
    target,
    target_reached: tokensAfter <= target,
    summary,
    model: outcome.summary.model,
    trigger,
    attempts: outcome.attempts,
    prune: { stubbed: 0, deduplicated: 0, imagesDropped: 0, bytesRemoved: 0 },
  };
}

type LadderOutcome =
  { ok: true; summary: SummaryResult; attempts: number } | { ok: false; result: CompactResult };

/**
 * The failure ladder: transient errors retried up to 3 times with exponential
 * backoff; deterministic errors fail at once; "prompt too long" drops the
 * oldest complete unit (never a checkpoint) and retries; an unusable summary
 * gets one corrective retry.
 */
async function summarizeWithLadder(
  span: readonly Message[],
  options: CompactOptions,
): Promise<LadderOutcome> {
  const summarizer = options.summarizer ?? extractiveSummarizer();
  const sleep = options.sleep ?? defaultSleep;
  const maxRetries = options.maxRetries ?? 3;
  const backoff = options.backoffMs ?? 1000;
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

  for (;;) {
    if (options.signal?.aborted) return fail("summarizer_failed", "compaction aborted");
    attempts++;
    let result: SummaryResult;
    try {
      result = await summarizer.summarize({
        messages: input,
        focus: options.focus,
        maxTokens: options.summaryMaxTokens,
        correction,
        background,
        signal: options.signal,
      });
    } catch (e) {
      const err = e instanceof SummarizerError ? e : undefined;
      const message = `${summarizer.name} summarizer: ${(e as Error)?.message ?? String(e)}`.replace(
        /\s*\n\s*/g,
        " ",
      );
      if (options.signal?.aborted) return fail("summarizer_failed", `compaction aborted (${message})`);
      if (err?.kind === "transient") {
        if (transientRetries >= maxRetries)
          return fail("summarizer_failed", `${message} (gave up after ${maxRetries} retries)`);
        const wait = err.retryAfterMs ?? backoff * 2 ** transientRetries;
        transientRetries++;
        await sleep(wait);
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
