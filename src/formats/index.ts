/** Importers from real agent session formats and exporters to provider request bodies. */
export * from "./common/types.js";
export {
  FORMATS,
  FORMAT_NAMES,
  EXPORT_TARGETS,
  formatEntry,
  isFormatName,
  reportUnit,
  exportLive,
  forkWriterFor,
  writeFork,
} from "./registry.js";
export type { FormatEntry, Detection, Exporter, ForkSupport, Importer } from "./registry.js";
export { ReportBuilder } from "./common/report.js";
export { splitLines, parseLine } from "./common/lines.js";
export type { RawLine, ParsedLine } from "./common/lines.js";
export {
  ABANDONED_RESULT_TEXT,
  closeAbandonedCalls,
  closeAbandonedInEntries,
  syntheticResult,
} from "./common/abandoned.js";
export type { CloseResult } from "./common/abandoned.js";
export { importClaudeCode } from "./import/claude-code.js";
export { importCodex, CODEX_SUMMARY_PREFIX } from "./import/codex.js";
export { importPi } from "./import/pi.js";
export {
  PI_COMPACTION_PREFIX,
  PI_COMPACTION_SUFFIX,
  PI_BRANCH_SUMMARY_PREFIX,
  PI_BRANCH_SUMMARY_SUFFIX,
} from "../wire/pi.js";
export { importOpenAI, importAnthropic } from "./import/messages-json.js";
export { importGeminiCli } from "./import/gemini-cli.js";
export { importOpencode } from "./import/opencode.js";
export { importOpenHands } from "./import/openhands.js";
export { importLangChain } from "./import/langchain.js";
export { importResponses } from "./import/responses.js";
export { toResponsesRequest } from "../wire/responses.js";
export { importAiSdk, looksLikeAiSdk } from "./import/ai-sdk.js";
export { importPiMessages, looksLikePiMessages } from "./import/pi-messages.js";
export { importJournal } from "./import/journal.js";
export { detectFormat, importText, importFile } from "./detect.js";
export type { ImportOptions } from "./detect.js";
export { prepareForProvider, CONVERSATION_START_TEXT } from "./export/prepare.js";
export type { Provider, Prepared } from "./export/prepare.js";
export { toAnthropicRequest } from "./export/anthropic.js";
export type { AnthropicRequestBody } from "./export/anthropic.js";
export { toOpenAIRequest } from "./export/openai.js";
export type { OpenAIRequestBody, OpenAIMessage, OpenAIToolCall } from "./export/openai.js";
export { toJournalLines, liveJournal } from "./export/journal.js";
export type { ExportSource } from "./export/journal.js";
export { checkProviderShape } from "./export/check-shape.js";
export type { ShapeCheck } from "./export/check-shape.js";
export { providerRequestTokens } from "./export/request-size.js";
export type { ProviderRequestTokens } from "./export/request-size.js";
