/**
 * What the recall server's tools answer, as plain data (the MCP wiring is in
 * `server.ts`): `recall` gives back an original by its ref, `search_history`
 * finds messages of the saved history, `history_outline` lists the
 * compactions with their verdicts. Every answer is redacted as everything
 * compact-safe shows, and bounded to the 8 KiB rule (`CONSTANTS.resultBoundBytes`,
 * all its texts together) with an `offset` to page on.
 *
 * Redacted before any cut, never after: an original is redacted whole, then
 * paged; a call's input in a head line, a search hit's text, a query or ref
 * echoed in an answer are redacted whole, then cut; a verdict's quotation
 * of a lost text is taken again from that text redacted whole
 * (`redactQuotedLine`). A secret a cut split would no longer match its rule.
 */
import type { CompactionEntry, Message } from "../model/types.js";
import { CONSTANTS } from "../model/constants.js";
import { isText, isToolResult, isToolUse } from "../model/blocks.js";
import { compactionRef, messageRef, parseRecallRef, toolRef } from "../model/refs.js";
import { headWindow, redactSecrets, redactValue, safeHead } from "../redact/redact.js";
import { redactQuotedLine } from "../redact/quoted.js";
import { utf8Length } from "../contract/bounds.js";
import { activePath, projectPath } from "../journal/tree.js";
import { auditCompaction, NOT_JUDGEABLE } from "../route/audit.js";
import type { HistoryIndex } from "./history.js";

/** A tool's answer: its texts (each one content item), and whether it is an error. */
export interface ToolAnswer {
  texts: string[];
  isError: boolean;
}

/** The most bytes of UTF-8 one answer holds, all its texts together. */
export const ANSWER_BOUND_BYTES = CONSTANTS.resultBoundBytes;
/** Room an answer keeps for its head and paging lines. */
const FRAME_BYTES = 512;
/** Characters of a search hit quoted around its match. */
const SNIPPET_CHARS = 240;
/** Characters of a call's input in a head line, and of a query or ref echoed in an answer. */
const CALL_CHARS = 300;
export const ECHO_CHARS = 200;
/** Characters past a cut read when redacting before it (a secret across the cut is replaced whole). */
const REDACT_MARGIN = 4096;

/** The first `max` characters of `text` redacted (read on past the cut, so that a secret across it goes whole), `…` when cut. */
function redactedCut(text: string, max: number): string {
  const window = headWindow(text, max, REDACT_MARGIN);
  const r = redactSecrets(window);
  return r.length > max || window.length < text.length ? `${safeHead(r, max)}…` : r;
}

/** A text the caller gave (a query, a ref), as an answer echoes it: redacted, then cut to ECHO_CHARS, quoted. */
export function echo(text: string): string {
  return JSON.stringify(redactedCut(text, ECHO_CHARS));
}

export const errorAnswer = (text: string): ToolAnswer => ({ texts: [text], isError: true });

/** The longest head of `s` from `from` of at most `bytes` bytes of UTF-8, never cutting a surrogate pair. */
export function pageOf(s: string, from: number, bytes: number): string {
  let n = Math.min(s.length - from, bytes);
  let page = s.slice(from, from + n);
  while (n > 0 && utf8Length(page) > bytes) {
    n = Math.floor((n * bytes) / utf8Length(page)) - 1;
    page = s.slice(from, from + Math.max(0, n));
  }
  const last = page.charCodeAt(page.length - 1);
  if (page.length > 0 && from + page.length < s.length && last >= 0xd800 && last <= 0xdbff)
    page = page.slice(0, -1);
  return page;
}

/**
 * A long text in pages: the head line, the page exactly as the text has it
 * (its own content item, so that pages joined give the text back byte for
 * byte), and a line naming the next offset when there is more.
 */
function paged(head: string, text: string, offset: number, tool: string, args: string): ToolAnswer {
  if (offset > text.length)
    return errorAnswer(`offset ${offset} is past the end (${text.length} characters in all)`);
  // The head and the paging line's arguments come out of the page's room: the answer stays in its bound.
  const room = ANSWER_BOUND_BYTES - FRAME_BYTES - utf8Length(head) - utf8Length(args);
  const page = pageOf(text, offset, Math.max(1, room));
  const end = offset + page.length;
  const where =
    offset === 0 && end === text.length
      ? `${text.length} characters`
      : `characters ${offset}–${end} of ${text.length}`;
  const texts = [`${head} (${where}):`, page];
  if (end < text.length)
    texts.push(`[… ${text.length - end} more characters: call ${tool} with ${args} and offset ${end}]`);
  return { texts, isError: false };
}

const REF_FORMS = "tool:ID (a tool result), msg:HASH (a message) or compaction:ID (a summarized span)";

/** `recall(ref, offset)`: the original the ref names, redacted, from `offset` (characters). */
export function recall(ix: HistoryIndex, refText: string, offset = 0): ToolAnswer {
  const ref = parseRecallRef(refText);
  if (ref === undefined) return errorAnswer(`not a recall ref: ${echo(refText)} (expected ${REF_FORMS})`);
  const args = `ref ${JSON.stringify(refText.trim())}`;
  if (ref.kind === "tool") {
    const t = ix.tools.get(ref.id);
    if (t === undefined)
      return errorAnswer(
        `no tool result for call ${echo(ref.id)} in this session's history (${ix.tools.size} tool results saved); search_history finds refs`,
      );
    const call = t.call === undefined ? "a call not in the history" : callLine(t.call);
    const head = `${toolRef(ref.id)}: the original ${t.isError ? "error " : ""}result of ${call}`;
    return paged(head, redactSecrets(t.content), offset, "recall", args);
  }
  if (ref.kind === "msg") {
    const m = ix.messages.get(`msg:${ref.hash}`);
    if (m === undefined)
      return errorAnswer(
        `no message with ref msg:${ref.hash} in this session's history; search_history finds refs`,
      );
    return paged(
      `msg:${ref.hash}: the ${m.message.role} message`,
      redactSecrets(m.text),
      offset,
      "recall",
      args,
    );
  }
  const c = ix.compactions.find((e) => e.id === ref.id);
  if (c === undefined)
    return errorAnswer(
      `no compaction ${echo(ref.id)} in this session (${ix.compactions.length} recorded); history_outline lists them`,
    );
  const before = replacedContext(ix, c);
  const head = `${compactionRef(c.id)}: the ${before.length} messages of the live context it replaced`;
  return paged(head, redactSecrets(renderMessages(before)), offset, "recall", args);
}

/** The live context just before a compaction. */
function replacedContext(ix: HistoryIndex, c: CompactionEntry): Message[] {
  return c.parent_id ? projectPath(activePath(ix.entries, c.parent_id)) : [];
}

/** A call as a head line names it: its name and input, the input redacted (each value, then the JSON) before the cut. */
function callLine(call: { name: string; input: unknown }): string {
  return `${redactedCut(call.name, ECHO_CHARS)} ${redactedCut(JSON.stringify(redactValue(call.input)) ?? "null", CALL_CHARS)}`;
}

/** Messages as text: each opens with its place, role and ref; calls and results name their refs. */
export function renderMessages(messages: readonly Message[]): string {
  const out: string[] = [];
  messages.forEach((m, i) => {
    const text = m.content.some(isText) ? ` (${messageRef(m)})` : "";
    out.push(`--- message ${i + 1}: ${m.role}${text} ---`);
    for (const b of m.content) {
      if (isText(b)) out.push(b.text);
      else if (isToolUse(b)) out.push(`[tool call ${b.id}] ${b.name} ${JSON.stringify(b.input) ?? "null"}`);
      else if (isToolResult(b))
        out.push(
          `[tool result, ${toolRef(b.tool_use_id)}${b.is_error === true ? ", error" : ""}]\n${b.content}`,
        );
      else out.push(`[${b.type} block]`);
    }
  });
  return out.join("\n");
}

/** Words of a query, lowercase (a quoted phrase is one word). */
function queryWords(query: string): string[] {
  const words: string[] = [];
  for (const m of query.toLowerCase().matchAll(/"([^"]+)"|(\S+)/g)) words.push((m[1] ?? m[2])!);
  return words;
}

/** The part of a (redacted) text around `at` that a search hit quotes, on one line. */
function snippet(text: string, at: number): string {
  const from = Math.max(0, at - SNIPPET_CHARS / 3);
  const raw = text.slice(from, from + SNIPPET_CHARS);
  const one = raw.replace(/\s+/g, " ").trim();
  return `${from > 0 ? "…" : ""}${one}${from + SNIPPET_CHARS < text.length ? "…" : ""}`;
}

/**
 * A search hit's snippet: its text redacted whole, then cut around the query's
 * first word (where the redacted text has it; its start when the word was
 * part of a secret).
 */
function hitSnippet(text: string, word: string): string {
  const redacted = redactSecrets(text);
  return snippet(redacted, Math.max(0, redacted.toLowerCase().indexOf(word)));
}

/**
 * `search_history(query, limit, offset)`: the items of the saved history
 * holding every word of the query (case ignored), newest first, each with its
 * ref; `offset` skips that many matches.
 */
export function searchHistory(ix: HistoryIndex, query: string, limit = 10, offset = 0): ToolAnswer {
  const words = queryWords(query);
  if (words.length === 0) return errorAnswer("empty query: give one or more words to find");
  const quoted = echo(query);
  // The head echoes the query: its room comes out of the hits'.
  const room = ANSWER_BOUND_BYTES - FRAME_BYTES - utf8Length(quoted);
  const lines: string[] = [];
  let bytes = 0;
  let matched = 0;
  let next: number | undefined;
  for (let i = ix.items.length - 1; i >= 0; i--) {
    const it = ix.items[i]!;
    const lower = it.text.toLowerCase();
    if (!words.every((w) => lower.includes(w))) continue;
    matched++;
    if (matched <= offset) continue;
    if (lines.length >= limit) {
      next = offset + lines.length;
      break;
    }
    const where = ix.live.has(it.ref) ? "still in the live context" : "compacted away";
    const line = `- ${it.ref} (${it.role}, message ${it.position + 1}, ${where}): ${hitSnippet(it.text, words[0]!)}`;
    if (bytes + utf8Length(line) + 1 > room) {
      next = offset + lines.length;
      break;
    }
    lines.push(line);
    bytes += utf8Length(line) + 1;
  }
  if (lines.length === 0)
    return {
      texts: [offset > 0 ? `no more matches for ${quoted}` : `no match for ${quoted} in the saved history`],
      isError: false,
    };
  const head = `${lines.length} match${lines.length === 1 ? "" : "es"} for ${quoted}, newest first${offset > 0 ? ` (after ${offset})` : ""}; recall a ref for its whole text:`;
  const more = next !== undefined ? [`[more: call search_history with offset ${next}]`] : [];
  return { texts: [[head, ...lines, ...more].join("\n")], isError: false };
}

/** What a compaction summarized or stubbed: the results and user messages it no longer carries word for word. */
function summarized(
  ix: HistoryIndex,
  c: CompactionEntry,
): { results: string[]; messages: number; users: number } {
  const before = replacedContext(ix, c);
  const keptResults = new Set<string>();
  const keptTexts = new Set<string>();
  for (const m of c.payload.replacement)
    for (const b of m.content) {
      if (isToolResult(b)) keptResults.add(`${b.tool_use_id}\u0000${b.content}`);
      else if (isText(b)) keptTexts.add(b.text);
    }
  const results: string[] = [];
  let users = 0;
  for (const m of before) {
    for (const b of m.content)
      if (isToolResult(b) && !keptResults.has(`${b.tool_use_id}\u0000${b.content}`)) {
        const call = ix.tools.get(b.tool_use_id)?.call;
        results.push(`${toolRef(b.tool_use_id)}${call ? ` (${call.name})` : ""}`);
      }
    if (m.role === "user" && m.content.some((b) => isText(b) && !keptTexts.has(b.text))) users++;
  }
  return { results, messages: before.length, users };
}

/** One compaction in the outline, redacted (its verdict's quotation taken again from the lost text redacted whole). */
function outlineBlock(ix: HistoryIndex, c: CompactionEntry, n: number): string {
  const a = auditCompaction(ix.entries, c);
  const sources = [...a.losses.user_texts, ...a.losses.assistant_texts];
  const s = summarized(ix, c);
  const verdict = !a.judgeable
    ? NOT_JUDGEABLE
    : a.kept
      ? "kept the survival contract"
      : `VIOLATION: ${a.reason}`;
  const shown = s.results.slice(0, 12);
  return redactQuotedLine(
    [
      `${n}. ${compactionRef(c.id)} (${a.source}, ${a.path}, ${c.created_at}): ${a.messages_before} → ${a.messages_after} messages; ${verdict}`,
      `   summarized or pruned: ${s.users} user message${s.users === 1 ? "" : "s"}, ${s.results.length} tool result${s.results.length === 1 ? "" : "s"} not kept word for word${shown.length > 0 ? `: ${shown.join(", ")}${s.results.length > shown.length ? ", …" : ""}` : ""}`,
    ].join("\n"),
    sources,
  );
}

/** `history_outline(offset)`: the compactions, oldest first, with their verdicts and what each summarized. */
export function historyOutline(ix: HistoryIndex, offset = 0): ToolAnswer {
  const n = ix.compactions.length;
  const messages = ix.entries.filter((e) => e.kind !== "header" && e.kind !== "compaction").length;
  if (n === 0)
    return {
      texts: [
        `no compaction recorded in this session (${messages} entries); search_history and recall still read it`,
      ],
      isError: false,
    };
  if (offset >= n) return errorAnswer(`offset ${offset} is past the last compaction (${n} recorded)`);
  const blocks: string[] = [];
  let bytes = 0;
  let next: number | undefined;
  for (let i = offset; i < n; i++) {
    const b = outlineBlock(ix, ix.compactions[i]!, i + 1);
    if (blocks.length > 0 && bytes + utf8Length(b) + 1 > ANSWER_BOUND_BYTES - FRAME_BYTES) {
      next = i;
      break;
    }
    blocks.push(b);
    bytes += utf8Length(b) + 1;
  }
  const head = `${n} compaction${n === 1 ? "" : "s"} recorded (${messages} entries in the history); recall compaction:ID gives the live context one replaced, recall tool:ID a result:`;
  const more = next !== undefined ? [`[more: call history_outline with offset ${next}]`] : [];
  return { texts: [[head, ...blocks, ...more].join("\n")], isError: false };
}
