/**
 * Round and exchange segmentation, and the protected last round
 * (schema version 2). Pure functions over a message array.
 */
import type { Message } from "../model/types.js";
import { isAssistantRole, isToolResult, isToolUse } from "../model/blocks.js";
import { isPlainUser } from "./classify.js";

export interface ToolExchange {
  /** Index of the assistant message holding the batch of calls. */
  callIndex: number;
  callIds: string[];
  /** Index of the message carrying each call's result (absent when there is none). */
  resultIndex: Map<string, number>;
  complete: boolean;
}

export interface ProtectedRound {
  /** Start of the current round (the latest plain user message, or the walk-back target). */
  roundStart: number;
  /** Start of the verbatim region: messages [regionStart, end] are kept in order. */
  regionStart: number;
  /** Indices of the plain user messages that are the current instructions (each checked on its own). */
  instructionIndices: number[];
  /** Exchanges whose calling message lies in the region. */
  exchanges: ToolExchange[];
  /** The two most recent complete exchanges (newest last), when they exist. */
  protectedExchanges: ToolExchange[];
  /** Ids of calls with no result anywhere in the history. */
  unresolvedCallIds: string[];
}

/** Every tool exchange in order of its calling message. */
export function findExchanges(messages: readonly Message[]): ToolExchange[] {
  const exchanges: ToolExchange[] = [];
  const owner = new Map<string, ToolExchange>();
  messages.forEach((m, i) => {
    if (isAssistantRole(m)) {
      const ids = m.content.filter(isToolUse).map((b) => b.id);
      if (ids.length > 0) {
        const ex: ToolExchange = { callIndex: i, callIds: ids, resultIndex: new Map(), complete: false };
        exchanges.push(ex);
        for (const id of ids) owner.set(id, ex);
      }
    }
    for (const b of m.content) {
      if (!isToolResult(b)) continue;
      const ex = owner.get(b.tool_use_id);
      if (ex && ex.callIndex < i && !ex.resultIndex.has(b.tool_use_id)) ex.resultIndex.set(b.tool_use_id, i);
    }
  });
  for (const ex of exchanges) ex.complete = ex.callIds.every((id) => ex.resultIndex.has(id));
  return exchanges;
}

/** Start of the current round (DESIGN.md "Current round"). */
export function currentRoundStart(messages: readonly Message[], exchanges = findExchanges(messages)): number {
  let latest = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isPlainUser(messages[i]!)) {
      latest = i;
      break;
    }
  }
  if (latest < 0) return 0;
  const last = exchanges[exchanges.length - 1];
  if (!last) return latest; // chat-only
  if (last.callIndex > latest) return latest;
  // Toolless tail: walk back to the latest plain user message before the most recent exchange.
  for (let i = last.callIndex - 1; i >= 0; i--) if (isPlainUser(messages[i]!)) return i;
  return 0;
}

/** The protected last round of a history. */
export function protectedRound(messages: readonly Message[]): ProtectedRound {
  const exchanges = findExchanges(messages);
  const roundStart = currentRoundStart(messages, exchanges);
  const complete = exchanges.filter((e) => e.complete);
  const protectedExchanges = complete.slice(-2);
  const olderIndex = complete.length >= 2 ? complete[complete.length - 2]!.callIndex : undefined;
  const inRound = exchanges.filter((e) => e.callIndex >= roundStart).length;

  let start = inRound <= 2 ? Math.min(roundStart, olderIndex ?? roundStart) : (olderIndex ?? roundStart);

  const unresolved = exchanges.flatMap((e) =>
    e.callIds.filter((id) => !e.resultIndex.has(id)).map((id) => ({ id, e })),
  );
  // Widen until no split falls between a call and its result, or after an unresolved call.
  for (let changed = true; changed;) {
    changed = false;
    for (const e of exchanges) {
      if (e.callIndex >= start) continue;
      for (const idx of e.resultIndex.values()) {
        if (idx >= start) {
          start = e.callIndex;
          changed = true;
          break;
        }
      }
    }
    for (const u of unresolved) {
      if (u.e.callIndex < start) {
        start = u.e.callIndex;
        changed = true;
      }
    }
  }

  const instructionIndices: number[] = [];
  messages.forEach((m, i) => {
    if ((i >= roundStart || i >= start) && isPlainUser(m)) instructionIndices.push(i);
  });
  return {
    roundStart,
    regionStart: start,
    instructionIndices,
    exchanges: exchanges.filter((e) => e.callIndex >= start),
    protectedExchanges,
    unresolvedCallIds: unresolved.map((u) => u.id),
  };
}
