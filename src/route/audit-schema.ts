/**
 * The records of `compact-safe audit PATH… --json` (JSON Lines, schema 1; docs/AUDIT_JSONL.md): their
 * types and constants, apart from the code that reads sessions, so that the main thread of a batch
 * (which only adds records up) loads none of the importers.
 */
import type { FormatName } from "../formats/registry.js";

/** The version of the JSON Lines records; a change a reader must know of makes it 2. */
export const AUDIT_SCHEMA = 1;

/** What a compaction that did not keep the contract lost, by kind. */
export const LOST_KINDS = [
  "instructions",
  "tool_rounds",
  "assistant_texts",
  "checkpoint",
  "anchors",
  "other",
] as const;
export type LostKind = (typeof LOST_KINDS)[number];

/** A lost piece: its place in the context before the compaction and a short hash of its text (or id). */
export interface LostRef {
  at: number;
  block: number;
  /** The first 12 hex digits of the SHA-256 of the text (user and assistant texts) or the tool call id. */
  hash: string;
  /** The tool's name (tool calls only). */
  tool?: string;
  /** (`showText` only.) The text, redacted, or the tool call id. */
  text?: string;
}

export interface CompactionRecord {
  id: string;
  /** Who wrote it: the agent (`claude-code`, `codex`, `pi`), `compact-safe`, `compact-safe-guard`, or a provider. */
  source: string;
  /** The agent's version that wrote it (Claude Code records it per line), else the session's; null when unknown. */
  version: string | null;
  trigger: string;
  path: string;
  judgeable: boolean;
  kept: boolean | null;
  /** On the guard's repair: the compaction it repairs; on an agent's compaction: the repair after it. */
  repair_of: string | null;
  repaired_by: string | null;
  /** Whether a repair that keeps the contract follows it (an agent's compaction that did not keep it). */
  repaired: boolean;
  /** The contract's first violation as a code (`last_round.user_text`, `checkpoint.placeholder`, …), or null. */
  violation: string | null;
  /** Message index the violation names in the context before, when it names one. */
  violation_at: number | null;
  /** What it lost, by kind (empty when it kept the contract). */
  kinds: LostKind[];
  messages_before: number;
  messages_after: number;
  tokens_before: number;
  tokens_after: number;
  placeholder: boolean;
  stacked_checkpoints: boolean;
  provider_compaction: null | { provider: string; opaque: boolean };
  losses: {
    user_texts: LostRef[];
    tool_calls: LostRef[];
    tool_results: LostRef[];
    assistant_texts: LostRef[];
  };
  /** (`showText` only.) The validator's reason, redacted. */
  reason?: string;
}

export interface SessionCounts {
  /** The agents' own compactions (the guard's repairs are told with the compaction they repair). */
  compactions: number;
  judged: number;
  kept: number;
  /** Judged compactions that did not keep the contract (repaired or not). */
  lost: number;
  not_judgeable: number;
  /** Of `lost`, those a guard's repair that keeps the contract follows. */
  repaired: number;
  /** `lost - repaired`: what makes `audit` exit 1. */
  unrepaired: number;
}

/** Counts of nothing yet (a session's before its compactions, an aggregate's before its sessions). */
export const zeroCounts = (): SessionCounts => ({
  compactions: 0,
  judged: 0,
  kept: 0,
  lost: 0,
  not_judgeable: 0,
  repaired: 0,
  unrepaired: 0,
});

/** Each kind of loss at zero. */
export const zeroKinds = (): Record<LostKind, number> =>
  Object.fromEntries(LOST_KINDS.map((k) => [k, 0])) as Record<LostKind, number>;

export interface SessionRecord {
  schema: typeof AUDIT_SCHEMA;
  type: "session";
  /** The argument (or agent folder) the file was found under, as given. */
  root: string;
  /** The file's path relative to `root` (`/`-separated); a file argument's own name. */
  path: string;
  format: FormatName;
  /** The agent that wrote the session (`claude-code`, `codex`, `pi`, …; `compact-safe` for a journal of its own). */
  agent: string;
  /** The agent's version as the session records it (Claude Code's `version`, Codex's `cli_version`), or null. */
  version: string | null;
  session_id: string | null;
  bytes: number;
  counts: SessionCounts;
  /** Per kind, how many of its compactions lost something of that kind. */
  lost_kinds: Record<LostKind, number>;
  /** The tokens before and after its compactions (as the agents recorded them, else estimated), summed. */
  tokens: { before: number; after: number };
  compactions: CompactionRecord[];
}

/** A file that was not audited: it could not be read, or no format compact-safe reads recognises it. */
export interface SkippedRecord {
  schema: typeof AUDIT_SCHEMA;
  type: "skipped";
  root: string;
  path: string;
  /** `unreadable` (an error reading or importing it) or `not_a_session` (found in a folder, no format matches). */
  why: "unreadable" | "not_a_session";
  /** One line; quoted text left out unless `showText`. */
  reason: string;
}
