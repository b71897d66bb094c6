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
  if (Array.isArray(doc.output))
    return doc.output
      .map((item) =>
        isRec(item) && item.type === "message" && Array.isArray(item.content)
          ? item.content.map((c) => (isRec(c) && c.type === "output_text" ? str(c.text) : "")).join("")
          : "",
      )
      .join("");
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
