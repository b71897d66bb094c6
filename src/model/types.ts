/**
 * The transcript model: messages, content blocks and journal entries.
 * Field names follow the compaction survival contract (schema version 2).
 */

export type Role = "user" | "assistant" | "system" | "assistant_interrupted";

export interface TextBlock {
  type: "text";
  text: string;
  cache_control?: unknown;
}

export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  /** Provider signature; kept byte for byte. */
  signature?: string;
}

export interface RedactedThinkingBlock {
  type: "redacted_thinking";
  /** Opaque provider payload; kept byte for byte. */
  data: string;
}

export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
  thought_signature?: string;
}

export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content: string;
  is_error?: boolean;
  /** Nested blocks such as images. */
  content_blocks?: Block[];
  /** Set on results that an importer wrote to close an abandoned call. */
  synthetic?: boolean;
}

export interface ImageUrlBlock {
  type: "image_url";
  image_url: { url: string; [key: string]: unknown };
}

/**
 * Provider-native compaction: an Anthropic `compaction` content block or an
 * OpenAI Responses `compaction` item (see `provider-compaction.ts`). The
 * provider's context restarts at it: what came before is in its summary.
 */
export interface ProviderCompactionBlock {
  type: "provider_compaction";
  provider: "anthropic" | "openai";
  /** The summary as the provider shows it (Anthropic `content`); "" when it is opaque. */
  summary: string;
  /** True when only the provider can read the summary (OpenAI `encrypted_content`). */
  opaque: boolean;
  /** The block or item as the provider wrote it (every field, in order): written back as it is. */
  native: Record<string, unknown>;
}

/**
 * Any other block (`server_tool_use`, `*_tool_result`, provider extensions):
 * kept as given, never dropped silently.
 */
export interface OpaqueBlock {
  type: string;
  [key: string]: unknown;
}

export type KnownBlock =
  | TextBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | ToolUseBlock
  | ToolResultBlock
  | ImageUrlBlock
  | ProviderCompactionBlock;

export type Block = KnownBlock | OpaqueBlock;

/** Token usage billed for one request, when the source recorded it. */
export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  /** `parent` for the agent's own request; `child` for sub-agents and tool sub-calls. */
  scope?: "parent" | "child";
}

export interface Message {
  role: Role;
  content: Block[];
  /** Billed usage of the request that produced this (assistant) message, when known. */
  usage?: Usage;
  /** Provenance from the source format (ids, timestamps, model); never sent to a provider. */
  meta?: Record<string, unknown>;
}

export const JOURNAL_KINDS = [
  "header",
  "user",
  "assistant",
  "tool_result",
  "compaction",
  "branch_summary",
  "message",
  "system",
] as const;
export type JournalKind = (typeof JOURNAL_KINDS)[number];

/** The message-carrying journal kinds. Their payload is a Message. */
export const MESSAGE_KINDS = ["user", "assistant", "tool_result", "message", "system"] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];

export interface HeaderPayload {
  session_id: string;
  created_at: string;
  schema_version: number;
  source_format: string;
  cwd?: string;
  [key: string]: unknown;
}

export type CompactionPath = "summary" | "prune-only";
export type CompactionTrigger = "auto" | "manual";

/** What a compaction kept verbatim: the receipt restated in the checkpoint. */
export interface CoverageReceipt {
  path: CompactionPath;
  last_round_messages: number;
  last_round_tool_results: number;
  last_round_assistant: number;
  anchors_chars: number;
  /** A provider's own compaction kept as the replacement's prefix (1; absent when none). */
  provider_compactions_kept?: number;
  /** Provider compactions folded into the checkpoint, which names each (absent when none). */
  provider_compactions_folded?: number;
}

export interface CompactionPayload {
  summary: string;
  tokens_before: number;
  tokens_after: number;
  model: string;
  path: CompactionPath;
  coverage: CoverageReceipt | null;
  trigger: CompactionTrigger;
  /** The exact live context that replaces the history up to this entry. */
  replacement: Message[];
  /** Set when the compaction was imported from another agent (e.g. `claude-code`). */
  source_agent?: string;
  [key: string]: unknown;
}

export interface BranchSummaryPayload {
  branch_id: string;
  summary: string;
  parent_branch_id: string | null;
  /**
   * When true the entry only moves the leaf (e.g. `restore`) and records why;
   * it adds nothing to the live context.
   */
  leaf_only?: boolean;
  [key: string]: unknown;
}

interface EntryBase<K extends JournalKind, P> {
  id: string;
  parent_id?: string | null;
  kind: K;
  created_at: string;
  payload: P;
}

export type HeaderEntry = EntryBase<"header", HeaderPayload>;
export type CompactionEntry = EntryBase<"compaction", CompactionPayload>;
export type BranchSummaryEntry = EntryBase<"branch_summary", BranchSummaryPayload>;
export type MessageEntry = EntryBase<MessageKind, Message>;

export type JournalEntry = HeaderEntry | CompactionEntry | BranchSummaryEntry | MessageEntry;

export function isMessageKind(kind: string): kind is MessageKind {
  return (MESSAGE_KINDS as readonly string[]).includes(kind);
}

/** The journal kind that a message is stored under. */
export function kindForMessage(message: Message): MessageKind {
  if (message.role === "system") return "system";
  if (message.role === "assistant" || message.role === "assistant_interrupted") return "assistant";
  if (message.content.length > 0 && message.content.every((b) => b.type === "tool_result"))
    return "tool_result";
  return "user";
}
