/**
 * LangChain.js message dumps: the JSON of `mapChatMessagesToStoredMessages`
 * (`[{ type, data: { content, tool_calls, tool_call_id, … } }]`), the JSON
 * `JSON.stringify` writes of the messages themselves (`[{ lc: 1, type:
 * "constructor", id: [..., "HumanMessage"], kwargs: { content, … } }]`), or
 * `{ messages: [...] }` of either. For the report each stored message is one
 * "message" (numbered from 1). Messages are read by the pure converter in
 * src/wire/langchain.ts (no `@langchain/*` import: the CLI reads dumps
 * without the peer installed); a message that cannot be read is skipped with
 * its path and why, the rest is imported.
 */
import type { Message } from "../../model/index.js";
import { isRecord } from "../common/lines.js";
import { ReportBuilder } from "../common/report.js";
import { linearImport, parseJsonDocument } from "../common/source-tree.js";
import { SourceLines, type ToolIdOptions } from "../../model/tool-ids.js";
import { FormatError, type ImportResult } from "../common/types.js";
import {
  isLangChainSerialized,
  isLangChainStored,
  joinParts,
  LangChainMessageError,
  readLangChainStored,
  storedOfSerialized,
} from "../../wire/langchain.js";

/**
 * The messages of a dump document (an array, or `{ messages }`), if it is
 * one: stored messages (`{ type, data }`) or serialized ones (`{ lc: 1, type:
 * "constructor", id, kwargs }`, as `JSON.stringify` writes a message).
 */
export function langChainDumpMessages(doc: unknown): unknown[] | undefined {
  const arr = Array.isArray(doc)
    ? doc
    : isRecord(doc) && Array.isArray(doc.messages)
      ? doc.messages
      : undefined;
  if (!arr || arr.length === 0) return undefined;
  const stored = arr.filter((m) => isLangChainStored(m) || isLangChainSerialized(m)).length;
  // Every record a stored message (one stray broken item is reported, not a reason to miss the format).
  return stored > 0 && stored >= arr.length - 1 ? arr : undefined;
}

export function importLangChain(text: string, file: string, options: ToolIdOptions = {}): ImportResult {
  const doc = parseJsonDocument(text, file);
  const wrapped = !Array.isArray(doc) && isRecord(doc) && Array.isArray(doc.messages);
  const arr = Array.isArray(doc)
    ? doc
    : wrapped
      ? ((doc as { messages: unknown[] }).messages as unknown[])
      : undefined;
  if (!arr)
    throw new FormatError(
      `${file}: expected a LangChain message dump: an array of { "type", "data" } messages, or { "messages": [...] }`,
    );
  const at = (i: number): string => (wrapped ? `messages[${i}]` : `[${i}]`);
  const rb = new ReportBuilder("langchain", file);
  const lines = new SourceLines("message");
  const reads: ReturnType<typeof readLangChainStored>[] = [];
  const lineOf: number[] = [];
  arr.forEach((raw, i) => {
    const line = i + 1;
    const serialized = isLangChainSerialized(raw);
    const stored = storedOfSerialized(raw);
    rb.line(isRecord(stored) && typeof stored.type === "string" ? stored.type : "invalid");
    try {
      reads.push(readLangChainStored(stored, at(i)));
      lineOf.push(line);
      rb.imported();
    } catch (e) {
      if (!(e instanceof LangChainMessageError)) throw e;
      // A serialized message's data is its `kwargs`: name the place as written.
      const why = serialized ? e.message.split(`${at(i)}.data`).join(`${at(i)}.kwargs`) : e.message;
      rb.skip(line, why, false);
    }
  });

  const messages: { line: number; message: Message }[] = [];
  for (const { message, first, count } of joinParts(reads)) {
    const line = lineOf[first]!;
    if (count > 1)
      rb.note(`messages ${line}–${lineOf[first + count - 1]} are the parts of one message, joined`);
    messages.push({ line, message });
  }
  return linearImport(rb, messages, "langchain", {}, lines, options);
}
