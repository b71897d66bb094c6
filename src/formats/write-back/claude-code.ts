/**
 * Write-back for Claude Code: a compacted history as a NEW Claude Code
 * session file (a fork under a new session id), in the shape Claude Code
 * itself writes after its own `/compact` and loads on `--resume`:
 *
 * 1. a `system` line with `subtype: "compact_boundary"`, `parentUuid: null`,
 *    `logicalParentUuid` (the original session's last line) and
 *    `compactMetadata` (`trigger`, `preTokens`);
 * 2. a `user` line with `isCompactSummary: true` whose content is compact-safe's
 *    checkpoint text (summary, coverage receipt, anchors, live state);
 * 3. the rest of the replacement, one line per message, chained by
 *    `parentUuid`: retained user messages, then the protected last round with
 *    every call followed by its result and thinking blocks with their
 *    signatures byte for byte (as Anthropic content blocks).
 *
 * Every line carries the new `sessionId` and the original's `cwd`, `version`
 * and `gitBranch`. The original file is never touched. (Checked shape: see
 * the notes on Claude Code 2.1.328 in the project's shared notes.)
 */
import { randomUUID } from "node:crypto";
import type { Message } from "../../model/index.js";
import { isCheckpoint } from "../../contract/classify.js";
import { blockToAnthropic } from "../../wire/anthropic.js";
import { isRecord, recordsOf } from "../common/lines.js";

/** What the fork takes from the original session file. */
export interface ClaudeCodeOrigin {
  /** The uuid of the original's last line (the leaf the compaction replaces). */
  leafUuid: string | null;
  cwd: string;
  version: string;
  gitBranch?: string;
  /** The model of the latest assistant line, given to the written assistant lines. */
  model?: string;
}

export interface ClaudeCodeFork {
  sessionId: string;
  /** The session file's text (JSONL, one line per entry, ending with a newline). */
  text: string;
}

/** Reads the fields the fork carries over from the original session's text (the last line that has them). */
export function claudeCodeOrigin(text: string): ClaudeCodeOrigin {
  const origin: ClaudeCodeOrigin = { leafUuid: null, cwd: process.cwd(), version: "unknown" };
  for (const o of recordsOf(text)) {
    if (typeof o.uuid === "string" && o.isSidechain !== true) origin.leafUuid = o.uuid;
    if (typeof o.cwd === "string") origin.cwd = o.cwd;
    if (typeof o.version === "string") origin.version = o.version;
    if (typeof o.gitBranch === "string") origin.gitBranch = o.gitBranch;
    const m = o.message;
    if (isRecord(m) && m.role === "assistant" && typeof m.model === "string") origin.model = m.model;
  }
  return origin;
}

/**
 * The fork's session file for `replacement`: with its checkpoint as the
 * compact summary (summary path), or as a plain session of the pruned
 * history when there is none (prune-only).
 */
export function toClaudeCodeFork(
  replacement: readonly Message[],
  origin: ClaudeCodeOrigin,
  options: { tokensBefore: number; trigger?: "manual" | "auto"; now?: Date; sessionId?: string } = {
    tokensBefore: 0,
  },
): ClaudeCodeFork {
  const sessionId = options.sessionId ?? randomUUID();
  const at = (options.now ?? new Date()).toISOString();
  // Prune-only writes no checkpoint: the fork is then a plain session of the pruned history.
  const checkpoint = replacement.find(isCheckpoint);
  const base = {
    isSidechain: false,
    userType: "external",
    cwd: origin.cwd,
    sessionId,
    version: origin.version,
    ...(origin.gitBranch !== undefined ? { gitBranch: origin.gitBranch } : {}),
  };
  const lines: Record<string, unknown>[] = [];
  let parent: string | null = null;
  if (checkpoint) {
    const boundary = randomUUID();
    lines.push({
      parentUuid: null,
      logicalParentUuid: origin.leafUuid,
      ...base,
      type: "system",
      subtype: "compact_boundary",
      content: "Conversation compacted",
      isMeta: false,
      timestamp: at,
      uuid: boundary,
      level: "info",
      compactMetadata: { trigger: options.trigger ?? "manual", preTokens: options.tokensBefore },
    });
    parent = randomUUID();
    lines.push({
      parentUuid: boundary,
      ...base,
      type: "user",
      message: { role: "user", content: checkpoint.content.map(blockToAnthropic) },
      isVisibleInTranscriptOnly: true,
      isCompactSummary: true,
      uuid: parent,
      timestamp: at,
    });
  }
  for (const m of replacement) {
    if (m === checkpoint || m.role === "system") continue;
    const uuid = randomUUID();
    const content = m.content.map(blockToAnthropic);
    const assistant = m.role === "assistant" || m.role === "assistant_interrupted";
    lines.push({
      parentUuid: parent,
      ...base,
      type: assistant ? "assistant" : "user",
      message: assistant
        ? {
            ...(origin.model !== undefined ? { model: origin.model } : {}),
            id: `msg_cs_${uuid.replace(/-/g, "")}`,
            type: "message",
            role: "assistant",
            content,
          }
        : { role: "user", content },
      uuid,
      timestamp: at,
    });
    parent = uuid;
  }
  return { sessionId, text: lines.map((l) => JSON.stringify(l)).join("\n") + "\n" };
}
