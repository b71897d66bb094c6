/**
 * The agents' compaction hooks (what `compact-safe hook claude-code|codex|pi`
 * does): each reads the JSON object its agent hands a hook, audits or
 * restates the compaction from the session file it names, and answers with
 * the JSON object that agent expects, or nothing when there is nothing to say.
 *
 * - Claude Code, `SessionStart` (source `compact`): `{ hookSpecificOutput:
 *   { hookEventName: "SessionStart", additionalContext } }`, which Claude
 *   Code adds to the compacted context: the user's instructions of the last
 *   round (restated before the compaction is recorded, or the ones it lost
 *   when it is), and the pinned anchors.
 * - Codex, `PostCompact`: `{ systemMessage }`, the verdict told to the user
 *   (a `PostCompact` hook cannot add to the model's context).
 * - pi, `session_compact` (through the extension in `extensions/`, which
 *   sends `{ session_file, compaction_id?, cwd }`): `{ line, kept, record,
 *   restatement? }`, for the extension to show, keep in the session and send
 *   to the model.
 *
 * What a hook restates of the user's texts is redacted. A session path is
 * resolved against the input's `cwd`, so it is always a file, never `-` or an
 * option. Nothing here prints or exits: bad input is a `HookInputError`.
 */
import { isAbsolute, resolve } from "node:path";
import { protectedRound } from "../contract/rounds.js";
import { isText } from "../model/blocks.js";
import { redactSecrets, redactValue } from "../redact/redact.js";
import { importAgentTail, type AgentFormat } from "../formats/import-agent.js";
import { activePath, projectPath } from "../journal/tree.js";
import { CompactSafeError } from "../model/errors.js";
import type { CompactionEntry, JournalEntry, Message } from "../model/types.js";
import { readAnchors } from "../workspace/anchors.js";
import { auditCompaction, NOT_JUDGEABLE, type AuditLosses, type CompactionAudit } from "./audit.js";
import { windowHolds, type Dependence } from "./hook-window.js";

export const HOOK_AGENTS = ["claude-code", "codex", "pi"] as const;
export type HookAgent = (typeof HOOK_AGENTS)[number];

/** The most a hook hands the model (Claude Code, pi) or the user (Codex), in characters. */
export const MAX_CONTEXT_CHARS = 8000;
export const MAX_MESSAGE_CHARS = 4000;

/** A hook's input that is not what its agent sends (not JSON, not an object, a field of the wrong type). */
export class HookInputError extends CompactSafeError {
  constructor(message: string) {
    super("invalid_message", message);
    this.name = "HookInputError";
  }
}

export interface ClaudeCodeHookOutput {
  hookSpecificOutput: { hookEventName: "SessionStart"; additionalContext: string };
}
export interface CodexHookOutput {
  systemMessage: string;
}
export interface PiHookOutput {
  /** The verdict in one line, for pi's interface (or stderr). */
  line: string;
  /** False when the compaction broke the contract (true when it kept it, or could not be judged). */
  kept: boolean;
  /** What the extension keeps in the session (a `compact-safe-audit` custom entry). */
  record: { compaction: string; kept: boolean | null; reason: string | null; losses: AuditLosses };
  /** What to restate to the model with the next prompt, when anything. */
  restatement?: string;
}

/** What a hook answers: the object to print (undefined: print nothing), and notes for stderr. */
export interface HookAnswer<T = ClaudeCodeHookOutput | CodexHookOutput | PiHookOutput> {
  output: T | undefined;
  warnings: string[];
}

type Input = Record<string, unknown>;

/** The hook input `text` (what the agent wrote on the hook's stdin) as an object. */
export function parseHookInput(text: string): Input {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new HookInputError(
      text.trim() === ""
        ? "standard input is empty (expected the agent's hook JSON)"
        : `standard input is not JSON: ${why}`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new HookInputError("standard input is not a JSON object (expected the agent's hook JSON)");
  return value as Input;
}

function optionalString(input: Input, key: string): string | undefined {
  const v = input[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new HookInputError(`"${key}" must be a string, got ${typeof v}`);
  return v;
}

/**
 * The session file `input[key]` names, as an absolute path (a relative one is
 * taken from the input's `cwd`, else from `baseDir`): never read as `-`
 * (standard input) or as an option, whatever it starts with.
 */
function sessionPath(input: Input, key: string, baseDir: string): string | undefined {
  const p = optionalString(input, key);
  if (p === undefined || p === "") return undefined;
  if (isAbsolute(p)) return p;
  return resolve(optionalString(input, "cwd") ?? baseDir, p);
}

async function anchorsText(cwd: string | undefined, warnings: string[]): Promise<string | undefined> {
  if (cwd === undefined) return undefined;
  try {
    return (await readAnchors(cwd))?.text || undefined;
  } catch (e) {
    warnings.push(`anchors not restated: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  }
}

const bullets = (texts: readonly string[]) => texts.map((t) => `- ${t}`).join("\n");

/**
 * The audit of compaction `c` of `entries`, its texts redacted (the hook
 * restates them), messages named from the end (a hook reads the end of the
 * session), and what it read (see `windowHolds`). Only that one is audited: a
 * hook answers about one compaction, and each audit walks the history before it.
 */
function redactedAudit(
  entries: readonly JournalEntry[],
  c: CompactionEntry,
): { audit: CompactionAudit; needs: Dependence } {
  const path = c.parent_id ? activePath(entries, c.parent_id) : [];
  const before = projectPath(path);
  const audit = redactValue(auditCompaction(entries, c, { fromEnd: true, before }));
  return { audit, needs: { path, before, compaction: c } };
}

const compactionsOf = (entries: readonly JournalEntry[]) =>
  entries.filter((e): e is CompactionEntry => e.kind === "compaction");

/** What a compaction that broke the contract lost, in the words the hook restates (`you`: to the user). */
function lostParts(c: CompactionAudit, you: boolean): string[] {
  const l = c.losses;
  const parts: string[] = [];
  if (l.user_texts.length > 0)
    parts.push(
      you
        ? `Your current instructions, as you wrote them (restate them if they still apply):\n${bullets(l.user_texts)}`
        : `The user's current instructions, as they wrote them:\n${bullets(l.user_texts)}`,
    );
  if (l.tool_calls.length > 0)
    parts.push(`Tool calls of the last round no longer in the context: ${l.tool_calls.join(", ")}.`);
  return parts;
}

const CONVERSATION = new Set(["user", "assistant", "tool_result"]);

/** The user's words in the protected last round of `messages` (the text blocks of its instructions). */
function lastRoundInstructions(messages: readonly Message[]): string[] {
  return protectedRound(messages).instructionIndices.flatMap((i) =>
    messages[i]!.content.flatMap((b) => (isText(b) && b.text.trim() !== "" ? [b.text] : [])),
  );
}

/**
 * The answer `answer` gives on the entries of session `file`, read from its
 * tail when that holds what the answer read (`needs`; undefined: it cannot be
 * told from a part of the file), else from more of it, up to the whole file.
 */
async function fromTail<T>(
  file: string,
  format: AgentFormat,
  read: HookRead,
  answer: (entries: readonly JournalEntry[]) => { value: T; needs: Dependence | undefined },
): Promise<T> {
  return importAgentTail(
    file,
    format,
    (result, window) => {
      const a = answer(result.entries);
      if (!window.whole && !(a.needs && windowHolds(format, result, window, a.needs))) return undefined;
      read.answeredFrom?.(window.start);
      return a;
    },
    read.firstWindow,
  ).then((a) => a.value);
}

/** How a hook reads its session (for tests: `firstWindow: Infinity` reads the whole file at once). */
export interface HookRead {
  /** Bytes of the first tail window (default `FIRST_WINDOW_BYTES`). */
  firstWindow?: number;
  /** Told the byte offset of the window the answer was read from (0: the whole file). */
  answeredFrom?: (start: number) => void;
}

/**
 * Claude Code's `SessionStart` hook (source `compact`). Claude Code 2.1.328
 * runs it before it records the compaction: the transcript then ends with the
 * history being compacted, and the hook restates its protected last round's
 * instructions. When the transcript already records the compaction, the hook
 * audits it and restates what it lost.
 */
export async function claudeCodeHook(
  input: Input,
  baseDir = process.cwd(),
  read: HookRead = {},
): Promise<HookAnswer<ClaudeCodeHookOutput>> {
  const warnings: string[] = [];
  const source = optionalString(input, "source");
  const transcript = sessionPath(input, "transcript_path", baseDir);
  if (source !== "compact" || transcript === undefined) return { output: undefined, warnings };
  const parts = await fromTail(transcript, "claude-code", read, (entries) => {
    const lastCompaction = entries.findLastIndex((e) => e.kind === "compaction");
    const lastMessage = entries.findLastIndex((e) => CONVERSATION.has(e.kind));
    const out: string[] = [];
    // Which of the two comes last is known from the window when it holds a message of the main line.
    const known = lastMessage >= 0 && (entries[lastMessage]!.payload as Message).meta?.is_sidechain !== true;
    if (lastCompaction > lastMessage) {
      const { audit: last, needs } = redactedAudit(entries, entries[lastCompaction] as CompactionEntry);
      if (last.kept === false) {
        out.push(
          `compact-safe: the compaction just made did not keep the survival contract (${last.reason}).`,
        );
        out.push(...lostParts(last, false));
      }
      return { value: out, needs: known ? needs : undefined };
    }
    const path = activePath(entries);
    const before = projectPath(path);
    const texts = lastRoundInstructions(before);
    if (texts.length > 0)
      out.push(
        "compact-safe: the user's current instructions (the last round before this compaction), as they wrote them:\n" +
          bullets(texts.map(redactSecrets)),
      );
    return { value: out, needs: known ? { path, before } : undefined };
  });
  const anchors = await anchorsText(optionalString(input, "cwd"), warnings);
  if (anchors) parts.push(`Pinned anchors (restated verbatim):\n${anchors}`);
  if (parts.length === 0) return { output: undefined, warnings };
  const additionalContext = parts.join("\n\n").slice(0, MAX_CONTEXT_CHARS);
  return { output: { hookSpecificOutput: { hookEventName: "SessionStart", additionalContext } }, warnings };
}

/** Codex's `PostCompact` hook: the verdict on the last compaction of the rollout, told to the user. */
export async function codexHook(
  input: Input,
  baseDir = process.cwd(),
  read: HookRead = {},
): Promise<HookAnswer<CodexHookOutput>> {
  const warnings: string[] = [];
  const event = optionalString(input, "hook_event_name");
  const transcript = sessionPath(input, "transcript_path", baseDir);
  if (event !== "PostCompact" || transcript === undefined) return { output: undefined, warnings };
  const last = await fromTail(transcript, "codex", read, (entries) => {
    const c = compactionsOf(entries).at(-1);
    if (c === undefined) return { value: undefined, needs: undefined };
    const { audit, needs } = redactedAudit(entries, c);
    return { value: audit, needs };
  });
  if (last === undefined) return { output: undefined, warnings };
  const message = last.kept
    ? `compact-safe: this compaction kept the survival contract (${last.messages_after} messages after it).`
    : last.kept === null
      ? `compact-safe: this compaction cannot be judged: ${NOT_JUDGEABLE}.`
      : [
          `compact-safe: this compaction did not keep the survival contract (${last.reason}).`,
          ...lostParts(last, true),
        ].join("\n");
  return { output: { systemMessage: message.slice(0, MAX_MESSAGE_CHARS) }, warnings };
}

/**
 * pi's `session_compact` (what the extension asks): the verdict on the
 * compaction `compaction_id` of `session_file` (the last one when the id is
 * not found), what to keep in the session, and what to restate to the model.
 */
export async function piHook(
  input: Input,
  baseDir = process.cwd(),
  read: HookRead = {},
): Promise<HookAnswer<PiHookOutput>> {
  const warnings: string[] = [];
  const file = sessionPath(input, "session_file", baseDir);
  if (file === undefined) throw new HookInputError('"session_file" is missing (the pi session to audit)');
  const id = optionalString(input, "compaction_id");
  const cwd = optionalString(input, "cwd");
  // The compaction `id` names, else the last one.
  const [c, anchors] = await Promise.all([
    fromTail(file, "pi", read, (entries) => {
      const cs = compactionsOf(entries);
      const picked = cs.find((x) => x.id === id) ?? cs.at(-1);
      if (picked === undefined) return { value: undefined, needs: undefined };
      const { audit, needs } = redactedAudit(entries, picked);
      // Asked for one not read: it may be before the window (else it is the last one).
      return { value: audit, needs: id !== undefined && picked.id !== id ? undefined : needs };
    }),
    anchorsText(cwd, warnings),
  ]);
  if (!c) throw new CompactSafeError("empty_session", `${file}: no compaction recorded to audit`);
  const line = c.kept
    ? `compact-safe: pi's compaction ${c.id} kept the survival contract (${c.messages_after} messages after it)`
    : c.kept === null
      ? `compact-safe: pi's compaction ${c.id} cannot be judged: ${NOT_JUDGEABLE}`
      : `compact-safe: pi's compaction ${c.id} did not keep the survival contract: ${c.reason}`;
  const parts: string[] = [];
  if (c.kept === false) {
    parts.push(`compact-safe: the compaction just made lost part of the last round (${c.reason}).`);
    parts.push(...lostParts(c, false));
  }
  if (anchors) parts.push(`Pinned anchors (restated verbatim):\n${anchors}`);
  const output: PiHookOutput = {
    line,
    // Not judgeable is no violation to warn about (the record says it was not judged).
    kept: c.kept !== false,
    record: { compaction: c.id, kept: c.kept, reason: c.reason, losses: c.losses },
  };
  if (parts.length > 0) output.restatement = parts.join("\n\n").slice(0, MAX_CONTEXT_CHARS);
  return { output, warnings };
}

/** The hook of `agent` on the input text its agent wrote on stdin. */
export async function runHook(
  agent: HookAgent,
  stdinText: string,
  baseDir = process.cwd(),
): Promise<HookAnswer> {
  const input = parseHookInput(stdinText);
  switch (agent) {
    case "claude-code":
      return claudeCodeHook(input, baseDir);
    case "codex":
      return codexHook(input, baseDir);
    case "pi":
      return piHook(input, baseDir);
  }
}
