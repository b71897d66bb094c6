/**
 * Internal protocol placeholders and refusal-only text are never durable
 * transcript content. Used by the validators (placeholder-only checkpoints)
 * and by the engine (unusable summaries).
 */

export const PLACEHOLDER_TEXTS: readonly string[] = [
  "no summary available",
  "no summary",
  "summary unavailable",
  "placeholder",
  "todo",
  "n/a",
  "none",
];

const REFUSAL_OPENINGS: readonly string[] = [
  "i'm sorry",
  "i am sorry",
  "sorry",
  "i can't",
  "i cannot",
  "i can not",
  "i'm unable",
  "i am unable",
  "as an ai",
];

/** Refusals longer than this are assumed to carry substance. */
export const REFUSAL_MAX_CHARS = 200;

/** Characters stripped from both ends before comparing (whitespace, `:` `.` `-` `—` brackets, quotes). */
const EDGE_CHARS = new Set([..." \t\n\r\f\v:.-—()[]\"'`“”‘’"]);

function isEdge(ch: string): boolean {
  return EDGE_CHARS.has(ch) || /\s/.test(ch);
}

/** Where `text` starts and ends once surrounding whitespace and punctuation are stripped. */
function edges(text: string): { start: number; end: number } {
  let start = 0;
  let end = text.length;
  while (start < end && isEdge(text[start]!)) start++;
  while (end > start && isEdge(text[end - 1]!)) end--;
  return { start, end };
}

/** Lower-cased, with surrounding whitespace and punctuation stripped (a linear scan from both ends). */
export function normalizeSummary(text: string): string {
  const { start, end } = edges(text);
  return text.slice(start, end).toLowerCase().replace(/’/g, "'");
}

export type PlaceholderKind = "empty" | "punctuation" | "placeholder" | "refusal";

/** Why a summary is placeholder-only, or undefined when it has substance. */
export function placeholderKind(text: string): PlaceholderKind | undefined {
  // A long text is neither (lower-casing never shortens a text): not lower-cased whole.
  const { start, end } = edges(text);
  if (end - start >= REFUSAL_MAX_CHARS) return undefined;
  if (text.trim().length === 0) return "empty";
  const n = normalizeSummary(text);
  if (n.length === 0) return "punctuation";
  if (PLACEHOLDER_TEXTS.includes(n)) return "placeholder";
  if (n.length < REFUSAL_MAX_CHARS && REFUSAL_OPENINGS.some((o) => n.startsWith(o))) return "refusal";
  return undefined;
}

/** True when the text has no letter or digit at all (e.g. `...`, `!!!`). */
export function isPunctuationOnly(text: string): boolean {
  return !/[\p{L}\p{N}]/u.test(text);
}
