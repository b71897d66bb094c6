/**
 * Shortening text without fragments: a text that does not fit its budget is
 * cut at a line end, else at a sentence end, else at a word end (then marked
 * with `…`), never in the middle of a word. A long quoted text keeps its head
 * and its tail on line boundaries around a marker that gives its size. Pure.
 */
/** The marker that stands for `n` characters left out of a quoted text. */
export function cutMarker(n: number): string {
  return `[… cut ${n} chars]`;
}

/** A letter, digit or other character that continues a word (a cut beside one would split it). */
const WORD = /[\p{L}\p{N}_]/u;

function isWordChar(ch: string | undefined): boolean {
  return ch !== undefined && WORD.test(ch);
}

/** Whether a cut of `s` at `i` falls inside a word (a word character on both sides). */
export function splitsWord(s: string, i: number): boolean {
  return i > 0 && i < s.length && isWordChar(s[i - 1]) && isWordChar(s[i]);
}

/** The start of the lone surrogate at `i`, else `i` (a cut never halves a pair). */
function pairSafe(s: string, i: number): number {
  if (i > 0 && i < s.length) {
    const c = s.charCodeAt(i - 1);
    if (c >= 0xd800 && c <= 0xdbff) return i - 1;
  }
  return i;
}

/**
 * The longest head of `s` of at most `max` characters that ends at a line end,
 * else a sentence end (`.`, `!`, `?` or `:` before white space), else a word end.
 * `min` is the shortest line or sentence head preferred over a word cut
 * (default a third of `max`). Empty when not even one word fits.
 */
export function wholeHead(s: string, max: number, min = Math.floor(max / 3)): string {
  if (s.length <= max) return s;
  if (max <= 0) return "";
  const window = s.slice(0, max + 1);
  const nl = window.lastIndexOf("\n", max);
  if (nl >= Math.max(1, min)) return s.slice(0, nl).replace(/\s+$/, "");
  for (let i = max; i >= Math.max(1, min); i--) {
    const ch = window[i - 1];
    if ((ch === "." || ch === "!" || ch === "?" || ch === ":" || ch === ";") && /\s/.test(window[i] ?? " "))
      return s.slice(0, i);
  }
  let end = pairSafe(s, max);
  while (end > 0 && splitsWord(s, end)) end--;
  // One "word" longer than the room (a hash, a run of one character): cut where it must be.
  if (end === 0) return s.slice(0, pairSafe(s, max));
  return s.slice(0, end).replace(/\s+$/, "");
}

/** The longest tail of `s` of at most `max` characters that starts at a line start, else a word start. */
export function wholeTail(s: string, max: number): string {
  if (s.length <= max) return s;
  if (max <= 0) return "";
  const from = s.length - max;
  const nl = s.indexOf("\n", from - 1);
  if (nl !== -1 && nl + 1 < s.length && s.length - (nl + 1) >= Math.floor(max / 3)) return s.slice(nl + 1);
  let start = from;
  const c = s.charCodeAt(start);
  if (c >= 0xdc00 && c <= 0xdfff) start++;
  while (start < s.length && splitsWord(s, start)) start++;
  if (start === s.length) return s.slice(c >= 0xdc00 && c <= 0xdfff ? from + 1 : from);
  return s.slice(start).replace(/^\s+/, "");
}

/**
 * `s` within `max` characters as whole lines, sentences or words: whole when
 * it fits, else its head at a line, sentence or word end followed by `…`
 * (`mark`, when the cut is not at a line or sentence end). Never ends inside
 * a word; empty when not even one word fits.
 */
export function shortened(s: string, max: number): string {
  if (s.length <= max) return s;
  const head = wholeHead(s, Math.max(0, max - 1));
  if (head === "") return "";
  return /[.!?:;]$/.test(head) || s[head.length] === "\n" ? head : `${head}…`;
}

/**
 * A long text by its head and its tail on line boundaries (word boundaries
 * when a line is longer than the room), around a marker that gives the size
 * of what was cut. Within `budget` characters (the marker's line included);
 * the whole text when it fits.
 */
export function headTailWhole(text: string, budget: number, headShare = 0.6): string {
  if (text.length <= budget) return text;
  const markerRoom = cutMarker(text.length).length + 2;
  const room = Math.max(0, budget - markerRoom);
  const want = Math.floor(room * headShare);
  const head = wholeHead(text, want, Math.floor(want * 0.8));
  const tail = wholeTail(text, room - head.length);
  const cut = text.length - head.length - tail.length;
  return [head, cutMarker(cut), tail].filter((p) => p !== "").join("\n");
}

/**
 * `s` on one line cut to `max` at a word end with `…` (`shortened`); a single
 * word longer than `max` (a long hash or token) is cut with `…` where it must.
 */
export function clipWords(s: string, max: number): string {
  if (s.length <= max) return s;
  const kept = shortened(s, max);
  if (kept !== "") return kept;
  if (max <= 1) return max === 1 ? "…" : "";
  return `${s.slice(0, pairSafe(s, max - 1))}…`;
}
