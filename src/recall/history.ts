/**
 * The saved history of a session, indexed for recall: every original tool
 * result by its call's id, every message by its text's hash, the texts to
 * search, and the compactions. Built from all the entries a session file
 * holds (the journal keeps what each compaction replaced), never only from
 * its live context.
 */
import type { CompactionEntry, JournalEntry, Message, ToolUseBlock } from "../model/types.js";
import { isMessageKind } from "../model/types.js";
import { isText, isToolResult, isToolUse } from "../model/blocks.js";
import { messageRefOfText, refText, toolRef } from "../model/refs.js";
import { STUB_PREFIX } from "../engine/prune.js";
import { liveContext } from "../journal/tree.js";

/** An original tool result, with the call it answers (when the history has it). */
export interface ToolOriginal {
  content: string;
  isError: boolean;
  call?: ToolUseBlock;
  /** Place of its message among the session's messages (0: the oldest). */
  position: number;
}

/** One searchable item: a message's text, or a tool result with its call. */
export interface HistoryItem {
  ref: string;
  role: string;
  /** The text searched and quoted (the call's name and arguments first, for a tool result). */
  text: string;
  position: number;
}

export interface HistoryIndex {
  entries: readonly JournalEntry[];
  tools: Map<string, ToolOriginal>;
  messages: Map<string, { message: Message; text: string; position: number }>;
  /** Oldest first. */
  items: HistoryItem[];
  compactions: CompactionEntry[];
  /** The refs whose original is still in the live context word for word. */
  live: Set<string>;
}

const isStubbed = (content: string) => content.startsWith(STUB_PREFIX);

/** The messages of the session in file order: message entries, then any replacement's messages not seen. */
function messagesOf(entries: readonly JournalEntry[]): Message[] {
  const out: Message[] = [];
  const replaced: Message[] = [];
  for (const e of entries) {
    if (isMessageKind(e.kind)) out.push(e.payload as Message);
    else if (e.kind === "compaction") replaced.push(...e.payload.replacement);
  }
  // A replacement's messages come after the originals: an original seen first wins (see `indexHistory`).
  return [...out, ...replaced];
}

function callText(call: ToolUseBlock | undefined): string {
  if (call === undefined) return "(call not in the history)";
  return `${call.name} ${JSON.stringify(call.input) ?? "null"}`;
}

function indexMessage(
  ix: HistoryIndex,
  m: Message,
  position: number,
  calls: Map<string, ToolUseBlock>,
): void {
  for (const b of m.content) {
    if (!isToolResult(b) || typeof b.content !== "string") continue;
    const known = ix.tools.get(b.tool_use_id);
    // The first original wins: later copies are stubs, bounded copies or an importer's closing result.
    if (known !== undefined && !(known.content === "" && b.content !== "")) continue;
    if (isStubbed(b.content) || (b.synthetic === true && known !== undefined)) continue;
    const call = calls.get(b.tool_use_id);
    ix.tools.set(b.tool_use_id, { content: b.content, isError: b.is_error === true, call, position });
    if (known === undefined) {
      const text = `${callText(call)}\n${b.content}`;
      ix.items.push({ ref: toolRef(b.tool_use_id), role: "tool result", text, position });
    }
  }
  const text = refText(m);
  if (text.trim() === "") return;
  const ref = messageRefOfText(text);
  if (!ix.messages.has(ref)) {
    ix.messages.set(ref, { message: m, text, position });
    ix.items.push({ ref, role: m.role, text, position });
  }
}

/** The index of a session's entries. */
export function indexHistory(entries: readonly JournalEntry[]): HistoryIndex {
  const all = messagesOf(entries);
  const calls = new Map<string, ToolUseBlock>();
  for (const m of all) for (const b of m.content) if (isToolUse(b) && !calls.has(b.id)) calls.set(b.id, b);
  const ix: HistoryIndex = {
    entries,
    tools: new Map(),
    messages: new Map(),
    items: [],
    compactions: entries.filter((e): e is CompactionEntry => e.kind === "compaction"),
    live: new Set(),
  };
  all.forEach((m, i) => indexMessage(ix, m, i, calls));
  for (const m of liveContext(entries)) {
    for (const b of m.content)
      if (isToolResult(b) && ix.tools.get(b.tool_use_id)?.content === b.content)
        ix.live.add(toolRef(b.tool_use_id));
    const text = m.content.some(isText) ? refText(m) : "";
    if (text.trim() !== "") ix.live.add(messageRefOfText(text));
  }
  return ix;
}
