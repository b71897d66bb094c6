/**
 * Exit codes and one-line errors of the `compact-safe` command.
 *
 * 0 ok; 1 contract violation or compaction refused; 2 usage or input error;
 * 3 summarizer failed; 4 journal locked.
 */
import { CompactSafeError, type ErrorCode } from "../model/errors.js";

export const EXIT = {
  OK: 0,
  VIOLATION: 1,
  USAGE: 2,
  SUMMARIZER: 3,
  LOCKED: 4,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the user can act on: a one-line reason and the exit code. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode, options?: { cause?: unknown }) {
    super(oneLine(message), options);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}

export const usageError = (message: string): CliError => new CliError(message, EXIT.USAGE);

/** Flattens a message to one line (errors never span lines). */
export function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, " ").trim();
}

/** The exit code of each library error code: the one table. */
export const EXIT_BY_CODE: Readonly<Record<ErrorCode, ExitCode>> = {
  invalid_message: EXIT.USAGE,
  json_too_deep: EXIT.USAGE,
  unknown_format: EXIT.USAGE,
  invalid_matrix: EXIT.USAGE,
  invalid_anchors: EXIT.USAGE,
  invalid_background: EXIT.USAGE,
  journal_exists: EXIT.USAGE,
  output_exists: EXIT.USAGE,
  output_is_input: EXIT.USAGE,
  unknown_leaf: EXIT.USAGE,
  empty_session: EXIT.USAGE,
  journal_locked: EXIT.LOCKED,
  summarizer_failed: EXIT.SUMMARIZER,
  missing_package: EXIT.USAGE,
  invalid_guard_option: EXIT.USAGE,
  not_a_file: EXIT.USAGE,
  no_journal: EXIT.USAGE,
  unknown_compaction: EXIT.USAGE,
  session_changed: EXIT.USAGE,
  unsupported_block: EXIT.USAGE,
};

/** Maps any error to a CliError: library errors get their code's exit code; anything else is an input error. */
export function toCliError(e: unknown): CliError {
  if (e instanceof CliError) return e;
  if (e instanceof CompactSafeError) return new CliError(e.message, EXIT_BY_CODE[e.code], { cause: e });
  const err = e as NodeJS.ErrnoException | undefined;
  if (err && typeof err.code === "string" && typeof err.path === "string") {
    const what =
      err.code === "ENOENT"
        ? "no such file or folder"
        : err.code === "EACCES" || err.code === "EPERM"
          ? "permission denied"
          : err.code === "EISDIR"
            ? "is a folder"
            : err.code;
    return new CliError(`${err.path}: ${what}`, EXIT.USAGE, { cause: e });
  }
  const message = e instanceof Error ? e.message : String(e);
  return new CliError(message, EXIT.USAGE, { cause: e });
}
