/**
 * Reading an OpenAI Responses request (`instructions` + `input` items) into
 * canonical messages that remember their items. Items are finer than
 * messages (a function_call, its output, reasoning, a message are items of
 * their own); the project's item reader groups them as the model saw them,
 * and tells which message each item went to.
 */
import type { Message } from "../../model/types.js";
import { itemsToMessages } from "../../wire/responses.js";
import { makeItem, type HistoryItem, type Part, type WireHistory } from "./history.js";

export function readResponses(doc: Record<string, unknown>): WireHistory {
  let list = doc.input;
  if (typeof list === "string") list = [{ role: "user", content: list }];
  if (!Array.isArray(list)) throw new Error("no input items");
  const items = [...responsesSystem(doc, list), ...responsesItems(list, 0)];
  return { wire: "openai-responses", doc, listKey: "input", list: list as unknown[], items };
}

/** The `instructions` as an item (none when absent or empty). */
export function responsesSystem(doc: Record<string, unknown>, list: readonly unknown[]): HistoryItem[] {
  return typeof doc.instructions === "string" && doc.instructions !== ""
    ? [makeItem({ role: "system", content: [{ type: "text", text: doc.instructions }] }, [], list)]
    : [];
}

/**
 * The items of `list[from..]` (parts indexed in the whole list). `from` must
 * be where a message of the whole list starts: the item reader then groups the
 * items from there as it does in the whole list (what it decides at an item
 * depends on the items before it only through the message it is adding to).
 */
export function responsesItems(list: readonly unknown[], from: number): HistoryItem[] {
  const rest = from === 0 ? list : list.slice(from);
  const partsOf = new Map<Message, Part[]>();
  const messages = itemsToMessages(rest, {
    path: "input",
    onItem: (i, m) => {
      const parts = partsOf.get(m);
      if (parts) parts.push({ element: i + from });
      else partsOf.set(m, [{ element: i + from }]);
    },
  });
  return messages.map((m) => makeItem(m, partsOf.get(m) ?? [], list));
}
