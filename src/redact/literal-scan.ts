/**
 * Which of a fixed set of lower-case ASCII literals a text holds in any case
 * (A–Z read as a–z), found in one pass: the pre-check of secret redaction
 * (the gitleaks rules' keywords and the hand rules' hints). The text is not
 * lower-cased first: that copy cost as much as a tenth of a redaction.
 *
 * The pass reads the text as bytes (`latin1`: a character's low byte, one
 * fast copy), which JavaScript indexes far faster than a string whose
 * representation varies (a slice, a concatenation). It keeps the last three
 * bytes' low five bits as a 15-bit key; only where that key starts some
 * literal (about 4 % of the positions in the corpus's texts) does it look
 * the three characters up in a hashed table and compare the literals that
 * start so, byte by byte, then confirm a match in the text itself (a
 * character above U+00FF can share its low byte with a letter: the text
 * rejects it). Comparing bytes first took a tenth off the scan: about 30
 * literals are compared for every one found, and the text's characters
 * cost more to read than the bytes. A bucket is walked only when the
 * fourth character can be one of its literals' (`fourth`): that took a
 * quarter off the scan again (8.0 to 6.1 ms on the 8,302 texts). Literals of two
 * characters are found the same way by the last two bytes (the same table
 * marks them: one lookup per position, a fifth faster than two tables);
 * one-character literals by a case-insensitive search.
 *
 * Measured on 9,000 texts that compactions of the corpus redact (3 MB): a
 * redaction (this scan, then the rules it selects) went from 40 to 87 MB/s
 * against one regular expression alternating all the keywords (tried at
 * every position) plus a substring search per hint; reading bytes rather
 * than characters is 1.5–2.3× of the scan's own share. It finds the same
 * set.
 */

/** 2,048 buckets (8 KB): the keywords fill 170 of them; a larger table only costs cache. */
const TABLE_BITS = 11;

function hash(a: number, b: number, c: number): number {
  return Math.imul((a << 16) ^ (b << 8) ^ c, 0x9e3779b1) >>> (32 - TABLE_BITS);
}

/** A character code with A–Z read as a–z. */
function lower(c: number): number {
  return c >= 65 && c <= 90 ? c + 32 : c;
}

/** Whether `text` holds the lower-case `lit` at `at`, A–Z read as a–z. */
function startsAt(text: string, lit: string, at: number): boolean {
  if (at + lit.length > text.length) return false;
  for (let k = 0; k < lit.length; k++) if (lower(text.charCodeAt(at + k)) !== lit.charCodeAt(k)) return false;
  return true;
}

/** A buffer reused by the scans of texts up to its size: no allocation per scan (a longer text gets its own). */
const scratch = Buffer.allocUnsafe(1 << 16);
/**
 * The same bytes seen as a plain `Uint8Array`: the scan reads it about a tenth faster than the `Buffer`
 * (a subclass) over the same memory.
 */
const scratchBytes = new Uint8Array(scratch.buffer, scratch.byteOffset, scratch.length);

/** The text's characters by their low byte (in `scratch` when it fits: valid until the next call). */
function latin1(text: string): Uint8Array {
  if (text.length > scratch.length) {
    const own = Buffer.from(text, "latin1");
    return new Uint8Array(own.buffer, own.byteOffset, own.length);
  }
  scratch.write(text, 0, "latin1");
  return scratchBytes;
}

export class LiteralSet {
  readonly literals: readonly string[];
  /** One-character literals, by index, as case-insensitive patterns. */
  private readonly single: { index: number; re: RegExp }[] = [];
  /**
   * Per key of the last three bytes (5 bits each): bit 1 when some literal
   * starts with those three, bit 2 when some two-character literal is the
   * last two (one lookup per position).
   */
  private readonly gate = new Uint8Array(1 << 15);
  /** Per `hash` of a literal's first three characters (two: the third is 0), its first literal (-1: none), chained by `next`. */
  private readonly heads = new Int32Array(1 << TABLE_BITS).fill(-1);
  private readonly next: Int32Array;
  /** The literals' characters, one after another (literal i from `offsets[i]` to `offsets[i + 1]`): compared as bytes. */
  private readonly chars: Uint8Array;
  private readonly offsets: Int32Array;
  /**
   * Per hash bucket, the low five bits of the fourth characters its literals can have (bit
   * `c & 31`), every bit when it holds a literal of three characters or fewer: a position whose
   * fourth character none of them has is passed over before the bucket is walked. The three first
   * characters of a literal are common in text (`ent`, `con`, `tes`, `git`): 9 of 10 lookups ended
   * with no literal found, and most of those at the fourth character.
   */
  private readonly fourth = new Uint32Array(1 << TABLE_BITS);
  /** Per literal, the scan that last found it (`stamp`): no set is built per scan. */
  private readonly marks: Uint32Array;
  private stamp = 0;
  /** Per literal, 1 when the scan records where each of its occurrences starts (`positions`). */
  private readonly positional: Uint8Array;
  /** Where the last scan found the positional literals (see `positions`). */
  private readonly starts: number[] = [];
  /** The text of the last scan (what `starts` are positions in). */
  private scanned: string | undefined;

  /**
   * `positional`: the literals (by index) whose every occurrence the scan records, for a rule whose
   * match can start only where one of them does (`positions`). The others are found once a scan.
   */
  constructor(literals: readonly string[], positional: readonly number[] = []) {
    this.literals = [...literals];
    this.positional = new Uint8Array(this.literals.length);
    for (const i of positional) {
      // Found at the end of its first three characters, the starts of such literals come in order.
      if (!(i >= 0 && i < this.literals.length && this.literals[i]!.length >= 3))
        throw new Error(`LiteralSet: positional literal ${i} is not a literal of three characters or more`);
      this.positional[i] = 1;
    }
    this.marks = new Uint32Array(this.literals.length);
    this.next = new Int32Array(this.literals.length).fill(-1);
    this.offsets = new Int32Array(this.literals.length + 1);
    let total = 0;
    for (let i = 0; i < this.literals.length; i++) {
      this.offsets[i] = total;
      total += this.literals[i]!.length;
    }
    this.offsets[this.literals.length] = total;
    this.chars = new Uint8Array(total);
    for (let i = 0; i < this.literals.length; i++)
      for (let k = 0; k < this.literals[i]!.length; k++)
        this.chars[this.offsets[i]! + k] = this.literals[i]!.charCodeAt(k) & 0xff;
    this.literals.forEach((lit, i) => {
      if (lit.length === 0) throw new Error("LiteralSet: an empty literal");
      if ([...lit].some((ch) => ch.charCodeAt(0) > 0x7f || (ch >= "A" && ch <= "Z")))
        throw new Error(`LiteralSet: not a lower-case ASCII literal: ${lit}`);
      if (lit.length === 1) {
        this.single.push({ index: i, re: new RegExp(lit.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&"), "i") });
        return;
      }
      const a = lit.charCodeAt(0);
      const b = lit.charCodeAt(1);
      const c = lit.length === 2 ? 0 : lit.charCodeAt(2);
      if (lit.length === 2)
        for (let x = 0; x < 32; x++) this.gate[(x << 10) | ((a & 31) << 5) | (b & 31)]! |= 2;
      else this.gate[((a & 31) << 10) | ((b & 31) << 5) | (c & 31)]! |= 1;
      const h = hash(a, b, c);
      this.next[i] = this.heads[h]!;
      this.heads[h] = i;
      this.fourth[h]! |= lit.length <= 3 ? 0xffffffff : 1 << (lit.charCodeAt(3) & 31);
    });
  }

  /**
   * Scans `text`; afterwards `has(i)` tells whether literal i occurs in it,
   * until the next scan. Returns the indexes found.
   */
  scan(text: string): number[] {
    if (this.stamp === 0xffffffff) {
      this.marks.fill(0);
      this.stamp = 0;
    }
    const stamp = ++this.stamp;
    const found: number[] = [];
    this.starts.length = 0;
    this.scanned = text;
    for (const { index, re } of this.single)
      if (re.test(text)) {
        this.marks[index] = stamp;
        found.push(index);
      }
    const { gate } = this;
    const bytes = latin1(text);
    const n = text.length;
    let k = 0;
    for (let at = 0; at < n; at++) {
      k = ((k << 5) | (bytes[at]! & 31)) & 0x7fff;
      const g = gate[k]!;
      if (g === 0) continue;
      if ((g & 2) !== 0 && at >= 1)
        this.look(text, bytes, hash(lower(bytes[at - 1]!), lower(bytes[at]!), 0), at - 1, stamp, found);
      if ((g & 1) !== 0 && at >= 2)
        this.look(
          text,
          bytes,
          hash(lower(bytes[at - 2]!), lower(bytes[at - 1]!), lower(bytes[at]!)),
          at - 2,
          stamp,
          found,
        );
    }
    return found;
  }

  /**
   * Marks and adds to `found` the literals of hash bucket `h` that `text` holds at `at`. A method,
   * not a closure made per scan (see DECISIONS.md, hot code makes no closure per call).
   */
  private look(text: string, bytes: Uint8Array, h: number, at: number, stamp: number, found: number[]): void {
    const { marks, heads, next, chars, offsets, positional } = this;
    const n = text.length;
    if (at + 3 < n && ((this.fourth[h]! >>> (bytes[at + 3]! & 31)) & 1) === 0) return;
    for (let i = heads[h]!; i !== -1; i = next[i]!) {
      const seen = marks[i] === stamp;
      if (seen && positional[i] === 0) continue;
      const from = offsets[i]!;
      const to = offsets[i + 1]!;
      if (at + to - from > n) continue;
      let k = from;
      while (k < to && lower(bytes[at + k - from]!) === chars[k]) k++;
      // Equal bytes; the text itself confirms (a character above U+00FF can share its low byte with a letter).
      if (k === to && startsAt(text, this.literals[i]!, at)) {
        if (positional[i] === 1) this.starts.push(at);
        if (seen) continue;
        marks[i] = stamp;
        found.push(i);
      }
    }
  }

  /**
   * Where the last scan found the positional literals: the start of each occurrence, ascending (a start
   * repeats when two of them begin there), valid until the next scan; undefined when the last scan was
   * not of `text`.
   */
  positions(text: string): readonly number[] | undefined {
    return text === this.scanned ? this.starts : undefined;
  }

  /** Whether the last scan found literal i. */
  has(i: number): boolean {
    return this.marks[i] === this.stamp;
  }
}
