/**
 * Reading an OpenAI Chat Completions request (`messages`) into canonical
 * messages that remember their raw messages: one raw message each, except
 * consecutive `tool` messages, which answer one assistant message and become
 * one message of results (as the `openai` importer reads them). Nothing is
 * added: no synthetic result closes a call, so every block has its raw origin.
 */
import type { Block, Message } from "../model/types.js";
import { chatToolCalls } from "../formats/import/messages-json.js";
import { makeItem, type HistoryItem, type Part, type WireHistory } from "./history.js";

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function contentBlocks(content: unknown): Block[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  const out: Block[] = [];
  for (const p of content) {
    if (!isRecord(p)) continue;
    if (p.type === "text" && typeof p.text === "string") out.push({ type: "text", text: p.text });
    else if (p.type === "image_url" && isRecord(p.image_url) && typeof p.image_url.url === "string")
      out.push({ type: "image_url", image_url: { ...p.image_url, url: p.image_url.url } });
    else if (p.type === "refusal" && typeof p.refusal === "string")
      out.push({ type: "text", text: p.refusal });
    else if (typeof p.type === "string") out.push({ ...p } as Block);
  }
  return out;
}

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  return contentBlocks(content)
    .filter((b) => b.type === "text")
    .map((b) => (b as { text: string }).text)
    .join("\n");
}

/** One raw message as a canonical message (a `tool` message: a user message of one result); undefined for a role not modelled. */
function readOne(raw: Record<string, unknown>): Message | undefined {
  switch (raw.role) {
    case "system":
    case "developer":
      return { role: "system", content: contentBlocks(raw.content) };
    case "user":
      return { role: "user", content: contentBlocks(raw.content) };
    case "assistant": {
      const content: Block[] = [];
      for (const k of ["reasoning_content", "reasoning"])
        if (typeof raw[k] === "string" && raw[k] !== "") content.push({ type: "thinking", thinking: raw[k] });
      content.push(...contentBlocks(raw.content));
      content.push(...chatToolCalls(raw));
      return { role: "assistant", content };
    }
    case "tool":
      return {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: String(raw.tool_call_id ?? ""),
            content: resultText(raw.content),
          },
        ],
      };
    default:
      return undefined;
  }
}

/** Roles of the Chat wire that the reader models; an element of another role is opaque (kept in place, not judged). */
export const CHAT_ROLES: ReadonlySet<unknown> = new Set(["system", "developer", "user", "assistant", "tool"]);

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
    const m = readOne(raw);
    if (m === undefined) continue; // opaque: kept in place, not judged
    const prev = grouped[grouped.length - 1];
    if (raw.role === "tool" && prev?.tool) {
      prev.message.content.push(...m.content);
      prev.parts.push({ element: i });
    } else grouped.push({ message: m, parts: [{ element: i }], tool: raw.role === "tool" });
  }
  return grouped.map((g) => makeItem(g.message, g.parts, list));
}
