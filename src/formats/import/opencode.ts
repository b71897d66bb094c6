/**
 * opencode sessions as `opencode export` writes them: `{ info, messages:
 * [{ info: { id, role, ... }, parts: [...] }] }`. A "line" of the report is
 * one message, numbered from 1.
 *
 * - `text` parts → text blocks; `reasoning` → thinking blocks (no signature);
 *   a `tool` part → a tool_use block, and its result (`completed`: the
 *   output; `error`: the error, `is_error`) in the tool-result message that
 *   follows. A `running` or `pending` tool has no result: an in-flight call
 *   (or, when the conversation went on, an abandoned one).
 * - One assistant message holds every step of a turn: where a step writes
 *   text after tool calls, the calls' results come first, so the message is
 *   split into assistant / tool-result messages in the order the model saw.
 * - `step-finish` tokens are the usage of that step's request; other parts
 *   (`step-start`, `file`, `patch`, `snapshot`, `agent`, `compaction`, ...)
 *   are bookkeeping and are not imported (the report's notes count them); a
 *   message with no part to import is skipped by design.
 */
import type { Block, Message, Usage } from "../../model/index.js";
import { jsonDepthError } from "../../model/depth.js";
import { parseSessionDocument } from "./gemini-cli.js";
import { linearImport, type SourceMessage } from "../common/source-tree.js";
import { isRecord } from "../common/lines.js";
import { ReportBuilder } from "../common/report.js";
import { SourceLines, type ToolIdOptions } from "../../model/tool-ids.js";
import { FormatError, type ImportResult } from "../common/types.js";

/**
 * Some opencode versions write a status line, `Exporting session: ID`, to
 * stdout before the JSON, so a redirected export starts with it: the JSON
 * after it, or undefined when the text does not start so.
 */
export function afterExportBanner(text: string): string | undefined {
  const m = /^\s*Exporting session: [^\s{]*\s*(?=\{)/.exec(text);
  return m ? text.slice(m[0].length) : undefined;
}

/** Detection: `opencode export` output with its banner line before the JSON (what its command prints). */
export function isOpencodeExportText(text: string): boolean {
  const exported = afterExportBanner(text);
  if (exported === undefined || jsonDepthError(exported)) return false;
  try {
    return isOpencodeExport(JSON.parse(exported));
  } catch {
    // Not JSON after the banner: detected like any other text.
    return false;
  }
}

/** True for the document `opencode export` writes. */
export function isOpencodeExport(doc: unknown): boolean {
  return (
    isRecord(doc) &&
    isRecord(doc.info) &&
    Array.isArray(doc.messages) &&
    doc.messages.length > 0 &&
    doc.messages.every((m) => isRecord(m) && isRecord(m.info) && Array.isArray(m.parts))
  );
}

function opencodeUsage(t: unknown): Usage | undefined {
  if (!isRecord(t)) return undefined;
  const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  if (typeof t.input !== "number" && typeof t.output !== "number") return undefined;
  const cache = isRecord(t.cache) ? t.cache : {};
  return {
    input_tokens: n(t.input),
    output_tokens: n(t.output) + n(t.reasoning),
    cache_read_input_tokens: n(cache.read),
    cache_creation_input_tokens: n(cache.write),
    scope: "parent",
  };
}

/** An epoch-milliseconds time as ISO text, or undefined when it is not a valid time. */
function msTime(v: unknown): string | undefined {
  if (typeof v !== "number" || !Number.isFinite(v)) return undefined;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

function asText(v: unknown): string {
  return typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v);
}

const META_KEYS = ["id", "sessionID", "modelID", "providerID", "agent", "mode", "time", "cost", "finish"];

/** One opencode message as messages, or a skip; `ignored` counts the part types not imported. */
function convertMessage(
  m: Record<string, unknown>,
  index: number,
  ignored: Map<string, number>,
): Message[] | { skip: string; byDesign: boolean } {
  const info = m.info as Record<string, unknown>;
  const parts = m.parts as unknown[];
  const meta: Record<string, unknown> = { source_index: index };
  for (const k of META_KEYS) if (info[k] !== undefined) meta[k] = info[k];
  const ignore = (type: string): void => {
    ignored.set(type, (ignored.get(type) ?? 0) + 1);
  };
  if (info.role === "user") {
    const content: Block[] = [];
    for (const p of parts) {
      if (isRecord(p) && p.type === "text" && typeof p.text === "string" && p.ignored !== true)
        content.push({ type: "text", text: p.text });
      else ignore(isRecord(p) && typeof p.type === "string" ? p.type : "invalid");
    }
    if (content.length === 0)
      return { skip: "user message without a text part (attachments and bookkeeping only)", byDesign: true };
    return [{ role: "user", content, meta }];
  }
  if (info.role !== "assistant")
    return { skip: `unknown role ${JSON.stringify(info.role)}`, byDesign: false };
  const out: Message[] = [];
  let current: Message = { role: "assistant", content: [], meta: { ...meta } };
  let results: Block[] = [];
  let stepUsage = false;
  const flush = (): void => {
    if (current.content.length > 0) out.push(current);
    if (results.length > 0) out.push({ role: "user", content: results, meta: { ...meta } });
    current = { role: "assistant", content: [], meta: { ...meta } };
    results = [];
  };
  for (const p of parts) {
    if (!isRecord(p) || typeof p.type !== "string") {
      ignore("invalid");
      continue;
    }
    if ((p.type === "text" || p.type === "reasoning") && typeof p.text === "string") {
      // Text after tool calls was written once their results came back.
      if (results.length > 0) flush();
      if (p.type === "text") current.content.push({ type: "text", text: p.text });
      else if (p.text.length > 0) current.content.push({ type: "thinking", thinking: p.text });
      else ignore("reasoning (empty)");
    } else if (p.type === "tool" && typeof p.callID === "string") {
      const state = isRecord(p.state) ? p.state : {};
      current.content.push({
        type: "tool_use",
        id: p.callID,
        name: typeof p.tool === "string" ? p.tool : "",
        input: state.input ?? {},
      });
      if (state.status === "completed")
        results.push({ type: "tool_result", tool_use_id: p.callID, content: asText(state.output) });
      else if (state.status === "error")
        results.push({
          type: "tool_result",
          tool_use_id: p.callID,
          content: asText(state.error),
          is_error: true,
        });
    } else if (p.type === "step-finish" && isRecord(p.tokens)) {
      const usage = opencodeUsage(p.tokens);
      const target = current.content.length > 0 ? current : out.findLast((x) => x.role === "assistant");
      if (usage && target) {
        target.usage = usage;
        stepUsage = true;
      }
      ignore(p.type);
    } else ignore(p.type);
  }
  flush();
  if (!stepUsage) {
    const usage = opencodeUsage(info.tokens);
    const lastAssistant = out.findLast((x) => x.role === "assistant");
    if (usage && lastAssistant) lastAssistant.usage = usage;
  }
  if (out.length === 0)
    return {
      skip: "assistant message without text, reasoning or tool parts (bookkeeping only)",
      byDesign: true,
    };
  return out;
}

/** Imports the JSON that `opencode export` writes. */
export function importOpencode(text: string, file: string, options: ToolIdOptions = {}): ImportResult {
  const body = afterExportBanner(text);
  const doc = parseSessionDocument(body ?? text, file);
  if (!isRecord(doc) || !Array.isArray(doc.messages))
    throw new FormatError(`${file}: expected the JSON of \`opencode export\`: { info, messages: [...] }`);
  const rb = new ReportBuilder("opencode", file);
  rb.report.unit = "message";
  if (body !== undefined)
    rb.note("the status line opencode printed before the JSON (`Exporting session: ...`) is not part of it");
  const out: SourceMessage[] = [];
  const ignored = new Map<string, number>();
  doc.messages.forEach((raw, i) => {
    const line = i + 1;
    if (!isRecord(raw) || !isRecord(raw.info) || !Array.isArray(raw.parts)) {
      rb.line("invalid");
      rb.skip(line, `messages[${i}]: not a message { info, parts: [...] }`, false);
      return;
    }
    rb.line(typeof raw.info.role === "string" ? raw.info.role : "unknown");
    const got = convertMessage(raw, i, ignored);
    if (!Array.isArray(got)) return rb.skip(line, `messages[${i}]: ${got.skip}`, got.byDesign);
    const createdAt = msTime(isRecord(raw.info.time) ? raw.info.time.created : undefined);
    got.forEach((message, part) =>
      out.push({ line, message, part, ...(createdAt !== undefined ? { createdAt } : {}) }),
    );
    rb.imported();
  });
  if (ignored.size > 0)
    rb.note(
      `parts not imported (bookkeeping, attachments; not conversation text): ${[...ignored]
        .map(([k, n]) => `${n} ${k}`)
        .join(", ")}`,
    );
  const info = isRecord(doc.info) ? doc.info : {};
  const created = isRecord(info.time) ? info.time.created : undefined;
  const extra: Record<string, unknown> = {};
  for (const k of ["title", "directory", "projectID", "version"])
    if (info[k] !== undefined) extra[k] = info[k];
  return linearImport(
    rb,
    out,
    "opencode",
    {
      session_id: typeof info.id === "string" ? info.id : undefined,
      created_at: msTime(created),
      extra,
    },
    new SourceLines("message"),
    options,
  );
}
