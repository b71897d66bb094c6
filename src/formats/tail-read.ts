/**
 * The tail of a session file, for an agent's hook: what the hook's answer
 * depends on is at the end of the session (the last compaction and the round
 * before it), and importing the whole of a long session (reading and parsing
 * every line) costs more than a hook may. A `TailWindow` is the last bytes
 * of the file from a line start; the caller imports it with the agent's own
 * importer and judges whether the window holds everything its answer depends
 * on (else it asks for a window twice as large, up to the whole file).
 *
 * What the window cannot show is answered from the part of the file before
 * it without parsing or decoding it, by searching its bytes: for an id
 * (`idBefore`), for the strings that matter (`dupBefore`,
 * `branchSummaryBefore`), for pi's parent links (`branchesBefore`) and for
 * the Codex lines that make calls (`callLinesBefore`). The whole file is
 * read once (reading is cheap; parsing every line is what costs).
 */
import { PI_RESULT_MARKER } from "../wire/pi.js";
import { ROLLOUT_CALL_TYPES } from "../wire/responses.js";

/** The first window: the last 256 KiB (a round rarely takes more; the window doubles when it does). */
export const FIRST_WINDOW_BYTES = 256 * 1024;

/** The keys whose string values are entry, message and tool ids (see `TailWindow.anyIdBefore`). */
const ID_KEYS = ["id", "uuid", "tool_use_id", "toolCallId", "call_id"];

/**
 * The string values of key `key` (at any depth) in `bytes[from, end)`, found
 * as bytes (not decoded); `escaped`: the value has an escape, and is given up
 * to it only.
 */
function valuesOf(
  bytes: Buffer,
  from: number,
  end: number,
  key: string,
  into: (value: string, escaped: boolean) => void,
): void {
  const needle = Buffer.from(`"${key}"`, "latin1");
  for (let at = bytes.indexOf(needle, from); at >= 0 && at < end; at = bytes.indexOf(needle, at + 1)) {
    let i = at + needle.length;
    while (bytes[i] === 0x20 || bytes[i] === 0x09) i++;
    if (bytes[i] !== 0x3a) continue; // ':'
    i++;
    while (bytes[i] === 0x20 || bytes[i] === 0x09) i++;
    if (bytes[i] !== 0x22) continue; // '"'
    const start = i + 1;
    // To the value's closing quote, a line break or an escape, within the value only (a search to the
    // end of the file for each value would cost more than the rest; ids are short).
    let stop = start;
    let escaped = false;
    for (; stop < end; stop++) {
      const c = bytes[stop];
      if (c === 0x22 || c === 0x0a) break;
      if (c === 0x5c) {
        escaped = true;
        break;
      }
    }
    into(bytes.toString("latin1", start, stop), escaped);
  }
}

/** The byte offsets of `needle` (ASCII) in `bytes[0, end)`. */
function offsetsOf(bytes: Buffer, end: number, needle: string): number[] {
  const out: number[] = [];
  const n = Buffer.from(needle, "latin1");
  for (let at = bytes.indexOf(n); at >= 0 && at < end; at = bytes.indexOf(n, at + 1)) out.push(at);
  return out;
}

/** The first line start at or after byte `at` of `bytes` (the length when no line starts there). */
export function lineStartAtOrAfter(bytes: Uint8Array, at: number): number {
  if (at <= 0) return 0;
  if (at >= bytes.length) return bytes.length;
  if (bytes[at - 1] === 0x0a) return at;
  const nl = bytes.indexOf(0x0a, at);
  return nl < 0 ? bytes.length : nl + 1;
}

/** What a tool result's line names (Claude Code, pi, Codex): a window does not start with one. */
const RESULT_MARKERS = ['"tool_result"', PI_RESULT_MARKER, '_call_output"'].map((m) =>
  Buffer.from(m, "latin1"),
);

/**
 * The first line at or after line start `start` that holds no tool result
 * (within a few lines): a window starting with the results of calls made
 * before it never holds the round they end, so it would only have to grow.
 * Where a window starts never decides an answer (the window is checked), only
 * how soon one is found.
 */
function pastResults(bytes: Buffer, start: number): number {
  for (let n = 0; n < 64 && start > 0 && start < bytes.length; n++) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    const line = bytes.subarray(start, end);
    if (!RESULT_MARKERS.some((m) => line.includes(m))) break;
    start = end + 1;
  }
  return Math.min(start, bytes.length);
}

/** The windows to try, from `first` bytes, doubling, ending with the whole file (start 0). */
export function* windowStarts(size: number, first = FIRST_WINDOW_BYTES): Generator<number> {
  for (let k = Math.max(1, first); ; k *= 2) {
    if (k >= size) {
      yield 0;
      return;
    }
    yield size - k;
  }
}

/** One tail window of a session file's bytes. */
export class TailWindow {
  /** Byte offset of the window's first line in the file (0: the whole file). */
  readonly start: number;
  private branches?: boolean;
  private readonly idValues = new Map<string, { plain: Set<string>; escaped: string[] }>();

  constructor(
    readonly bytes: Buffer,
    at: number,
  ) {
    this.start = pastResults(bytes, lineStartAtOrAfter(bytes, at));
  }

  /** The window is the whole file: its answer is the whole file's import. */
  get whole(): boolean {
    return this.start === 0;
  }

  /**
   * The window's text for the importer: its lines (numbered from 1 at the
   * window's first line: a line number an import of it reports, or an id it
   * makes of one, `L<line>`, is the window's).
   */
  text(): string {
    return this.bytes.toString("utf8", this.start);
  }

  /** Whether the bytes before the window hold `_dup` (a renamed tool id's suffix). */
  dupBefore(): boolean {
    const at = this.bytes.indexOf("_dup", 0, "latin1");
    return at >= 0 && at < this.start;
  }

  /** Whether the bytes before the window hold pi's `"branch_summary"`. */
  branchSummaryBefore(): boolean {
    const at = this.bytes.indexOf('"branch_summary"', 0, "latin1");
    return at >= 0 && at < this.start;
  }

  /**
   * Byte offsets, before the window, where a Codex call type or `compacted`
   * is named as a string (`"function_call"`, `"custom_tool_call"`,
   * `"local_shell_call"`, `"compacted"`): every line that makes a call or
   * compacts has one.
   */
  callLinesBefore(): number[] {
    const out: number[] = [];
    for (const t of [...ROLLOUT_CALL_TYPES, "compacted"])
      out.push(...offsetsOf(this.bytes, this.start, `"${t}"`));
    return out;
  }

  /**
   * Whether id `id` may be written before the window: as a JSON string
   * (`"ID"`) there. An id that is not plain (see `plainId`) always may: a
   * writer could have escaped it.
   */
  idBefore(id: string): boolean {
    if (!plainId(id)) return true;
    const at = this.bytes.indexOf(`"${id}"`, 0, "latin1");
    return at >= 0 && at < this.start;
  }

  /**
   * Whether any of `ids` may be written before the window: as the string
   * value of an id key there (`keys`: by default `id`, `uuid`, `tool_use_id`,
   * `toolCallId`, `call_id`; at any depth, in any record: every entry,
   * message or tool id an importer reads, and more). One search of the part before the window
   * for each key (not one for each id, which costs more past a few ids); a
   * value with an escape counts as any id it could be the start of.
   */
  anyIdBefore(ids: ReadonlySet<string>, keys: readonly string[] = ID_KEYS): boolean {
    if (ids.size <= 4) return [...ids].some((id) => this.idBefore(id));
    for (const id of ids) if (!plainId(id)) return true;
    const plain = new Set<string>();
    const escaped: string[] = [];
    for (const key of keys) {
      let found = this.idValues.get(key);
      if (!found) {
        const f = { plain: new Set<string>(), escaped: [] as string[] };
        valuesOf(this.bytes, 0, this.start, key, (v, esc) => (esc ? f.escaped.push(v) : f.plain.add(v)));
        this.idValues.set(key, (found = f));
      }
      for (const v of found.plain) plain.add(v);
      escaped.push(...found.escaped);
    }
    for (const id of ids) if (plain.has(id) || escaped.some((p) => id.startsWith(p))) return true;
    return false;
  }

  /**
   * Whether an entry of the file has two children (a pi tree with a branch)
   * where one of them is before the window: two `parentId`s naming it.
   */
  branchesBefore(): boolean {
    if (this.branches !== undefined) return this.branches;
    const before = new Set<string>();
    let found = false;
    valuesOf(this.bytes, 0, this.start, "parentId", (v, escaped) => {
      if (before.has(v) || escaped) found = true;
      before.add(v);
    });
    // A child in the window of an entry that already has one before it.
    if (!found && before.size > 0)
      valuesOf(this.bytes, this.start, this.bytes.length, "parentId", (v) => {
        if (before.has(v)) found = true;
      });
    return (this.branches = found);
  }
}

/**
 * Whether `id` is written the same by every JSON writer: letters, digits and
 * `_ . : -` only (no writer escapes them; a `/` some escape as `\/`).
 */
export function plainId(id: string): boolean {
  return /^[A-Za-z0-9_.:-]+$/.test(id);
}
