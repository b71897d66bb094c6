/**
 * Which of a fixed set of literals a text holds, found in one pass: the
 * pre-check of secret redaction (the gitleaks rules' keywords and the hand
 * rules' hints, all lower-case, looked up in the lower-cased text).
 *
 * A literal of three characters or more is found by its first three: one
 * pass over the text hashes every run of three characters into a table of
 * the literals that start so, and compares those literals there. Literals of
 * one or two characters are plain substring searches (`includes`), which stop
 * at the first hit. Measured on 9,000 texts that compactions of the corpus
 * redact (3 MB): 1.2–1.5× faster than one regular expression alternating
 * all the literals (tried at every position), and it finds the same set.
 */

const TABLE_BITS = 16;

function hash3(a: number, b: number, c: number): number {
  return Math.imul((a << 16) ^ (b << 8) ^ c, 0x9e3779b1) >>> (32 - TABLE_BITS);
}

export class LiteralSet {
  readonly literals: readonly string[];
  /** Indexes of the literals of one or two characters. */
  private readonly short: number[] = [];
  /** Per hash of a literal's first three characters, the indexes of the literals that start so. */
  private readonly table: (number[] | undefined)[] = new Array(1 << TABLE_BITS).fill(undefined);
  /** Per literal, the scan that last found it (`stamp`): no set is built per scan. */
  private readonly marks: Uint32Array;
  private stamp = 0;

  constructor(literals: readonly string[]) {
    this.literals = [...literals];
    this.marks = new Uint32Array(this.literals.length);
    this.literals.forEach((lit, i) => {
      if (lit.length === 0) throw new Error("LiteralSet: an empty literal");
      if (lit.length < 3) this.short.push(i);
      else (this.table[hash3(lit.charCodeAt(0), lit.charCodeAt(1), lit.charCodeAt(2))] ??= []).push(i);
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
    const { literals, marks, table } = this;
    for (const i of this.short)
      if (text.includes(literals[i]!)) {
        marks[i] = stamp;
        found.push(i);
      }
    const n = text.length - 2;
    let a = text.charCodeAt(0);
    let b = text.charCodeAt(1);
    for (let at = 0; at < n; at++) {
      const c = text.charCodeAt(at + 2);
      const list = table[hash3(a, b, c)];
      if (list !== undefined)
        for (const i of list)
          if (marks[i] !== stamp && text.startsWith(literals[i]!, at)) {
            marks[i] = stamp;
            found.push(i);
          }
      a = b;
      b = c;
    }
    return found;
  }

  /** Whether the last scan found literal i. */
  has(i: number): boolean {
    return this.marks[i] === this.stamp;
  }
}
