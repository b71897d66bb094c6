/**
 * Reading a session for a route: a compact-safe journal (the journal layer's
 * tolerant reader) or any importable session format (through `formats`),
 * never modifying the source. The command line reads every input file
 * through here; standard input comes in as bytes (`content`), named as the
 * caller names it.
 */
import { constants } from "node:fs";
import { open, readFile } from "node:fs/promises";
import type { HeaderEntry, JournalEntry } from "../model/index.js";
import { CompactSafeError, looksLikeJournalEntry, notRegularFile, parseJsonLimited } from "../model/index.js";
import { filePlace } from "../model/tool-ids.js";
import { formatProblems, parseJournal, readJournal } from "../journal/index.js";
import { FormatError, type ImportReport } from "../formats/common/types.js";
import { reportUnit, type FormatName } from "../formats/registry.js";
import { importBytes, importFile, wrongFormatHintFor } from "../formats/detect.js";
import { eachByteLine } from "../formats/common/lines.js";

/** A session as read: its entries, and what the reading skipped (`FILE:LINE: reason`, one line each). */
export type Session =
  | { kind: "journal"; file: string; format: "journal"; entries: JournalEntry[]; problems: string[] }
  | {
      kind: "import";
      file: string;
      format: FormatName;
      entries: JournalEntry[];
      report: ImportReport;
      problems: string[];
    };

export interface ReadSessionOptions {
  /** The input format (default: detected from the content). */
  format?: FormatName;
  /** The session's bytes, when they are not read from the file (standard input); the file then only names it. */
  content?: Uint8Array;
  /** Whether it is a journal, when the caller has recognised it already (one detection per command). */
  journal?: boolean;
}

/** Bytes as text, without a copy. */
const utf8 = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("utf8");

const FIRST_LINE_LIMIT = 64 * 1024 * 1024;

/**
 * Whether a file is a compact-safe journal: its first non-blank line is an
 * object with `id`, `kind` and `payload`. Reads up to the end of that line
 * (at most 64 MiB; a longer first line is left to the format detector).
 */
export async function looksLikeJournal(file: string): Promise<boolean> {
  // O_NONBLOCK: a FIFO swapped in after the caller's checks must not block the open.
  const fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const why = notRegularFile(await fh.stat());
    if (why !== null) throw new CompactSafeError("not_a_file", `${file}: ${why}`);
    // The first non-blank line, read in chunks up to its end (a first entry can be a large pasted file).
    const chunks: Buffer[] = [];
    let size = 0;
    let seenText = false;
    let complete = false;
    while (!complete && size < FIRST_LINE_LIMIT) {
      const buf = Buffer.alloc(256 * 1024);
      const { bytesRead } = await fh.read(buf, 0, buf.length, size);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      chunks.push(chunk);
      size += bytesRead;
      let from = 0;
      if (!seenText) {
        while (from < chunk.length && /\s/.test(String.fromCharCode(chunk[from]!))) from++;
        seenText = from < chunk.length;
      }
      complete = seenText && chunk.indexOf(0x0a, from) >= 0;
    }
    return looksLikeJournalText(Buffer.concat(chunks).toString("utf8"));
  } finally {
    await fh.close();
  }
}

/** Whether a text is a compact-safe journal's: its first non-blank line is an entry. */
export function looksLikeJournalText(content: string): boolean {
  const text = content.trimStart();
  const nl = text.indexOf("\n");
  const line = text.length === 0 ? undefined : nl >= 0 ? text.slice(0, nl) : text;
  if (line === undefined) return false;
  try {
    return looksLikeJournalEntry(parseJsonLimited(line));
  } catch {
    return false;
  }
}

/** `looksLikeJournalText` of the bytes' text, from their first non-blank line alone (the rest is not decoded). */
export function looksLikeJournalBytes(content: Uint8Array): boolean {
  for (const line of eachByteLine(content))
    if (line.text.trim() !== "") return looksLikeJournalText(line.text);
  return false;
}

/**
 * Reads a session: a journal as is (with its problems reported); any other
 * format imported. A journal with no readable entry, or a file from which
 * nothing could be imported, is a `FormatError` naming the file.
 */
export async function readSession(file: string, options: ReadSessionOptions = {}): Promise<Session> {
  const { format, content } = options;
  const isJournal =
    options.journal ??
    (format === "journal" ||
      (format === undefined &&
        (content !== undefined ? looksLikeJournalBytes(content) : await looksLikeJournal(file))));
  if (isJournal) {
    const { entries, report } = content !== undefined ? parseJournal(content, file) : await readJournal(file);
    if (entries.length === 0 && report.problems.length > 0) {
      const text = content !== undefined ? utf8(content) : await readFile(file, "utf8");
      const hint = format === "journal" ? wrongFormatHintFor(text, file, "journal") : undefined;
      throw new FormatError(
        `${formatProblems(report)[0]} (no readable journal entry)${hint !== undefined ? `; ${hint}` : ""}`,
      );
    }
    return { kind: "journal", file, format: "journal", entries, problems: formatProblems(report) };
  }
  const { entries, report } =
    content !== undefined ? importBytes(content, file, { format }) : await importFile(file, { format });
  if (entries.length === 0) throw new FormatError(`${file}: nothing could be imported (as ${report.format})`);
  const broken = report.skipped.filter((s) => !s.by_design).map((s) => `${file}:${s.line}: ${s.reason}`);
  return { kind: "import", file, format: report.format, entries, report, problems: broken };
}

/**
 * What an import changed, one `FILE:LINE: message` line each (`FILE: message
 * N: ...` for a JSON message array), e.g. a repeated tool call id renamed.
 */
export function importWarnings(report: ImportReport): string[] {
  return report.warnings.map((w) => `${filePlace(report.file, reportUnit(report), w.line)} ${w.message}`);
}

/** Splits imported entries into the header and the rest (a header is made when the source had none). */
export function splitHeader(
  entries: readonly JournalEntry[],
  format: string,
  file: string,
): { header: HeaderEntry; rest: JournalEntry[] } {
  const first = entries[0];
  if (first !== undefined && first.kind === "header") return { header: first, rest: entries.slice(1) };
  throw new FormatError(`${file}: the ${format} importer returned no header entry`);
}
