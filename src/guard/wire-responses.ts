/**
 * Reading an OpenAI Responses request (`instructions` + `input` items) into
 * canonical messages that remember their items. Items are finer than
 * messages (a function_call, its output, reasoning, a message are items of
 * their own); the project's item reader groups them as the model saw them,
 * and tells which message each item went to.
 */
import type { Message } from "../model/types.js";
import { itemsToMessages } from "../formats/import/responses.js";
import { makeItem, type HistoryItem, type Part, type WireHistory } from "./history.js";

export function readResponses(doc: Record<string, unknown>): WireHistory {
  let list = doc.input;
  if (typeof list === "string") list = [{ role: "user", content: list }];
  if (!Array.isArray(list)) throw new Error("no input items");
  const items: HistoryItem[] = [];
  if (typeof doc.instructions === "string" && doc.instructions !== "")
    items.push(makeItem({ role: "system", content: [{ type: "text", text: doc.instructions }] }, [], list));
  const partsOf = new Map<Message, Part[]>();
  const messages = itemsToMessages(list, {
    path: "input",
    onItem: (i, m) => {
      const parts = partsOf.get(m);
      if (parts) parts.push({ element: i });
      else partsOf.set(m, [{ element: i }]);
    },
  });
  for (const m of messages) items.push(makeItem(m, partsOf.get(m) ?? [], list as unknown[]));
  return { wire: "openai-responses", doc, listKey: "input", list: list as unknown[], items };
}
