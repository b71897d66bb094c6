/**
 * The `ai-sdk` format: a JSON array of AI SDK `ModelMessage`s (what apps built
 * on the AI SDK store: `response.messages`, a chat's history), or `{ messages:
 * [...] }` of the same. Read by the same pure conversion as the
 * `compact-safe/ai-sdk` adapter (src/wire/ai-sdk.ts), without the `ai`
 * package: each message is checked against the rules of its role first, and
 * a message that breaks them is refused by its number ("message 4: looks like
 * an AI SDK message but …"). For the report each message is one "message"
 * (numbered from 1).
 */
import type { Message } from "../../model/index.js";
import { ReportBuilder } from "../common/report.js";
import { linearImport, parseJsonDocument } from "../common/source-tree.js";
import { SourceLines, type ToolIdOptions } from "../../model/tool-ids.js";
import { FormatError, type ImportResult } from "../common/types.js";
import {
  aiSdkMessageProblem,
  aiSdkMessagesOf,
  fromModelMessagesIndexed,
  looksLikeAiSdk,
} from "../../wire/ai-sdk.js";

export { looksLikeAiSdk };

export function importAiSdk(text: string, file: string, options: ToolIdOptions = {}): ImportResult {
  const doc = parseJsonDocument(text, file);
  const list = aiSdkMessagesOf(doc);
  if (!list)
    throw new FormatError(`${file}: expected a JSON array of AI SDK ModelMessages, or { "messages": [...] }`);
  list.forEach((m, i) => {
    const why = aiSdkMessageProblem(m);
    if (why !== undefined)
      throw new FormatError(`${file}: message ${i + 1}: looks like an AI SDK message but ${why}`);
  });
  const rb = new ReportBuilder("ai-sdk", file);
  const lines = new SourceLines("message");
  for (const m of list) {
    rb.line(`${String((m as { role: string }).role)}`);
    rb.imported();
  }
  const { messages, indexOf } = fromModelMessagesIndexed(
    list,
    undefined,
    Array.isArray(doc) ? "" : "messages",
  );
  const firstLine: number[] = [];
  indexOf.forEach((k, i) => {
    if (firstLine[k] === undefined) firstLine[k] = i + 1;
    else rb.note(`message ${i + 1} continues message ${firstLine[k]} (written as its parts), joined`);
  });
  const out: { line: number; message: Message }[] = messages.map((message, k) => ({
    line: firstLine[k]!,
    message,
  }));
  return linearImport(rb, out, "ai-sdk", {}, lines, options);
}
