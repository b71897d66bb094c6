/** Canonical messages as an OpenAI Chat Completions request body. See `prepare.ts` for the repair rules. */
import type { Message } from "../../model/index.js";
import { prepareForProvider } from "./prepare.js";
import { parseMessages } from "../../model/schema.js";
import { refuseForeignCompaction } from "../../model/provider-compaction.js";
import { toChatMessages, type OpenAIMessage } from "../../wire/openai-chat.js";

export type { OpenAIMessage, OpenAIToolCall } from "../../wire/openai-chat.js";

export interface OpenAIRequestBody {
  messages: OpenAIMessage[];
}

/** Validates `messages` first (`parseMessages`), then converts them. */
export function toOpenAIRequest(messages: readonly Message[]): OpenAIRequestBody {
  parseMessages(messages, "messages"); // a malformed or over-deep message: a ModelError naming its path
  refuseForeignCompaction(messages, "openai"); // Chat Completions has no place for either provider's compaction
  return { messages: toChatMessages(prepareForProvider(messages, "openai").messages) };
}
