/** The summarizers layer: the embedded extractive summarizer (default) and the LLM summarizers. */
export * from "./types.js";
export {
  extractiveSummarizer,
  extractiveSummary,
  splitSections,
  SUMMARY_SECTIONS,
  EARLIER_SUMMARY_SECTION,
  DEFAULT_SUMMARY_TOKENS,
  MIN_SUMMARY_TOKENS,
  CHARS_PER_TOKEN,
  type ExtractiveOptions,
  type SummarySection,
} from "./extractive/index.js";
export * from "./factory.js";
export { openaiCompatibleSummarizer, type OpenAICompatibleOptions } from "./openai.js";
export { anthropicSummarizer, type AnthropicSummarizerOptions } from "./anthropic.js";
export { DEFAULT_TIMEOUT_MS, type LlmSummarizerOptions } from "./llm-common.js";
export { SYSTEM_PROMPT, buildUserPrompt, renderTranscript } from "./prompt.js";
export {
  isPlainUserMessage,
  isCheckpointMessage,
  checkpointMarkerOf,
  isModifyingTool,
  modifiedPathsOf,
  shellCommandOf,
} from "./transcript.js";
