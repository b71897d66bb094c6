/**
 * OpenAI Chat Completions messages (`POST /v1/chat/completions` `messages`)
 * and the project's messages, both ways. The one reader of a Chat message (the
 * `openai` importer and the guard's Chat wire read through it) and the one
 * writer (the `openai` exporter writes through it).
 *
 * Reading one message:
 * - `system` / `developer` → `system`; `user` → `user`; content parts: `text`
 *   (with its `cache_control`), `image_url`, `refusal` (as text), any other
 *   typed part kept as it is; an empty string is no block (prepare.ts leaves
 *   empty text out anyway);
 * - `assistant` → `assistant`: `reasoning_content` / `reasoning` (as servers
 *   that stream reasoning write it) as a `thinking` block, the content, a
 *   `refusal` field as text, each of `tool_calls` as a `tool_use` (arguments
 *   parsed);
 * - `tool` → a user message of one `tool_result` (`tool_call_id`, or the
 *   first of a SWE-agent `tool_call_ids`; text parts joined);
 * - legacy function calling (an assistant `function_call`, role `function`)
 *   only when the caller asks for it (`functions`), with the ids it keeps:
 *   the guard leaves those elements opaque, the importer reads them;
 * - any other role: undefined (the caller says what it does with it).
 */
import type { Block, Message, ToolResultBlock, ToolUseBlock } from "../model/index.js";
import { isRecord, parseArguments } from "./common.js";

export type OpenAIMessage =
  | { role: "system"; content: string | { type: "text"; text: string }[] }
  | { role: "user"; content: string | Record<string, unknown>[] }
  | {
      role: "assistant";
      content: string | { type: "text"; text: string }[] | null;
      tool_calls?: OpenAIToolCall[];
    }
  | { role: "tool"; tool_call_id: string; content: string };

export interface OpenAIToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** The roles of the Chat wire the reader models (legacy `function` aside). */
export const CHAT_ROLES: ReadonlySet<unknown> = new Set(["system", "developer", "user", "assistant", "tool"]);

/** The fields of each role of a Chat request message (what the shape check allows). */
export const CHAT_MESSAGE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  system: ["role", "content", "name"],
  developer: ["role", "content", "name"],
  user: ["role", "content", "name"],
  assistant: ["role", "content", "tool_calls", "name"],
  tool: ["role", "tool_call_id", "content"],
};

/** Chat content (a string or parts) as blocks. */
export function chatContent(content: unknown): Block[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
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

/** The ids of an assistant message's `tool_calls` (none for another message). */
export function chatCallIds(raw: Record<string, unknown>): string[] {
  return raw.role === "assistant" && Array.isArray(raw.tool_calls)
    ? raw.tool_calls.filter(isRecord).map((t) => String(t.id))
    : [];
}

/** The call a `tool` message answers (undefined for another message). */
export function chatResultId(raw: Record<string, unknown>): string | undefined {
  return raw.role === "tool" ? String(raw.tool_call_id) : undefined;
}

/** Legacy function calling, read: the id given to the last `function_call` (a `function` message answers it). */
export interface ChatFunctions {
  lastId?: string;
}

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  return chatContent(content)
    .filter((b) => b.type === "text")
    .map((b) => (b as { text: string }).text)
    .join("\n");
}

function assistantBlocks(raw: Record<string, unknown>, at: number, functions?: ChatFunctions): Block[] {
  const content: Block[] = [];
  for (const k of ["reasoning_content", "reasoning"])
    if (typeof raw[k] === "string" && raw[k] !== "") {
      content.push({ type: "thinking", thinking: raw[k] });
      break;
    }
  content.push(...chatContent(raw.content));
  if (typeof raw.refusal === "string" && raw.refusal.length > 0)
    content.push({ type: "text", text: raw.refusal });
  content.push(...chatToolCalls(raw));
  if (functions && isRecord(raw.function_call)) {
    functions.lastId = `fc_${at}`;
    content.push({
      type: "tool_use",
      id: functions.lastId,
      name: String(raw.function_call.name ?? ""),
      input: parseArguments(raw.function_call.arguments),
    });
  }
  return content;
}

/**
 * One Chat message as the project's (without `meta`: the caller adds its
 * own), or undefined for a role the reader does not model. `at` numbers the
 * ids of legacy function calls (`fc_<at>`), read only with `functions`.
 */
export function fromChatMessage(
  raw: Record<string, unknown>,
  at = 0,
  functions?: ChatFunctions,
): Message | undefined {
  switch (raw.role) {
    case "system":
    case "developer":
      return { role: "system", content: chatContent(raw.content) };
    case "user":
      return { role: "user", content: chatContent(raw.content) };
    case "assistant":
      return { role: "assistant", content: assistantBlocks(raw, at, functions) };
    case "tool":
    case "function": {
      if (raw.role === "function" && !functions) return undefined;
      const ids = Array.isArray(raw.tool_call_ids) ? raw.tool_call_ids : [];
      const id =
        raw.role === "function"
          ? (functions!.lastId ?? `fc_${at}`)
          : String(raw.tool_call_id ?? ids[0] ?? "");
      const result: ToolResultBlock = {
        type: "tool_result",
        tool_use_id: id,
        content: resultText(raw.content),
      };
      return { role: "user", content: [result] };
    }
    default:
      return undefined;
  }
}

/** True when a completion's choice asks for a tool: tool calls, a legacy function call, or that finish reason. */
export function chatChoiceCallsTools(choice: unknown): boolean {
  if (!isRecord(choice)) return false;
  const message = isRecord(choice.message) ? choice.message : {};
  return (
    (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) ||
    message.function_call != null ||
    choice.finish_reason === "tool_calls" ||
    choice.finish_reason === "function_call"
  );
}

// ---------------------------------------------------------------- writing

function textParts(blocks: readonly Block[]): { type: "text"; text: string }[] {
  return blocks
    .filter((b) => b.type === "text")
    .map((b) => ({ type: "text" as const, text: (b as { text: string }).text }));
}

function userContent(blocks: readonly Block[]): string | Record<string, unknown>[] {
  if (blocks.length === 1 && blocks[0]!.type === "text") return (blocks[0] as { text: string }).text;
  return blocks.map((b) =>
    b.type === "text"
      ? { type: "text", text: (b as { text: string }).text }
      : { type: "image_url", image_url: { url: (b as { image_url: { url: string } }).image_url.url } },
  );
}

function assistantMessage(m: Message): OpenAIMessage {
  const parts = textParts(m.content);
  const calls = m.content
    .filter((b): b is ToolUseBlock => b.type === "tool_use")
    .map((b): OpenAIToolCall => ({
      id: b.id,
      type: "function",
      function: { name: b.name, arguments: typeof b.input === "string" ? b.input : JSON.stringify(b.input) },
    }));
  const content = parts.length === 0 ? null : parts.length === 1 ? parts[0]!.text : parts;
  return calls.length > 0
    ? { role: "assistant", content, tool_calls: calls }
    : { role: "assistant", content };
}

/**
 * Messages as Chat messages, as they are (the exporter repairs them first,
 * see prepare.ts): system text, assistant text and calls, a user message's
 * results as `tool` messages followed by its text and images.
 */
export function toChatMessages(messages: readonly Message[]): OpenAIMessage[] {
  const out: OpenAIMessage[] = [];
  for (const m of messages) {
    if (m.role === "system") {
      const parts = textParts(m.content);
      out.push({ role: "system", content: parts.length === 1 ? parts[0]!.text : parts });
      continue;
    }
    if (m.role === "assistant" || m.role === "assistant_interrupted") {
      out.push(assistantMessage(m));
      continue;
    }
    const results = m.content.filter((b): b is ToolResultBlock => b.type === "tool_result");
    for (const r of results) out.push({ role: "tool", tool_call_id: r.tool_use_id, content: r.content });
    const rest = m.content.filter((b) => b.type === "text" || b.type === "image_url");
    if (rest.length > 0) out.push({ role: "user", content: userContent(rest) });
  }
  return out;
}
