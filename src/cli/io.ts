/**
 * Loading any input file of the command line: a compact-safe journal (read
 * with the journal layer's tolerant reader) or any importable session format
 * (through `formats`), and message arrays for `validate`.
 */
import { constants, type Stats } from "node:fs";
import { open, readFile, stat } from "node:fs/promises";
import type { HeaderEntry, JournalEntry, Message } from "../model/index.js";
import {
  JsonDepthError,
  looksLikeJournalEntry,
  ModelError,
  notRegularFile,
  parseJsonLimited,
  parseMessages,
} from "../model/index.js";
import { formatProblems, liveContext, parseJournal, readJournal } from "../journal/index.js";
import { FormatError, type ImportReport } from "../formats/common/types.js";
import { FORMAT_NAMES, isFormatName, reportUnit, type FormatName } from "../formats/registry.js";
import { importText, wrongFormatHintFor } from "../formats/detect.js";
import { filePlace } from "../model/tool-ids.js";
import { jsonSyntaxProblem } from "../formats/common/source-tree.js";
import { CliError, EXIT, usageError } from "./errors.js";
import { importInput, readStdin, STDIN_NAME, STDIO } from "./stdin.js";

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

/** Parses a `--format` value; a usage error listing the formats otherwise. */
export function parseFormat(value: string | undefined): FormatName | undefined {
  if (value === undefined) return undefined;
  if (!isFormatName(value)) {
    throw usageError(`unknown format ${JSON.stringify(value)} (expected one of ${FORMAT_NAMES.join(", ")})`);
  }
  return value;
}

/**
 * Checks that a path exists and is a regular file (a FIFO, a device or a
 * folder would block or never end); a one-line input error naming it
 * otherwise. Returns its size. `-` is standard input (read whole, once).
 */
export async function requireFile(file: string): Promise<number> {
  if (file === STDIO) return (await readStdin()).length;
  let st: Stats;
  try {
    st = await stat(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw usageError(
      `${file}: ${code === "ENOENT" ? "no such file" : `cannot be read (${code ?? (e as Error).message})`}`,
    );
  }
  const why = notRegularFile(st);
  if (why !== null) throw usageError(`${file}: ${why}`);
  return st.size;
}

const FIRST_LINE_LIMIT = 64 * 1024 * 1024;

/**
 * Whether a file is a compact-safe journal: its first non-blank line is an
 * object with `id`, `kind` and `payload`. Reads up to the end of that line
 * (at most 64 MiB; a longer first line is left to the format detector).
 */
export async function looksLikeJournal(file: string): Promise<boolean> {
  // O_NONBLOCK: a FIFO swapped in after `requireFile` must not block the open.
  const fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const why = notRegularFile(await fh.stat());
    if (why !== null) throw usageError(`${file}: ${why}`);
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

/**
 * Loads a session: a journal is read as is (with its problems reported); any
 * other format is imported (never modifying the source file).
 */
export async function loadSession(
  input: string,
  format?: FormatName,
  known?: { journal: boolean },
): Promise<Session> {
  // `-`: standard input, read whole once, then read as a file's content is (named `(stdin)`).
  const piped = input === STDIO ? await readStdin() : undefined;
  const file = piped === undefined ? input : STDIN_NAME;
  if (piped === undefined) await requireFile(file);
  // `known`: the caller has recognised the file already (one journal detection per command).
  const isJournal =
    known?.journal ??
    (format === "journal" ||
      (format === undefined &&
        (piped !== undefined ? looksLikeJournalText(piped.toString("utf8")) : await looksLikeJournal(file))));
  if (isJournal) {
    const { entries, report } = piped !== undefined ? parseJournal(piped, file) : await readJournal(file);
    if (entries.length === 0 && report.problems.length > 0) {
      const text = piped !== undefined ? piped.toString("utf8") : await readFile(file, "utf8");
      const hint = format === "journal" ? wrongFormatHintFor(text, file, "journal") : undefined;
      throw new CliError(
        `${formatProblems(report)[0]} (no readable journal entry)${hint !== undefined ? `; ${hint}` : ""}`,
        EXIT.USAGE,
      );
    }
    return { kind: "journal", file, format: "journal", entries, problems: formatProblems(report) };
  }
  const { entries, report } = await importInput(input, { format });
  if (entries.length === 0) throw new FormatError(`${file}: nothing could be imported (as ${report.format})`);
  const broken = report.skipped.filter((s) => !s.by_design).map((s) => `${file}:${s.line}: ${s.reason}`);
  return { kind: "import", file, format: report.format, entries, report, problems: broken };
}

/**
 * What an import changed, one `FILE:LINE: message` line each (`FILE: message
 * N: ...` for a JSON message array), e.g. a repeated tool call id renamed.
 */
export function importWarnings(report: ImportReport): string[] {
  return report.warnings.map((w) => `${filePlace(report.file, unitOf(report), w.line)} ${w.message}`);
}

/**
 * The warnings a command prints before it works on a session (each after
 * `compact-safe: warning: `): the first 5 problems of its reading (lines
 * skipped), then the first 5 changes its import made.
 */
export function sessionWarnings(session: Session): string[] {
  return [
    ...session.problems.slice(0, 5).map((p) => `${p} (skipped)`),
    ...(session.kind === "import" ? importWarnings(session.report).slice(0, 5) : []),
  ];
}

/** What a report's line numbers count: lines of a JSONL file, or messages of a JSON message array. */
export function unitOf(report: ImportReport): "line" | "message" {
  return reportUnit(report);
}

/** The live context of a session (the projection of its active path). */
export function sessionLive(session: Session): Message[] {
  return liveContext(session.entries);
}

/**
 * Reads a message list for `validate`: a canonical JSON message array or
 * `{ messages }`; or an Anthropic request body (`{ system, messages }`, as
 * written by `export --to anthropic`), read through the Anthropic importer.
 * An OpenAI body (`{ messages }` with `tool_calls` / `role: tool`) is read
 * through the OpenAI importer, a Responses body (`{ input: [...] }`, as
 * written by `export --to responses`) through the Responses importer.
 */
export async function loadMessageFile(
  input: string,
  as?: "anthropic",
): Promise<{ messages: Message[]; via: "canonical" | "anthropic" | "openai" | "responses" }> {
  // `-`: standard input, named `(stdin)`.
  const file = input === STDIO ? STDIN_NAME : input;
  if (input !== STDIO) await requireFile(file);
  const text = input === STDIO ? (await readStdin()).toString("utf8") : await readFile(file, "utf8");
  let data: unknown;
  try {
    data = parseJsonLimited(text);
  } catch (e) {
    if (e instanceof JsonDepthError)
      throw usageError(`${file}:${e.line}: JSON nested deeper than ${e.limit} levels (the limit)`);
    if (text.trim() === "") throw usageError(`${file}: empty file`);
    const { line, what } = jsonSyntaxProblem(text, e);
    throw usageError(`${file}:${line}: ${what}`);
  }
  const isObject = data !== null && typeof data === "object" && !Array.isArray(data);
  // A Responses request body `{ input: [...] }`, as written by `export --to responses`.
  if (
    isObject &&
    (data as { messages?: unknown }).messages === undefined &&
    Array.isArray((data as { input?: unknown }).input)
  )
    return { messages: importedLive(text, file, "responses"), via: "responses" };
  const list = isObject ? (data as { messages?: unknown }).messages : data;
  if (!Array.isArray(list))
    throw usageError(
      `${file}: expected a JSON array of messages, { messages }, an Anthropic request body { system, messages } or a Responses request body { input }`,
    );
  const hasSystem = isObject && (data as { system?: unknown }).system !== undefined;
  if (!hasSystem && as === undefined && !(isObject && looksLikeAnthropicBody(list))) {
    try {
      return { messages: parseMessages(list, isObject ? "messages" : "(root)"), via: "canonical" };
    } catch (e) {
      if (!(e instanceof ModelError)) throw e;
      // Not canonical: perhaps an OpenAI body, or an Anthropic one with two messages of one role in a
      // row (the API combines them); otherwise the canonical error stands.
      const provider = providerOf(list);
      if (provider !== undefined) return { messages: importedLive(text, file, provider), via: provider };
      if (onlyUserAndAssistant(list)) {
        try {
          return { messages: importedLive(text, file, "anthropic"), via: "anthropic" };
        } catch {
          // Not an Anthropic body either: the canonical error names the place.
        }
      }
      throw usageError(`${file}: ${e.message}`);
    }
  }
  return { messages: importedLive(text, file, "anthropic"), via: "anthropic" };
}

/**
 * An object `{ messages }` shaped like an Anthropic request body (as written
 * by `export --to anthropic` when there is no system prompt): roles strictly
 * alternate user/assistant from a user message, no canonical-only role or
 * field (`system`, `assistant_interrupted`, `meta`, `usage`).
 */
function looksLikeAnthropicBody(list: unknown[]): boolean {
  if (list.length === 0) return false;
  return list.every((m, i) => {
    if (m === null || typeof m !== "object") return false;
    const r = m as Record<string, unknown>;
    return r.role === (i % 2 === 0 ? "user" : "assistant") && r.meta === undefined && r.usage === undefined;
  });
}

function onlyUserAndAssistant(list: unknown[]): boolean {
  return list.every((m) => {
    const r = m as Record<string, unknown> | null;
    return r !== null && typeof r === "object" && (r.role === "user" || r.role === "assistant");
  });
}

/** An OpenAI Chat Completions body (`tool_calls`, `role: tool`, string content), as written by `export --to openai`. */
function providerOf(list: unknown[]): "openai" | undefined {
  const recs = list.filter((m): m is Record<string, unknown> => m !== null && typeof m === "object");
  return recs.some(
    (m) =>
      m.role === "tool" || Array.isArray(m.tool_calls) || typeof m.content === "string" || m.content === null,
  )
    ? "openai"
    : undefined;
}

function importedLive(text: string, file: string, format: "anthropic" | "openai" | "responses"): Message[] {
  // Two histories compared with each other: repeated tool ids are kept as written on both sides
  // (renaming each on its own could pair a call of one with another call of the other).
  const { entries } = importText(text, file, { format, toolIds: "keep" });
  const live = liveContext(entries);
  return live;
}

/** Splits imported entries into the header and the rest (a header is made when the source had none). */
export function splitHeader(
  entries: readonly JournalEntry[],
  format: string,
  file: string,
): { header: HeaderEntry; rest: JournalEntry[] } {
  const first = entries[0];
  if (first !== undefined && first.kind === "header") return { header: first, rest: entries.slice(1) };
  throw new CliError(`${file}: the ${format} importer returned no header entry`, EXIT.USAGE);
}
