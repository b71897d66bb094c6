/**
 * The recent tail: on the summary path, the newest messages before the
 * protected round are kept verbatim as well, as whole units, while there is
 * room for them. The note then summarizes only the older span, as pi keeps
 * its `keepRecentTokens` and Codex its recent user messages. Pure.
 */
import type { Message } from "../model/types.js";
import { isToolResult, isToolUse } from "../model/blocks.js";
import { isCheckpoint } from "../contract/classify.js";
import { boundMessage } from "./replacement.js";
import type { TokenEstimator } from "./tokens.js";

/**
 * Where the verbatim part of a replacement starts: `regionStart` (the
 * protected round's start), moved back over the newest messages before it
 * while they cost no more than `room` tokens (as kept: tool results bounded),
 * and only to a start that splits no call from its result. It never crosses
 * a checkpoint (an earlier note is folded into the new one, never kept beside
 * it), and it leaves the span at least its first message that is not system
 * content, so that there is still something to summarize.
 */
export function recentTailStart(
  messages: readonly Message[],
  regionStart: number,
  room: number,
  estimator: TokenEstimator,
): number {
  if (!(room > 0)) return regionStart;
  let floor = 0;
  while (floor < regionStart && messages[floor]!.role === "system") floor++;
  /** Results in the tail whose call is not in it yet: the tail may not start while one is open. */
  const open = new Set<string>();
  let used = 0;
  let start = regionStart;
  for (let i = regionStart - 1; i > floor; i--) {
    const m = messages[i]!;
    if (isCheckpoint(m)) break;
    used += estimator.message(boundMessage(m));
    if (used > room) break;
    for (const b of m.content) if (isToolResult(b)) open.add(b.tool_use_id);
    for (const b of m.content) if (isToolUse(b)) open.delete(b.id);
    if (open.size === 0) start = i;
  }
  return start;
}
