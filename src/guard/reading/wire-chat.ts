/**
 * Reading an OpenAI Chat Completions request (`messages`) into canonical
 * messages that remember their raw messages: one raw message each, except
 * consecutive `tool` messages, which answer one assistant message and become
 * one message of results (as the `openai` importer reads them). Nothing is
 * added: no synthetic result closes a call, so every block has its raw origin.
 */
import type { Message } from "../../model/types.js";
import { CHAT_ROLES, fromChatMessage } from "../../wire/openai-chat.js";
import { makeItem, type HistoryItem, type Part, type WireHistory } from "./history.js";

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Roles of the Chat wire that the reader models; an element of another role is opaque (kept in place, not judged). */
export { CHAT_ROLES };

export function readChat(doc: Record<string, unknown>): WireHistory {
  const list = doc.messages;
  if (!Array.isArray(list)) throw new Error("no messages array");
  return { wire: "openai-chat", doc, listKey: "messages", list, items: chatItems(list, 0) };
}

/**
 * The items of `list[from..]` (parts indexed in the whole list). `from` must
 * be where an item of the whole list starts (consecutive `tool` messages are
 * one item): the items of the list are then those before it followed by these.
 */
export function chatItems(list: readonly unknown[], from: number): HistoryItem[] {
  const grouped: { message: Message; parts: Part[]; tool: boolean }[] = [];
  for (let i = from; i < list.length; i++) {
    const raw = list[i];
    if (!isRecord(raw) || typeof raw.role !== "string")
      throw new Error(`messages[${i}] is not a message with a role`);
    const m = CHAT_ROLES.has(raw.role) ? fromChatMessage(raw) : undefined;
    if (m === undefined) continue; // opaque: kept in place, not judged
    const prev = grouped[grouped.length - 1];
    if (raw.role === "tool" && prev?.tool) {
      prev.message.content.push(...m.content);
      prev.parts.push({ element: i });
    } else grouped.push({ message: m, parts: [{ element: i }], tool: raw.role === "tool" });
  }
  return grouped.map((g) => makeItem(g.message, g.parts, list));
}
