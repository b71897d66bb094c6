/**
 * Write-back: a compacted history written as a NEW session of the agent the
 * original came from (a fork the agent resumes). One writer per agent format
 * (each named in its format's entry in ../registry.ts, which has `writeFork`);
 * each takes the replacement and the original session's text and returns the
 * new session's text, its id, where it goes and the command that resumes it.
 * The original is never modified (the caller writes a new file only).
 */
import { dirname, join, resolve } from "node:path";
import type { Message } from "../../model/index.js";
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

export const claudeCodeWriter: ForkWriter = (input) => {
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

export const codexWriter: ForkWriter = (input) => {
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

export const piWriter: ForkWriter = (input) => {
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
