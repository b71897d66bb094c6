/**
 * Reading an Anthropic Messages request (`system` + `messages`) into
 * canonical messages that remember their raw elements. A user message whose
 * text opens with a checkpoint marker after other blocks is split there (as
 * the importer does), each part remembering its block range.
 *
 * Elements of `messages` whose role is neither `user` nor `assistant` (Claude
 * Code puts `role: "system"` elements there for some models: the environment,
 * the deferred-tools list, `{ role: "system", content: [], output_config }`)
 * are opaque: they stay in place in the list, untouched, and are not history
 * items; the user / assistant / tool sequence around them is what is judged.
 * Content blocks of types the project does not model are kept as they are.
 */
import type { Message } from "../../model/types.js";
import { fromAnthropicContent, splitAtMarkers } from "../../wire/anthropic.js";
import { makeItem, type HistoryItem, type Part, type WireHistory } from "./history.js";

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Throws a one-line Error when the body is not a Messages request. */
export function readAnthropic(doc: Record<string, unknown>): WireHistory {
  const list = doc.messages;
  if (!Array.isArray(list)) throw new Error("no messages array");
  const items = [...anthropicSystem(doc, list), ...anthropicItems(list, 0)];
  return { wire: "anthropic-messages", doc, listKey: "messages", list, items };
}

/** The `system` prompt as an item (none when it is absent or empty). */
export function anthropicSystem(doc: Record<string, unknown>, list: readonly unknown[]): HistoryItem[] {
  if (doc.system === undefined) return [];
  const content = fromAnthropicContent(doc.system);
  return content.length > 0 ? [makeItem({ role: "system", content }, [], list)] : [];
}

/**
 * The items of `list[from..]` (parts indexed in the whole list). Each element
 * is read on its own, so the items of a list are those of any of its
 * prefixes followed by those of the elements after it.
 */
export function anthropicItems(list: readonly unknown[], from: number): HistoryItem[] {
  const items: HistoryItem[] = [];
  for (let i = from; i < list.length; i++) {
    const raw = list[i];
    if (!isRecord(raw) || typeof raw.role !== "string")
      throw new Error(`messages[${i}] is not a message with a role`);
    if (raw.role !== "user" && raw.role !== "assistant") continue; // opaque: kept in place, not judged
    const content = fromAnthropicContent(raw.content);
    const message: Message = { role: raw.role, content };
    const split = splitAtMarkers(message);
    if (split.length === 1 || !Array.isArray(raw.content)) {
      items.push(makeItem(message, [{ element: i }], list));
      continue;
    }
    // fromAnthropicContent maps block k to block k, so a split part is a block range of the element.
    let at = 0;
    for (const m of split) {
      const part: Part = { element: i, from: at, to: at + m.content.length };
      items.push(makeItem({ role: m.role, content: m.content }, [part], list));
      at += m.content.length;
    }
  }
  return items;
}
