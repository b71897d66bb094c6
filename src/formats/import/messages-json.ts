/**
 * JSON message arrays: OpenAI Chat Completions messages and Anthropic
 * Messages. Both are one JSON document; for the report, each message is one
 * "line" (numbered from 1). Entry ids are `m<n>` (the message number),
 * chained linearly under the header.
 */
import type { Block, Message } from "../../model/index.js";
import {
  ALL_BRANCH_SUMMARY_MARKERS,
  ALL_CHECKPOINT_MARKERS,
  GUARD_TEXT_PREFIX,
} from "../../contract/markers.js";
import { linearImport, parseJsonDocument } from "../common/source-tree.js";
import { pairTextToolResults, textResultTool } from "./cline.js";
import { parseArguments } from "./codex.js";
import { fromAnthropicContent } from "../common/convert.js";
import { isRecord } from "../common/lines.js";
import { ReportBuilder } from "../common/report.js";
import { SourceLines, type ToolIdOptions } from "../../model/tool-ids.js";
import { FormatError, type ImportResult } from "../common/types.js";

const ANTHROPIC_BLOCKS = new Set([
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking",
  "image",
  "document",
  "compaction",
]);

function looksAnthropic(messages: unknown[]): boolean {
  return messages.some(
    (m) =>
      isRecord(m) &&
      Array.isArray(m.content) &&
      m.content.some((b) => isRecord(b) && typeof b.type === "string" && ANTHROPIC_BLOCKS.has(b.type)),
  );
}

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

function openAiContent(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  const out: Block[] = [];
  for (const p of content) {
    if (!isRecord(p)) continue;
    if (p.type === "text" && typeof p.text === "string") {
      out.push(
        p.cache_control !== undefined
          ? { type: "text", text: p.text, cache_control: p.cache_control }
          : { type: "text", text: p.text },
      );
    } else if (p.type === "image_url" && isRecord(p.image_url) && typeof p.image_url.url === "string") {
      out.push({ type: "image_url", image_url: { ...p.image_url, url: p.image_url.url } });
    } else if (p.type === "refusal" && typeof p.refusal === "string") {
      out.push({ type: "text", text: p.refusal });
    } else if (typeof p.type === "string") out.push({ ...p } as Block);
  }
  return out;
}

/** The `tool_calls` of a Chat Completions assistant message, as `tool_use` blocks (arguments parsed). */
export function chatToolCalls(raw: Record<string, unknown>): Block[] {
  if (!Array.isArray(raw.tool_calls)) return [];
  const out: Block[] = [];
  for (const tc of raw.tool_calls) {
    if (!isRecord(tc)) continue;
    const fn = isRecord(tc.function) ? tc.function : {};
    out.push({
      type: "tool_use",
      id: String(tc.id ?? ""),
      name: String(fn.name ?? ""),
      input: parseArguments(fn.arguments),
    });
  }
  return out;
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
  let lastFunctionCallId: string | undefined;
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
    switch (raw.role) {
      case "system":
      case "developer":
        out.push({
          line,
          message: {
            role: "system",
            content: openAiContent(raw.content),
            meta: { ...meta, source_role: raw.role },
          },
        });
        break;
      case "user":
        out.push({ line, message: { role: "user", content: openAiContent(raw.content), meta } });
        break;
      case "assistant": {
        const content: Block[] = [];
        if (typeof raw.reasoning_content === "string" && raw.reasoning_content.length > 0)
          content.push({ type: "thinking", thinking: raw.reasoning_content });
        content.push(...openAiContent(raw.content));
        if (typeof raw.refusal === "string" && raw.refusal.length > 0)
          content.push({ type: "text", text: raw.refusal });
        content.push(...chatToolCalls(raw));
        if (isRecord(raw.function_call)) {
          lastFunctionCallId = `fc_${line}`;
          content.push({
            type: "tool_use",
            id: lastFunctionCallId,
            name: String(raw.function_call.name ?? ""),
            input: parseArguments(raw.function_call.arguments),
          });
        }
        out.push({ line, message: { role: "assistant", content, meta } });
        break;
      }
      case "tool":
      case "function": {
        const ids = Array.isArray(raw.tool_call_ids) ? raw.tool_call_ids : [];
        const id =
          raw.role === "function"
            ? (lastFunctionCallId ?? `fc_${line}`)
            : String(raw.tool_call_id ?? ids[0] ?? "");
        const blocks = openAiContent(raw.content);
        const b: Block = {
          type: "tool_result",
          tool_use_id: id,
          content:
            typeof raw.content === "string"
              ? raw.content
              : blocks
                  .filter((x) => x.type === "text")
                  .map((x) => (x as { text: string }).text)
                  .join("\n"),
        };
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
        out.push({ line, message: { role: "user", content: [b], meta: { ...meta, merged_indexes: [i] } } });
        break;
      }
      default:
        rb.skip(line, `messages[${i}]: unknown role ${JSON.stringify(raw.role)}`, false);
        return;
    }
    rb.imported();
  });
  return linearImport(rb, out, "openai", {}, lines, options);
}

/** Anthropic Messages: an array of messages, or `{ system, messages }`. */
/**
 * The Anthropic API wants roles to alternate, so an exporter merges
 * consecutive user messages, and a checkpoint or branch summary kept after
 * other user text is no longer a message whose FIRST text block opens with its
 * marker. On import, each text block of a user message that opens with a
 * checkpoint or branch-summary marker is split out into a message of its own
 * (the blocks before and after it stay in their own user messages, in order),
 * so that the contract recognises it again; the guard's restatement right
 * after it (text opening with `GUARD_TEXT_PREFIX`) stays on it, as further
 * content of the checkpoint. Nothing else changes.
 */
export function splitAtMarkers(m: Message): Message[] {
  if (m.role !== "user" || m.content.length < 2 || !m.content.some(opensWithMarker)) return [m];
  const out: Message[] = [];
  let current: Block[] = [];
  const flush = (): void => {
    if (current.length > 0) out.push({ ...m, content: current });
    current = [];
  };
  // compact-safe's restatement right after a checkpoint's block is part of that checkpoint (the guard's repair).
  let checkpoint: Block[] | undefined;
  for (const b of m.content) {
    if (opensWithMarker(b)) {
      flush();
      checkpoint = [b];
      out.push({ ...m, content: checkpoint });
    } else if (checkpoint !== undefined && current.length === 0 && isGuardText(b)) checkpoint.push(b);
    else {
      checkpoint = undefined;
      current.push(b);
    }
  }
  flush();
  return out;
}

const MARKERS: readonly string[] = [...ALL_CHECKPOINT_MARKERS, ...ALL_BRANCH_SUMMARY_MARKERS];

const isGuardText = (b: Block): boolean =>
  b.type === "text" && String((b as { text?: unknown }).text).startsWith(GUARD_TEXT_PREFIX);

function opensWithMarker(b: Block): boolean {
  return (
    b.type === "text" &&
    typeof (b as { text?: unknown }).text === "string" &&
    MARKERS.some((mk) => (b as { text: string }).text.trimStart().startsWith(mk))
  );
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
