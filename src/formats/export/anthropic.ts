/** Canonical messages as an Anthropic Messages request body. See `prepare.ts` for the repair rules. */
import type { Message } from "../../model/index.js";
import { blockToAnthropic, toAnthropicMessages, type AnthropicMessage } from "../../wire/anthropic.js";
import { prepareForProvider } from "./prepare.js";
import { parseMessages } from "../../model/schema.js";
import { refuseForeignCompaction } from "../../model/provider-compaction.js";

export interface AnthropicRequestBody {
  system?: string | Record<string, unknown>[];
  messages: AnthropicMessage[];
}

/** Validates `messages` first (`parseMessages`), then converts them. */
export function toAnthropicRequest(messages: readonly Message[]): AnthropicRequestBody {
  parseMessages(messages, "messages"); // a malformed or over-deep message: a ModelError naming its path
  refuseForeignCompaction(messages, "anthropic"); // an OpenAI compaction item: refused, never dropped
  const prepared = prepareForProvider(messages, "anthropic");
  const body: AnthropicRequestBody = { messages: toAnthropicMessages(prepared.messages) };
  const systemBlocks = prepared.system.flatMap((m) => m.content);
  // Always blocks: joining system texts would make one text the contract cannot find in the history.
  if (systemBlocks.length > 0) body.system = systemBlocks.map(blockToAnthropic);
  return body;
}
