/**
 * Checks that a request body has the shape the provider accepts: the first
 * message from the user (Anthropic: or an assistant message that opens with
 * a compaction block, which may stand nowhere else), roles alternating where the API demands it (OpenAI
 * takes any order; Anthropic combines consecutive same-role messages), every
 * call immediately followed by its result, thinking only where the provider
 * takes it, and nothing of compact-safe's own (meta, usage) sent along. The
 * reason names the message index.
 */
import { isRecord } from "../common/lines.js";
import { isAnthropicBlockType } from "../../wire/anthropic.js";
import { CHAT_MESSAGE_FIELDS, CHAT_ROLES } from "../../wire/openai-chat.js";

export type ShapeCheck = { ok: true } | { ok: false; reason: string };

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

function fail(reason: string): ShapeCheck {
  return { ok: false, reason };
}

function checkAnthropic(body: Record<string, unknown>): ShapeCheck {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return fail("messages: must be a non-empty array");
  if (body.system !== undefined) {
    const s = body.system;
    const ok =
      typeof s === "string" ||
      (Array.isArray(s) && s.every((b) => isRecord(b) && b.type === "text" && typeof b.text === "string"));
    if (!ok) return fail("system: must be a string or an array of text blocks");
  }
  for (const [i, m] of messages.entries()) {
    const at = `messages[${i}]`;
    if (!isRecord(m)) return fail(`${at}: not an object`);
    for (const k of Object.keys(m))
      if (k !== "role" && k !== "content")
        return fail(`${at}: unexpected field "${k}" (only role and content are sent)`);
    if (m.role !== "user" && m.role !== "assistant")
      return fail(`${at}: role must be "user" or "assistant", got ${JSON.stringify(m.role)}`);
    const opensWithCompaction =
      i === 0 && Array.isArray(m.content) && isRecord(m.content[0]) && m.content[0].type === "compaction";
    if (i === 0 && m.role !== "user" && !opensWithCompaction)
      return fail(`${at}: the first message must be from the user (or open with a compaction block)`);
    // Consecutive messages of one role are allowed: the Messages API combines them into one turn.
    const prev = i > 0 ? (messages[i - 1] as Record<string, unknown>) : undefined;
    if (typeof m.content === "string") {
      if (m.content.trim().length === 0) return fail(`${at}: empty content`);
      if (
        prev &&
        prev.role === "assistant" &&
        Array.isArray(prev.content) &&
        prev.content.some((b) => isRecord(b) && b.type === "tool_use")
      ) {
        return fail(`${at}: must start with the tool results of messages[${i - 1}]`);
      }
      continue;
    }
    if (!Array.isArray(m.content) || m.content.length === 0)
      return fail(`${at}: content must be a string or a non-empty array of blocks`);
    const calls: string[] = [];
    let seenNonResult = false;
    for (const [j, b] of m.content.entries()) {
      const bat = `${at}.content[${j}]`;
      if (!isRecord(b) || typeof b.type !== "string") return fail(`${bat}: not a content block`);
      if (b.type === "compaction") {
        // The API's rule (`compaction_block_misplaced`): the first block of the conversation, never elsewhere.
        if (i !== 0 || j !== 0 || m.role !== "assistant")
          return fail(
            `${bat}: a compaction block must be the first block of the conversation, in an assistant message`,
          );
        continue;
      }
      if (!isAnthropicBlockType(b.type))
        return fail(`${bat}: block type ${JSON.stringify(b.type)} is not taken by the Anthropic API`);
      if (b.type === "text" && (typeof b.text !== "string" || b.text.trim().length === 0))
        return fail(`${bat}: empty text block`);
      if ((b.type === "thinking" || b.type === "redacted_thinking") && m.role !== "assistant")
        return fail(`${bat}: ${b.type} outside an assistant message`);
      if (b.type === "thinking" && (typeof b.signature !== "string" || b.signature.length === 0))
        return fail(`${bat}: thinking block without a signature`);
      if (b.type === "redacted_thinking" && typeof b.data !== "string")
        return fail(`${bat}: redacted_thinking without data`);
      if (b.type === "image" && m.role !== "user") return fail(`${bat}: image outside a user message`);
      if (b.type === "tool_use") {
        if (m.role !== "assistant") return fail(`${bat}: tool_use outside an assistant message`);
        if (typeof b.id !== "string" || !TOOL_ID.test(b.id))
          return fail(`${bat}: tool_use id ${JSON.stringify(b.id)} is not [a-zA-Z0-9_-]+`);
        if (!isRecord(b.input)) return fail(`${bat}: tool_use input must be an object`);
        calls.push(b.id);
      }
      if (b.type === "tool_result") {
        if (m.role !== "user") return fail(`${bat}: tool_result outside a user message`);
        if (seenNonResult) return fail(`${bat}: tool_result blocks must come first in the user message`);
        const prevCalls =
          prev && Array.isArray(prev.content)
            ? prev.content
                .filter((x) => isRecord(x) && x.type === "tool_use")
                .map((x) => (x as { id: unknown }).id)
            : [];
        if (!prevCalls.includes(b.tool_use_id))
          return fail(
            `${bat}: tool_result ${JSON.stringify(b.tool_use_id)} has no matching tool_use in messages[${i - 1}]`,
          );
      } else seenNonResult = true;
    }
    if (calls.length > 0) {
      const next = messages[i + 1];
      if (!isRecord(next))
        return fail(`${at}: tool_use ${JSON.stringify(calls[0])} is not followed by its tool_result`);
      const ids = Array.isArray(next.content)
        ? next.content
            .filter((x) => isRecord(x) && x.type === "tool_result")
            .map((x) => (x as { tool_use_id: unknown }).tool_use_id)
        : [];
      const missing = calls.find((c) => !ids.includes(c));
      if (missing !== undefined)
        return fail(`${at}: tool_use ${JSON.stringify(missing)} is not answered in messages[${i + 1}]`);
    }
  }
  return { ok: true };
}

function checkOpenAI(body: Record<string, unknown>): ShapeCheck {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return fail("messages: must be a non-empty array");
  let firstConvoSeen = false;
  let pending: string[] = []; // calls of the latest assistant message still waiting for their tool message
  let lastCalls: string[] = [];
  for (const [i, m] of messages.entries()) {
    const at = `messages[${i}]`;
    if (!isRecord(m)) return fail(`${at}: not an object`);
    const role = String(m.role);
    const allowed = Object.hasOwn(CHAT_MESSAGE_FIELDS, role)
      ? CHAT_MESSAGE_FIELDS[role]!
      : CHAT_MESSAGE_FIELDS.user!;
    for (const k of Object.keys(m)) if (!allowed.includes(k)) return fail(`${at}: unexpected field "${k}"`);
    if (!CHAT_ROLES.has(m.role)) return fail(`${at}: unknown role ${JSON.stringify(m.role)}`);
    if (m.role !== "tool" && pending.length > 0)
      return fail(
        `${at}: tool call ${JSON.stringify(pending[0])} of the previous assistant message has no tool message before this one`,
      );
    if (m.role !== "system" && m.role !== "developer" && !firstConvoSeen) {
      firstConvoSeen = true;
      if (m.role !== "user")
        return fail(`${at}: the first message after the system prompt must be from the user`);
    }
    const content = m.content;
    const partsOk = (allowedTypes: string[]) =>
      Array.isArray(content) &&
      content.length > 0 &&
      content.every((p) => isRecord(p) && allowedTypes.includes(String(p.type)));
    switch (m.role) {
      case "system":
      case "developer":
        if (!(typeof content === "string" || partsOk(["text"])))
          return fail(`${at}: system content must be text`);
        break;
      case "user":
        if (!(
          (typeof content === "string" && content.length > 0) ||
          partsOk(["text", "image_url", "input_audio", "file"])
        ))
          return fail(`${at}: user content must be a non-empty string or text/image parts`);
        break;
      case "assistant": {
        const calls = m.tool_calls;
        if (calls !== undefined) {
          if (!Array.isArray(calls) || calls.length === 0)
            return fail(`${at}: tool_calls must be a non-empty array`);
          for (const [j, c] of calls.entries()) {
            if (
              !isRecord(c) ||
              typeof c.id !== "string" ||
              c.id.length === 0 ||
              c.type !== "function" ||
              !isRecord(c.function) ||
              typeof c.function.name !== "string" ||
              typeof c.function.arguments !== "string"
            ) {
              return fail(
                `${at}.tool_calls[${j}]: must be { id, type: "function", function: { name, arguments: string } }`,
              );
            }
          }
        }
        const hasText = (typeof content === "string" && content.length > 0) || partsOk(["text", "refusal"]);
        if (!(
          hasText ||
          (content === null && calls !== undefined) ||
          (content === undefined && calls !== undefined)
        )) {
          return fail(`${at}: an assistant message needs text or tool_calls`);
        }
        pending = Array.isArray(calls) ? calls.map((c) => String((c as { id: unknown }).id)) : [];
        lastCalls = [...pending];
        break;
      }
      case "tool": {
        if (typeof m.tool_call_id !== "string") return fail(`${at}: tool message without tool_call_id`);
        if (!lastCalls.includes(m.tool_call_id))
          return fail(
            `${at}: tool message for ${JSON.stringify(m.tool_call_id)} does not answer the preceding assistant message`,
          );
        if (!pending.includes(m.tool_call_id))
          return fail(`${at}: second tool message for ${JSON.stringify(m.tool_call_id)}`);
        if (!(typeof content === "string" || partsOk(["text"])))
          return fail(`${at}: tool content must be text`);
        pending = pending.filter((p) => p !== m.tool_call_id);
        break;
      }
    }
    if (m.role !== "tool" && m.role !== "assistant") lastCalls = [];
  }
  if (pending.length > 0)
    return fail(
      `messages[${messages.length - 1}]: tool call ${JSON.stringify(pending[0])} has no tool message`,
    );
  return { ok: true };
}

export function checkProviderShape(body: unknown, provider: "anthropic" | "openai"): ShapeCheck {
  if (!isRecord(body)) return fail("body: must be an object");
  for (const k of Object.keys(body)) {
    if (provider === "anthropic" ? k !== "system" && k !== "messages" : k !== "messages")
      return fail(`body: unexpected field "${k}"`);
  }
  return provider === "anthropic" ? checkAnthropic(body) : checkOpenAI(body);
}
