/** Importers from real agent session formats and exporters to provider request bodies. */
export * from "./types.js";
export { ReportBuilder } from "./report.js";
export { splitLines, parseLine } from "./lines.js";
export type { RawLine, ParsedLine } from "./lines.js";
export {
  ABANDONED_RESULT_TEXT,
  closeAbandonedCalls,
  closeAbandonedInEntries,
  syntheticResult,
} from "./abandoned.js";
export type { CloseResult } from "./abandoned.js";
export { importClaudeCode } from "./claude-code.js";
export { importCodex, CODEX_SUMMARY_PREFIX } from "./codex.js";
export {
  importPi,
  PI_COMPACTION_PREFIX,
  PI_COMPACTION_SUFFIX,
  PI_BRANCH_SUMMARY_PREFIX,
  PI_BRANCH_SUMMARY_SUFFIX,
} from "./pi.js";
export { importOpenAI, importAnthropic } from "./messages-json.js";
export { importGeminiCli } from "./gemini-cli.js";
export { importOpencode } from "./opencode.js";
export { importOpenHands } from "./openhands.js";
export { importLangChain } from "./langchain.js";
export { importResponses, toResponsesRequest } from "./responses.js";
export { importAiSdk, looksLikeAiSdk } from "./ai-sdk.js";
export { importPiMessages, looksLikePiMessages } from "./pi-messages.js";
export { importJournal } from "./journal-format.js";
export { detectFormat, importText, importFile } from "./detect.js";
export type { ImportOptions } from "./detect.js";
export { prepareForProvider, CONVERSATION_START_TEXT } from "./prepare.js";
export type { Provider, Prepared } from "./prepare.js";
export { toAnthropicRequest } from "./export-anthropic.js";
export type { AnthropicRequestBody } from "./export-anthropic.js";
export { toOpenAIRequest } from "./export-openai.js";
export type { OpenAIRequestBody, OpenAIMessage, OpenAIToolCall } from "./export-openai.js";
export { toJournalLines } from "./export-journal.js";
export { checkProviderShape } from "./check-shape.js";
export type { ShapeCheck } from "./check-shape.js";
export { providerRequestTokens } from "./request-size.js";
export type { ProviderRequestTokens } from "./request-size.js";
