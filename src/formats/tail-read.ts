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
 * it without parsing it: one pass of one regular expression over it (as
 * Latin-1: a character a byte) finds the ids written there (`idBefore`),
 * the strings that matter (`dupBefore`, `branchSummaryBefore`), pi's parent
 * links (`branchesBefore`) and the Codex lines that make calls
 * (`callLinesBefore`). The whole file is read once (reading is cheap;
 * parsing every line is what costs).
 */

/** The first window: the last 256 KiB (a round rarely takes more; the window doubles when it does). */
export const FIRST_WINDOW_BYTES = 256 * 1024;

/**
 * What the part of a file before a window is searched for, in one pass: the
 * string values of the id keys (entry, message and tool ids: `id`, `uuid`,
 * `tool_use_id`, `toolCallId`, `call_id`) and of pi's `parentId`, at any
 * depth, and pi's `branch_summary` type. A value is read up to a quote, a
 * backslash or a line end (one with an escape is only a prefix of the id).
 * Every alternative starts with a quote, which the engine looks for first.
 */
const SCAN =
  /"(?:(id|uuid|tool_use_id|toolCallId|call_id|parentId)"[ \t]*:[ \t]*"([^"\\\n]*)(\\?)|(branch_summary)")/g;

/** One find of `SCAN`, at its byte offset. */
interface Found {
  at: number;
  /** The key (`parentId`, or an id key), or `branch_summary`. */
  what: string;
  value?: string;
  /** The value has an escape: `value` is only what comes before it. */
  escaped?: boolean;
}

/** What `SCAN` found before each file's first window (a later, larger window looks at a part of it). */
const scans = new WeakMap<Buffer, { end: number; found: Found[] }>();

/** The finds of `SCAN` in `bytes[0, end)` (`end` a line start). */
export function scanBefore(bytes: Buffer, end: number): readonly Found[] {
  const done = scans.get(bytes);
  if (done && done.end >= end) return done.found;
  const found: Found[] = [];
  // Latin-1: a character a byte, so that match offsets are byte offsets (ids are ASCII).
  for (const m of bytes.toString("latin1", 0, end).matchAll(SCAN)) {
    if (m[1] !== undefined) found.push({ at: m.index, what: m[1], value: m[2]!, escaped: m[3] === "\\" });
    else found.push({ at: m.index, what: "branch_summary" });
  }
  scans.set(bytes, { end, found });
  return found;
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
const RESULT_MARKERS = ['"tool_result"', '"toolResult"', '_call_output"'].map((m) =>
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
  private ids?: { plain: Set<string>; escaped: string[] };
  private branches?: boolean;

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

  /** The finds of the scan before the window. */
  private *before(what?: string): Generator<Found> {
    for (const f of scanBefore(this.bytes, this.start)) {
      if (f.at >= this.start) return;
      if (what === undefined || f.what === what) yield f;
    }
  }

  /** Whether the bytes before the window hold `_dup` (a renamed tool id's suffix). */
  dupBefore(): boolean {
    const at = this.bytes.indexOf("_dup", 0, "latin1");
    return at >= 0 && at < this.start;
  }

  /** Whether the bytes before the window hold pi's `"branch_summary"`. */
  branchSummaryBefore(): boolean {
    return !this.before("branch_summary").next().done;
  }

  /**
   * Byte offsets, before the window, where a Codex call type or `compacted`
   * is named as a string (`"function_call"`, `"custom_tool_call"`,
   * `"local_shell_call"`, `"compacted"`): every line that makes a call or
   * compacts has one.
   */
  callLinesBefore(): number[] {
    const out: number[] = [];
    for (const t of ["function_call", "custom_tool_call", "local_shell_call", "compacted"])
      out.push(...offsetsOf(this.bytes, this.start, `"${t}"`));
    return out;
  }

  /**
   * Whether id `id` may be written before the window: the string value of an
   * id key there (at any depth, in any record: every entry, message or tool
   * id an importer can read, and more), or one with an escape that it could
   * be. An id that is not plain (see `plainId`) always may.
   */
  idBefore(id: string): boolean {
    if (!plainId(id)) return true;
    if (!this.ids) {
      const plain = new Set<string>();
      const escaped: string[] = [];
      for (const f of this.before()) {
        if (f.value === undefined || f.what === "parentId") continue;
        if (f.escaped) escaped.push(f.value);
        else plain.add(f.value);
      }
      this.ids = { plain, escaped };
    }
    return this.ids.plain.has(id) || this.ids.escaped.some((p) => id.startsWith(p));
  }

  /**
   * Whether an entry of the file has two children (a pi tree with a branch)
   * where one of them is before the window: two `parentId`s naming it.
   */
  branchesBefore(): boolean {
    if (this.branches !== undefined) return this.branches;
    const before = new Set<string>();
    let found = false;
    for (const f of this.before("parentId")) {
      if (before.has(f.value!) || f.escaped) found = true;
      before.add(f.value!);
    }
    // A child in the window of an entry that already has one before it.
    if (!found && before.size > 0)
      for (const m of this.bytes
        .toString("latin1", this.start)
        .matchAll(/"parentId"[ \t]*:[ \t]*"([^"\\\n]*)/g))
        if (before.has(m[1]!)) found = true;
    return (this.branches = found);
  }
}

/** Whether `id` is one the scan reads as written: printable ASCII with no quote or backslash. */
export function plainId(id: string): boolean {
  return id.length > 0 && /^[\x20-\x7e]*$/.test(id) && !/["\\]/.test(id);
}
