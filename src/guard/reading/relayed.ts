/**
 * The summary an upstream answered to an agent's own summarization request,
 * as the guard relayed it (or answered it itself): the answer's text read
 * back from its bytes (one JSON object, or server-sent events: Anthropic
 * Messages, OpenAI Responses, Chat Completions chunks), the part of it the
 * agent keeps as its summary, and a fingerprint of that part by which a
 * later request's summary is recognised as this answer (see `proofs.ts`).
 */
import { createHash } from "node:crypto";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import type { Message } from "../../model/types.js";
import { isProviderCompaction } from "../../model/provider-compaction.js";
import { allText } from "../../contract/classify.js";
import { responseOutputText } from "../../wire/responses.js";

/** The most of an answer the server keeps to read its text (a longer answer is not read). */
export const RELAYED_MAX_BYTES = 1024 * 1024;

/** A summary shorter than this (normalized) proves nothing: it could be found in any summary. */
const MIN_SUMMARY_CHARS = 24;

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** The text of one answer object: an Anthropic Message, a Responses Response, or a chat.completion. */
function textOfObject(doc: Rec): string {
  if (Array.isArray(doc.content))
    return doc.content.map((b) => (isRec(b) && b.type === "text" ? str(b.text) : "")).join("");
  if (Array.isArray(doc.output)) return responseOutputText(doc.output);
  if (Array.isArray(doc.choices)) {
    const c = doc.choices[0];
    if (isRec(c) && isRec(c.message)) return str(c.message.content);
  }
  return "";
}

/** The text of a stream of server-sent events: the text deltas in order, else the completed answer's text. */
function textOfEvents(text: string): string {
  let deltas = "";
  let completed = "";
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "" || data === "[DONE]") continue;
    let ev: unknown;
    try {
      ev = JSON.parse(data);
    } catch {
      continue;
    }
    if (!isRec(ev)) continue;
    if (ev.type === "content_block_delta" && isRec(ev.delta) && ev.delta.type === "text_delta")
      deltas += str(ev.delta.text);
    else if (ev.type === "response.output_text.delta") deltas += str(ev.delta);
    else if (ev.type === "response.completed" && isRec(ev.response)) completed = textOfObject(ev.response);
    else if (ev.object === "chat.completion.chunk" && Array.isArray(ev.choices)) {
      const c = ev.choices[0];
      if (isRec(c) && isRec(c.delta)) deltas += str(c.delta.content);
    }
  }
  return deltas !== "" ? deltas : completed;
}

/**
 * What tells a provider's compaction (an Anthropic `compaction` block, a
 * Responses `compaction` item) from any other: its readable summary, else its
 * encrypted content; "" when it has neither.
 */
export function compactionIdentity(raw: Rec): string {
  const content = str(raw.content);
  return content !== "" ? content : str(raw.encrypted_content);
}

/** The provider's compaction in one answer object (an Anthropic Message's block, a Response's item), or "". */
function compactionOfObject(doc: Rec): string {
  const list = Array.isArray(doc.content) ? doc.content : Array.isArray(doc.output) ? doc.output : [];
  for (const b of list) if (isRec(b) && b.type === "compaction") return compactionIdentity(b);
  return "";
}

/**
 * The provider's compaction in a stream of server-sent events: a Responses
 * `compaction` output item (done, or in the completed response), an
 * Anthropic `compaction` block (its start, then `compaction_delta`, which
 * carries the block's final value).
 */
function compactionOfEvents(text: string): string {
  let found = "";
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith("data:") || !line.includes("compaction")) continue;
    let ev: unknown;
    try {
      ev = JSON.parse(line.slice(5).trim());
    } catch {
      continue;
    }
    if (!isRec(ev)) continue;
    if (ev.type === "response.output_item.done" && isRec(ev.item) && ev.item.type === "compaction")
      found = compactionIdentity(ev.item) || found;
    else if (ev.type === "response.completed" && isRec(ev.response))
      found = compactionOfObject(ev.response) || found;
    else if (
      ev.type === "content_block_start" &&
      isRec(ev.content_block) &&
      ev.content_block.type === "compaction"
    )
      found = compactionIdentity(ev.content_block) || found;
    else if (ev.type === "content_block_delta" && isRec(ev.delta) && ev.delta.type === "compaction_delta")
      found = compactionIdentity(ev.delta) || found;
  }
  return found;
}

/**
 * The summary an answer to a summarization request holds: the provider's
 * compaction when it answered with one (Codex's remote compaction, Anthropic's
 * on-demand compaction: its readable summary, else its encrypted content),
 * else the model's text (`answerText`).
 */
export function relayedSummary(body: Buffer, contentEncoding?: string): string {
  let text: string;
  try {
    text = decoded(body, contentEncoding).toString("utf8");
  } catch {
    return "";
  }
  const start = text.trimStart();
  let compaction = "";
  if (start.startsWith("{")) {
    try {
      const doc = JSON.parse(start) as unknown;
      if (isRec(doc)) compaction = compactionOfObject(doc);
    } catch {
      return "";
    }
  } else compaction = compactionOfEvents(text);
  return compaction !== "" ? compaction : answerText(body, contentEncoding);
}

/**
 * The text by which a summary a request carries is matched with a relayed
 * one: the message's texts, then each provider compaction's identity (its
 * readable summary, else its encrypted content).
 */
export function summaryTextOf(m: Message): string {
  const ids = m.content.flatMap((b) => {
    if (!isProviderCompaction(b)) return [];
    const id = compactionIdentity(b.native);
    return id === "" ? [] : [id];
  });
  return ids.length === 0 ? allText(m) : [allText(m), ...ids].join("\n");
}

function decoded(body: Buffer, encoding: string | undefined): Buffer {
  switch ((encoding ?? "").trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return gunzipSync(body, { maxOutputLength: 8 * RELAYED_MAX_BYTES });
    case "br":
      return brotliDecompressSync(body, { maxOutputLength: 8 * RELAYED_MAX_BYTES });
    case "deflate":
      return inflateSync(body, { maxOutputLength: 8 * RELAYED_MAX_BYTES });
    default:
      return body;
  }
}

/**
 * The model's text in an answer's bytes (JSON or server-sent events, on any
 * of the three wires; gzip, br or deflate undone), or "" when none is found.
 */
export function answerText(body: Buffer, contentEncoding?: string): string {
  let text: string;
  try {
    text = decoded(body, contentEncoding).toString("utf8");
  } catch {
    return "";
  }
  const start = text.trimStart();
  if (start.startsWith("{")) {
    try {
      const doc = JSON.parse(start) as unknown;
      return isRec(doc) ? textOfObject(doc) : "";
    } catch {
      return "";
    }
  }
  return textOfEvents(text);
}

/** Whitespace runs as one space, trimmed: agents re-flow the summary's blank lines when they keep it. */
export const normalized = (s: string): string => s.replace(/\s+/g, " ").trim();

/**
 * The part of an answer an agent keeps as its summary, normalized: Claude
 * Code drops the `<analysis>` block and keeps what is inside `<summary>`
 * (re-flowed); Codex and pi keep the answer whole (Codex after its prefix,
 * pi inside its own tags, with its file lists after it).
 */
export function summaryCore(answer: string): string {
  let t = answer.replace(/<analysis>[\s\S]*?<\/analysis>/, "");
  const inner = /<summary>([\s\S]*?)<\/summary>/.exec(t);
  if (inner) t = inner[1]!;
  return normalized(t);
}

/** A summary's fingerprint: its length, a rolling hash to find it inside a text, and a digest to confirm it. */
export interface Fingerprint {
  n: number;
  roll: number;
  sha: string;
}

const BASE = 257;
const digest = (s: string): string => createHash("sha256").update(s).digest("hex").slice(0, 32);

function rollOf(s: string, from: number, n: number): number {
  let h = 0;
  for (let i = from; i < from + n; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) >>> 0;
  return h;
}

/** The fingerprint of an answer's summary, or undefined when it is too short to prove anything. */
export function fingerprintOf(answer: string): Fingerprint | undefined {
  const core = summaryCore(answer);
  if (core.length < MIN_SUMMARY_CHARS) return undefined;
  return { n: core.length, roll: rollOf(core, 0, core.length), sha: digest(core) };
}

/**
 * Which of `fps` occur in `text` (normalized here): for each length, one
 * pass of a rolling hash over the text, each hit confirmed by its digest.
 */
export function foundIn(text: string, fps: readonly Fingerprint[]): Set<Fingerprint> {
  const t = normalized(text);
  const found = new Set<Fingerprint>();
  const byLength = new Map<number, Fingerprint[]>();
  for (const f of fps) if (f.n <= t.length) byLength.set(f.n, [...(byLength.get(f.n) ?? []), f]);
  for (const [n, list] of byLength) {
    // BASE^(n-1) mod 2^32: what the character leaving the window weighed.
    let top = 1;
    for (let i = 1; i < n; i++) top = Math.imul(top, BASE) >>> 0;
    let h = rollOf(t, 0, n);
    for (let at = 0; ; at++) {
      for (const f of list)
        if (f.roll === h && !found.has(f) && digest(t.slice(at, at + n)) === f.sha) found.add(f);
      if (at + n >= t.length) break;
      h = (h - Math.imul(t.charCodeAt(at), top)) >>> 0;
      h = (Math.imul(h, BASE) + t.charCodeAt(at + n)) >>> 0;
    }
  }
  return found;
}
