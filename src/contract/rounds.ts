/**
 * Round and exchange segmentation, and the protected last round
 * (schema version 2). Pure functions over a message array.
 */
import type { Message } from "../model/types.js";
import { isAssistantRole, isToolResult, isToolUse } from "../model/blocks.js";
import { isPlainUser } from "./classify.js";
import { CONSTANTS } from "../model/constants.js";

export interface ProtectedRound {
  /** Start of the current round (the latest plain user message, or the walk-back target). */
  roundStart: number;
  /** Start of the verbatim region: messages [regionStart, end] are kept in order. */
  regionStart: number;
  /** Indices of the plain user messages that are the current instructions (each checked on its own). */
  instructionIndices: number[];
  /** Calling indices of the `CONSTANTS.protectedExchanges` most recent complete exchanges (older first), when they exist. */
  protectedExchangeIndices: number[];
  /** Ids of calls with no result anywhere in the history. */
  unresolvedCallIds: string[];
}

/**
 * The exchanges as parallel arrays of small integers (no object per
 * exchange): the engine runs this on every compaction, over histories of
 * 100k messages, where one long-lived object per exchange makes the garbage
 * collector's work grow faster than the history.
 */
interface ExchangeTable {
  /** Calling index of each exchange, ascending. */
  callIndex: number[];
  /** Index of the latest message carrying one of its results (-1: none). */
  lastResult: number[];
  /** Calls of each exchange still without a result. */
  pending: number[];
  /** Ids of the calls with no result anywhere. */
  unresolvedIds: string[];
}

function scanExchanges(messages: readonly Message[]): ExchangeTable {
  const callIndex: number[] = [];
  const lastResult: number[] = [];
  const pending: number[] = [];
  const open = new Map<string, number>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    for (const b of m.content) {
      if (!isToolResult(b)) continue;
      const x = open.get(b.tool_use_id);
      if (x === undefined) continue;
      lastResult[x] = i;
      pending[x]!--;
      open.delete(b.tool_use_id);
    }
    if (!isAssistantRole(m)) continue;
    let x = -1;
    for (const b of m.content) {
      if (!isToolUse(b)) continue;
      if (x < 0) {
        x = callIndex.length;
        callIndex.push(i);
        lastResult.push(-1);
        pending.push(0);
      }
      pending[x]!++;
      open.set(b.id, x); // a repeated id: the earlier call stays unanswered
    }
  }
  return { callIndex, lastResult, pending, unresolvedIds: [...open.keys()] };
}

function latestPlainUser(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (isPlainUser(messages[i]!)) return i;
  return -1;
}

/** The round start, given the calling index of the most recent exchange (-1: none). */
function roundStartFrom(messages: readonly Message[], lastCallIndex: number): number {
  const latest = latestPlainUser(messages);
  if (latest < 0) return 0;
  if (lastCallIndex < 0) return latest; // chat-only
  if (lastCallIndex > latest) return latest;
  // Toolless tail: walk back to the latest plain user message before the most recent exchange.
  for (let i = lastCallIndex - 1; i >= 0; i--) if (isPlainUser(messages[i]!)) return i;
  return 0;
}

/**
 * How many exchanges count for the round: all of them, less a batch of calls
 * still in flight at the end (no result, and the conversation did not go on
 * after it: no instruction and no assistant message follows; see
 * `conversationGoesOnAfter`). No request carries such a batch (a provider
 * takes no call without its result), so a round judged with it would differ
 * from the round of what is sent, and a compaction checked on the history
 * would fail when checked on its requests.
 */
function countedExchanges(messages: readonly Message[], t: ExchangeTable): number {
  const n = t.callIndex.length;
  if (n === 0) return 0;
  const at = t.callIndex[n - 1]!;
  return t.lastResult[n - 1] === -1 && !conversationGoesOnAfter(messages, at) ? n - 1 : n;
}

/**
 * Whether an instruction or a non-empty assistant message follows message
 * `index`. A call with no result is abandoned when the conversation went on
 * after it, and in flight otherwise (checkpoints, branch summaries and results
 * of other calls are not the conversation going on). The exporters use this
 * too: an abandoned call gets a synthetic error result, an in-flight one is
 * left out of the request.
 */
export function conversationGoesOnAfter(messages: readonly Message[], index: number): boolean {
  return index < lastConversationIndex(messages);
}

/** An instruction or a non-empty assistant message: the conversation going on (see `conversationGoesOnAfter`). */
export function movesConversationOn(m: Message): boolean {
  return (isAssistantRole(m) && m.content.length > 0) || isPlainUser(m);
}

/** Index of the last message that moves the conversation on (-1: none); see `conversationGoesOnAfter`. */
export function lastConversationIndex(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (movesConversationOn(messages[i]!)) return i;
  return -1;
}

/** Start of the current round (docs/SURVIVAL_CONTRACT.md, "The protected last round"). */
export function currentRoundStart(messages: readonly Message[]): number {
  const t = scanExchanges(messages);
  const n = countedExchanges(messages, t);
  return roundStartFrom(messages, n > 0 ? t.callIndex[n - 1]! : -1);
}

/** The protected last round of a history. */
export function protectedRound(messages: readonly Message[]): ProtectedRound {
  const t = scanExchanges(messages);
  const n = t.callIndex.length;
  const counted = countedExchanges(messages, t);
  const roundStart = roundStartFrom(messages, counted > 0 ? t.callIndex[counted - 1]! : -1);

  // The two most recent complete exchanges, and how many exchanges the round holds.
  const protectedExchangeIndices: number[] = [];
  for (let x = n - 1; x >= 0 && protectedExchangeIndices.length < CONSTANTS.protectedExchanges; x--) {
    if (t.pending[x] === 0) protectedExchangeIndices.unshift(t.callIndex[x]!);
  }
  // The older of the (at most two) protected exchanges: with only one complete exchange in the
  // whole history (the round holds just an in-flight call, say), that one is still protected.
  const olderIndex = protectedExchangeIndices[0];
  let inRound = 0;
  for (let x = counted - 1; x >= 0 && t.callIndex[x]! >= roundStart; x--) inRound++;

  let start =
    inRound <= CONSTANTS.protectedExchanges
      ? Math.min(roundStart, olderIndex ?? roundStart)
      : (olderIndex ?? roundStart);

  // Widen until no split falls between a call and its result, or after an unresolved call.
  for (let changed = true; changed;) {
    changed = false;
    for (let x = 0; x < n && t.callIndex[x]! < start; x++) {
      if (t.lastResult[x]! >= start || t.pending[x]! > 0) {
        start = t.callIndex[x]!;
        changed = true;
      }
    }
  }

  const instructionIndices: number[] = [];
  for (let i = Math.min(roundStart, start); i < messages.length; i++) {
    if (isPlainUser(messages[i]!)) instructionIndices.push(i);
  }
  return {
    roundStart,
    regionStart: start,
    instructionIndices,
    protectedExchangeIndices,
    unresolvedCallIds: t.unresolvedIds,
  };
}
