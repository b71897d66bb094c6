/**
 * Gemini CLI saved sessions: the JSON document `{ sessionId, projectHash,
 * startTime, messages: [...] }` (a "line" of the report is one message,
 * numbered from 1), and the newer append-only JSONL of the same message
 * records (one record a line, maybe after a first line of session metadata).
 *
 * - `user` → a user message; `gemini` → an assistant message: its
 *   `thoughts` as thinking blocks (Gemini records them without a signature),
 *   its `content` as text, its `toolCalls` as tool_use blocks, and their
 *   recorded results as the tool-result message that follows (`status:
 *   "error"` or a `functionResponse.response.error` → `is_error`). A call
 *   without a recorded result is in flight (at the end) or closed as abandoned.
 * - `info`, `error` and `warning` records are notices the CLI shows, never
 *   sent to the model: skipped by design.
 * - In the JSONL, a record whose `id` a later record repeats is an older
 *   state of that message: the last state is imported, where the first stood
 *   (the lines of the earlier states are skipped by design). A `{ "$set": {
 *   messages: [...] } }` line is a snapshot of the whole list, which replaces
 *   the messages before it; other `$set` fields are session metadata.
 */
import type { Block, Message, Usage } from "../../model/index.js";
import { JsonDepthError, parseJsonLimited } from "../../model/index.js";
import { isRecord, parseLine, splitLines } from "../common/lines.js";
import { ReportBuilder } from "../common/report.js";
import { linearImport, type SourceMessage } from "../common/source-tree.js";
import { SourceLines, type ToolIdOptions } from "../../model/tool-ids.js";
import { FormatError, type ImportResult } from "../common/types.js";

/** A JSON document of one session (not JSONL): parsed, or undefined when the text is not one JSON value. */
export function parseSessionDocument(text: string, file: string): unknown {
  try {
    return parseJsonLimited(text);
  } catch (e) {
    if (e instanceof JsonDepthError)
      throw new FormatError(`${file}:${e.line}: JSON nested deeper than ${e.limit} levels (the limit)`);
    return undefined;
  }
}

const NOTICE_TYPES = new Set(["info", "error", "warning"]);

/** Text of Gemini content: a string, or a list of parts (`{ text }`). */
function geminiText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((p) => (typeof p === "string" ? p : isRecord(p) && typeof p.text === "string" ? p.text : ""))
      .filter((s) => s.length > 0)
      .join("\n");
  if (isRecord(content) && typeof content.text === "string") return content.text;
  return "";
}

function asText(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}

function geminiUsage(t: unknown): Usage | undefined {
  if (!isRecord(t)) return undefined;
  const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  if (typeof t.input !== "number" && typeof t.output !== "number") return undefined;
  // Gemini counts cached tokens inside the prompt and thoughts apart from the output.
  const cached = n(t.cached);
  return {
    input_tokens: Math.max(0, n(t.input) - cached) + n(t.tool),
    output_tokens: n(t.output) + n(t.thoughts),
    cache_read_input_tokens: cached,
    scope: "parent",
  };
}

/** A recorded tool call's result block, or undefined when none was recorded (in flight or abandoned). */
function toolResult(tc: Record<string, unknown>, id: string): Block | undefined {
  const parts = Array.isArray(tc.result) ? tc.result : undefined;
  if (parts === undefined || parts.length === 0) return undefined;
  const texts: string[] = [];
  let error = tc.status === "error";
  for (const p of parts) {
    if (!isRecord(p)) continue;
    if (isRecord(p.functionResponse)) {
      const resp = p.functionResponse.response;
      if (isRecord(resp)) {
        if (resp.error !== undefined) {
          error = true;
          texts.push(asText(resp.error));
        } else if (resp.output !== undefined) texts.push(asText(resp.output));
        else texts.push(JSON.stringify(resp));
      } else if (resp !== undefined) texts.push(asText(resp));
    } else if (typeof p.text === "string") texts.push(p.text);
    else texts.push(JSON.stringify(p));
  }
  const b: Block = { type: "tool_result", tool_use_id: id, content: texts.join("\n") };
  if (error) b.is_error = true;
  return b;
}

/** One Gemini record as messages (an assistant message may bring its tool results), or a skip. */
function convertRecord(
  r: Record<string, unknown>,
  meta: Record<string, unknown>,
): Message[] | { skip: string; byDesign: boolean } {
  for (const k of ["id", "timestamp", "model"]) if (r[k] !== undefined) meta[k] = r[k];
  switch (r.type) {
    case "user":
      return [{ role: "user", content: [{ type: "text", text: geminiText(r.content) }], meta }];
    case "gemini": {
      const content: Block[] = [];
      if (Array.isArray(r.thoughts))
        for (const t of r.thoughts) {
          if (!isRecord(t)) continue;
          const subject = typeof t.subject === "string" ? t.subject : "";
          const description = typeof t.description === "string" ? t.description : "";
          const thinking = subject && description ? `**${subject}**\n${description}` : subject || description;
          if (thinking) content.push({ type: "thinking", thinking });
        }
      const text = geminiText(r.content);
      if (text) content.push({ type: "text", text });
      const results: Block[] = [];
      if (Array.isArray(r.toolCalls))
        r.toolCalls.forEach((tc, k) => {
          if (!isRecord(tc)) return;
          const id = typeof tc.id === "string" && tc.id ? tc.id : `gemini_call_${k + 1}`;
          content.push({
            type: "tool_use",
            id,
            name: typeof tc.name === "string" ? tc.name : "",
            input: tc.args ?? {},
          });
          const res = toolResult(tc, id);
          if (res) results.push(res);
        });
      const resultMeta = { ...meta };
      delete resultMeta.model;
      const msg: Message = { role: "assistant", content, meta };
      const usage = geminiUsage(r.tokens);
      if (usage) msg.usage = usage;
      if (r.tokens !== undefined) meta.tokens = r.tokens;
      return results.length > 0 ? [msg, { role: "user", content: results, meta: resultMeta }] : [msg];
    }
    default:
      if (typeof r.type === "string" && NOTICE_TYPES.has(r.type))
        return { skip: `${r.type} record (a notice the CLI shows, not sent to the model)`, byDesign: true };
      return { skip: `unknown record type ${JSON.stringify(r.type)}`, byDesign: false };
  }
}

/** A message record of a Gemini JSONL, with the line it was last written on. */
interface Item {
  line: number;
  value: Record<string, unknown>;
}

/**
 * A message record into the list: a record whose `id` is already there is a
 * later state of that message and takes its place; any other is appended.
 */
function upsert(list: Item[], item: Item, why: Map<number, { reason: string; byDesign: boolean }>): void {
  const id = item.value.id;
  const at = typeof id === "string" ? list.findIndex((x) => x.value.id === id) : -1;
  if (at < 0) {
    list.push(item);
    return;
  }
  why.set(list[at]!.line, {
    reason: `an earlier state of message ${JSON.stringify(id)} (its state at line ${item.line} is imported)`,
    byDesign: true,
  });
  list[at] = item;
}

/** True for the JSON document of a Gemini CLI saved session. */
export function isGeminiDocument(doc: unknown): boolean {
  return (
    isRecord(doc) &&
    typeof doc.sessionId === "string" &&
    Array.isArray(doc.messages) &&
    doc.messages.some((m) => isRecord(m) && typeof m.type === "string" && !("role" in m))
  );
}

/** True for a record of a Gemini CLI session JSONL (a message record, or the session metadata line). */
export function isGeminiRecord(o: Record<string, unknown>): boolean {
  if ("uuid" in o || "parentUuid" in o || "message" in o || "payload" in o) return false;
  if (isRecord(o.$set)) return Object.keys(o).length === 1;
  if (o.type === undefined) return typeof o.sessionId === "string" && "projectHash" in o;
  if (o.type === "gemini") return "content" in o || Array.isArray(o.toolCalls);
  return (
    typeof o.type === "string" &&
    (o.type === "user" || NOTICE_TYPES.has(o.type)) &&
    "content" in o &&
    ("id" in o || "timestamp" in o)
  );
}

function sessionExtra(o: Record<string, unknown>): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  for (const k of ["projectHash", "lastUpdated", "summary"]) if (o[k] !== undefined) extra[k] = o[k];
  return extra;
}

/** Imports a Gemini CLI session (the JSON document or the JSONL). */
export function importGeminiCli(text: string, file: string, options: ToolIdOptions = {}): ImportResult {
  const doc = text.trimStart().startsWith("{") ? parseSessionDocument(text, file) : undefined;
  const rb = new ReportBuilder("gemini-cli", file);
  if (isRecord(doc) && Array.isArray(doc.messages)) return importDocument(doc, doc.messages, rb, options);
  return importJsonl(text, rb, options);
}

/** The JSON document: one message a record of `messages`. */
function importDocument(
  doc: Record<string, unknown>,
  messages: unknown[],
  rb: ReportBuilder,
  options: ToolIdOptions,
): ImportResult {
  rb.report.unit = "message";
  const out: SourceMessage[] = [];
  const lines = new SourceLines("message");
  messages.forEach((raw, i) => {
    const line = i + 1;
    if (!isRecord(raw) || typeof raw.type !== "string") {
      rb.line("invalid");
      rb.skip(line, `messages[${i}]: not a record with a "type"`, false);
      return;
    }
    rb.line(raw.type);
    const got = convertRecord(raw, { source_index: i });
    if (!Array.isArray(got)) return rb.skip(line, `messages[${i}]: ${got.skip}`, got.byDesign);
    const at = raw.timestamp;
    got.forEach((message, part) =>
      out.push({ line, message, part, ...(typeof at === "string" ? { createdAt: at } : {}) }),
    );
    rb.imported();
  });
  return linearImport(
    rb,
    out,
    "gemini-cli",
    {
      session_id: typeof doc.sessionId === "string" ? doc.sessionId : undefined,
      created_at: typeof doc.startTime === "string" ? doc.startTime : undefined,
      extra: sessionExtra(doc),
    },
    lines,
    options,
  );
}

/** The JSONL replayed: the session's message list as the lines leave it, and why each other line is not in it. */
interface Replayed {
  sessionId?: string;
  startTime?: string;
  extra: Record<string, unknown>;
  /** The message list as the lines so far leave it. */
  list: Item[];
  /** Why a line has nothing in the final list (the latest reason); lines with a message there are imported. */
  why: Map<number, { reason: string; byDesign: boolean }>;
  /** Every line, in order. */
  counted: number[];
}

/** A `$set` line: session metadata, or a snapshot of the whole message list (what it leaves out is gone). */
function replaySet(r: Replayed, set: Record<string, unknown>, line: number): void {
  r.extra = { ...r.extra, ...sessionExtra(set) };
  if (!Array.isArray(set.messages)) {
    r.why.set(line, { reason: "session metadata update (recorded in the header)", byDesign: true });
    return;
  }
  for (const it of r.list)
    r.why.set(it.line, { reason: `replaced by the message list of line ${line}`, byDesign: true });
  r.list = [];
  set.messages.forEach((m, k) => {
    if (isRecord(m)) upsert(r.list, { line, value: m }, r.why);
    else r.why.set(line, { reason: `$set.messages[${k}]: not a message record`, byDesign: false });
  });
  if (set.messages.length === 0)
    r.why.set(line, { reason: "an empty message list (the session was cleared)", byDesign: true });
}

/** Replays the lines into the session's message list. */
function replay(text: string, rb: ReportBuilder): Replayed {
  const r: Replayed = { extra: {}, list: [], why: new Map(), counted: [] };
  for (const raw of splitLines(text)) {
    r.counted.push(raw.line);
    if (raw.text.trim() === "") {
      rb.line("blank");
      r.why.set(raw.line, { reason: "blank line", byDesign: true });
      continue;
    }
    const p = parseLine(raw);
    if (!p.ok || !isRecord(p.value)) {
      rb.line("invalid");
      r.why.set(raw.line, { reason: p.ok ? "not a JSON object" : p.reason, byDesign: false });
      continue;
    }
    const o = p.value;
    if (isRecord(o.$set)) {
      rb.line("$set");
      replaySet(r, o.$set, raw.line);
      continue;
    }
    if (o.type === undefined && (typeof o.sessionId === "string" || "projectHash" in o)) {
      rb.line("session");
      if (typeof o.sessionId === "string") r.sessionId ??= o.sessionId;
      if (typeof o.startTime === "string") r.startTime ??= o.startTime;
      r.extra = { ...r.extra, ...sessionExtra(o) };
      r.why.set(raw.line, { reason: "session metadata (recorded in the header)", byDesign: true });
      continue;
    }
    rb.line(typeof o.type === "string" ? o.type : "unknown");
    upsert(r.list, { line: raw.line, value: o }, r.why);
  }
  return r;
}

/** The JSONL: the lines are replayed into the session's message list, which is then imported. */
function importJsonl(text: string, rb: ReportBuilder, options: ToolIdOptions): ImportResult {
  rb.report.unit = "line";
  const r = replay(text, rb);
  const out: SourceMessage[] = [];
  const lines = new SourceLines("line");
  const parts = new Map<number, number>();
  const importedLines = new Set<number>();
  for (const { line, value } of r.list) {
    const got = convertRecord(value, {});
    if (!Array.isArray(got)) {
      if (!importedLines.has(line)) r.why.set(line, { reason: got.skip, byDesign: got.byDesign });
      continue;
    }
    importedLines.add(line);
    for (const message of got) {
      const part = parts.get(line) ?? 0;
      parts.set(line, part + 1);
      out.push({
        line,
        message,
        part,
        ...(typeof value.timestamp === "string" ? { createdAt: value.timestamp } : {}),
      });
    }
  }
  for (const line of r.counted) {
    if (importedLines.has(line)) rb.imported();
    else {
      const w = r.why.get(line) ?? { reason: "nothing of it is in the session", byDesign: true };
      rb.skip(line, w.reason, w.byDesign);
    }
  }
  return linearImport(
    rb,
    out,
    "gemini-cli",
    { session_id: r.sessionId, created_at: r.startTime, extra: r.extra },
    lines,
    options,
  );
}
