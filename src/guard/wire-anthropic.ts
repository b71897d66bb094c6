/**
 * Reading an Anthropic Messages request (`system` + `messages`) into
 * canonical messages that remember their raw elements. A user message whose
 * text opens with a checkpoint marker after other blocks is split there (as
 * the importer does), each part remembering its block range.
 */
import type { Message } from "../model/types.js";
import { fromAnthropicContent } from "../formats/common/convert.js";
import { splitAtMarkers } from "../formats/import/messages-json.js";
import { makeItem, type HistoryItem, type Part, type WireHistory } from "./history.js";

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Throws a one-line Error when the body is not a Messages request. */
export function readAnthropic(doc: Record<string, unknown>): WireHistory {
  const list = doc.messages;
  if (!Array.isArray(list)) throw new Error("no messages array");
  const items: HistoryItem[] = [];
  if (doc.system !== undefined) {
    const content = fromAnthropicContent(doc.system);
    if (content.length > 0) items.push(makeItem({ role: "system", content }, [], list));
  }
  list.forEach((raw, i) => {
    if (!isRecord(raw) || (raw.role !== "user" && raw.role !== "assistant"))
      throw new Error(`messages[${i}] is not a user or assistant message`);
    const content = fromAnthropicContent(raw.content);
    const message: Message = { role: raw.role, content };
    const split = splitAtMarkers(message);
    if (split.length === 1 || !Array.isArray(raw.content)) {
      items.push(makeItem(message, [{ element: i }], list));
      return;
    }
    // fromAnthropicContent maps block k to block k, so a split part is a block range of the element.
    let from = 0;
    for (const m of split) {
      const part: Part = { element: i, from, to: from + m.content.length };
      items.push(makeItem({ role: m.role, content: m.content }, [part], list));
      from += m.content.length;
    }
  });
  return { wire: "anthropic-messages", doc, listKey: "messages", list, items };
}
