/**
 * JSON message arrays: OpenAI Chat Completions messages and Anthropic
 * Messages. Both are one JSON document; for the report, each message is one
 * "line" (numbered from 1). Entry ids are `m<n>` (the message number),
 * chained linearly under the header.
 */
import type { Block, Message } from "../../model/index.js";
import { linearImport, parseJsonDocument } from "../common/source-tree.js";
import { pairTextToolResults, textResultTool } from "./cline.js";
import { fromChatMessage, type ChatFunctions } from "../../wire/openai-chat.js";
import { fromAnthropicContent, looksAnthropic, splitAtMarkers } from "../../wire/anthropic.js";
import { isRecord } from "../common/lines.js";
import { ReportBuilder } from "../common/report.js";
import { SourceLines, type ToolIdOptions } from "../../model/tool-ids.js";
import { FormatError, type ImportResult } from "../common/types.js";

function looksOpenAI(messages: unknown[]): boolean {
  return messages.some(
    (m) =>
      isRecord(m) &&
      (m.role === "tool" || m.role === "system" || m.role === "developer" || Array.isArray(m.tool_calls)),
  );
}

/** Cline / Roo Code: a user text block that is a text tool result or the `<environment_details>` they append. */
function looksCline(messages: unknown[]): boolean {
  return messages.some(
    (m) =>
      isRecord(m) &&
      m.role === "user" &&
      Array.isArray(m.content) &&
      m.content.some(
        (b) =>
          isRecord(b) &&
          b.type === "text" &&
          typeof b.text === "string" &&
          (textResultTool(b as Block) !== undefined ||
            b.text.trimStart().startsWith("<environment_details>")),
      ),
  );
}

function isMessageArray(v: unknown): v is unknown[] {
  return Array.isArray(v) && v.every((m) => isRecord(m) && typeof m.role === "string");
}

/** Detection: a SWE-agent trajectory (`.traj`, or a document with a `history` array), read as OpenAI messages. */
export function isOpenAITrajectory(doc: unknown, fileName: string): boolean {
  return fileName.endsWith(".traj") || (isRecord(doc) && Array.isArray(doc.history));
}

/** Detection: a message array or a `{ messages }` body of the Anthropic Messages API (Cline's history included). */
export function isAnthropicMessages(doc: unknown): boolean {
  if (isMessageArray(doc)) return (looksAnthropic(doc) || looksCline(doc)) && !looksOpenAI(doc);
  return (
    isRecord(doc) &&
    isMessageArray(doc.messages) &&
    (doc.system !== undefined || (looksAnthropic(doc.messages) && !looksOpenAI(doc.messages)))
  );
}

/** Detection: any message array or `{ messages }` body (tested after the Anthropic test: what it leaves is OpenAI). */
export function isMessageDocument(doc: unknown): boolean {
  return isMessageArray(doc) || (isRecord(doc) && isMessageArray(doc.messages));
}

const OPENAI_EXTRA_META = ["name", "agent", "message_type", "thought", "action", "tool_call_ids"];

/** OpenAI Chat Completions messages: an array, `{ messages }`, or a SWE-agent `.traj` (`history`). */
export function importOpenAI(text: string, file: string, options: ToolIdOptions = {}): ImportResult {
  const doc = parseJsonDocument(text, file);
  const arr = Array.isArray(doc)
    ? doc
    : isRecord(doc) && Array.isArray(doc.messages)
      ? doc.messages
      : isRecord(doc) && Array.isArray(doc.history)
        ? doc.history
        : undefined;
  if (!arr)
    throw new FormatError(
      `${file}: expected an array of messages, { messages: [...] } or a SWE-agent trajectory with "history"`,
    );
  const rb = new ReportBuilder("openai", file);
  const lines = new SourceLines("message");
  const out: { line: number; message: Message }[] = [];
  const functions: ChatFunctions = {};
  arr.forEach((raw, i) => {
    const line = i + 1;
    if (!isRecord(raw) || typeof raw.role !== "string") {
      rb.line("invalid");
      rb.skip(line, `messages[${i}]: not a message object with a "role"`, false);
      return;
    }
    rb.line(raw.role);
    const meta: Record<string, unknown> = { source_index: i };
    for (const k of OPENAI_EXTRA_META) if (raw[k] !== undefined) meta[k] = raw[k];
    const prev = out[out.length - 1];
    const message = fromChatMessage(raw, line, functions);
    if (message === undefined) {
      rb.skip(line, `messages[${i}]: unknown role ${JSON.stringify(raw.role)}`, false);
      return;
    }
    if (message.role === "system") message.meta = { ...meta, source_role: raw.role };
    else if (raw.role === "tool" || raw.role === "function") {
      const b = message.content[0]!;
      lines.blocks([b], line);
      // Consecutive tool messages answer one assistant message: one tool-result message.
      if (
        prev &&
        prev.message.content.length > 0 &&
        prev.message.content.every((x) => x.type === "tool_result")
      ) {
        prev.message.content.push(b);
        (prev.message.meta!.merged_indexes as number[]).push(i);
        rb.imported();
        return;
      }
      message.meta = { ...meta, merged_indexes: [i] };
    } else message.meta = meta;
    out.push({ line, message });
    rb.imported();
  });
  return linearImport(rb, out, "openai", {}, lines, options);
}

export function importAnthropic(text: string, file: string, options: ToolIdOptions = {}): ImportResult {
  const doc = parseJsonDocument(text, file);
  const arr = Array.isArray(doc)
    ? doc
    : isRecord(doc) && Array.isArray(doc.messages)
      ? doc.messages
      : undefined;
  if (!arr) throw new FormatError(`${file}: expected an array of messages or { system, messages: [...] }`);
  const rb = new ReportBuilder("anthropic", file);
  const out: { line: number; message: Message; part?: number }[] = [];
  if (isRecord(doc) && doc.system !== undefined) {
    const content = fromAnthropicContent(doc.system);
    if (content.length > 0) {
      out.push({ line: 0, message: { role: "system", content } });
      rb.note(
        "the top-level system prompt is imported as a system message (entry m0); it is not a line of the messages array",
      );
    }
  }
  arr.forEach((raw, i) => {
    const line = i + 1;
    if (!isRecord(raw) || (raw.role !== "user" && raw.role !== "assistant")) {
      rb.line("invalid");
      rb.skip(line, `messages[${i}]: not a message with role "user" or "assistant"`, false);
      return;
    }
    rb.line(raw.role);
    const message: Message = {
      role: raw.role,
      content: fromAnthropicContent(raw.content),
      meta: { source_index: i },
    };
    splitAtMarkers(message).forEach((m, part) => out.push({ line, message: m, part }));
    rb.imported();
  });
  const cline = pairTextToolResults(out);
  if (cline.paired > 0)
    rb.note(
      `${cline.paired} tool result(s) written as text ("[tool for '…'] Result:", Cline / Roo Code) paired with their calls as tool_result blocks`,
    );
  return linearImport(rb, cline.items, "anthropic", {}, new SourceLines("message"), options);
}
