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

const EDGE_PUNCT = /^[\s:.\-—()[\]"'`“”‘’]+|[\s:.\-—()[\]"'`“”‘’]+$/g;

/** Lower-cased, trimmed, with surrounding punctuation stripped. */
export function normalizeSummary(text: string): string {
  return text.toLowerCase().replace(/’/g, "'").replace(EDGE_PUNCT, "");
}

export type PlaceholderKind = "empty" | "punctuation" | "placeholder" | "refusal";

/** Why a summary is placeholder-only, or undefined when it has substance. */
export function placeholderKind(text: string): PlaceholderKind | undefined {
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
