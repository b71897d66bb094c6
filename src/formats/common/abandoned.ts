/**
 * Abandoned calls: a tool call with no result, after which the conversation
 * went on (an instruction or an assistant message follows: the contract's
 * `conversationGoesOnAfter`, which the exporters use too). Every importer
 * closes them with a synthetic error result placed right after the call's
 * message; any other call without a result stays in flight.
 */
import { lastConversationIndex, movesConversationOn } from "../../contract/rounds.js";
import type { Block, JournalEntry, Message, MessageEntry, ToolResultBlock } from "../../model/index.js";
import { isMessageKind } from "../../model/index.js";

export const ABANDONED_RESULT_TEXT = "[compact-safe: no result was recorded; the call was abandoned]";

/** The synthetic result that closes an abandoned call. */
export function syntheticResult(toolUseId: string): ToolResultBlock {
  return {
    type: "tool_result",
    tool_use_id: toolUseId,
    content: ABANDONED_RESULT_TEXT,
    is_error: true,
    synthetic: true,
  };
}

function callIds(m: Message): string[] {
  if (m.role !== "assistant" && m.role !== "assistant_interrupted") return [];
  return m.content.filter((b) => b.type === "tool_use").map((b) => String((b as { id: unknown }).id));
}

function resultIds(blocks: readonly Block[], into: Set<string>): void {
  for (const b of blocks)
    if (b.type === "tool_result") into.add(String((b as { tool_use_id: unknown }).tool_use_id));
}

export interface CloseResult<T> {
  value: T;
  closed: number;
  inFlight: number;
}

/**
 * Closes the abandoned calls of a linear message array (returns a new array; the input is not changed).
 * `goesOnAfter`: the conversation goes on after the array (a compaction's replacement with messages
 * after it on the path), so a call still open at its end is abandoned too, unless `resultsAfter` (the
 * results recorded anywhere else) holds its result.
 */
export function closeAbandonedCalls(
  messages: readonly Message[],
  goesOnAfter = false,
  resultsAfter: ReadonlySet<string> = new Set(),
): CloseResult<Message[]> {
  const results = new Set<string>();
  for (const m of messages) resultIds(m.content, results);
  const out: Message[] = [];
  let closed = 0;
  let inFlight = 0;
  const lastConversation = lastConversationIndex(messages);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    out.push(m);
    const missing = callIds(m).filter((id) => !results.has(id));
    if (missing.length === 0) continue;
    // Abandoned: the conversation goes on after the call, in the array or (with no result elsewhere) after it.
    const abandoned =
      i < lastConversation ? missing : goesOnAfter ? missing.filter((id) => !resultsAfter.has(id)) : [];
    inFlight += missing.length - abandoned.length;
    if (abandoned.length === 0) continue;
    out.push({ role: "user", content: abandoned.map(syntheticResult), meta: { synthetic: true } });
    closed += abandoned.length;
  }
  return { value: out, closed, inFlight };
}

/**
 * Closes the abandoned calls of a journal tree. A call is abandoned when no
 * result for it exists anywhere in the journal and an instruction or an
 * assistant message follows it somewhere in its subtree. The synthetic result becomes a new
 * `tool_result` entry (id `<call entry id>-synthetic-result`) placed right after
 * the call's entry; the call entry's children are moved under it. Compaction
 * replacements are closed as linear arrays, a call still open at the end of
 * one as well when the conversation goes on below the compaction and no
 * result for it is recorded anywhere (it was in flight when the agent
 * compacted, and the agent went on without it).
 */
export function closeAbandonedInEntries(entries: readonly JournalEntry[]): CloseResult<JournalEntry[]> {
  const results = new Set<string>();
  const children = new Map<string, JournalEntry[]>();
  for (const e of entries) {
    if (isMessageKind(e.kind)) resultIds((e.payload as Message).content, results);
    if (e.kind === "compaction") for (const m of e.payload.replacement) resultIds(m.content, results);
    if (e.parent_id) {
      const list = children.get(e.parent_id) ?? [];
      list.push(e);
      children.set(e.parent_id, list);
    }
  }
  const conversationBelow = (id: string): boolean => {
    const stack = [...(children.get(id) ?? [])];
    const seen = new Set<string>();
    while (stack.length > 0) {
      const e = stack.pop()!;
      if (seen.has(e.id)) continue;
      seen.add(e.id);
      if (isMessageKind(e.kind) && movesConversationOn(e.payload as Message)) return true;
      stack.push(...(children.get(e.id) ?? []));
    }
    return false;
  };
  let closed = 0;
  let inFlight = 0;
  const out: JournalEntry[] = [];
  const reparent = new Map<string, string>();
  const inserted: JournalEntry[][] = [];
  for (const e of entries) {
    let entry = e;
    if (e.kind === "compaction") {
      const r = closeAbandonedCalls(e.payload.replacement, conversationBelow(e.id), results);
      closed += r.closed;
      if (r.closed > 0) entry = { ...e, payload: { ...e.payload, replacement: r.value } };
    }
    const extra: JournalEntry[] = [];
    if (isMessageKind(e.kind)) {
      const missing = callIds(e.payload as Message).filter((id) => !results.has(id));
      if (missing.length > 0) {
        if (conversationBelow(e.id)) {
          const synth: MessageEntry = {
            id: `${e.id}-synthetic-result`,
            parent_id: e.id,
            kind: "tool_result",
            created_at: e.created_at,
            payload: { role: "user", content: missing.map(syntheticResult), meta: { synthetic: true } },
          };
          reparent.set(e.id, synth.id);
          extra.push(synth);
          closed += missing.length;
        } else {
          inFlight += missing.length;
        }
      }
    }
    inserted.push([entry, ...extra]);
  }
  for (const group of inserted) {
    for (const e of group) {
      const newParent = e.parent_id ? reparent.get(e.parent_id) : undefined;
      out.push(newParent !== undefined && newParent !== e.id ? { ...e, parent_id: newParent } : e);
    }
  }
  return { value: out, closed, inFlight };
}
