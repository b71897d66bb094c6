/**
 * A byte-level look at a request body, without decoding it: where the
 * history list (`messages` or `input`) and each of its elements sit. This is
 * what lets the guard tell, from bytes alone, that a request only extends
 * the session's last one (see `fastExtension` in `core.ts`). Strings are
 * skipped with `indexOf` (a raw `"` inside a JSON string is always escaped),
 * so a scan costs little more than a pass over the structure.
 */

const QUOTE = 0x22;
const BSL = 0x5c;
const isWs = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function ws(b: Buffer, i: number): number {
  while (i < b.length && isWs(b[i])) i++;
  return i;
}

/** The index after the string opening at `i`, or -1. */
function skipString(b: Buffer, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = b.indexOf(QUOTE, j);
    if (q < 0) return -1;
    let k = q - 1;
    let n = 0;
    while (k > i && b[k] === BSL) {
      n++;
      k--;
    }
    if (n % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** The index after the JSON value starting at `i` (no whitespace before it), or -1. */
export function skipValue(b: Buffer, i: number): number {
  const c = b[i];
  if (c === undefined) return -1;
  if (c === QUOTE) return skipString(b, i);
  if (c !== 0x7b && c !== 0x5b) {
    // a number, true, false, null: up to the next delimiter
    let j = i;
    while (j < b.length) {
      const d = b[j]!;
      if (d === 0x2c || d === 0x7d || d === 0x5d || isWs(d)) break;
      j++;
    }
    return j > i ? j : -1;
  }
  let depth = 0;
  let j = i;
  while (j < b.length) {
    const d = b[j]!;
    if (d === QUOTE) {
      j = skipString(b, j);
      if (j < 0) return -1;
      continue;
    }
    if (d === 0x7b || d === 0x5b) depth++;
    else if (d === 0x7d || d === 0x5d) {
      depth--;
      if (depth === 0) return j + 1;
    }
    j++;
  }
  return -1;
}

export interface ListLayout {
  /** Offset of the list's `[`. */
  start: number;
  /** Offset of the list's `]`. */
  end: number;
  /** Each element's [start, end) offsets. */
  elements: [number, number][];
}

/** Where the top-level `key` list and its elements are in a JSON object body; undefined when it is not there. */
export function listLayout(b: Buffer, key: string): ListLayout | undefined {
  let i = ws(b, 0);
  if (b[i] !== 0x7b) return undefined;
  i = ws(b, i + 1);
  let found: ListLayout | undefined;
  let seen = false;
  while (i < b.length && b[i] !== 0x7d) {
    if (b[i] !== QUOTE) return undefined;
    const ke = skipString(b, i);
    if (ke < 0) return undefined;
    // A key with an escape could spell `key` as JSON.parse reads it: not read here.
    if (b.subarray(i + 1, ke - 1).includes(BSL)) return undefined;
    const name = b.toString("utf8", i + 1, ke - 1);
    i = ws(b, ke);
    if (b[i] !== 0x3a) return undefined;
    i = ws(b, i + 1);
    const vs = i;
    const ve = skipValue(b, vs);
    if (ve < 0) return undefined;
    if (name === key) {
      // Twice: JSON.parse keeps the last one; the bytes are not that plain.
      if (seen) return undefined;
      seen = true;
      found = b[vs] === 0x5b ? elementsOf(b, vs) : undefined;
    }
    i = ws(b, ve);
    if (b[i] === 0x2c) i = ws(b, i + 1);
  }
  return found;
}

function elementsOf(b: Buffer, start: number): ListLayout | undefined {
  const elements: [number, number][] = [];
  let j = ws(b, start + 1);
  if (b[j] === 0x5d) return { start, end: j, elements };
  for (;;) {
    const e = skipValue(b, j);
    if (e < 0) return undefined;
    elements.push([j, e]);
    j = ws(b, e);
    if (b[j] === 0x2c) {
      j = ws(b, j + 1);
      continue;
    }
    if (b[j] === 0x5d) return { start, end: j, elements };
    return undefined;
  }
}

/**
 * `count` list elements from offset `from` (an element's start, or the
 * `,` / `]` after the last one when `count` is 0): their offsets, and the
 * list delimiter after them (`,` or `]`) and its offset (`end`); undefined when that is not what
 * the bytes hold.
 */
export function elementsFrom(
  b: Buffer,
  from: number,
  count: number,
): { elements: [number, number][]; next: number; end: number } | undefined {
  const elements: [number, number][] = [];
  let j = ws(b, from);
  for (let k = 0; k < count; k++) {
    const e = skipValue(b, j);
    if (e < 0) return undefined;
    elements.push([j, e]);
    j = ws(b, e);
    if (k < count - 1) {
      if (b[j] !== 0x2c) return undefined;
      j = ws(b, j + 1);
    }
  }
  const next = b[j];
  if (next !== 0x2c && next !== 0x5d) return undefined;
  return { elements, next, end: j };
}

/** Whether an element's bytes hold a `"cache_control"` key (a raw `"` is never inside a string, so this is a key). */
export function hasCacheMarker(b: Buffer, start: number, end: number): boolean {
  return b.subarray(start, end).indexOf('"cache_control"', 0, "latin1") >= 0;
}

/** The offset of the list's `]`, from the `,` or `]` after one of its elements; -1 when the bytes do not show it. */
export function listEndFrom(b: Buffer, at: number): number {
  let j = ws(b, at);
  while (b[j] === 0x2c) {
    const e = skipValue(b, ws(b, j + 1));
    if (e < 0) return -1;
    j = ws(b, e);
  }
  return b[j] === 0x5d ? j : -1;
}

/**
 * The elements after one of a list's elements, from the `,` or `]` after it
 * (`at`): their offsets and the offset of the list's `]`; undefined when the
 * bytes do not show them plainly.
 */
export function restFrom(b: Buffer, at: number): { elements: [number, number][]; end: number } | undefined {
  const elements: [number, number][] = [];
  let j = ws(b, at);
  while (b[j] === 0x2c) {
    const s = ws(b, j + 1);
    const e = skipValue(b, s);
    if (e < 0) return undefined;
    elements.push([s, e]);
    j = ws(b, e);
  }
  return b[j] === 0x5d ? { elements, end: j } : undefined;
}
