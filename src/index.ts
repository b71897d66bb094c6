/**
 * compact-safe: compacts a coding agent's conversation history and proves
 * that what must survive did survive (compaction survival contract, schema
 * version 2).
 *
 * The public API, listed by name and grouped by layer as the README's table
 * is. `src/index.test.ts` pins the list of runtime names: a change to the
 * public surface is a deliberate act. Everything else is internal.
 */

// model: the transcript types, their schemas, the error family and the constants
export { CONSTANTS } from "./model/constants.js";
export { CompactSafeError, ERROR_CODES, type ErrorCode } from "./model/errors.js";
export { ModelError, parseMessages, parseJournalEntry } from "./model/schema.js";
export type {
  Role,
  Block,
  KnownBlock,
  TextBlock,
  ThinkingBlock,
  RedactedThinkingBlock,
  ToolUseBlock,
  ToolResultBlock,
  ImageUrlBlock,
  OpaqueBlock,
  Usage,
  Message,
  JournalKind,
  MessageKind,
  JournalEntry,
  HeaderEntry,
  CompactionEntry,
  BranchSummaryEntry,
  MessageEntry,
  HeaderPayload,
  CompactionPayload,
  BranchSummaryPayload,
  CompactionPath,
  CompactionTrigger,
  CoverageReceipt,
} from "./model/types.js";

// contract: the survival rules as data, the protected round, the validators, the fixture matrix
export {
  validateSurvivalContract,
  type SurvivalOptions,
  type ValidationResult,
} from "./contract/validate.js";
export { protectedRound, type ProtectedRound } from "./contract/rounds.js";
export { isCheckpoint } from "./contract/classify.js";
export { CHECKPOINT_MARKER } from "./contract/markers.js";
export { KIND_RULES, BLOCK_RULES, LIVE_STATE_FIELDS } from "./contract/rules.js";
export {
  loadMatrix,
  runMatrix,
  MatrixError,
  type Matrix,
  type MatrixCase,
  type CaseOutcome,
} from "./contract/matrix.js";

// engine: pressure, estimates, redaction and the safe compaction pass
export {
  compactMessagesSafe,
  type CompactOptions,
  type CompactResult,
  type CompactSuccess,
  type CompactError,
  type CompactErrorKind,
} from "./engine/compact.js";
export {
  shouldCompact,
  defaultTarget,
  type CompactDecision,
  type Pressure,
  type PressureState,
  type PressureOptions,
} from "./engine/pressure.js";
export { estimateTokens, fastEstimator, exactEstimator, type TokenEstimator } from "./engine/tokens.js";
export { redactSecrets } from "./redact/redact.js";
export type { LiveState } from "./workspace/live-state.js";

// summarizers: the embedded extractive one (default, offline) and the LLM ones
export { extractiveSummarizer } from "./summarizers/extractive/index.js";
export {
  createSummarizer,
  SUMMARIZER_NAMES,
  type SummarizerName,
  type SummarizerSpec,
} from "./summarizers/factory.js";
export { openaiCompatibleSummarizer } from "./summarizers/openai.js";
export { anthropicSummarizer } from "./summarizers/anthropic.js";
export { anthropicNativeSummarizer, type AnthropicNativeOptions } from "./route/native-summarizer.js";
export {
  SummarizerError,
  type Summarizer,
  type SummaryRequest,
  type SummaryResult,
  type BackgroundHandle,
} from "./summarizers/types.js";

// journal: the append-only session tree on disk, and the workspace around it
export { readJournal, type JournalReadResult, type JournalReadReport } from "./journal/read.js";
export { liveContext, compactionEntry } from "./journal/tree.js";
export { withJournalLock, JournalLockedError } from "./journal/lock.js";
export { readAnchors, readLiveState } from "./workspace/index.js";

// formats: importers from real agent sessions, exporters to request bodies
export { importFile, importText } from "./formats/detect.js";
export { toAnthropicRequest } from "./formats/export/anthropic.js";
export { toOpenAIRequest } from "./formats/export/openai.js";
export { providerRequestTokens } from "./formats/export/request-size.js";
export { writeFork, type ForkInput, type WrittenFork } from "./formats/registry.js";
export {
  FormatError,
  type ImportResult,
  type ImportReport,
  type FormatName,
} from "./formats/common/types.js";

// route: a compaction of a file, as one call (what `compact-safe compact` does)
export {
  compactJournal,
  compactEntries,
  type CompactJournalOptions,
  type EntriesOutcome,
  type JournalOutcome,
} from "./route/compact-journal.js";
export {
  compactSession,
  type CompactSessionOptions,
  type SessionOutcome,
  type SessionOutput,
} from "./route/compact-session.js";
export { auditEntries, type SessionAudit, type CompactionAudit, type AuditLosses } from "./route/audit.js";
export {
  runHook,
  claudeCodeHook,
  codexHook,
  piHook,
  HookInputError,
  HOOK_AGENTS,
  type HookAgent,
  type HookAnswer,
  type ClaudeCodeHookOutput,
  type CodexHookOutput,
  type PiHookOutput,
} from "./route/hooks.js";

// report: what each compaction kept, as a data model and a self-contained page (what `compact-safe report` does)
export { reportEntries, type ReportEntriesOptions } from "./report/index.js";
export {
  buildReportModel,
  type ReportModel,
  type ReportOptions,
  type ReportView,
  type ReportRow,
  type ReportMessage,
  type ReportBlock,
  type ReportCheckpoint,
  type ReportVerdict,
  type Fate,
} from "./report/model.js";
export { renderReportHtml } from "./report/html.js";
