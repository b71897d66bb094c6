/**
 * Splits JSONL text into numbered lines and parses each one, classifying the
 * usual real-world defects: two objects concatenated on one line, an invalid
 * escape, a truncated last line.
 */
import type { ReportBuilder } from "./report.js";
import { jsonDepthError } from "../../model/depth.js";
import { isRecord } from "../../wire/common.js";

export interface RawLine {
  /** 1-based line number. */
  line: number;
  text: string;
  /** True for the last line when the file does not end with a newline. */
  last_unterminated: boolean;
}

/** The lines of a JSONL text. The empty string after a final newline is not a line. */
export function splitLines(text: string): RawLine[] {
  const parts = text.split("\n");
  const endsWithNewline = text.endsWith("\n");
  if (endsWithNewline) parts.pop();
  return parts.map((p, i) => ({
    line: i + 1,
    text: p.endsWith("\r") ? p.slice(0, -1) : p,
    last_unterminated: !endsWithNewline && i === parts.length - 1,
  }));
}

/**
 * The lines of a JSONL file's bytes, each decoded on its own: `splitLines` of
 * their UTF-8 text (a newline byte is never part of a longer UTF-8 sequence,
 * so decoding a line at a time gives the very characters decoding the whole
 * gives), without a string of the whole file, which a large file makes in
 * fresh memory, two bytes a character once one is not Latin-1.
 */
export function byteLines(bytes: Uint8Array): RawLine[] {
  return [...eachByteLine(bytes)];
}

/** `byteLines`, one line at a time: for a reader that may stop early. */
export function* eachByteLine(bytes: Uint8Array): Generator<RawLine> {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = b.length > 0 && b[b.length - 1] === 0x0a ? b.length - 1 : b.length;
  for (let start = 0, line = 1; start <= end; line++) {
    let nl = b.indexOf(0x0a, start);
    if (nl < 0 || nl > end) nl = end;
    const stop = nl > start && b[nl - 1] === 0x0d ? nl - 1 : nl;
    yield { line, text: b.toString("utf8", start, stop), last_unterminated: end === b.length && nl === end };
    start = nl + 1;
  }
}

/** A JSONL input: its text, or its lines (`byteLines` of its bytes). */
export type JsonlInput = string | readonly RawLine[];

/** The lines of a JSONL input. */
export const linesOf = (input: JsonlInput): readonly RawLine[] =>
  typeof input === "string" ? splitLines(input) : input;

/** `splitLines`, one line at a time: for a reader that may stop early, without splitting the whole text. */
export function* eachLine(text: string): Generator<RawLine> {
  const endsWithNewline = text.endsWith("\n");
  const end = endsWithNewline ? text.length - 1 : text.length;
  let start = 0;
  for (let line = 1; start <= end; line++) {
    let nl = text.indexOf("\n", start);
    if (nl < 0 || nl > end) nl = end;
    const p = text.slice(start, nl);
    yield {
      line,
      text: p.endsWith("\r") ? p.slice(0, -1) : p,
      last_unterminated: !endsWithNewline && nl === end,
    };
    start = nl + 1;
  }
}

export type ParsedLine = { ok: true; value: unknown } | { ok: false; reason: string };

/**
 * The first lines of a JSONL text as format detection parsed them (`parseLine`), by line number - 1
 * (a line it did not parse: undefined), so that the importer of that same text takes them over
 * rather than parsing them again.
 */
export type ParsedHead = readonly (ParsedLine | undefined)[];

/** End index (exclusive) of the first top-level JSON object/array in `s`, or -1. String-aware. */
function endOfFirstValue(s: string): number {
  let depth = 0;
  let inString = false;
  let started = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      depth++;
      started = true;
    } else if (c === "}" || c === "]") {
      depth--;
      if (started && depth === 0) return i + 1;
    }
  }
  return -1;
}

/** Parses one JSONL line; on failure the reason says what is wrong (one line). */
export function parseLine(raw: RawLine): ParsedLine {
  // Checked before parsing, so that no recursive walk ever sees a hostile value.
  const deep = jsonDepthError(raw.text);
  if (deep)
    return {
      ok: false,
      reason: `JSON nested deeper than ${deep.limit} levels (the limit), at column ${deep.column}`,
    };
  try {
    return { ok: true, value: JSON.parse(raw.text) };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const end = endOfFirstValue(raw.text);
    if (end > 0 && end < raw.text.length && raw.text.slice(end).trim().length > 0) {
      let firstOk = false;
      try {
        JSON.parse(raw.text.slice(0, end));
        firstOk = true;
      } catch {
        /* the first value is itself broken */
      }
      if (firstOk) {
        return {
          ok: false,
          reason: `two JSON values concatenated on one line (a second value starts at column ${end + 1})`,
        };
      }
    }
    if (/escape/i.test(msg)) return { ok: false, reason: `invalid JSON escape (${msg})` };
    if (raw.last_unterminated && (end < 0 || /end of JSON|Unterminated/i.test(msg))) {
      return { ok: false, reason: `${TRUNCATED_LAST_LINE} (${raw.text.length} chars, no closing brace)` };
    }
    return { ok: false, reason: `invalid JSON (${msg})` };
  }
}

/** How a skipped line's reason starts when the file ends inside it: the agent was still writing it, or crashed. */
export const TRUNCATED_LAST_LINE = "truncated last line";

/**
 * The JSON objects of a JSONL text, in order, for a writer that carries
 * fields over from an original session: blank, broken and non-object lines
 * carry nothing and are passed over (the importer is what reports them).
 */
export function* recordsOf(text: string): Generator<Record<string, unknown>> {
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let o: unknown;
    try {
      o = JSON.parse(line);
    } catch {
      continue;
    }
    if (isRecord(o)) yield o;
  }
}

export { isRecord };

/**
 * The JSON-object lines of a JSONL text, in order. Blank lines and lines that
 * are not one JSON object are reported on `rb` (with their line number and
 * reason) and skipped: every importer accounts for them the same way.
 */
export function* objectLines(
  input: JsonlInput,
  rb: ReportBuilder,
  head?: ParsedHead,
): Generator<{ raw: RawLine; o: Record<string, unknown> }> {
  for (const raw of linesOf(input)) {
    if (raw.text.trim() === "") {
      rb.line("blank");
      rb.skip(raw.line, "blank line", true);
      continue;
    }
    const parsed = head?.[raw.line - 1] ?? parseLine(raw);
    if (!parsed.ok || !isRecord(parsed.value)) {
      rb.line("unparsable");
      rb.skip(raw.line, parsed.ok ? "not a JSON object" : parsed.reason, false);
      continue;
    }
    yield { raw, o: parsed.value };
  }
}
