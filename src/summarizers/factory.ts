/**
 * The one summarizer factory: a summarizer from its name and options. The command line
 * (`compact --summarizer`), the guard (`guard --summarizer`), the engine's and the report's default,
 * and the library (`createSummarizer`) all build their summarizers here, so a summarizer's name, its
 * options and its checks are the same everywhere. The LLM summarizers' SDKs (optional peer
 * dependencies) are loaded here, at construction, so that a missing one fails before any input is
 * read (a `MissingPackageError` naming the package to install).
 */
import { extractiveSummarizer, extractiveSummary } from "./extractive/index.js";
import { SummarizerError, type Summarizer, type SummaryRequest } from "./types.js";
import type { LlmSummarizerOptions } from "./llm-common.js";
import type { AnthropicNativeMode, AnthropicWire } from "./anthropic-native.js";

/** The summarizers by name, the default first: which run offline in this process, which call a model. */
export const SUMMARIZERS = {
  extractive: { offline: true, about: "the embedded extractive note (offline, deterministic)" },
  openai: { offline: false, about: "an OpenAI-compatible Chat Completions model" },
  anthropic: { offline: false, about: "an Anthropic Messages model" },
  "anthropic-native": { offline: false, about: "the Anthropic Messages API's own compaction" },
} as const;

export type SummarizerName = keyof typeof SUMMARIZERS;
export const SUMMARIZER_NAMES = Object.keys(SUMMARIZERS) as SummarizerName[];

export function isSummarizerName(name: string): name is SummarizerName {
  return Object.hasOwn(SUMMARIZERS, name);
}

/** The summarizers that run offline, in this process, and answer at once (the guard's `--summarizer`). */
export type OfflineSummarizerName = {
  [K in SummarizerName]: (typeof SUMMARIZERS)[K]["offline"] extends true ? K : never;
}[SummarizerName];
export const OFFLINE_SUMMARIZER_NAMES = SUMMARIZER_NAMES.filter(
  (n): n is OfflineSummarizerName => SUMMARIZERS[n].offline,
);

/**
 * The note of an offline summarizer for `request`, at once (no promise): what the guard answers an
 * agent's own summarization request with, inside the request it is handling. The same note as
 * `createSummarizer({ name })` gives.
 */
export function offlineSummary(name: OfflineSummarizerName, request: SummaryRequest): string {
  switch (name) {
    case "extractive":
      return extractiveSummary(request);
  }
}

/** What `createSummarizer` takes: the name, and the options of that summarizer. */
export type SummarizerSpec =
  | { name: "extractive"; maxTokens?: number }
  | ({ name: "openai" } & LlmSummarizerOptions & {
        maxTokensParam?: "max_tokens" | "max_completion_tokens";
        temperature?: number;
      })
  | ({ name: "anthropic" } & LlmSummarizerOptions)
  | ({ name: "anthropic-native" } & LlmSummarizerOptions & {
        system?: string | readonly Record<string, unknown>[];
        tools?: readonly Record<string, unknown>[];
        mode?: AnthropicNativeMode;
        triggerTokens?: number;
        /**
         * The conversion of canonical messages to the Messages API (the formats layer's
         * `toAnthropicRequest`, which `anthropicNativeSummarizer` of the main export passes).
         */
        wire: AnthropicWire;
      });

/** The default summarizer: the extractive one. */
export function defaultSummarizer(): Summarizer {
  return extractiveSummarizer();
}

/**
 * The summarizer `spec` names, its options checked (a bad one is a `SummarizerError` of kind
 * `deterministic` naming it) and its SDK loaded (a `MissingPackageError` when not installed).
 */
export async function createSummarizer(spec: SummarizerSpec): Promise<Summarizer> {
  const name: unknown = (spec as { name?: unknown } | null)?.name;
  if (typeof name !== "string" || !isSummarizerName(name))
    throw new SummarizerError(
      "deterministic",
      `createSummarizer: unknown summarizer ${JSON.stringify(name)} (known: ${SUMMARIZER_NAMES.join(", ")})`,
    );
  switch (spec.name) {
    case "extractive":
      return extractiveSummarizer({ maxTokens: spec.maxTokens });
    case "openai": {
      const { name: _name, ...options } = spec;
      const { openaiCompatibleSummarizer, loadOpenAISdk } = await import("./openai.js");
      const s = openaiCompatibleSummarizer(options);
      await loadOpenAISdk();
      return s;
    }
    case "anthropic": {
      const { name: _name, ...options } = spec;
      const { anthropicSummarizer, loadAnthropicSdk } = await import("./anthropic.js");
      const s = anthropicSummarizer(options);
      await loadAnthropicSdk();
      return s;
    }
    case "anthropic-native": {
      const { name: _name, wire, ...options } = spec;
      if (typeof wire !== "function")
        throw new SummarizerError(
          "deterministic",
          "createSummarizer: anthropic-native needs wire, the conversion to the Messages API (use anthropicNativeSummarizer of the main export)",
        );
      const [{ anthropicNativeSummarizerWith }, { loadAnthropicSdk }] = await Promise.all([
        import("./anthropic-native.js"),
        import("./anthropic.js"),
      ]);
      const s = anthropicNativeSummarizerWith(options, wire);
      await loadAnthropicSdk();
      return s;
    }
  }
}
