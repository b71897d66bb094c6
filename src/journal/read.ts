/**
 * Reading a journal: streaming and tolerant.
 *
 * The file is read as bytes in chunks and split on `\n` at byte level; each
 * line is decoded with a fatal UTF-8 decoder and parsed as one JSON entry.
 * Only the parsed entries are kept (never the whole file as one string).
 * Every line that does not become an entry, and every structural problem
 * (missing parent, duplicate id, cycle), is reported with its line number.
 */
import { open } from "node:fs/promises";
import { constants, readFileSync } from "node:fs";
import type { JournalEntry } from "../model/index.js";
import {
  JsonDepthError,
  ModelError,
  notRegularFile,
  parseJournalEntry,
  parseJsonLimited,
} from "../model/index.js";
import { SourceLines, uniqueToolIds } from "../model/tool-ids.js";
import { CompactSafeError } from "../model/errors.js";

export interface JournalProblem {
  /** 1-based line number in the file. */
  line: number;
  /** One-line reason. */
  reason: string;
}

export interface JournalReadReport {
  file: string;
  /** Lines in the file (a last line without a trailing newline counts). */
  lines: number;
  /** Entries returned. */
  entries: number;
  /** Sorted by line. */
  problems: JournalProblem[];
}

export interface JournalReadResult {
  entries: JournalEntry[];
  report: JournalReadReport;
}

export interface ReadJournalOptions {
  /** Bytes per read (default 1 MiB). */
  chunkSize?: number;
  /** Called for every line, in order: what it became (an entry of `kind`, or a line reported as `problem`). */
  onLine?: (line: number, outcome: LineOutcome) => void;
}

/**
 * What one line became: an entry (`id`, `kind`), or a line that is not one
 * (`kind` "blank", "unparsable" or "invalid", or a duplicate entry's kind, with
 * the `problem` that was reported).
 */
export type LineOutcome =
  { kind: string; id: string; problem?: undefined } | { kind: string; problem: string };

const NEWLINE = 0x0a;
const MAX_DETAIL = 200;

/** Clips a reason detail to one short line. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > MAX_DETAIL ? `${flat.slice(0, MAX_DETAIL)}…` : flat;
}

function isBlank(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  return true;
}

/** Collects entries line by line; shared by the streaming and the buffer reader. */
class JournalCollector {
  private readonly decoder = new TextDecoder("utf-8", { fatal: true });
  readonly entries: JournalEntry[] = [];
  private readonly lineOf = new Map<string, number>();
  readonly problems: JournalProblem[] = [];
  lines = 0;

  constructor(
    readonly file: string,
    private readonly onLine?: ReadJournalOptions["onLine"],
  ) {}

  private problem(line: number, kind: string, reason: string): void {
    this.problems.push({ line, reason });
    this.onLine?.(line, { kind, problem: reason });
  }

  /** One line of bytes, without its `\n`. `terminated` is false for a last line with no newline. */
  line(bytes: Uint8Array, terminated: boolean): void {
    const n = ++this.lines;
    if (isBlank(bytes)) {
      this.onLine?.(n, { kind: "blank", problem: "blank line" });
      return;
    }
    let text: string;
    try {
      text = this.decoder.decode(bytes);
    } catch {
      this.problem(n, "unparsable", "invalid UTF-8");
      return;
    }
    let data: unknown;
    try {
      // The nesting limit is checked before parsing: no recursive walk ever sees a hostile value.
      data = parseJsonLimited(text);
    } catch (err) {
      if (err instanceof JsonDepthError) {
        this.problem(
          n,
          "unparsable",
          `broken JSON: nested deeper than ${err.limit} levels (the limit), at column ${err.column}`,
        );
        return;
      }
      const detail = oneLine((err as Error).message);
      this.problem(
        n,
        "unparsable",
        terminated
          ? `broken JSON: ${detail}`
          : `truncated last line (no trailing newline and not valid JSON: ${detail})`,
      );
      return;
    }
    let entry: JournalEntry;
    try {
      entry = parseJournalEntry(data);
    } catch (err) {
      if (!(err instanceof ModelError)) throw err;
      const unknownKind = err.message.includes("unknown kind");
      this.problem(
        n,
        "invalid",
        `${unknownKind ? "unknown kind" : "invalid entry"}: ${oneLine(err.message)}`,
      );
      return;
    }
    const first = this.lineOf.get(entry.id);
    if (first !== undefined) {
      this.problem(
        n,
        entry.kind,
        `duplicate id ${JSON.stringify(entry.id)} (first on line ${first}); this entry is skipped`,
      );
      return;
    }
    this.lineOf.set(entry.id, n);
    this.entries.push(entry);
    this.onLine?.(n, { kind: entry.kind, id: entry.id });
  }

  finish(): JournalReadResult {
    this.checkTree();
    this.checkToolIds();
    this.problems.sort((a, b) => a.line - b.line);
    return {
      entries: this.entries,
      report: { file: this.file, lines: this.lines, entries: this.entries.length, problems: this.problems },
    };
  }

  /**
   * Reports repeated tool ids on a path (a call id used twice, a call
   * answered twice), with the entry's line. The journal is the user's
   * history: it is never rewritten, so nothing is renamed here (an import
   * renames them; see formats/common/tool-ids.ts).
   */
  private checkToolIds(): void {
    const lines = new SourceLines();
    for (const [id, n] of this.lineOf) lines.entry(id, n);
    for (const f of uniqueToolIds(this.entries, this.file, lines, "report").findings)
      this.problems.push({ line: f.line ?? 0, reason: `${f.message}; the journal keeps it as written` });
  }

  /** Reports entries whose parent is missing and cycles in the parent links. Entries are kept. */
  private checkTree(): void {
    const parentOf = new Map<string, string | null>();
    for (const e of this.entries) parentOf.set(e.id, e.parent_id ?? null);
    for (const e of this.entries) {
      const p = e.parent_id ?? null;
      if (p !== null && !parentOf.has(p)) {
        this.problems.push({
          line: this.lineOf.get(e.id)!,
          reason: `parent ${JSON.stringify(p)} is missing; the path through this entry starts here`,
        });
      }
    }
    // 0/undefined: unvisited, 1: on the current walk, 2: done.
    const state = new Map<string, 1 | 2>();
    for (const e of this.entries) {
      if (state.has(e.id)) continue;
      const walk: string[] = [];
      let cur: string | null = e.id;
      while (cur !== null && parentOf.has(cur) && !state.has(cur)) {
        state.set(cur, 1);
        walk.push(cur);
        cur = parentOf.get(cur)!;
      }
      if (cur !== null && state.get(cur) === 1) {
        const cycle = walk.slice(walk.indexOf(cur));
        const lines = cycle.map((id) => this.lineOf.get(id)!);
        const shown = cycle.slice(0, 6).map((id) => `${JSON.stringify(id)} (line ${this.lineOf.get(id)})`);
        if (cycle.length > 6) shown.push(`… ${cycle.length - 6} more`);
        this.problems.push({
          line: Math.max(...lines),
          reason: `cycle in parent links: ${shown.join(" -> ")} -> ${JSON.stringify(cur)}; these entries have no root`,
        });
      }
      for (const id of walk) state.set(id, 2);
    }
  }
}

/** Splits a byte buffer into lines and feeds them to the collector. */
function collectBuffer(collector: JournalCollector, buf: Uint8Array): void {
  let start = 0;
  for (;;) {
    const nl = buf.indexOf(NEWLINE, start);
    if (nl < 0) break;
    collector.line(buf.subarray(start, nl), true);
    start = nl + 1;
  }
  if (start < buf.length) collector.line(buf.subarray(start), false);
}

/**
 * Reads a journal file, streaming it in chunks. I/O errors (a missing file,
 * a permission error, a path that is not a regular file) are thrown; everything about the content is reported.
 */
export async function readJournal(
  file: string,
  options: ReadJournalOptions = {},
): Promise<JournalReadResult> {
  const chunkSize = Math.max(1, options.chunkSize ?? 1 << 20);
  const collector = new JournalCollector(file, options.onLine);
  // O_NONBLOCK and a check of what was opened: a FIFO or a device would block or never end.
  const fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const why = notRegularFile(await fh.stat());
    if (why !== null) throw new CompactSafeError("not_a_file", `${file}: ${why}`);
    // The pieces of a line that spans chunks; joined once when its newline arrives.
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(chunkSize);
      const { bytesRead } = await fh.read(chunk, 0, chunkSize, null);
      if (bytesRead === 0) break;
      const data = chunk.subarray(0, bytesRead);
      let start = 0;
      for (;;) {
        const nl = data.indexOf(NEWLINE, start);
        if (nl < 0) break;
        const piece = data.subarray(start, nl);
        if (pending.length > 0) {
          pending.push(piece);
          const line = Buffer.concat(pending, pendingBytes + piece.length);
          pending = [];
          pendingBytes = 0;
          collector.line(line, true);
        } else {
          collector.line(piece, true);
        }
        start = nl + 1;
      }
      if (start < data.length) {
        // Copy the tail so the chunk itself can be released.
        pending.push(Buffer.from(data.subarray(start)));
        pendingBytes += data.length - start;
      }
    }
    if (pending.length > 0) collector.line(Buffer.concat(pending, pendingBytes), false);
  } finally {
    await fh.close();
  }
  return collector.finish();
}

/** Parses journal content already in memory (bytes or a string). `file` names it in the report. */
export function parseJournal(
  content: Uint8Array | string,
  file = "<journal>",
  options: Pick<ReadJournalOptions, "onLine"> = {},
): JournalReadResult {
  const collector = new JournalCollector(file, options.onLine);
  collectBuffer(collector, typeof content === "string" ? Buffer.from(content, "utf8") : content);
  return collector.finish();
}

/** Reads a small journal synchronously (the whole file is loaded at once; use `readJournal` for large ones). */
export function readJournalSync(file: string): JournalReadResult {
  return parseJournal(readFileSync(file), file);
}

/** `file:line: reason`, one line per problem, for messages and CLI output. */
export function formatProblems(report: JournalReadReport): string[] {
  return report.problems.map((p) => `${report.file}:${p.line}: ${p.reason}`);
}
