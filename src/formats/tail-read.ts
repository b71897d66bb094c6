/**
 * The tail of a session file, for an agent's hook: what the hook's answer
 * depends on is at the end of the session (the last compaction and the round
 * before it), and importing the whole of a long session (reading and parsing
 * every line) costs more than a hook may. A `TailWindow` is the last bytes
 * of the file from a line start; the caller imports it with the agent's own
 * importer and judges whether the window holds everything its answer depends
 * on (else it asks for a window twice as large, up to the whole file).
 *
 * The window is the text from its first line on, preceded by one empty line
 * for each line before it, so that the importer numbers lines (and the ids it
 * makes of them, `L<line>`) as in the whole file. What the window cannot show
 * is answered from the bytes before it without parsing them: the ids they
 * mention (`prefixIds`), whether they hold a given string (`prefixIncludes`),
 * whether any entry there has two children (`prefixBranches`, pi). The
 * whole file is read (reading is cheap; parsing is what costs), and the part
 * before the window is searched as bytes, never decoded.
 */

/** The first window: the last 256 KiB (a round rarely takes more; the window doubles when it does). */
export const FIRST_WINDOW_BYTES = 256 * 1024;

/** The keys whose string values are the ids a window is checked against (entry, message and tool ids). */
const ID_KEYS = ["id", "uuid", "tool_use_id", "toolCallId", "call_id"];

/**
 * The string values of key `key` (at any depth) in `bytes[0, end)`, found
 * byte by byte (the text is not decoded: a 5 MB prefix decoded costs more
 * than the whole window's import). A value with an escape is returned as its
 * raw bytes up to the escape (it is no plain id: see `plainId`).
 */
function valuesOf(bytes: Buffer, end: number, key: string, into: (v: string) => void): void {
  const needle = Buffer.from(`"${key}"`, "latin1");
  for (let at = bytes.indexOf(needle, 0); at >= 0 && at < end; at = bytes.indexOf(needle, at + 1)) {
    let i = at + needle.length;
    while (i < end && (bytes[i] === 0x20 || bytes[i] === 0x09)) i++;
    if (bytes[i] !== 0x3a) continue; // ':'
    i++;
    while (i < end && (bytes[i] === 0x20 || bytes[i] === 0x09)) i++;
    if (bytes[i] !== 0x22) continue; // '"'
    const from = ++i;
    while (i < end && bytes[i] !== 0x22 && bytes[i] !== 0x5c && bytes[i] !== 0x0a) i++;
    into(bytes.toString("latin1", from, i));
  }
}

/** The first line start at or after byte `at` of `bytes` (the length when no line starts there). */
export function lineStartAtOrAfter(bytes: Uint8Array, at: number): number {
  if (at <= 0) return 0;
  if (at >= bytes.length) return bytes.length;
  if (bytes[at - 1] === 0x0a) return at;
  const nl = bytes.indexOf(0x0a, at);
  return nl < 0 ? bytes.length : nl + 1;
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
  /** Lines of the file before the window. */
  readonly linesBefore: number;
  private ids?: Set<string>;
  private branches?: boolean;

  constructor(
    readonly bytes: Buffer,
    at: number,
  ) {
    this.start = lineStartAtOrAfter(bytes, at);
    let n = 0;
    for (let i = bytes.indexOf(0x0a); i >= 0 && i < this.start; i = bytes.indexOf(0x0a, i + 1)) n++;
    this.linesBefore = n;
  }

  /** The window is the whole file: its answer is the whole file's import. */
  get whole(): boolean {
    return this.start === 0;
  }

  /** The window's text for the importer: an empty line for each line before it, then its lines. */
  text(): string {
    return "\n".repeat(this.linesBefore) + this.bytes.toString("utf8", this.start);
  }

  /** Whether the bytes before the window hold `ascii` (an ASCII string). */
  prefixIncludes(ascii: string): boolean {
    const at = this.bytes.indexOf(ascii, 0, "latin1");
    return at >= 0 && at < this.start;
  }

  /**
   * The string values of `id`, `uuid`, `tool_use_id`, `toolCallId` and
   * `call_id` keys anywhere in the bytes before the window (at any depth,
   * in any record): every entry, message or tool id written there that an
   * importer can read, and more.
   */
  prefixIds(): ReadonlySet<string> {
    if (this.ids) return this.ids;
    const ids = new Set<string>();
    for (const key of ID_KEYS) valuesOf(this.bytes, this.start, key, (v) => ids.add(v));
    return (this.ids = ids);
  }

  /**
   * Whether an entry of the file has two children (a pi tree with a branch)
   * where one of them is before the window: two `parentId`s naming it.
   */
  prefixBranches(): boolean {
    if (this.branches !== undefined) return this.branches;
    const before = new Set<string>();
    let found = false;
    valuesOf(this.bytes, this.start, "parentId", (v) => {
      if (before.has(v)) found = true;
      before.add(v);
    });
    // A child in the window of an entry that already has one before it.
    if (!found && before.size > 0) {
      const window = this.bytes.subarray(this.start);
      valuesOf(window, window.length, "parentId", (v) => {
        if (before.has(v)) found = true;
      });
    }
    return (this.branches = found);
  }
}

/** Whether `id` is one that `prefixIds` reads as written (a JSON string needing no escape). */
export function plainId(id: string): boolean {
  return id.length > 0 && /^[\x20-\x7e]*$/.test(id) && !/["\\]/.test(id);
}
