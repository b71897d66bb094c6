/**
 * Loading any input file of the command line: a compact-safe journal (read
 * with the journal layer's tolerant reader) or any importable session format
 * (through `formats`), and message arrays for `validate`.
 */
import type { Stats } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import type { Message } from "../model/index.js";
import {
  JsonDepthError,
  ModelError,
  notRegularFile,
  parseJsonLimited,
  parseMessages,
} from "../model/index.js";
import { liveContext } from "../journal/index.js";
import type { ImportReport } from "../formats/common/types.js";
import { FORMAT_NAMES, isFormatName, reportUnit, type FormatName } from "../formats/registry.js";
import { importText } from "../formats/detect.js";
import { jsonSyntaxProblem } from "../formats/common/source-tree.js";
import { importWarnings, readSession, type Session } from "../route/session.js";
import { usageError } from "./errors.js";
import { readStdin, STDIN_NAME, STDIO } from "./stdin.js";

// What reading a session is belongs to the route; the commands read their inputs through these names.
export {
  importWarnings,
  looksLikeJournal,
  looksLikeJournalText,
  splitHeader,
  type Session,
} from "../route/session.js";

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

/**
 * Loads a session: a journal is read as is (with its problems reported); any
 * other format is imported (never modifying the source file). `-` is
 * standard input, read whole once and named `(stdin)`.
 */
export async function loadSession(
  input: string,
  format?: FormatName,
  known?: { journal: boolean },
): Promise<Session> {
  const piped = input === STDIO ? await readStdin() : undefined;
  const file = piped === undefined ? input : STDIN_NAME;
  if (piped === undefined) await requireFile(file);
  // `known`: the caller has recognised the file already (one journal detection per command).
  return readSession(file, { format, content: piped, journal: known?.journal });
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
