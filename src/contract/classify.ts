/** Recognising checkpoints, branch summaries and plain user messages, by structure. */
import type { Message, TextBlock } from "../model/types.js";
import { isText } from "../model/blocks.js";
import { isProviderCompaction } from "../model/provider-compaction.js";
import {
  ALL_BRANCH_SUMMARY_MARKERS,
  ALL_CHECKPOINT_MARKERS,
  CHECKPOINT_MARKER,
  CONVERSATION_START_TEXT,
  GUARD_TEXT_PREFIX,
  OWN_CHECKPOINT_RECEIPT_RE,
  RESULT_AS_TEXT_PREFIX,
} from "./markers.js";

function firstText(m: Message): TextBlock | undefined {
  return m.content.find(isText);
}

/** The white space `String.prototype.trimStart` removes (`\s` is the same set), from where `lastIndex` is set. */
const LEADING_SPACE = /\s*/y;

function opensWith(m: Message, markers: readonly string[]): string | undefined {
  if (m.role !== "user") return undefined;
  const first = firstText(m);
  if (!first) return undefined;
  // Read from the first character that is not white space, without the copy `trimStart` makes (and
  // without a search where the first character cannot be white space: code units above U+0020 below
  // U+00A0 never are).
  const text = first.text;
  let at = 0;
  const c = text.charCodeAt(0);
  if (c <= 0x20 || c >= 0xa0) {
    LEADING_SPACE.lastIndex = 0;
    LEADING_SPACE.test(text);
    at = LEADING_SPACE.lastIndex;
  }
  let marker: string | undefined;
  for (const k of markers)
    if (text.startsWith(k, at)) {
      marker = k;
      break;
    }
  // compact-safe's own marker counts only with the checkpoint's structure around it.
  if (marker === CHECKPOINT_MARKER && !isOwnCheckpointText(text, at)) return undefined;
  return marker;
}

/** The own checkpoint's structure from `at`: the marker alone on the first line, and a coverage receipt. */
function isOwnCheckpointText(text: string, at: number): boolean {
  return text.startsWith(`${CHECKPOINT_MARKER}\n`, at) && OWN_CHECKPOINT_RECEIPT_RE.test(text);
}

/**
 * A text compact-safe wrote, not the user: an exporter's conversation opener
 * or result carried as text, and the guard's restatement after a compaction.
 */
export function isExporterTextBlock(text: string): boolean {
  return (
    text === CONVERSATION_START_TEXT ||
    text.startsWith(RESULT_AS_TEXT_PREFIX) ||
    text.startsWith(GUARD_TEXT_PREFIX)
  );
}

/**
 * The user's own words in a user message: its non-empty text blocks, less
 * the texts an exporter wrote. Text beside tool results counts: an agent
 * sends what the user typed while tools ran in the same message as their
 * results (Claude Code does), and a provider's request splits it into a
 * message of its own (OpenAI), so either way it is the user speaking.
 */
export function userWords(m: Message): TextBlock[] {
  if (m.role !== "user") return [];
  return m.content.filter(
    (b): b is TextBlock => isText(b) && b.text.trim().length > 0 && !isExporterTextBlock(b.text),
  );
}

/**
 * Elements an agent or its hooks write into a user turn, never typed by the user: system reminders, a
 * slash command's caveat, name and local output, hook output (Claude Code), the environment and the
 * instructions files (Codex). A text made of them alone is the harness speaking.
 */
const HARNESS_TAG =
  /^(?:system-reminder|local-command-(?:caveat|stdout|stderr)|command-(?:name|message|args)|[a-z-]*hook[a-z-]*|environment_context|user_instructions|INSTRUCTIONS|turn_aborted|user-memory-input)$/;
/** One element `<tag …>…</tag>` at `lastIndex` (sticky), with the white space after it. */
const ELEMENT = /<([A-Za-z_][\w-]*)(?:\s[^>]*)?>[\s\S]*?<\/\1>\s*/y;
/** Claude Code's marker of a turn the user interrupted (alone in its text). */
const INTERRUPTION = /^\[Request interrupted by user(?: for tool use)?\]$/;
/** A hook's report standing alone as a user text (`SessionStart:compact hook success: …`). */
const HOOK_REPORT = /^[A-Za-z]+(?::[\w-]+)? hook (?:success|error|failed|output|blocking error)\b/;
/** The heading Codex puts before an instructions file it sends as a user turn. */
const AGENTS_HEADING = /^# AGENTS\.md instructions for [^\n]*\n+(?=<INSTRUCTIONS>)/;

/**
 * A user text the harness wrote (recognised by its structure, never by a word inside it): wholly made of
 * harness elements (a slash command the user typed is theirs: `/name args`), an interruption marker, a
 * hook's report, or an instructions file with its heading.
 */
export function isHarnessText(text: string): boolean {
  let t = text.trim();
  if (t === "") return false;
  if (t.charCodeAt(0) === 0x5b /* [ */) return INTERRUPTION.test(t);
  if (HOOK_REPORT.test(t)) return true;
  const heading = AGENTS_HEADING.exec(t);
  if (heading !== null) t = t.slice(heading[0].length);
  if (t.charCodeAt(0) !== 0x3c /* < */) return false;
  let at = 0;
  let typed = false;
  while (at < t.length) {
    ELEMENT.lastIndex = at;
    const m = ELEMENT.exec(t);
    if (m === null || !HARNESS_TAG.test(m[1]!)) return false;
    // A slash command (its name) is what the user typed: theirs, with or without arguments.
    if (m[1] === "command-name") typed = true;
    at = ELEMENT.lastIndex;
  }
  return !typed;
}

/**
 * The user's own words in a user message: `userWords` less the texts the
 * harness wrote (`isHarnessText`), none in a message the agent marks as its
 * own (Claude Code's `isMeta`: a skill's body, an expanded command). What the
 * note quotes and the older user messages keep; the contract's last round
 * still judges every text of `userWords`.
 */
export function ownUserWords(m: Message): TextBlock[] {
  if (m.meta?.is_meta === true) return [];
  return userWords(m).filter((b) => !isHarnessText(b.text));
}

/** The checkpoint marker that opens this message's first text block, if it is a checkpoint. */
export function checkpointMarkerOf(m: Message): string | undefined {
  return opensWith(m, ALL_CHECKPOINT_MARKERS);
}

/** A checkpoint: a `user` message whose first text block opens with a checkpoint marker. */
export function isCheckpoint(m: Message): boolean {
  return checkpointMarkerOf(m) !== undefined;
}

/** Not a checkpoint: a filter made once (see DECISIONS.md, hot code makes no closure per call). */
export const notCheckpoint = (m: Message): boolean => !isCheckpoint(m);

/**
 * A message holding a provider's own compaction (an Anthropic `compaction`
 * block, an OpenAI Responses `compaction` item): the provider's summary of
 * the history it replaced, opaque when encrypted.
 */
export function isProviderSummary(m: Message): boolean {
  return m.content.some(isProviderCompaction);
}

/**
 * The guard's restatement as a message of its own: a user message whose
 * every block is a text opening with `[compact-safe guard] `. The guard
 * writes it right after a provider's summary, which cannot take content.
 */
export function isGuardRestatement(m: Message): boolean {
  return (
    m.role === "user" &&
    m.content.length > 0 &&
    m.content.every((b) => isText(b) && b.text.startsWith(GUARD_TEXT_PREFIX))
  );
}

/** One checkpoint of a history (see `checkpointsOf`). */
export interface CheckpointAt {
  /** The checkpoint's message. */
  at: number;
  /** A provider's summary (not a checkpoint message): its texts are the guard's restatement after it. */
  provider: boolean;
  /** The guard's restatement as the message right after a provider's summary, part of the checkpoint. */
  restatedAt?: number;
}

/**
 * The checkpoints of a history, in order: every checkpoint message, and
 * every provider's summary that no checkpoint message follows, with the
 * guard's restatement right after it (a message of its own only there) as
 * part of it: one checkpoint. A provider's summary that a checkpoint message
 * follows is the start of the history that checkpoint's compaction kept as
 * it was (valid input for that provider), not a checkpoint of its own.
 */
export function checkpointsOf(messages: readonly Message[]): CheckpointAt[] {
  const out: CheckpointAt[] = [];
  let textual = false;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (isCheckpoint(m)) {
      out.push({ at: i, provider: false });
      textual = true;
    } else if (!textual && isProviderSummary(m)) {
      const next = messages[i + 1];
      out.push(
        next !== undefined && isGuardRestatement(next)
          ? { at: i, provider: true, restatedAt: i + 1 }
          : { at: i, provider: true },
      );
    }
  }
  return out.reverse();
}

/**
 * A checkpoint's text: a checkpoint message's texts; for a provider's
 * summary, the summary it shows (none when encrypted), then the guard's
 * restatement after it.
 */
export function checkpointText(messages: readonly Message[], c: CheckpointAt): string {
  if (!c.provider) return allText(messages[c.at]!);
  const shown = messages[c.at]!.content.flatMap((b) =>
    isProviderCompaction(b) && b.summary !== "" ? [b.summary] : [],
  );
  if (c.restatedAt !== undefined) shown.push(allText(messages[c.restatedAt]!));
  return shown.join("\n");
}

export function isBranchSummary(m: Message): boolean {
  return opensWith(m, ALL_BRANCH_SUMMARY_MARKERS) !== undefined;
}

/**
 * A user message that carries the user's own words (see `userWords`; tool
 * results beside them do not change that) and is neither a checkpoint nor a
 * branch summary: an instruction.
 */
export function isPlainUser(m: Message): boolean {
  if (m.role !== "user") return false;
  if (userWords(m).length === 0) return false;
  return !isCheckpoint(m) && !isBranchSummary(m);
}

/** All text of a message's text blocks, joined by newlines. */
export function allText(m: Message): string {
  return m.content
    .filter(isText)
    .map((b) => b.text)
    .join("\n");
}
