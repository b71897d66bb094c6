/**
 * The one error family of compact-safe: every error a user can cause is a
 * `CompactSafeError` with a stable `code`, so a host can branch on the code
 * and the command line maps codes to exit codes in one table
 * (`src/cli/errors.ts`). Expected refusals of a compaction are not errors:
 * they come back as result unions (`{ ok: false, error: { kind } }`).
 */
export const ERROR_CODES = [
  "invalid_message", // ModelError: a message or entry that is not valid (names its path)
  "json_too_deep", // JsonDepthError: JSON nested past the limit (names line and column)
  "unknown_format", // FormatError: a file no importer reads, or a broken document (names file and line)
  "invalid_matrix", // MatrixError: a fixture matrix that is not valid
  "invalid_anchors", // AnchorsError: an anchors file that cannot be used
  "invalid_background", // BackgroundFileError: a background-work file that is not a list of handles
  "journal_exists", // JournalExistsError: a new journal would replace an existing one
  "output_exists", // OutputExistsError: a written file would replace an existing one (or is not a regular file)
  "output_is_input", // OutputIsInputError: a written file would be the file read (under any name)
  "unknown_leaf", // UnknownLeafError: a leaf id that is not in the journal
  "empty_session", // a session with no entries to compact
  "journal_locked", // JournalLockedError: another writer holds the journal's lock
  "summarizer_failed", // SummarizerError: the summarizer could not be used
  "missing_package", // MissingPackageError: an optional package a feature needs is not installed
  "invalid_guard_option", // GuardOptionError: a guard option that cannot be used (address, upstream, command)
  "not_a_file", // a path to read or write that is not a regular file (a folder, a FIFO, a device)
  "no_journal", // a journal to rewrite that does not exist
  "unknown_compaction", // a compaction id that is not on the journal's active path
  "session_changed", // a session file that changed while it was compacted (its fork is not written)
  "unsupported_block", // UnsupportedBlockError: a block an exporter cannot carry (a provider's compaction), refused, never dropped
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class CompactSafeError extends Error {
  /** Stable: hosts may branch on it; the CLI maps it to an exit code. */
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CompactSafeError";
    this.code = code;
  }
}

/** A file no importer reads, or a broken document; names the file and line. */
export class FormatError extends CompactSafeError {
  constructor(message: string) {
    super("unknown_format", message);
    this.name = "FormatError";
  }
}
