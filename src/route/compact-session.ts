/**
 * One route for a compaction out of place, as one library call:
 *
 *   read or import the session → `compactEntries` (the same decision,
 *   compaction and validation as `compactJournal`) → the output: a new
 *   journal holding the compaction entry, or a fork (a new session of the
 *   agent the file came from) → written atomically where asked.
 *
 * The source is never modified, and nothing is written unless the
 * compaction is `ok`. What `compact-safe compact --out` and `--fork` do; the
 * command line only parses, calls this and prints.
 */
import { stat } from "node:fs/promises";
import type { Stats } from "node:fs";
import { CompactSafeError } from "../model/errors.js";
import { createJournal, serializeEntries, writeOutputFile } from "../journal/index.js";
import { FormatError, type ImportReport } from "../formats/common/types.js";
import { TRUNCATED_LAST_LINE } from "../formats/common/lines.js";
import { forkFormats, forkWriterFor, type ForkWriter, type FormatName } from "../formats/registry.js";
import { readSessionFile } from "../formats/read-file.js";
import type { CompactSuccess } from "../engine/compact.js";
import { compactEntries, type CompactJournalOptions, type EntriesOutcome } from "./compact-journal.js";
import { importWarnings, readSession, splitHeader, type Session } from "./session.js";

export interface CompactSessionOptions extends CompactJournalOptions {
  /** The input format (default: detected from the content). */
  format?: FormatName;
  /** The session's bytes, when they are not read from the file (standard input); the file then only names it. */
  content?: Uint8Array;
  /** Whether the file is a compact-safe journal, when the caller has recognised it already. */
  journal?: boolean;
  /**
   * Where the output is written: the new journal, or with `fork` the new session (default: beside the
   * file, as the agent names its sessions). Without it and without `fork`, nothing is written and the
   * outcome's `output.text` holds the new journal. Never the file itself; an existing file is refused
   * unless `force`.
   */
  out?: string;
  /** Write back a new session of the agent the file came from (Claude Code, Codex, pi), not a journal. */
  fork?: boolean;
  /** Replace an existing `out` (a journal is backed up first); never the file read. */
  force?: boolean;
  /** Each change the import made (a repeated tool call id renamed), one `FILE:LINE: message` line each. */
  onWarning?: (warning: string) => void;
}

/** What a compaction out of place wrote, or (a journal without `out`) would write. */
export type SessionOutput =
  | { kind: "journal"; path: string; text?: undefined }
  | { kind: "journal"; path: null; text: string }
  | {
      kind: "fork";
      path: string;
      text: string;
      /** The new session's id. */
      sessionId: string;
      /** The command that resumes it (e.g. `claude --resume <id>`). */
      resume: string;
    };

export type SessionOutcome = EntriesOutcome & {
  /** The session read, as messages name it. */
  file: string;
  format: FormatName;
  /** Null when nothing was produced: a dry run, or no compaction. */
  output: SessionOutput | null;
};

/** `fork` asked of a session whose agent has no fork writer (or of a journal). */
export class ForkFormatError extends FormatError {
  constructor(
    readonly file: string,
    readonly format: FormatName,
  ) {
    super(`${file}: a fork writes agent sessions (${forkFormats()}); this file is ${format}`);
    this.name = "ForkFormatError";
  }
}

/**
 * The fork replaces the original for the user who resumes it, so a last line
 * the file ends inside (the agent still writing it, or a crash mid-write) is
 * not skipped as elsewhere: what it held would be missing from the fork.
 * Other broken lines are skipped with a warning, as every reading does.
 */
function refuseCutLastLine(file: string, report: ImportReport): void {
  const cut = report.skipped.find((s) => s.line === report.total && s.reason.startsWith(TRUNCATED_LAST_LINE));
  if (cut !== undefined)
    throw new FormatError(
      `${file}:${cut.line}: ${cut.reason}; a fork would lose that line, so nothing was written ` +
        "(let the agent finish writing, or repair the line)",
    );
}

/** Reads the session (for a fork: checked to be one the agent can resume whole). */
async function readForCompaction(
  file: string,
  options: CompactSessionOptions,
): Promise<{ session: Session; content?: Uint8Array; writer?: ForkWriter }> {
  // A fork is written from the very bytes that were compacted.
  const content = options.content ?? (options.fork ? await readSessionFile(file) : undefined);
  const session = await readSession(file, { format: options.format, content, journal: options.journal });
  if (!options.fork) return { session, content };
  const writer = forkWriterFor(session.format);
  if (writer === undefined) throw new ForkFormatError(file, session.format);
  if (session.kind === "import") refuseCutLastLine(file, session.report);
  return { session, content, writer };
}

/**
 * Writes the fork: a new session file beside the original (or at `out`), never over an existing file
 * unless `force`, with the original's permissions (it may be private). Refuses when the original
 * changed during the run (another process appending to it).
 */
async function writeForkFile(
  file: string,
  before: Stats,
  content: Uint8Array,
  writer: ForkWriter,
  result: CompactSuccess,
  options: CompactSessionOptions,
): Promise<SessionOutput> {
  const now = await stat(file);
  if (now.size !== before.size || now.mtimeMs !== before.mtimeMs)
    throw new CompactSafeError(
      "session_changed",
      `${file}: the session changed while it was compacted (is the agent still writing it?); nothing written`,
    );
  const fork = writer({
    replacement: result.replacement,
    originalText: Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString("utf8"),
    originalPath: file,
    tokensBefore: result.tokens_before,
  });
  const path = options.out ?? fork.defaultPath;
  await writeOutputFile(path, fork.text, {
    force: options.force === true,
    inputs: [file],
    mode: before.mode & 0o777,
  });
  return { kind: "fork", path, text: fork.text, sessionId: fork.sessionId, resume: fork.resume(path) };
}

/** The new journal: the session's entries and the compaction entry, written at `out` or returned as text. */
async function writeJournalOutput(
  session: Session,
  outcome: EntriesOutcome & { kind: "compacted" },
  options: CompactSessionOptions,
): Promise<SessionOutput> {
  const { header, rest } = splitHeader(session.entries, session.format, session.file);
  const entries = [...rest, outcome.entry];
  if (options.out === undefined)
    return { kind: "journal", path: null, text: serializeEntries([header, ...entries]) };
  await createJournal(options.out, header, entries, {
    overwrite: options.force === true,
    inputs: options.content !== undefined ? [] : [session.file],
  });
  return { kind: "journal", path: options.out };
}

/**
 * Compacts a session of any format out of place: reads it (a journal
 * tolerantly, any other format through its importer), compacts its live
 * context as `compactJournal` does, and writes the result as a new journal
 * at `out` (or returns its text) or, with `fork`, as a new session of the
 * agent it came from. The file is never modified; nothing is written unless
 * the compaction is `ok` (a refusal comes back as `kind: "refused"`), nor on
 * a dry run. An existing `out`, a fork of a format that has none, a fork of
 * a file whose last line is cut, and a file that changed while it was
 * compacted throw a `CompactSafeError` (codes `journal_exists` /
 * `output_exists` / `output_is_input`, `unknown_format`, `session_changed`).
 */
export async function compactSession(
  file: string,
  options: CompactSessionOptions = {},
): Promise<SessionOutcome> {
  options.onStep?.("reading");
  const before = options.fork ? await stat(file) : undefined;
  const { session, content, writer } = await readForCompaction(file, options);
  for (const p of session.problems) options.onProblem?.(p);
  if (session.kind === "import") for (const w of importWarnings(session.report)) options.onWarning?.(w);
  options.onStep?.("compacting");
  const outcome = await compactEntries(session.entries, { ...options, onStep: undefined });
  const done = (output: SessionOutput | null): SessionOutcome => ({
    ...outcome,
    file: session.file,
    format: session.format,
    output,
  });
  if (outcome.kind !== "compacted" || options.dryRun) return done(null);
  if (writer !== undefined) {
    options.onStep?.("writing");
    return done(await writeForkFile(file, before!, content!, writer, outcome.result, options));
  }
  if (options.out !== undefined) options.onStep?.("writing");
  return done(await writeJournalOutput(session, outcome, options));
}
