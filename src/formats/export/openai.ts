/** Canonical messages as an OpenAI Chat Completions request body. See `prepare.ts` for the repair rules. */
import type { Block, Message, ToolResultBlock, ToolUseBlock } from "../../model/index.js";
import { prepareForProvider } from "./prepare.js";
import { parseMessages } from "../../model/schema.js";
import { refuseForeignCompaction } from "../../model/provider-compaction.js";

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

export interface OpenAIRequestBody {
  messages: OpenAIMessage[];
}

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

/** Validates `messages` first (`parseMessages`), then converts them. */
export function toOpenAIRequest(messages: readonly Message[]): OpenAIRequestBody {
  parseMessages(messages, "messages"); // a malformed or over-deep message: a ModelError naming its path
  refuseForeignCompaction(messages, "openai"); // Chat Completions has no place for either provider's compaction
  const out: OpenAIMessage[] = [];
  for (const m of prepareForProvider(messages, "openai").messages) {
    if (m.role === "system") {
      const parts = textParts(m.content);
      out.push({ role: "system", content: parts.length === 1 ? parts[0]!.text : parts });
      continue;
    }
    if (m.role === "assistant" || m.role === "assistant_interrupted") {
      const parts = textParts(m.content);
      const calls = m.content
        .filter((b): b is ToolUseBlock => b.type === "tool_use")
        .map((b): OpenAIToolCall => ({
          id: b.id,
          type: "function",
          function: {
            name: b.name,
            arguments: typeof b.input === "string" ? b.input : JSON.stringify(b.input),
          },
        }));
      const content = parts.length === 0 ? null : parts.length === 1 ? parts[0]!.text : parts;
      out.push(
        calls.length > 0 ? { role: "assistant", content, tool_calls: calls } : { role: "assistant", content },
      );
      continue;
    }
    const results = m.content.filter((b): b is ToolResultBlock => b.type === "tool_result");
    for (const r of results) out.push({ role: "tool", tool_call_id: r.tool_use_id, content: r.content });
    const rest = m.content.filter((b) => b.type === "text" || b.type === "image_url");
    if (rest.length > 0) out.push({ role: "user", content: userContent(rest) });
  }
  return { messages: out };
}
