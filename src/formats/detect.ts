/** Format auto-detection and the `importFile` / `importText` entry points. */
import { readSessionFile } from "./read-file.js";
import { jsonDepthError } from "../model/depth.js";
import { InvalidBlockError, jsonSyntaxProblem } from "./common/source-tree.js";
import {
  eachByteLine,
  eachLine,
  isRecord,
  parseLine,
  type ParsedHead,
  type ParsedLine,
  type RawLine,
} from "./common/lines.js";
import type { ToolIdOptions } from "../model/tool-ids.js";
import { FormatError, type ImportResult } from "./common/types.js";
import { DETECTION, FORMAT_NAMES, formatEntry, unitNames, type FormatName } from "./registry.js";

/** Which known format a record of a JSONL file belongs to, if recognisable (the table's record tests, by rank). */
function jsonlKind(o: Record<string, unknown>): FormatName | undefined {
  return DETECTION.record.find((d) => d.test(o))?.name;
}

/**
 * Detects the format of a session file from its content (the name only breaks
 * ties: `.traj` is SWE-agent, i.e. OpenAI). Throws a `FormatError` listing the
 * formats tried when nothing matches.
 */
export function detectFormat(text: string, fileName: string): FormatName {
  return detect(text, fileName).format;
}

/** The lines of a JSON Lines file: its first 200 records' votes for a format, what they parse to, and the broken ones. */
function voteLines(lines: Iterable<RawLine>): { best?: FormatName; head: ParsedHead; broken: number } {
  const votes = new Map<FormatName, number>();
  const head: (ParsedLine | undefined)[] = [];
  let seen = 0;
  let broken = 0;
  for (const raw of lines) {
    if (seen >= 200) break;
    if (raw.text.trim() === "") continue;
    const p = parseLine(raw);
    head[raw.line - 1] = p;
    if (!p.ok) broken++;
    if (!p.ok || !isRecord(p.value)) continue;
    seen++;
    const k = jsonlKind(p.value);
    if (k) votes.set(k, (votes.get(k) ?? 0) + 1);
  }
  let best: FormatName | undefined;
  for (const [k, n] of votes) if (best === undefined || n > votes.get(best)!) best = k;
  return { best, head, broken };
}

/**
 * A JSON Lines file detected from its lines (`eachByteLine`), never decoded
 * whole: its lines and what `detect` of its text gives, when its first
 * non-blank line is a JSON object and another non-blank line follows (the
 * text is then neither a JSON document nor one of the texts `DETECTION.text`
 * knows, a banner before a document) and a format's records are among its
 * first. Undefined otherwise (a file that does not open with a JSON object is
 * not split further): the text is detected whole.
 */
export function detectLines(
  bytes: Uint8Array,
): { lines: RawLine[]; format: FormatName; head: ParsedHead } | undefined {
  const lines: RawLine[] = [];
  const each = eachByteLine(bytes);
  // Up to the first non-blank line (`next`, not a loop's `break`, which would end the generator).
  for (let r = each.next(); !r.done; r = each.next()) {
    lines.push(r.value);
    if (r.value.text.trim() !== "") break;
  }
  const first = lines.at(-1);
  if (first === undefined || first.text.trim() === "") return undefined;
  const p = parseLine(first);
  if (!p.ok || !isRecord(p.value)) return undefined;
  for (const l of each) lines.push(l);
  // The lines after the first non-blank one (line numbers count from 1).
  if (!lines.slice(first.line).some((l) => l.text.trim() !== "")) return undefined;
  const { best, head } = voteLines(lines);
  return best === undefined ? undefined : { lines, format: best, head };
}

/** `detectFormat`, with the JSONL lines it parsed to vote (`head`), for the importer to take over. */
function detect(text: string, fileName: string): { format: FormatName; head?: ParsedHead } {
  if (text.trim() === "") throw new FormatError(`${fileName}: empty file`);
  for (const d of DETECTION.text) if (d.test(text)) return { format: d.name };
  const trimmed = text.trimStart();
  /** Why the text is no JSON document, when it starts like one (reported if no JSONL record is known either). */
  let syntax: { line: number; what: string } | undefined;
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    let doc: unknown;
    try {
      // JSON.parse first (it builds without recursion, and stops at a JSONL's second line), then the
      // nesting: too deep, it is not looked at here; the importer reports it with its line.
      doc = JSON.parse(text);
      if (jsonDepthError(text)) doc = undefined;
    } catch (e) {
      doc = undefined;
      syntax = jsonSyntaxProblem(text, e);
    }
    if (doc !== undefined) {
      for (const d of DETECTION.document) if (d.test(doc, fileName)) return { format: d.name };
      if (isRecord(doc)) {
        const k = jsonlKind(doc);
        if (k) return { format: k };
      }
    }
  }
  const { best, head, broken } = voteLines(eachLine(text));
  if (best) return { format: best, head };
  // A JSON document that does not parse (not a JSONL of unknown records): say what is wrong, where.
  if (syntax !== undefined && broken > 0) throw new FormatError(`${fileName}:${syntax.line}: ${syntax.what}`);
  const deep = jsonDepthError(text);
  if (deep)
    throw new FormatError(
      `${fileName}:${deep.line}: JSON nested deeper than ${deep.limit} levels (the limit)`,
    );
  throw new FormatError(`${fileName}: not a known session format (tried: ${FORMAT_NAMES.join(", ")})`);
}

export interface ImportOptions extends ToolIdOptions {
  /** Force a format instead of detecting it. */
  format?: FormatName;
}

/** Imports a session from its text. */
export function importText(text: string, fileName: string, options: ImportOptions = {}): ImportResult {
  return importDetected(text, fileName, options, options.format ?? detect(text, fileName));
}

/** `importText` once the format is known: given (`options.format`) or detected, with what detection parsed. */
function importDetected(
  text: string,
  fileName: string,
  options: ImportOptions,
  detected: FormatName | { format: FormatName; head?: ParsedHead },
): ImportResult {
  const { format, head } = typeof detected === "string" ? { format: detected, head: undefined } : detected;
  const entry = formatEntry(format); // a FormatError for an unknown name
  let result: ImportResult;
  try {
    result = entry.importer(text, fileName, options, head);
  } catch (e) {
    // A forced format the file cannot be read as: say what it looks like.
    const other =
      options.format !== undefined && e instanceof FormatError && !(e instanceof InvalidBlockError)
        ? otherFormat(text, fileName, format)
        : undefined;
    if (other !== undefined)
      throw new FormatError(`${e instanceof Error ? e.message : String(e)}; ${wrongFormatHint(other)}`);
    throw e;
  }
  if (options.format !== undefined) refuseWrongFormat(result, text, fileName, format);
  // Every entry is valid here: the journal's are read line by line, the others' checked by finishImport.
  return result;
}

/**
 * A forced format under which not one line (JSON formats: message) of a
 * non-empty input imports is an error, never an empty history that "has
 * nothing to compact": it names the format the content looks like, or else
 * the first line the forced format could not read and why.
 */
function refuseWrongFormat(result: ImportResult, text: string, fileName: string, format: FormatName): void {
  const { imported, total, skipped } = result.report;
  if (imported > 0 || total === 0) return;
  const [one, many] = unitNames(result.report);
  const other = otherFormat(text, fileName, format);
  const first = skipped[0];
  const why =
    other !== undefined
      ? wrongFormatHint(other)
      : first !== undefined
        ? `${one} ${first.line}: ${first.reason}`
        : "no known format matches it either";
  throw new FormatError(`${fileName}: none of its ${total} ${many} reads as ${format}; ${why}`);
}

/** The format the content says, when it is not `format` (undefined when it is, or when nothing matches). */
function otherFormat(text: string, fileName: string, format: FormatName): FormatName | undefined {
  try {
    const detected = detectFormat(text, fileName);
    return detected === format ? undefined : detected;
  } catch {
    return undefined;
  }
}

/**
 * For a file read under a forced `format` that does not fit: "it looks like
 * a X session (give --format X, …)", or undefined when the content says
 * nothing else.
 */
export function wrongFormatHintFor(text: string, fileName: string, format: FormatName): string | undefined {
  const other = otherFormat(text, fileName, format);
  return other === undefined ? undefined : wrongFormatHint(other);
}

function wrongFormatHint(detected: FormatName): string {
  return `it looks like ${/^[aeiou]/.test(detected) ? "an" : "a"} ${detected} session (give --format ${detected}, or leave the format to be detected)`;
}

/** Reads a session file and imports it (format detected unless given). */
export async function importFile(path: string, options: ImportOptions = {}): Promise<ImportResult> {
  const bytes = await readSessionFile(path);
  return importBytes(bytes, path, options);
}

/**
 * Imports a session from its bytes (a file's, or standard input's), named
 * `fileName` in every message; the format is detected unless given.
 */
export function importBytes(bytes: Uint8Array, fileName: string, options: ImportOptions = {}): ImportResult {
  // JSON Lines: detected from its lines, decoded a line at a time (what `detect` of the text gives).
  const lined = options.format === undefined ? detectLines(bytes) : undefined;
  const importLines = lined && formatEntry(lined.format).importLines;
  if (lined && importLines) return importLines(lined.lines, fileName, options, lined.head);
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  // A journal is read from its bytes, as the journal layer reads it: a line of invalid UTF-8 is a
  // broken line there, not a line of replacement characters. Detected once: from the lines, else the text.
  const detected = options.format ?? lined ?? detect(text, fileName);
  const format = typeof detected === "string" ? detected : detected.format;
  const fromBytes = formatEntry(format).importBytes;
  if (fromBytes !== undefined) {
    const result = fromBytes(bytes, fileName, options);
    if (options.format !== undefined) refuseWrongFormat(result, text, fileName, format);
    return result;
  }
  // Detected once: the importer takes over the lines detection parsed.
  return importDetected(text, fileName, options, detected);
}
