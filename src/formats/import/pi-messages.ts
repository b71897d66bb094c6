/**
 * The `pi-messages` format: a JSON array of pi's agent messages (what the
 * `compact-safe/pi` adapter converts: pi-ai's `user` / `assistant` /
 * `toolResult` messages and pi-coding-agent's `bashExecution`, `custom`,
 * `branchSummary`, `compactionSummary`), or `{ messages: [...] }` of the same.
 * Each message is read as a pi session's `message` entry is (formats/import/pi.ts),
 * so as pi sends it to the model; for the report each message is one
 * "message" (numbered from 1).
 */
import type { Message } from "../../model/index.js";
import { isRecord } from "../common/lines.js";
import { convertMessage } from "./pi.js";
import { looksLikePiMessages, piMessagesOf } from "../../wire/pi.js";
import { ReportBuilder } from "../common/report.js";
import { linearImport, parseJsonDocument } from "../common/source-tree.js";
import { SourceLines, type ToolIdOptions } from "../../model/tool-ids.js";
import { FormatError, type ImportResult } from "../common/types.js";

export { looksLikePiMessages };

export function importPiMessages(text: string, file: string, options: ToolIdOptions = {}): ImportResult {
  const doc = parseJsonDocument(text, file);
  const list = piMessagesOf(doc);
  if (!list)
    throw new FormatError(`${file}: expected a JSON array of pi agent messages, or { "messages": [...] }`);
  const rb = new ReportBuilder("pi-messages", file);
  const lines = new SourceLines("message");
  const out: { line: number; message: Message }[] = [];
  list.forEach((m, i) => {
    const line = i + 1;
    if (!isRecord(m) || typeof m.role !== "string") {
      rb.line("invalid");
      rb.skip(line, 'looks like a pi agent message but it has no string "role"', false);
      return;
    }
    rb.line(m.role);
    const r = convertMessage(m, {});
    if ("skip" in r) {
      rb.skip(line, r.skip, r.byDesign);
      return;
    }
    if (r.meta !== undefined && Object.keys(r.meta).length === 0) delete r.meta;
    rb.imported();
    out.push({ line, message: r });
  });
  return linearImport(rb, out, "pi-messages", {}, lines, options);
}
