/**
 * Writing within a character budget: a list kept by priority, exact quotes
 * of user messages (heads first, then the newest in full), a fenced quote,
 * free text by its head and tail, and the cut markers that say what was left
 * out. Each function writes at most `budget` characters.
 */
import { redactSecrets } from "../../redact/redact.js";
import { fenceFor } from "./quote.js";
import { recallHint } from "../../model/refs.js";
import { clipWords, cutMarker, headTailWhole, shortened, wholeHead, wholeTail } from "./whole.js";

/** Every plain user message keeps at least this head before any message gets more. */
const USER_HEAD_CHARS = 200;

export { cutMarker };

/** A text cut to `budget` at a line, sentence or word end (`shortened`), never inside a word. */
export function fitted(text: string, budget: number): string {
  if (text.length <= budget) return text;
  const kept = shortened(text.replace(/\n$/, ""), Math.max(0, budget - 1));
  return kept === "" ? "" : `${kept}\n`;
}

/** A free text bounded to `budget`, keeping its head and tail on line boundaries around a cut marker. */
export function headTail(text: string, budget: number, headShare = 0.5): string {
  if (text.length + 1 <= budget) return `${text}\n`;
  const out = headTailWhole(text, Math.max(0, budget - 1), headShare);
  return out === "" ? "" : `${out}\n`;
}

/** Free text (not a quote) made safe to embed: `#` header lines are demoted so they never open a section. */
export function demoteHeaders(s: string): string {
  return s.indexOf("#") === -1 ? s : s.replace(/^(#{1,2}) /gm, "### ");
}

/** A one-line window redacted, then cut to `max` (a secret across the cut is seen whole first). */
export function redactedCut(window: string, max: number): string {
  return clipWords(redactSecrets(window), max);
}

/** A fenced exact quote of a text, bounded (head kept, cut marked). */
export function quoteBounded(text: string, budget: number): string {
  const fence = fenceFor(text);
  const overhead = 2 * fence.length + 3;
  if (text.length + overhead <= budget) return `${fence}\n${text}\n${fence}\n`;
  const marker = cutMarker(text.length).length + 1;
  const keep = Math.max(0, budget - overhead - marker);
  const head = wholeHead(text, keep, Math.floor(keep * 0.8));
  if (head === "") return fitted(cutMarker(text.length) + "\n", budget);
  return `${fence}\n${head}\n${cutMarker(text.length - head.length)}\n${fence}\n`;
}

/**
 * A list item: its text as measured, and how to write it when it is kept
 * (redacted then: only the few items a section keeps pay for redaction).
 */
export interface Item {
  text: string;
  /** Display order (ascending). */
  rank: number;
  render?: () => string;
}

/**
 * A list rendered within `budget` characters: items are chosen by priority
 * (the order given, most important first), skipping those that do not fit,
 * and printed in `rank` order; a marker counts the ones cut.
 */
export function renderList(
  items: Item[],
  budget: number,
  what: string,
  /** Items left out before the list was built (counted in the cut marker). */
  omitted = 0,
): string {
  const marker = (n: number) => `- [… ${n} more ${what} cut]\n`;
  // Line lengths are computed, not built: only the lines that are kept become strings.
  let total = omitted > 0 ? marker(omitted).length : 0;
  for (const it of items) total += it.text.length + 3;
  if (total <= budget) {
    return (
      items
        .slice()
        .sort((a, b) => a.rank - b.rank)
        .map((it) => `- ${it.render ? it.render() : it.text}\n`)
        .join("") + (omitted > 0 ? marker(omitted) : "")
    );
  }
  let room = budget - marker(items.length).length;
  const chosen: { line: string; rank: number }[] = [];
  for (let i = 0; i < items.length && room > 3; i++) {
    const item = items[i]!;
    let line: string;
    if (item.text.length + 3 > room) {
      // The first (most important) item may be clipped rather than dropped, so the section keeps something.
      if (chosen.length > 0 || room < 24) continue;
      const kept = shortened(item.render ? item.render() : item.text, room - 3);
      if (kept === "") continue;
      line = `- ${kept}\n`;
    } else line = `- ${item.render ? item.render() : item.text}\n`;
    chosen.push({ line, rank: item.rank });
    room -= line.length;
  }
  chosen.sort((a, b) => a.rank - b.rank);
  const cut = items.length - chosen.length + omitted;
  return chosen.map((c) => c.line).join("") + (cut > 0 ? marker(cut) : "");
}

/** A quote under its label; a cut one cites beside its cut marker the ref that gives the whole message back. */
function renderQuote(label: string, text: string, keep: number, fence: string, recall = ""): string {
  const body = keep >= text.length ? text : quotedCut(text, keep, recall);
  return `${label}\n${fence}\n${body}\n${fence}\n`;
}

/**
 * `keep` characters of a long text: its head alone while that is all the room
 * there is (the first 200 characters say what the message is), then head and
 * tail (a log or paste ends with what matters: the error, the last lines),
 * around a marker that gives the size of the cut.
 */
function quotedCut(text: string, keep: number, recall: string): string {
  if (keep <= USER_HEAD_CHARS + 100) {
    const h = wholeHead(text, keep, Math.floor(keep * 0.8));
    return `${h}\n${cutMarker(text.length - h.length)}${recall}`;
  }
  const want = USER_HEAD_CHARS + Math.floor((keep - USER_HEAD_CHARS) * 0.6);
  const h = wholeHead(text, want, Math.floor(want * 0.8));
  const tail = wholeTail(text, keep - h.length);
  return `${h}\n${cutMarker(text.length - h.length - tail.length)}${recall}\n${tail}`;
}

/** The ref a quote of an earlier note cites (a message it cut), so a later cut cites it again. */
const citedRef = (text: string) => /\(recall (msg:[0-9a-f]{12})\)/.exec(text)?.[1];

/** The length of a cut quote's recall hint for a `msg:` ref (` (recall msg:` and 12 hex digits `)`). */
const MSG_RECALL_LENGTH = ` (${recallHint(`msg:${"0".repeat(12)}`)})`.length;

/** How a list of quotes names its items. */
export interface QuoteWords {
  label: string;
  earlierLabel: string;
  plural: string;
  empty: string;
}

const USER_WORDS: QuoteWords = {
  label: "User message",
  earlierLabel: "Earlier user message",
  plural: "user messages",
  empty: "(no plain user message in the summarized span)",
};

/**
 * Plain user messages, newest first, quoted exactly inside fences. Every
 * message first gets its head (200 characters); what budget is left then
 * extends the newest messages to their full text. Cut quotes end with a
 * `[… cut N chars]` marker, and messages that do not fit at all are counted.
 * `earlier` are the quotes of folded checkpoints, already newest first.
 */
export function renderUserDirection(
  current: string[],
  earlier: string[],
  budget: number,
  words: QuoteWords = USER_WORDS,
  refs?: ReadonlyMap<string, () => string>,
): string {
  type Q = {
    label: string;
    text: string;
    fence: string;
    keep: number;
    chosen: boolean;
    /** The recall hint a cut quote ends with, and its length (known before the ref is hashed). */
    recall: () => string;
    recallLength: number;
  };
  const recallOf = (text: string): Pick<Q, "recall" | "recallLength"> => {
    const ref = refs?.get(text);
    if (ref !== undefined)
      return { recall: () => ` (${recallHint(ref())})`, recallLength: MSG_RECALL_LENGTH };
    const cited = citedRef(text);
    const recall = cited !== undefined ? ` (${recallHint(cited)})` : "";
    return { recall: () => recall, recallLength: recall.length };
  };
  const qs: Q[] = [];
  const n = current.length;
  for (let i = n - 1; i >= 0; i--) {
    const text = current[i];
    qs.push({
      label: `${words.label} ${i + 1}/${n}:`,
      text,
      fence: fenceFor(text),
      keep: 0,
      chosen: false,
      ...recallOf(text),
    });
  }
  for (const text of earlier) {
    // Already newest first, as the earlier note wrote them.
    qs.push({
      label: `${words.earlierLabel}:`,
      text,
      fence: fenceFor(text),
      keep: 0,
      chosen: false,
      ...recallOf(text),
    });
  }
  if (qs.length === 0) return `${words.empty}\n`;
  const overhead = (q: Q) => q.label.length + 2 * q.fence.length + 4;
  const cost = (q: Q, keep: number) =>
    overhead(q) +
    Math.min(keep, q.text.length) +
    (keep >= q.text.length ? 0 : cutMarker(q.text.length).length + 2 + q.recallLength);
  let full = 0;
  for (const q of qs) full += cost(q, q.text.length);
  if (full <= budget) return qs.map((q) => renderQuote(q.label, q.text, q.text.length, q.fence)).join("");

  const omitted = (k: number) => `[… ${k} older ${words.plural} cut]\n`;
  let room = budget - omitted(qs.length).length;
  // Phase 1: heads, newest first.
  for (const q of qs) {
    const keep = Math.min(USER_HEAD_CHARS, q.text.length);
    const c = cost(q, keep);
    if (c <= room) {
      q.keep = keep;
      q.chosen = true;
      room -= c;
    }
  }
  if (!qs.some((q) => q.chosen) && qs.length > 0) {
    // Not even one head fits: keep as much of the newest message as there is room for.
    const q = qs[0];
    const keep = Math.max(0, room - overhead(q) - cutMarker(q.text.length).length - 1);
    if (keep > 0) {
      q.keep = keep;
      q.chosen = true;
      room -= cost(q, keep);
    }
  }
  // Phase 2: extend the newest messages.
  for (const q of qs) {
    if (!q.chosen || q.keep >= q.text.length || room <= 0) continue;
    const before = cost(q, q.keep);
    if (cost(q, q.text.length) - before <= room) {
      room -= cost(q, q.text.length) - before;
      q.keep = q.text.length;
    } else {
      const keep = q.keep + room;
      const after = cost(q, keep);
      if (after - before <= room) {
        room -= after - before;
        q.keep = keep;
      }
    }
  }
  const chosen = qs.filter((q) => q.chosen);
  const cut = qs.length - chosen.length;
  return (
    chosen
      .map((q) => renderQuote(q.label, q.text, q.keep, q.fence, q.keep >= q.text.length ? "" : q.recall()))
      .join("") + (cut > 0 ? omitted(cut) : "")
  );
}
