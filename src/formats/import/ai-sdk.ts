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
import { isRecord } from "../common/lines.js";
import { ReportBuilder } from "../common/report.js";
import { linearImport, parseJsonDocument } from "../common/source-tree.js";
import { SourceLines, type ToolIdOptions } from "../../model/tool-ids.js";
import { FormatError, type ImportResult } from "../common/types.js";
import { fromModelMessagesIndexed } from "../../wire/ai-sdk.js";

const ROLES = new Set(["system", "user", "assistant", "tool"]);
/** Part types only the AI SDK writes (Anthropic's are snake_case, OpenAI's have no parts like these). */
const AI_SDK_PART_TYPES = new Set([
  "tool-call",
  "tool-result",
  "tool-approval-request",
  "tool-approval-response",
  "reasoning-file",
]);

/** The message list of a document (an array, or `{ messages }`), if it is one. */
function messagesOf(doc: unknown): unknown[] | undefined {
  if (Array.isArray(doc)) return doc;
  if (isRecord(doc) && Array.isArray(doc.messages)) return doc.messages;
  return undefined;
}

function isAiSdkPart(p: unknown): boolean {
  return (
    isRecord(p) &&
    typeof p.type === "string" &&
    (AI_SDK_PART_TYPES.has(p.type) ||
      "toolCallId" in p ||
      (p.type === "file" && typeof p.mediaType === "string") ||
      (p.type === "image" && "image" in p) ||
      (p.type === "reasoning" && typeof p.text === "string"))
  );
}

/**
 * True when a document is AI SDK `ModelMessage`s: a message list whose every
 * item has a role, with at least one AI SDK-only part (`tool-call` /
 * `tool-result` with a `toolCallId`, a `file` with a `mediaType`…) or a
 * `tool` message whose content is a list of parts.
 */
export function looksLikeAiSdk(doc: unknown): boolean {
  const list = messagesOf(doc);
  if (!list || list.length === 0) return false;
  if (!list.every((m) => isRecord(m) && typeof m.role === "string")) return false;
  return list.some(
    (m) =>
      isRecord(m) &&
      Array.isArray(m.content) &&
      (m.content.some(isAiSdkPart) || (m.role === "tool" && m.content.length > 0)),
  );
}

const nonEmpty = (v: unknown): boolean => typeof v === "string" && v !== "";

/** What a part breaks of the AI SDK's rules for its place, or undefined. */
function partProblem(p: unknown, role: string): string | undefined {
  if (!isRecord(p)) return "is not an object";
  if (typeof p.type !== "string") return `has no string "type"`;
  const t = p.type;
  if ((t === "text" || t === "reasoning") && typeof p.text !== "string")
    return `(${t}): "text" must be a string`;
  if (t === "tool-call") {
    if (role !== "assistant") return `(tool-call): a tool call belongs to an assistant message, not ${role}`;
    if (!nonEmpty(p.toolCallId)) return `(tool-call): "toolCallId" must be a non-empty string`;
    if (!nonEmpty(p.toolName)) return `(tool-call): "toolName" must be a non-empty string`;
    if (!("input" in p)) return `(tool-call): "input" is missing`;
  }
  if (t === "tool-result") {
    if (role !== "tool" && role !== "assistant")
      return `(tool-result): a tool result belongs to a tool message, not ${role}`;
    if (!nonEmpty(p.toolCallId)) return `(tool-result): "toolCallId" must be a non-empty string`;
    if (typeof p.toolName !== "string") return `(tool-result): "toolName" must be a string`;
    if (!isRecord(p.output) || typeof p.output.type !== "string")
      return `(tool-result): "output" must be an object with a "type" (text, json, error-text, content…)`;
  }
  if (role === "tool" && t !== "tool-result" && t !== "tool-approval-response")
    return `(${t}): a tool message holds only tool-result and tool-approval-response parts`;
  return undefined;
}

/** What a message breaks of the AI SDK's rules, or undefined. */
function messageProblem(m: unknown): string | undefined {
  if (!isRecord(m)) return "it is not an object";
  if (typeof m.role !== "string" || !ROLES.has(m.role))
    return `"role" is ${JSON.stringify(m.role)} (expected system, user, assistant or tool)`;
  const { role, content } = m;
  if (role === "system")
    return typeof content === "string" ? undefined : `a system message's "content" must be a string`;
  if (role === "tool" && !Array.isArray(content))
    return `a tool message's "content" must be an array of parts`;
  if (typeof content === "string") return undefined;
  if (!Array.isArray(content)) return `"content" must be a string or an array of parts`;
  for (let i = 0; i < content.length; i++) {
    const why = partProblem(content[i], role);
    if (why !== undefined) return `content[${i}] ${why}`;
  }
  return undefined;
}

export function importAiSdk(text: string, file: string, options: ToolIdOptions = {}): ImportResult {
  const doc = parseJsonDocument(text, file);
  const list = messagesOf(doc);
  if (!list)
    throw new FormatError(`${file}: expected a JSON array of AI SDK ModelMessages, or { "messages": [...] }`);
  list.forEach((m, i) => {
    const why = messageProblem(m);
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
