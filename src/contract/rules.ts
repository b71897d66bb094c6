/**
 * The survival rules as data (schema version 2): for every journal kind and
 * content block, what survives, what is summarized, what is pruned and what
 * is never retained; plus the fields restated from live state.
 * `docs/SURVIVAL_CONTRACT.md` is the prose version; a test keeps them in step.
 */

import { CONSTANTS } from "../model/constants.js";

export const SCHEMA_VERSION = CONSTANTS.schemaVersion;

export interface KindRule {
  kind: string;
  payload: string;
  survive: string;
  summarized: string;
  pruned: string;
  not_retained: string;
}

export const KIND_RULES: readonly KindRule[] = [
  {
    kind: "header",
    payload: "payload identity, id, created_at",
    survive: "always",
    summarized: "—",
    pruned: "—",
    not_retained: "secrets",
  },
  {
    kind: "user",
    payload: "payload message text blocks",
    survive: "last-round verbatim; older user text within the retained-user token budget",
    summarized: "older user turns",
    pruned: "obsolete narration",
    not_retained: "secrets, raw dumps",
  },
  {
    kind: "assistant",
    payload: "payload message text, thinking and tool_use blocks",
    survive: "protected last round verbatim",
    summarized: "older assistant text and reasoning",
    pruned: "—",
    not_retained: "internal placeholders",
  },
  {
    kind: "tool_result",
    payload: "tool_use_id, content, is_error, content_blocks",
    survive: "last round, bounded to 8 KiB of UTF-8",
    summarized: "older results",
    pruned: "nested images, oversized blocks",
    not_retained: "secrets, raw large outputs",
  },
  {
    kind: "compaction",
    payload: "summary, tokens_before, tokens_after, model, path, coverage, trigger, replacement",
    survive: "latest checkpoint only",
    summarized: "prior summaries folded into the new one",
    pruned: "stacked prior summaries",
    not_retained: "placeholder-only summaries",
  },
  {
    kind: "branch_summary",
    payload: "branch_id, summary, parent_branch_id",
    survive: "always, verbatim (never rewritten by compaction)",
    summarized: "—",
    pruned: "—",
    not_retained: "—",
  },
  {
    kind: "message",
    payload: "role and content blocks",
    survive: "see the content-block rules",
    summarized: "older turns",
    pruned: "see the prune rules",
    not_retained: "placeholders",
  },
  {
    kind: "system",
    payload: "content",
    survive: "verbatim, duplicates collapsed",
    summarized: "—",
    pruned: "duplicated policy",
    not_retained: "unsupported completion claims",
  },
];

export interface BlockRule {
  type: string;
  fields: readonly string[];
  bound: string;
}

export const BLOCK_RULES: readonly BlockRule[] = [
  {
    type: "text",
    fields: ["text"],
    bound: "last round verbatim; older user text truncated to the retained-user budget",
  },
  {
    type: "thinking",
    fields: ["thinking", "signature"],
    bound: "byte for byte; older exchanges summarized as whole units",
  },
  { type: "redacted_thinking", fields: ["data"], bound: "byte for byte" },
  {
    type: "tool_use",
    fields: ["id", "name", "input", "thought_signature"],
    bound: "last round; id is the join key",
  },
  {
    type: "tool_result",
    fields: ["tool_use_id", "content", "is_error"],
    bound: "last round; content bounded to 8 KiB (head and tail), content_blocks dropped when truncated",
  },
  {
    type: "image_url",
    fields: ["image_url"],
    bound: "last-round images kept; older images pruned with their results",
  },
  { type: "server_tool_use", fields: ["id"], bound: "last-round ids kept; older blocks summarized" },
  { type: "*_tool_result", fields: ["tool_use_id"], bound: "last-round ids kept; older blocks summarized" },
];

export interface LiveStateField {
  field: string;
  source: string;
  after_compact: string;
}

export const LIVE_STATE_FIELDS: readonly LiveStateField[] = [
  {
    field: "anchors",
    source: ".codewhale/anchors.md (legacy .deepseek/anchors.md)",
    after_compact: "restated verbatim in the checkpoint",
  },
  {
    field: "coverage",
    source: "the compaction result and the context inspector",
    after_compact: "path and last-round counts in the checkpoint",
  },
  {
    field: "receipt",
    source: "the checkpoint user message",
    after_compact: "latest kept; a failed compaction writes nothing",
  },
  {
    field: "billed_parent_prompt_tokens",
    source: "the latest parent request's usage",
    after_compact: "cleared on history rewrite",
  },
  { field: "git_branch", source: "live git", after_compact: "re-read at compaction time" },
  { field: "worktree", source: "live git (worktree root)", after_compact: "re-read at compaction time" },
  { field: "head", source: "live git (HEAD commit)", after_compact: "re-read at compaction time" },
  {
    field: "background_handles",
    source: "the host's background-work registry",
    after_compact: "restated from the host's list",
  },
  {
    field: "child_usage",
    source: "usage billed to child agents and tool sub-calls",
    after_compact: "never counts toward pressure",
  },
];
