/**
 * Internal protocol placeholders, content-free summaries (labels and
 * joining words only: `isContentFree`) and refusal-only text are never
 * durable transcript content. Used by the validators (placeholder-only checkpoints)
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

/**
 * The words a summary can be written with and still say nothing: labels
 * (summary, conversation, handoff, checkpoint, notes, …), the words that
 * join them (the, of, this, so far, here is, …) and the placeholders
 * (none, n/a, TBD, unavailable, …). A summary whose every word is one of
 * these ("Summary of the conversation.", "## Handoff notes\n\n(none)")
 * is a placeholder, whatever its length; one word outside the list (a file,
 * a verb, a name, a number) makes it a summary. The dependency-free
 * validator (contract/validate_survival_contract.mjs) holds the same list.
 */
export const CONTENT_FREE_WORDS: ReadonlySet<string> = new Set([
  ...["summary", "summaries", "summarized", "summarised", "summarization", "recap", "overview", "synopsis"],
  ...["conversation", "conversations", "chat", "session", "sessions", "thread", "discussion", "dialogue"],
  ...["dialog", "history", "transcript", "context", "exchange", "messages", "message"],
  ...["handoff", "hand", "off", "checkpoint", "checkpoints", "compaction", "compacted", "note", "notes"],
  ...["the", "a", "an", "of", "this", "that", "these", "those", "and", "or", "so", "far", "to", "date"],
  ...["for", "in", "on", "at", "up", "until", "now", "here", "s", "is", "are", "was", "were", "be", "it"],
  ...["its", "our", "my", "your", "below", "above", "follows", "following", "previous", "prior", "earlier"],
  ...["placeholder", "todo", "tbd", "tba", "n", "none", "no", "not", "available", "unavailable", "empty"],
  ...[
    "content",
    "contents",
    "text",
    "yet",
    "nothing",
    "brief",
    "short",
    "quick",
    "general",
    "full",
    "ran",
    "out",
  ],
]);

/** The words of `text` (runs of letters and digits), read until one is not content-free: whether none is. */
export function isContentFree(text: string): boolean {
  const word = /[\p{L}\p{N}]+/gu;
  let any = false;
  for (let m = word.exec(text); m !== null; m = word.exec(text)) {
    if (!CONTENT_FREE_WORDS.has(m[0].toLowerCase())) return false;
    any = true;
  }
  return any;
}

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
  // A long text is a placeholder only when no word of it has substance (read up to the first that has).
  const { start, end } = edges(text);
  if (end - start >= REFUSAL_MAX_CHARS) return isContentFree(text) ? "placeholder" : undefined;
  if (text.trim().length === 0) return "empty";
  const n = normalizeSummary(text);
  if (n.length === 0) return "punctuation";
  if (PLACEHOLDER_TEXTS.includes(n) || isContentFree(n)) return "placeholder";
  if (n.length < REFUSAL_MAX_CHARS && REFUSAL_OPENINGS.some((o) => n.startsWith(o))) return "refusal";
  return undefined;
}

/** True when the text has no letter or digit at all (e.g. `...`, `!!!`). */
export function isPunctuationOnly(text: string): boolean {
  return !/[\p{L}\p{N}]/u.test(text);
}
