/**
 * A summarizer over the OpenAI Chat Completions API, through the official
 * SDK pointed at `baseURL`: OpenAI, DeepSeek, vLLM, Ollama and the llama.cpp
 * server all speak it. SDK retries are off: the engine owns the failure ladder.
 * The SDK (`openai`, an optional peer dependency) is loaded on the first call.
 */
import type OpenAI from "openai";
import { importOptional } from "../model/optional-package.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "./types.js";
import { buildUserPrompt, SYSTEM_PROMPT } from "./prompt.js";
import { callLlm, llmSetup, outputCap, type LlmSummarizerOptions } from "./llm-common.js";
import { chatChoiceCallsTools } from "../wire/openai-chat.js";

export interface OpenAICompatibleOptions extends LlmSummarizerOptions {
  /** `max_tokens` (default; every compatible server accepts it) or `max_completion_tokens` (OpenAI reasoning models). */
  maxTokensParam?: "max_tokens" | "max_completion_tokens";
  /** Sampling temperature; omitted unless given (some models accept only the default). */
  temperature?: number;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    // Some compatible servers answer with content parts.
    return content
      .map((p) =>
        p && typeof p === "object" && typeof (p as { text?: unknown }).text === "string"
          ? (p as { text: string }).text
          : "",
      )
      .join("");
  }
  return "";
}

let sdk: Promise<typeof import("openai")> | undefined;

function loadSdk(): Promise<typeof import("openai")> {
  sdk ??= importOptional("openai", "the openai-compatible summarizer", () => import("openai"));
  sdk.catch(() => (sdk = undefined));
  return sdk;
}

/**
 * Loads the `openai` SDK now (it is otherwise loaded on the first call):
 * a `MissingPackageError` when it is not installed. Its types stay out of
 * this module's declarations, so a consumer without the SDK type-checks.
 */
export async function loadOpenAISdk(): Promise<void> {
  await loadSdk();
}

export function openaiCompatibleSummarizer(options: OpenAICompatibleOptions): Summarizer {
  const setup = llmSetup("openaiCompatibleSummarizer", "openai-compatible", "openai", options);
  const { model } = setup;
  const param = options.maxTokensParam ?? "max_tokens";

  return {
    name: "openai-compatible",
    model,
    async summarize(request: SummaryRequest): Promise<SummaryResult> {
      const body: Record<string, unknown> = {
        model,
        messages: [
          { role: "system", content: SYSTEM_PROMPT },
          { role: "user", content: buildUserPrompt(request) },
        ],
        [param]: outputCap(options.maxTokens, request),
      };
      if (options.temperature !== undefined) body.temperature = options.temperature;
      const completion = await callLlm(
        setup,
        await loadSdk(),
        request.signal,
        async (client, signal) =>
          (await client.chat.completions.create(body as never, {
            signal,
          })) as OpenAI.Chat.Completions.ChatCompletion,
      );
      const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
      const message = choice?.message;
      const result: SummaryResult = {
        text: contentText(message?.content),
        model: typeof completion?.model === "string" && completion.model !== "" ? completion.model : model,
      };
      if (choice?.finish_reason === "length") result.truncated = true;
      if (chatChoiceCallsTools(choice)) result.toolCallRequested = true;
      return result;
    },
  };
}
