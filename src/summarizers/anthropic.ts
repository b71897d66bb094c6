/**
 * A summarizer over the Anthropic Messages API, through the official SDK
 * pointed at `baseURL`. SDK retries are off: the engine owns the failure ladder.
 * The SDK (`@anthropic-ai/sdk`, an optional peer dependency) is loaded on the
 * first call.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { loadSdk } from "./anthropic-sdk.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "./types.js";
import { buildUserPrompt, SYSTEM_PROMPT } from "./prompt.js";
import { callLlm, llmSetup, outputCap, type LlmSummarizerOptions } from "./llm-common.js";

export type AnthropicSummarizerOptions = LlmSummarizerOptions;

/**
 * Loads the `@anthropic-ai/sdk` SDK now (it is otherwise loaded on the first call):
 * a `MissingPackageError` when it is not installed. Its types stay out of
 * this module's declarations, so a consumer without the SDK type-checks.
 */
export async function loadAnthropicSdk(): Promise<void> {
  await loadSdk();
}

export function anthropicSummarizer(options: AnthropicSummarizerOptions): Summarizer {
  const setup = llmSetup("anthropicSummarizer", "anthropic", "anthropic", options);
  const { model } = setup;

  return {
    name: "anthropic",
    model,
    async summarize(request: SummaryRequest): Promise<SummaryResult> {
      const message: Anthropic.Messages.Message = await callLlm(
        setup,
        await loadSdk(),
        request.signal,
        (client, signal) =>
          client.messages.create(
            {
              model,
              max_tokens: outputCap(options.maxTokens, request),
              system: SYSTEM_PROMPT,
              messages: [{ role: "user", content: buildUserPrompt(request) }],
            },
            { signal },
          ),
      );
      const blocks: unknown[] = Array.isArray(message?.content) ? message.content : [];
      let text = "";
      let toolUse = false;
      for (const b of blocks) {
        const r = b as { type?: unknown; text?: unknown };
        if (r.type === "text" && typeof r.text === "string") text += r.text;
        else if (r.type === "tool_use" || r.type === "server_tool_use") toolUse = true;
      }
      const stop = message?.stop_reason as string | null | undefined;
      const result: SummaryResult = {
        text,
        model: typeof message?.model === "string" && message.model !== "" ? message.model : model,
      };
      if (stop === "max_tokens" || stop === "model_context_window_exceeded") result.truncated = true;
      if (toolUse || stop === "tool_use") result.toolCallRequested = true;
      return result;
    },
  };
}
