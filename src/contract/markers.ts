/**
 * Markers that identify checkpoints and branch summaries inside a message
 * array. A checkpoint is a `user` message whose FIRST text block opens with a
 * checkpoint marker; a marker quoted in the middle of a message does not count.
 */

/** compact-safe's own checkpoint marker. */
export const CHECKPOINT_MARKER = "[compact-safe checkpoint]";

/**
 * The structure that makes a text opening with `CHECKPOINT_MARKER` a
 * checkpoint: the marker alone on its first line, and a `## Coverage`
 * section whose first line is a coverage receipt. A user's own message that
 * merely starts with the marker is still the user's text.
 */
export const OWN_CHECKPOINT_RECEIPT_RE =
  /\n## Coverage\n(?:summary|prune-only); last round kept: \d+ messages \(\d+ tool results, \d+ assistant\); anchors \d+ chars(?:\n|$)/;

/**
 * Texts that the exporters write into a request where the history has none
 * (they are not the user's words, so never a user instruction): the user
 * message put first when a history does not start with one, and the opening
 * of a tool result carried as text because its call is not in the history.
 */
export const CONVERSATION_START_TEXT = "[compact-safe: the conversation continues from here]";
export const RESULT_AS_TEXT_PREFIX = "[compact-safe: tool result for ";

/**
 * The opening of the text the guard restates on the checkpoint after a
 * compaction it repaired (pinned anchors, live state): compact-safe's words,
 * never the user's instruction. It is further content of the checkpoint
 * message (or, after an opaque provider summary that cannot take content,
 * the message right after it), never a checkpoint of its own.
 */
export const GUARD_TEXT_PREFIX = "[compact-safe guard] ";

/** Markers written by other agents, recognised as prior checkpoints. */
export const FOREIGN_CHECKPOINT_MARKERS: readonly { marker: string; agent: string }[] = [
  { marker: "Another language model started to solve this problem", agent: "codex/codewhale" },
  { marker: "Conversation Summary (Auto-Generated)", agent: "codewhale-legacy" },
  { marker: "This session is being continued from a previous conversation", agent: "claude-code" },
  // pi (coding-agent messages.ts COMPACTION_SUMMARY_PREFIX), also used by pi-derived agents.
  {
    marker: "The conversation history before this point was compacted into the following summary",
    agent: "pi",
  },
];

export const ALL_CHECKPOINT_MARKERS: readonly string[] = [
  CHECKPOINT_MARKER,
  ...FOREIGN_CHECKPOINT_MARKERS.map((m) => m.marker),
];

/** compact-safe's branch-summary marker (a `branch_summary` journal entry rendered as a message). */
export const BRANCH_SUMMARY_MARKER = "[compact-safe branch summary]";

/** Branch-summary markers written by other agents (pi renders its branch summaries this way). */
export const FOREIGN_BRANCH_SUMMARY_MARKERS: readonly string[] = [
  "The following is a summary of a branch that this conversation came back from",
];

export const ALL_BRANCH_SUMMARY_MARKERS: readonly string[] = [
  BRANCH_SUMMARY_MARKER,
  ...FOREIGN_BRANCH_SUMMARY_MARKERS,
];
