/** The summary's size budget on the summary path, and why a target was missed. */
import type { Message } from "../model/types.js";
import { isCheckpoint } from "../contract/classify.js";
import { CONSTANTS } from "../model/constants.js";
import type { TokenEstimator } from "./tokens.js";

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
export function carriedCheckpointTokens(span: readonly Message[], e: TokenEstimator): number {
  for (let i = span.length - 1; i >= 0; i--) if (isCheckpoint(span[i]!)) return e.message(span[i]!);
  return 0;
}

/** Why a summary-path replacement is over its target, in one clause. */
export function targetMissed(
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

export function fixedCost(
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
