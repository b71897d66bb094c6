/**
 * The provider-neutral repair that both exporters run first, on canonical
 * messages. It never mutates its input. In order:
 *
 * 1. `assistant_interrupted` becomes `assistant`; `meta` and `usage` are dropped.
 * 2. Blocks the provider does not take are left out: empty or whitespace-only
 *    text; for Anthropic, unsigned `thinking`, `redacted_thinking` from another
 *    provider (`origin: "openai"`) and thinking outside assistant messages; for
 *    OpenAI, every thinking block, images outside user messages, nested
 *    `content_blocks` of tool results and opaque provider blocks.
 * 3. Pairing: right after an assistant message with calls comes one user
 *    message with exactly their results, in call order (a result recorded
 *    later is moved up). A call with no result anywhere gets a synthetic error
 *    result when the conversation went on after it (an instruction or an
 *    assistant message follows: the contract's `conversationGoesOnAfter`), and
 *    is left out otherwise (in flight). A result whose call is not before it becomes a user text block
 *    (`[compact-safe: tool result for <id>; its call is not in the history] ...`),
 *    which the contract never takes for a user instruction.
 * 4. Empty messages are dropped; the first non-system message must be from the
 *    user (a minimal user message is inserted otherwise), unless, for
 *    Anthropic, it opens with a compaction block, which must be the first
 *    block of the conversation.
 *    Blocks keep only the fields the provider takes (OpenAI: no `is_error`,
 *    no `cache_control`).
 * 5. Anthropic: system messages move to `system` (one text block each, never
 *    joined); consecutive messages of the same role are sent as they are (the
 *    Messages API combines them into one turn), so a message keeps its
 *    boundaries and the contract reads the request as it reads the history;
 *    a non-object tool input becomes `{ "input": value }`. OpenAI: assistant
 *    text comes before its calls.
 *
 * The round-trip tests compare `prepareForProvider(original)` with
 * `prepareForProvider(import(export(original)))`.
 */
import type { Block, Message, ToolResultBlock, ToolUseBlock } from "../../model/index.js";
import { ABANDONED_RESULT_TEXT } from "../common/abandoned.js";
import { CONVERSATION_START_TEXT, RESULT_AS_TEXT_PREFIX } from "../../contract/markers.js";
import { lastConversationIndex } from "../../contract/rounds.js";
import { isAnthropicBlockType } from "../../wire/anthropic.js";

export { CONVERSATION_START_TEXT };

export type Provider = "anthropic" | "openai";

export interface Prepared {
  /** Anthropic only: the system messages, in order. */
  system: Message[];
  messages: Message[];
}

function keepBlock(b: Block, role: Message["role"], provider: Provider): boolean {
  const assistant = role === "assistant" || role === "assistant_interrupted";
  switch (b.type) {
    case "text": {
      const t = (b as { text?: unknown }).text;
      return typeof t === "string" && t.trim().length > 0;
    }
    case "thinking": {
      const sig = (b as { signature?: unknown }).signature;
      return provider === "anthropic" && assistant && typeof sig === "string" && sig.length > 0;
    }
    case "redacted_thinking":
      return provider === "anthropic" && assistant && (b as { origin?: unknown }).origin !== "openai";
    case "tool_use":
    case "tool_result":
      return true;
    case "image_url":
      return provider === "anthropic" ? !assistant : role === "user";
    case "provider_compaction": // the exporters refuse one they cannot carry before this (never dropped)
      return provider === "anthropic" && (b as { provider?: unknown }).provider === "anthropic";
    default:
      return provider === "anthropic" && isAnthropicBlockType(b.type);
  }
}

function cleanBlock(b: Block, provider: Provider): Block {
  if (b.type === "tool_result") {
    const r = b as ToolResultBlock;
    const out: ToolResultBlock = { type: "tool_result", tool_use_id: r.tool_use_id, content: r.content };
    if (r.is_error !== undefined && provider === "anthropic") out.is_error = r.is_error;
    if (provider === "anthropic" && r.content_blocks && r.content_blocks.length > 0)
      out.content_blocks = r.content_blocks;
    return out;
  }
  if (b.type === "tool_use") {
    const u = b as ToolUseBlock;
    const input =
      provider === "anthropic" && (u.input === null || typeof u.input !== "object" || Array.isArray(u.input))
        ? { input: u.input }
        : u.input;
    return { type: "tool_use", id: u.id, name: u.name, input };
  }
  if (b.type === "text") {
    const t = b as { text: string; cache_control?: unknown };
    return provider === "anthropic" && t.cache_control !== undefined
      ? { type: "text", text: t.text, cache_control: t.cache_control }
      : { type: "text", text: t.text };
  }
  if (b.type === "thinking") {
    const t = b as { thinking: string; signature?: string };
    return { type: "thinking", thinking: t.thinking, signature: t.signature };
  }
  if (b.type === "redacted_thinking")
    return { type: "redacted_thinking", data: (b as { data: string }).data };
  if (b.type === "image_url")
    return { type: "image_url", image_url: { url: (b as { image_url: { url: string } }).image_url.url } };
  return b;
}

const isAssistant = (m: Message) => m.role === "assistant" || m.role === "assistant_interrupted";

export function prepareForProvider(messages: readonly Message[], provider: Provider): Prepared {
  // 1-2: roles and blocks.
  const base: Message[] = messages.map((m) => ({
    role: m.role === "assistant_interrupted" ? "assistant" : m.role,
    content: m.content.filter((b) => keepBlock(b, m.role, provider)).map((b) => cleanBlock(b, provider)),
  }));
  const system =
    provider === "anthropic" ? base.filter((m) => m.role === "system" && m.content.length > 0) : [];
  const convo = provider === "anthropic" ? base.filter((m) => m.role !== "system") : base;

  // 3: pairing.
  const positions = new Map<string, { msg: number; block: number }[]>();
  convo.forEach((m, i) =>
    m.content.forEach((b, j) => {
      if (b.type !== "tool_result") return;
      const id = (b as ToolResultBlock).tool_use_id;
      const list = positions.get(id) ?? [];
      list.push({ msg: i, block: j });
      positions.set(id, list);
    }),
  );
  // A call with no result is abandoned (synthetic error result) when the conversation went on after it,
  // and in flight (left out) otherwise: the contract's rule, so the request has the history's round.
  const lastProgress = lastConversationIndex(convo);
  const consumed = new Set<string>(); // "msg:block"
  const called = new Set<string>();
  const out: Message[] = [];
  for (let i = 0; i < convo.length; i++) {
    const m = convo[i]!;
    const content: Block[] = [];
    m.content.forEach((b, j) => {
      if (b.type !== "tool_result") return content.push(b);
      if (consumed.has(`${i}:${j}`)) return;
      const r = b as ToolResultBlock;
      // A result whose call is not before it: keep its text, as text.
      content.push({
        type: "text",
        text: `${RESULT_AS_TEXT_PREFIX}${r.tool_use_id}${r.is_error ? " (error)" : ""}; its call is not in the history]\n${r.content}`,
      });
      return;
    });
    if (!isAssistant(m)) {
      out.push({ role: m.role, content });
      continue;
    }
    const results: Block[] = [];
    const goesOn = i < lastProgress;
    const kept: Block[] = [];
    for (const b of content) {
      if (b.type !== "tool_use") {
        kept.push(b);
        continue;
      }
      const id = (b as ToolUseBlock).id;
      called.add(id);
      const pos = (positions.get(id) ?? []).find((p) => p.msg > i && !consumed.has(`${p.msg}:${p.block}`));
      if (pos) {
        consumed.add(`${pos.msg}:${pos.block}`);
        results.push(convo[pos.msg]!.content[pos.block]!);
        kept.push(b);
      } else if (goesOn) {
        results.push(
          provider === "anthropic"
            ? { type: "tool_result", tool_use_id: id, content: ABANDONED_RESULT_TEXT, is_error: true }
            : { type: "tool_result", tool_use_id: id, content: ABANDONED_RESULT_TEXT },
        );
        kept.push(b);
      }
      // else: in flight at the very end; the call is left out of the request.
    }
    if (provider === "openai")
      kept.sort((a, b) => Number(a.type === "tool_use") - Number(b.type === "tool_use"));
    out.push({ role: "assistant", content: kept });
    if (results.length > 0) out.push({ role: "user", content: results });
  }

  // 4: empties, first user message.
  const msgs = out.filter((m) => m.content.length > 0);
  const firstConvo = msgs.findIndex((m) => m.role !== "system");
  // An Anthropic compaction block must be the first block of the conversation (the API refuses a
  // message before it: `compaction_block_misplaced`): a conversation that opens with it gets no opener.
  const opensWithCompaction =
    provider === "anthropic" && msgs[firstConvo]?.content[0]?.type === "provider_compaction";
  if (firstConvo >= 0 && msgs[firstConvo]!.role !== "user" && !opensWithCompaction) {
    msgs.splice(firstConvo, 0, { role: "user", content: [{ type: "text", text: CONVERSATION_START_TEXT }] });
  }

  return { system, messages: msgs };
}
