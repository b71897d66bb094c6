/**
 * The fuzz suite's direct checks of a compaction, written from docs/SURVIVAL_CONTRACT.md
 * without calling either validator (src/contract/validate.ts or
 * contract/validate_survival_contract.mjs) and without src/contract's round
 * segmentation: the protected region is recomputed here by a simple,
 * independent reading of the rules (quadratic, fine for fuzz-sized inputs).
 *
 * Checks (each is a named class, so failures can be grouped):
 * - `protected-message`: every message of the protected region is in the
 *   replacement, in order, byte for byte (role and blocks; `usage`/`meta`
 *   provenance ignored), except tool results over 8 KiB, which are bounded;
 * - `bound`: such a result keeps a head (a prefix), the marker with the
 *   original size and a tail (a suffix), at most 8 KiB kept, no character
 *   split, `content_blocks` dropped, every other field unchanged (a result
 *   whose content is under the bound but whose content and nested blocks
 *   exceed it together may lose its nested blocks, the content kept whole);
 * - `instruction`: every plain user text of the current round is in a user
 *   message of the replacement;
 * - `one-checkpoint`: exactly one checkpoint on the summary path (the one the
 *   engine returned, with compact-safe's marker, restating the anchors); on
 *   prune-only, the original's checkpoint (if any) once and no new one;
 * - `invented-call`: every call in the replacement exists in the original
 *   with the same id, name and input (where stretches of an input may be
 *   secret-redaction markers: kept inputs outside the protected round are
 *   redacted; the protected round is checked byte for byte above); every
 *   result's id exists there too;
 * - `pairing`: every call is followed by its result (unless it has none in
 *   the original: in flight) and every result follows its call;
 * - `request-size`: the Anthropic and the OpenAI request bodies of the
 *   replacement are not larger than those of the original (in tokens, as the
 *   default estimator counts the body's JSON text: what the provider receives)
 *   (`export-crash` when a body cannot even be built and serialized).
 *
 * A user message planted by a mutator (its text carries PLANTED_TAG) is the
 * user's own text even when it opens with a checkpoint marker.
 */
import type { Block, Message } from "../../src/model/types.js";
import { toAnthropicRequest, toOpenAIRequest } from "../../src/formats/index.js";
import { fastEstimator } from "../../src/engine/tokens.js";
import { CONSTANTS } from "../../src/model/constants.js";
import { CHECKPOINT_MARKERS, PLANTED_TAG } from "./mutate.js";

const OWN_MARKER = "[compact-safe checkpoint]";
const BRANCH_MARKERS = [
  "[compact-safe branch summary]",
  "The following is a summary of a branch that this conversation came back from",
];
const LIMIT = 8192;
const MARKER_RE =
  /\n\[compact-safe: tool result truncated; original (\d+) bytes of UTF-8, kept head and tail\]\n/;

export interface CheckFailure {
  check: string;
  message: string;
}

export interface CompactionUnderTest {
  original: readonly Message[];
  replacement: readonly Message[];
  path: "summary" | "prune-only";
  /** The checkpoint the engine says it wrote (summary path). */
  checkpoint: Message | null;
  anchors: string;
}

type Rec = Record<string, unknown>;
const blocks = (m: Message): Block[] => (Array.isArray(m.content) ? m.content : []);
const isAssistant = (m: Message) => m.role === "assistant" || m.role === "assistant_interrupted";
const textOf = (b: Block): string | undefined =>
  b.type === "text" && typeof (b as Rec).text === "string" ? ((b as Rec).text as string) : undefined;
const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/**
 * `kept` equals `orig` except that some stretches of `orig` were replaced by
 * secret-redaction markers (`[REDACTED:kind]`, each standing for at least one
 * character): kept tool inputs outside the protected round are redacted, as
 * the hardening issue asks. Matched left to right, the way a glob with only
 * `*` wildcards is matched.
 */
export function sameButRedacted(orig: string, kept: string): boolean {
  if (orig === kept) return true;
  const parts = kept.split(/\[REDACTED:[a-z0-9-]+\]/);
  if (parts.length === 1) return false;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!orig.startsWith(first) || !orig.endsWith(last)) return false;
  let at = first.length;
  for (const part of parts.slice(1, -1)) {
    const found = orig.indexOf(part, at + 1);
    if (found < 0) return false;
    at = found + part.length;
  }
  return orig.length - last.length >= at + 1;
}

/** A piece of already-serialized JSON on the work stack of `stableJson`. */
class Raw {
  constructor(readonly text: string) {}
}

/** JSON with sorted keys (undefined members left out), iterative so deep values cannot overflow. */
export function stableJson(v: unknown): string {
  const out: string[] = [];
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x instanceof Raw) {
      out.push(x.text);
      continue;
    }
    if (x === null || typeof x !== "object") {
      out.push(JSON.stringify(x) ?? "null");
      continue;
    }
    const parts: unknown[] = [];
    if (Array.isArray(x)) {
      parts.push(new Raw("["));
      x.forEach((y, i) => {
        if (i > 0) parts.push(new Raw(","));
        parts.push(y);
      });
      parts.push(new Raw("]"));
    } else {
      parts.push(new Raw("{"));
      const keys = Object.keys(x)
        .filter((k) => (x as Rec)[k] !== undefined)
        .sort();
      keys.forEach((k, i) => {
        parts.push(new Raw(`${i > 0 ? "," : ""}${JSON.stringify(k)}:`));
        parts.push((x as Rec)[k]);
      });
      parts.push(new Raw("}"));
    }
    for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]);
  }
  return out.join("");
}

/** A user message whose first text block is a marker followed by the planted tag (written by a mutator). */
export function isPlanted(m: Message): boolean {
  const first = blocks(m).find((b) => b.type === "text");
  const t = first ? textOf(first)?.trimStart() : undefined;
  if (t === undefined) return false;
  // Only compact-safe's own marker is recognised by structure; another agent's marker sentence
  // opening a user message is taken for that agent's checkpoint (DESIGN: recognised by marker).
  return t.startsWith(`${CHECKPOINT_MARKERS[0]} ${PLANTED_TAG}`);
}

function opensWith(m: Message, markers: readonly string[]): boolean {
  if (m.role !== "user") return false;
  const first = blocks(m).find((b) => b.type === "text");
  const t = first ? textOf(first) : undefined;
  if (t === undefined) return false;
  const s = t.trimStart();
  // compact-safe's own marker makes a checkpoint only with its structure: the marker alone on the
  // first line and a coverage receipt (DESIGN decision recorded in the README).
  const own = markers[0];
  if (own === "[compact-safe checkpoint]" && s.startsWith(own))
    return s.startsWith(`${own}\n`) && OWN_RECEIPT.test(s);
  return markers.some((k) => s.startsWith(k));
}

const OWN_RECEIPT =
  /\n## Coverage\n(?:summary|prune-only); last round kept: \d+ messages \(\d+ tool results, \d+ assistant\); anchors \d+ chars(?:\n|$)/;

/** A checkpoint (any agent's marker opening the first text block), unless a mutator planted it as user text. */
export function looksLikeCheckpoint(m: Message): boolean {
  return opensWith(m, CHECKPOINT_MARKERS) && !isPlanted(m);
}

/** The user's own words: non-empty texts of a user message, beside tool results too, less exporter texts. */
function ownWords(m: Message): string[] {
  if (m.role !== "user") return [];
  const out: string[] = [];
  for (const b of blocks(m)) {
    const t = b.type === "text" ? textOf(b) : undefined;
    if (t !== undefined && t.trim() !== "" && !exporterText(t)) out.push(t);
  }
  return out;
}

function plainUser(m: Message): boolean {
  if (ownWords(m).length === 0) return false;
  return !looksLikeCheckpoint(m) && !opensWith(m, BRANCH_MARKERS);
}

/** The texts an exporter writes where a history has none (never the user's words; see the README). */
function exporterText(t: string): boolean {
  return (
    t === "[compact-safe: the conversation continues from here]" ||
    t.startsWith("[compact-safe: tool result for ")
  );
}

export interface Region {
  roundStart: number;
  start: number;
  instructions: number[];
}

/** The protected region of docs/SURVIVAL_CONTRACT.md ("The protected last round"), computed directly. */
export function protectedRegion(ms: readonly Message[]): Region {
  const exchanges: { at: number; results: number[] }[] = [];
  ms.forEach((m, i) => {
    if (!isAssistant(m)) return;
    const ids = blocks(m)
      .filter((b) => b.type === "tool_use")
      .map((b) => (b as Rec).id);
    if (ids.length === 0) return;
    const results = ids.map((id) => {
      for (let j = i + 1; j < ms.length; j++)
        if (blocks(ms[j]!).some((b) => b.type === "tool_result" && (b as Rec).tool_use_id === id)) return j;
      return -1;
    });
    exchanges.push({ at: i, results });
  });
  let latest = -1;
  ms.forEach((m, i) => {
    if (plainUser(m)) latest = i;
  });
  // A batch still in flight (no result, and no instruction or assistant message after it) is in no
  // request, so it does not count for the round.
  const tail = exchanges[exchanges.length - 1];
  const inFlight =
    tail !== undefined &&
    tail.results.every((r) => r < 0) &&
    !ms.slice(tail.at + 1).some((m) => (isAssistant(m) && blocks(m).length > 0) || plainUser(m));
  const counted = inFlight ? exchanges.slice(0, -1) : exchanges;
  let roundStart: number;
  const newest = counted[counted.length - 1];
  if (latest < 0) roundStart = 0;
  else if (!newest || newest.at > latest) roundStart = latest;
  else {
    roundStart = 0;
    for (let i = 0; i < newest.at; i++) if (plainUser(ms[i]!)) roundStart = i;
  }
  const complete = exchanges.filter((e) => e.results.every((r) => r >= 0));
  const recent = complete.slice(-CONSTANTS.protectedExchanges);
  const older = recent.length > 0 ? recent[0]!.at : undefined;
  const inRound = counted.filter((e) => e.at >= roundStart).length;
  let start =
    inRound <= CONSTANTS.protectedExchanges
      ? Math.min(roundStart, older ?? roundStart)
      : (older ?? roundStart);
  for (let changed = true; changed;) {
    changed = false;
    for (const e of exchanges) {
      if (e.at >= start) continue;
      if (e.results.some((r) => r < 0 || r >= start)) {
        start = e.at;
        changed = true;
      }
    }
  }
  const instructions: number[] = [];
  for (let i = Math.min(roundStart, start); i < ms.length; i++) if (plainUser(ms[i]!)) instructions.push(i);
  return { roundStart, start, instructions };
}

/** Why `rep` is not a correct 8 KiB bound of the result `orig`, or null when it is. */
export function boundProblem(orig: Rec, rep: Rec): string | null {
  const content = typeof orig.content === "string" ? orig.content : undefined;
  const otherKeys = new Set([...Object.keys(orig), ...Object.keys(rep)]);
  otherKeys.delete("content");
  otherKeys.delete("content_blocks");
  for (const k of otherKeys) {
    if (stableJson(orig[k]) !== stableJson(rep[k])) return `field ${k} changed or dropped`;
  }
  if (content === undefined || bytes(content) <= LIMIT) {
    if (stableJson(orig.content) !== stableJson(rep.content)) return "content altered";
    if (stableJson(orig.content_blocks) === stableJson(rep.content_blocks)) return null;
    // Nested blocks may go with a result whose content and nested blocks (as JSON) exceed 8 KiB together.
    const nested = Array.isArray(orig.content_blocks) && orig.content_blocks.length > 0;
    const together =
      (content === undefined ? 0 : bytes(content)) +
      (nested ? bytes(JSON.stringify(orig.content_blocks)) : 0);
    const dropped =
      rep.content_blocks === undefined ||
      (Array.isArray(rep.content_blocks) && rep.content_blocks.length === 0);
    if (dropped && together > LIMIT) return null;
    return "content_blocks altered";
  }
  const got = rep.content;
  if (got === content) return `result of ${bytes(content)} bytes kept whole (not bounded to 8 KiB)`;
  if (typeof got !== "string") return "content is not a string";
  const m = MARKER_RE.exec(got);
  if (!m) return "content altered (no truncation marker)";
  if (Number(m[1]) !== bytes(content)) return `marker gives ${m[1]} bytes, original has ${bytes(content)}`;
  const head = got.slice(0, m.index);
  const tail = got.slice(m.index + m[0].length);
  if (!content.startsWith(head)) return "head is not a prefix of the original";
  if (!content.endsWith(tail)) return "tail is not a suffix of the original";
  if (bytes(head) + bytes(tail) > LIMIT) return `kept ${bytes(head) + bytes(tail)} bytes (> 8 KiB)`;
  const h = head.charCodeAt(head.length - 1);
  const t = tail.charCodeAt(0);
  if (head.length > 0 && h >= 0xd800 && h <= 0xdbff) return "head ends inside a surrogate pair";
  if (tail.length > 0 && t >= 0xdc00 && t <= 0xdfff) return "tail starts inside a surrogate pair";
  if (rep.content_blocks !== undefined) return "content_blocks kept on a bounded result";
  return null;
}

/** Why replacement message `r` is not the protected message `o` (bounds allowed), or null. */
function messageProblem(o: Message, r: Message): string | null {
  if (o.role !== r.role) return `role ${r.role} instead of ${o.role}`;
  const ob = blocks(o);
  const rb = blocks(r);
  if (ob.length !== rb.length) return `${rb.length} blocks instead of ${ob.length}`;
  for (let k = 0; k < ob.length; k++) {
    const a = ob[k] as Rec;
    const b = rb[k] as Rec;
    if (a.type === "tool_result" && b.type === "tool_result") {
      const p = boundProblem(a, b);
      if (p) return `block ${k} (tool_result ${String(a.tool_use_id)}): ${p}`;
    } else if (stableJson(a) !== stableJson(b)) return `block ${k} (${String(a.type)}) altered`;
  }
  return null;
}

/** Same role, block types and ids: the replacement message that stands for `o`, if it is there at all. */
function sameShape(o: Message, r: Message): boolean {
  if (o.role !== r.role) return false;
  const ob = blocks(o);
  const rb = blocks(r);
  if (ob.length !== rb.length) return false;
  return ob.every((a, k) => {
    const b = rb[k] as Rec;
    const x = a as Rec;
    return x.type === b.type && x.id === b.id && x.tool_use_id === b.tool_use_id;
  });
}

/** Whether a message carries a call or result id (so a same-shape copy is surely its counterpart). */
function hasIds(m: Message): boolean {
  return blocks(m).some((b) => b.type === "tool_use" || b.type === "tool_result");
}

function describe(m: Message): string {
  const b = blocks(m)[0] as Rec | undefined;
  const what = !b
    ? "empty"
    : b.type === "text"
      ? JSON.stringify(String(b.text).slice(0, 40))
      : `${String(b.type)} ${String(b.id ?? b.tool_use_id ?? "")}`;
  return `${m.role} ${what}`;
}

function checkpointCount(ms: readonly Message[]): number {
  return ms.filter(looksLikeCheckpoint).length;
}

/** Size of the Anthropic and OpenAI request bodies: bytes of JSON, and tokens as the default estimator counts that text. */
export function requestSize(
  ms: readonly Message[],
): Record<"anthropic" | "openai", { bytes: number; tokens: number }> {
  const size = (body: unknown) => {
    const json = JSON.stringify(body);
    return { bytes: bytes(json), tokens: fastEstimator.text(json) };
  };
  return { anthropic: size(toAnthropicRequest(ms)), openai: size(toOpenAIRequest(ms)) };
}

/** Runs every direct check; an empty list when the compaction passes them all. */
export function directChecks(c: CompactionUnderTest): CheckFailure[] {
  const out: CheckFailure[] = [];
  const fail = (check: string, message: string) => out.push({ check, message });
  const { original, replacement } = c;
  const region = protectedRegion(original);

  // protected-message and bound: in order, after the checkpoint on the summary path.
  let from = 0;
  if (c.path === "summary") {
    const at = replacement.findIndex(looksLikeCheckpoint);
    if (at >= 0) from = at + 1;
  }
  for (let i = region.start; i < original.length; i++) {
    const o = original[i]!;
    if (c.path === "summary" && looksLikeCheckpoint(o)) continue; // folded into the new checkpoint
    // An exact (or correctly bounded) copy, in order.
    let j = from;
    while (j < replacement.length && messageProblem(o, replacement[j]!) !== null) j++;
    if (j < replacement.length) {
      from = j + 1;
      continue;
    }
    // Not there: name what differs in the copy that stands for it (same role, block types and ids), if any.
    const k = replacement.findIndex((r, x) => x >= from && sameShape(o, r) && hasIds(o));
    if (k < 0) {
      fail(
        "protected-message",
        `protected message ${i} (${describe(o)}) missing or altered in the replacement`,
      );
      continue;
    }
    const p = messageProblem(o, replacement[k]!)!;
    fail(
      /: (result of \d+ bytes kept whole|marker gives|head |tail |kept \d+ bytes|content_blocks kept)/.test(p)
        ? "bound"
        : "protected-message",
      `protected message ${i} (${describe(o)}): ${p}`,
    );
    from = k + 1;
  }

  // instruction
  const userTexts = new Set<string>();
  for (const m of replacement)
    if (m.role === "user") for (const b of blocks(m)) if (textOf(b) !== undefined) userTexts.add(textOf(b)!);
  for (const i of region.instructions) {
    for (const t of ownWords(original[i]!)) {
      if (!userTexts.has(t))
        fail("instruction", `current instruction (message ${i}) ${JSON.stringify(t.slice(0, 40))} missing`);
    }
  }

  // one-checkpoint
  const n = checkpointCount(replacement);
  if (c.path === "summary") {
    if (n !== 1)
      fail("one-checkpoint", `${n} checkpoints in the replacement (summary path needs exactly one)`);
    const cp = replacement.find(looksLikeCheckpoint);
    if (cp && !opensWith(cp, [OWN_MARKER]))
      fail("one-checkpoint", "the checkpoint does not open with compact-safe's marker");
    if (cp && c.checkpoint && stableJson(cp) !== stableJson(c.checkpoint))
      fail("one-checkpoint", "the checkpoint in the replacement is not the one the engine returned");
    const anchors = c.anchors.trim();
    if (cp && anchors !== "" && !blocks(cp).some((b) => textOf(b)?.includes(anchors)))
      fail("one-checkpoint", "the checkpoint does not restate the anchors verbatim");
  } else {
    const before = checkpointCount(original);
    const want = before > 0 ? 1 : 0;
    if (n !== want) fail("one-checkpoint", `${n} checkpoints after prune-only (the original had ${before})`);
  }

  // invented-call
  const calls = new Map<string, Rec[]>();
  const resultIds = new Set<unknown>();
  for (const m of original)
    for (const b of blocks(m)) {
      const r = b as Rec;
      if (b.type === "tool_use") calls.set(String(r.id), [...(calls.get(String(r.id)) ?? []), r]);
      if (b.type === "tool_result") resultIds.add(r.tool_use_id);
    }
  for (const m of replacement)
    for (const b of blocks(m)) {
      const r = b as Rec;
      if (b.type === "tool_use") {
        const same = calls.get(String(r.id));
        if (!same) fail("invented-call", `call ${JSON.stringify(r.id)} is not in the original`);
        else if (
          !same.some((x) => x.name === r.name && sameButRedacted(stableJson(x.input), stableJson(r.input)))
        )
          fail(
            "invented-call",
            `call ${JSON.stringify(r.id)} has another name or input than in the original`,
          );
      } else if (b.type === "tool_result" && !resultIds.has(r.tool_use_id))
        fail("invented-call", `result for ${JSON.stringify(r.tool_use_id)} is not in the original`);
    }

  // pairing (a result whose call is not before it in the original either may stay so: a cut transcript)
  const orphansBefore = new Set<unknown>();
  const callsBefore = new Set<unknown>();
  for (const m of original) {
    for (const b of blocks(m))
      if (b.type === "tool_result" && !callsBefore.has((b as Rec).tool_use_id))
        orphansBefore.add((b as Rec).tool_use_id);
    for (const b of blocks(m)) if (b.type === "tool_use") callsBefore.add((b as Rec).id);
  }
  const seenCalls = new Set<unknown>();
  replacement.forEach((m, i) => {
    for (const b of blocks(m)) {
      const r = b as Rec;
      if (b.type === "tool_result" && !seenCalls.has(r.tool_use_id) && !orphansBefore.has(r.tool_use_id))
        fail("pairing", `result for ${JSON.stringify(r.tool_use_id)} (message ${i}) has no call before it`);
    }
    for (const b of blocks(m)) if (b.type === "tool_use") seenCalls.add((b as Rec).id);
  });
  replacement.forEach((m, i) => {
    for (const b of blocks(m)) {
      if (b.type !== "tool_use") continue;
      const id = (b as Rec).id;
      const answered = replacement
        .slice(i + 1)
        .some((x) => blocks(x).some((y) => y.type === "tool_result" && (y as Rec).tool_use_id === id));
      if (!answered && resultIds.has(id))
        fail("pairing", `call ${JSON.stringify(id)} (message ${i}) is not followed by its result`);
    }
  });

  // request-size: judged in estimated tokens of the body (bytes shown too).
  let before: ReturnType<typeof requestSize>;
  let after: ReturnType<typeof requestSize>;
  try {
    before = requestSize(original);
    after = requestSize(replacement);
  } catch (e) {
    fail("export-crash", `exporting the request failed: ${String(e).split("\n")[0]!.slice(0, 200)}`);
    return out;
  }
  for (const [name, key] of [
    ["Anthropic", "anthropic"],
    ["OpenAI", "openai"],
  ] as const) {
    const a = before[key];
    const b = after[key];
    if (b.tokens > a.tokens)
      fail(
        "request-size",
        `${name} request grew: ${a.tokens} → ${b.tokens} estimated tokens (${a.bytes} → ${b.bytes} bytes)`,
      );
  }
  return out;
}
