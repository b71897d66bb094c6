/**
 * compactMessagesSafe: the safe compaction pass. Prune-only first, then the
 * summary path with its failure ladder; the replacement is validated against
 * the survival contract and must be smaller than the original before the
 * result is `ok`. It never mutates its input; a failure leaves the caller's
 * history untouched (the host commits only an `ok` result).
 */
import type { CompactionTrigger, Message } from "../model/types.js";
import { isToolResult } from "../model/blocks.js";
import { parseMessages } from "../model/schema.js";
import { isCheckpoint, notCheckpoint } from "../contract/classify.js";
import { protectedRound, type ProtectedRound } from "../contract/rounds.js";
import { validateSurvivalContract } from "../contract/validate.js";
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
  openBoundScope,
  replacementParts,
  verbatimTokens,
  type ReplacementParts,
} from "./replacement.js";
import { recentTailStart } from "./tail.js";
import { planPrune, type PrunePlan, type PruneStats } from "./prune.js";
import { clearBilledUsage, defaultTarget } from "./pressure.js";
import { openRedactionScope, redactSecrets } from "../redact/redact.js";
import { CONSTANTS } from "../model/constants.js";
import { errorResult, succeed, type CompactOptions, type CompactResult } from "./result.js";
import { carriedCheckpointTokens, fixedCost, summaryBudget, targetMissed } from "./budget.js";
import { summarizeWithLadder } from "./ladder.js";
import { withProviderCompactions } from "./provider-prefix.js";
import { compactionProvidersIn } from "../model/provider-compaction.js";

export type {
  CompactError,
  CompactErrorKind,
  CompactOptions,
  CompactResult,
  CompactSuccess,
} from "./result.js";
export { summaryBudget } from "./budget.js";
export {
  completeUnits,
  DEFAULT_LADDER_BUDGET_MS,
  MAX_RETRY_AFTER_MS,
  unusableSummaryReason,
} from "./ladder.js";

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

/** What both paths judge a candidate by. */
interface PassContext {
  judge: (candidate: readonly Message[]) => string | undefined;
  tokensBefore: number;
  target: number;
  anchors: string;
  trigger: CompactionTrigger;
  estimator: TokenEstimator;
  round: ProtectedRound;
}

/**
 * A pruned history of `planPrune` (`redact` false: as it would be but for its secrets), with the protected
 * round bounded as on the summary path (8 KiB results, nested blocks dropped), and its size.
 */
function prunedHistory(
  plan: PrunePlan,
  round: ProtectedRound,
  estimator: TokenEstimator,
  redact: boolean,
): { messages: Message[]; stats: PruneStats; tokens: number } {
  const pruned = plan.build(redact);
  for (let i = round.regionStart; i < pruned.messages.length; i++)
    pruned.messages[i] = boundMessage(pruned.messages[i]!);
  const prunedMessages = clearBilledUsage(pruned.messages);
  return { messages: prunedMessages, stats: pruned.stats, tokens: estimateTokens(prunedMessages, estimator) };
}

/**
 * The size of the prune-only history before its redaction: when it is over the target, the prune-only
 * history is not built (its redaction, most of its cost, would be thrown away for the summary path). The
 * redaction only turns secrets into markers of a few words, so it is not counted: a history that only
 * the redaction of its secrets would bring down to the target goes to the summary path (see DECISIONS).
 * `plan`: the pruning, decided once for both (`planPrune`).
 */
export function pruneSizeBeforeRedaction(
  messages: readonly Message[],
  round: ProtectedRound,
  estimator: TokenEstimator,
  plan: PrunePlan = planPrune(messages, round.regionStart, round.instructionIndices),
): number {
  return prunedHistory(plan, round, estimator, false).tokens;
}

/** The prune-only path: ok when it shrinks the history and passes the contract (path `prune-only`). */
function tryPruneOnly(
  messages: readonly Message[],
  regionStart: number,
  c: PassContext,
  plan: PrunePlan,
): CompactResult {
  const pruned = prunedHistory(plan, c.round, c.estimator, true);
  const prunedMessages = pruned.messages;
  const prunedTokens = pruned.tokens;
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
  // A message bounded twice (the recent tail's measure, then the replacement) is bounded once.
  const closeBoundScope = openBoundScope();
  try {
    return await compact(messages, options);
  } finally {
    closeBoundScope();
    closeScope();
  }
}

async function compact(messages: readonly Message[], options: CompactOptions): Promise<CompactResult> {
  if (options.pruneOnly && options.summaryOnly)
    throw new RangeError("pruneOnly and summaryOnly exclude each other: set one of them");
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
  // When even stubbing every old result could not reach the target (a bound first, then the pruned
  // history's size before its redaction), the prune-only history is not built at all: it would be thrown
  // away for the summary path.
  // A provider's compaction the caller folds away is folded by the summary path only (prune-only keeps it).
  const summaryOnly =
    options.summaryOnly ||
    (options.providerCompaction === "fold" && !options.pruneOnly && compactionProvidersIn(messages).size > 0);
  const plan =
    options.pruneOnly || (!summaryOnly && tokensBefore - pruneSavingsBound <= target)
      ? planPrune(messages, round.regionStart, round.instructionIndices)
      : undefined;
  if (plan && (options.pruneOnly || pruneSizeBeforeRedaction(messages, round, estimator, plan) <= target)) {
    const pass = { judge, tokensBefore, target, anchors, trigger, estimator, round };
    const pruned = tryPruneOnly(messages, round.regionStart, pass, plan);
    if (options.pruneOnly || (pruned.ok && pruned.target_reached)) return pruned;
  }

  // 2. Summary.
  return summaryPath(messages, options, { judge, tokensBefore, target, anchors, trigger, estimator, round });
}

/** What the summary path keeps verbatim (the recent tail included), the note's budget and the span it summarizes. */
function planSummary(
  messages: readonly Message[],
  options: CompactOptions,
  c: PassContext,
): { parts: ReplacementParts; verbatim: number; budget: number; counted: boolean; span: Message[] } {
  const { target, anchors, estimator, round } = c;
  const partsOptions = {
    anchors,
    liveState: options.liveState,
    retainedUserTokens: options.retainedUserTokens,
    estimator,
    round,
    providerCompaction: options.providerCompaction,
  };
  // What the note summarizes: the messages before the verbatim part (a provider's compaction kept first
  // taken out of it, a folded one as its stand-in) and the checkpoints after it.
  const spanFrom = (start: number, parts: ReplacementParts) => [
    ...withProviderCompactions(messages, parts.providers, 0, start),
    ...messages.slice(start).filter(isCheckpoint),
  ];
  const noteBudget = (parts: ReplacementParts, verbatim: number): number => {
    const span = spanFrom(parts.keepStart, parts);
    return (
      options.summaryMaxTokens ??
      summaryBudget(
        target,
        verbatim,
        estimateTokens(span, estimator),
        carriedCheckpointTokens(span, estimator),
      )
    );
  };
  let parts = replacementParts(messages, partsOptions);
  let verbatim = verbatimTokens(parts, options.liveState, estimator);
  let budget = noteBudget(parts, verbatim);
  // A size that was asked for, or a target with little room to spare (under twice the cap after the
  // verbatim parts), is held in the estimator's count; with room to spare the note keeps its own measure
  // (about four characters a token), as it always had: dense text then gets its full note.
  const counted =
    options.summaryMaxTokens !== undefined || target - verbatim < 2 * CONSTANTS.summaryMaxTokens;
  // The recent tail: what the target leaves after the note's budget (twice it when the note keeps its
  // own measure), within keepRecentTokens for the kept messages as a whole.
  const keepStart = recentTailStart(
    messages,
    round.regionStart,
    Math.min(
      target - verbatim - (counted ? 1 : 2) * budget,
      (options.keepRecentTokens ?? CONSTANTS.keepRecentTokens) - estimateTokens(parts.kept, estimator),
    ),
    estimator,
  );
  if (keepStart < round.regionStart) {
    parts = replacementParts(messages, { ...partsOptions, keepStart });
    verbatim = verbatimTokens(parts, options.liveState, estimator);
    budget = noteBudget(parts, verbatim);
  }
  return { parts, verbatim, budget, counted, span: spanFrom(parts.keepStart, parts) };
}

/**
 * The summary path: everything older than what is kept verbatim (the protected round and the recent tail
 * before it), plus any checkpoint inside that (folded in, never stacked), becomes one note, written within
 * its budget through the failure ladder.
 */
async function summaryPath(
  messages: readonly Message[],
  options: CompactOptions,
  c: PassContext,
): Promise<CompactResult> {
  const { judge, tokensBefore, target, anchors, trigger, estimator, round } = c;
  const { parts, verbatim, budget, counted, span } = planSummary(messages, options, c);
  // What stays verbatim after the span: the summarizer reads it for the state at the cut (the next step).
  const following = messages.slice(parts.keepStart).filter(notCheckpoint);
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
