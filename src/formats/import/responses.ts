/**
 * The `responses` format: a JSON array of input items, a request body
 * `{ instructions?, input }` or a response `{ output }`, read through the
 * Responses wire module (`src/wire/responses.ts`).
 */
import type { Message } from "../../model/index.js";
import { isRecord } from "../common/lines.js";
import { ReportBuilder } from "../common/report.js";
import { linearImport, parseJsonDocument } from "../common/source-tree.js";
import { SourceLines, type ToolIdOptions } from "../../model/tool-ids.js";
import { FormatError, type ImportResult } from "../common/types.js";
import { itemsToMessages, responsesItemsOf } from "../../wire/responses.js";

/**
 * The `responses` format: a JSON array of input items, a request body
 * `{ instructions?, input }` or a response `{ output }`. For the report each
 * item is one "message" (numbered from 1); a request's `instructions` is
 * imported as a system message (entry m0). An item that is not valid is
 * skipped with its path and why; everything else is read as `itemsToMessages`
 * reads it, each message an entry `m<n>` (the number of its first item).
 */
export function importResponses(text: string, file: string, options: ToolIdOptions = {}): ImportResult {
  const doc = parseJsonDocument(text, file);
  const found = responsesItemsOf(doc);
  if (!found)
    throw new FormatError(
      `${file}: expected an array of Responses input items, a request body { input: [...] } or a response { output: [...] }`,
    );
  const rb = new ReportBuilder("responses", file);
  const lines = new SourceLines("message");
  const firstItem = new Map<Message, number>();
  const messages: Message[] = [];
  if (isRecord(doc) && typeof doc.instructions === "string" && doc.instructions !== "") {
    const m: Message = {
      role: "system",
      content: [{ type: "text", text: doc.instructions }],
      meta: { source: "instructions" },
    };
    messages.push(m);
    firstItem.set(m, 0);
    rb.note(
      "the request's instructions are imported as a system message (entry m0); they are not an item of input",
    );
  }
  found.items.forEach((it) => {
    const type = isRecord(it)
      ? typeof it.type === "string"
        ? it.type
        : "role" in it
          ? "message"
          : "item_reference"
      : "invalid";
    rb.line(type === "message" && isRecord(it) ? `message:${String(it.role)}` : type);
  });
  messages.push(
    ...itemsToMessages(found.items, {
      path: found.path,
      onInvalid: (i, e) => rb.skip(i + 1, e.message, false),
      onItem: (i, m, blocks) => {
        if (!firstItem.has(m)) firstItem.set(m, i + 1);
        lines.blocks(blocks, i + 1);
        const meta = (m.meta ??= {});
        if (!Array.isArray(meta.source_items)) meta.source_items = [];
        (meta.source_items as number[]).push(i);
        rb.imported();
      },
    }),
  );
  return linearImport(
    rb,
    messages.map((m) => ({ line: firstItem.get(m) ?? 0, message: m })),
    "responses",
    {},
    lines,
    options,
  );
}
