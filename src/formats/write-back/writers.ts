/**
 * Write-back: a compacted history written as a NEW session of the agent the
 * original came from (a fork the agent resumes). One writer per agent format;
 * each takes the replacement and the original session's text and returns the
 * new session's text, its id, where it goes and the command that resumes it.
 * The original is never modified (the caller writes a new file only).
 */
import { dirname, join, resolve } from "node:path";
import type { Message } from "../../model/index.js";
import { FormatError, type FormatName } from "../shared/types.js";
import { claudeCodeOrigin, toClaudeCodeFork } from "./claude-code.js";
import { codexOrigin, toCodexFork } from "./codex.js";
import { piOrigin, piSessionFileName, toPiFork } from "./pi.js";

export interface ForkInput {
  /** The replacement the engine committed (checkpoint first on the summary path). */
  replacement: readonly Message[];
  /** The original session file's text, as read before the compaction. */
  originalText: string;
  /** The original session file's path. */
  originalPath: string;
  /** Estimated tokens of the live context before the compaction. */
  tokensBefore: number;
  now?: Date;
  /** A fixed id for the new session (tests); default a fresh random one. */
  sessionId?: string;
}

export interface WrittenFork {
  sessionId: string;
  /** The new session file's text. */
  text: string;
  /** Where the fork goes when the user gives no --out: beside the original, under the agent's own naming. */
  defaultPath: string;
  /** The command that resumes the fork written at `path`. */
  resume(path: string): string;
}

export type ForkWriter = (input: ForkInput) => WrittenFork;

/** The knobs every writer passes through unchanged (a fixed time and id, for tests). */
function fixed(input: ForkInput): { now?: Date; sessionId?: string } {
  return {
    ...(input.now ? { now: input.now } : {}),
    ...(input.sessionId ? { sessionId: input.sessionId } : {}),
  };
}

const claudeCode: ForkWriter = (input) => {
  const fork = toClaudeCodeFork(input.replacement, claudeCodeOrigin(input.originalText), {
    tokensBefore: input.tokensBefore,
    ...fixed(input),
  });
  return {
    sessionId: fork.sessionId,
    text: fork.text,
    // Claude Code finds a session by its file name (<id>.jsonl) in the project folder of the original.
    defaultPath: join(dirname(input.originalPath), `${fork.sessionId}.jsonl`),
    resume: () => `claude --resume ${fork.sessionId}`,
  };
};

const codex: ForkWriter = (input) => {
  const fork = toCodexFork(input.replacement, codexOrigin(input.originalText), {
    ...fixed(input),
  });
  return {
    sessionId: fork.sessionId,
    text: fork.text,
    // Codex finds a rollout by the id in its file name, anywhere under its sessions folder.
    defaultPath: join(dirname(input.originalPath), fork.fileName),
    resume: () => `codex resume ${fork.sessionId}`,
  };
};

const pi: ForkWriter = (input) => {
  const fork = toPiFork(input.replacement, piOrigin(input.originalText), {
    tokensBefore: input.tokensBefore,
    originalPath: resolve(input.originalPath),
    ...fixed(input),
  });
  return {
    sessionId: fork.sessionId,
    text: fork.text,
    // pi names a session <timestamp>_<id>.jsonl in its sessions folder; the fork goes beside the original.
    defaultPath: join(dirname(input.originalPath), piSessionFileName(fork.timestamp, fork.sessionId)),
    // pi resumes a session by its file; a path with spaces or quotes is quoted for the shell.
    resume: (path) => `pi --session ${shellQuote(path)}`,
  };
};

/** `s` as one shell word (single-quoted when it holds anything but safe characters). */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The agents whose sessions can be written back, by import format. */
const FORK_WRITERS: Partial<Record<FormatName, ForkWriter>> = {
  "claude-code": claudeCode,
  codex,
  pi,
};

/** The writer for `format`, or undefined when write-back into that format is not built. */
export function forkWriterFor(format: FormatName): ForkWriter | undefined {
  return FORK_WRITERS[format];
}

/** The formats that have a writer, for messages ("claude-code, codex"). */
export function forkFormats(): string {
  return Object.keys(FORK_WRITERS).join(", ");
}

/**
 * The library's write-back: `input.replacement` (a compaction's result) as a
 * new session of the agent `format` names, to be written as a new file (at
 * `defaultPath`, beside the original, or anywhere the agent looks). Pure: it
 * reads and writes nothing. Throws a `FormatError` for a format that has no
 * writer.
 */
export function writeFork(format: FormatName, input: ForkInput): WrittenFork {
  const writer = forkWriterFor(format);
  if (writer === undefined)
    throw new FormatError(`write-back into ${format} sessions is not built (it is for: ${forkFormats()})`);
  return writer(input);
}
