#!/usr/bin/env node
// Independent, dependency-free implementation of the compaction survival
// contract validators (schema version 2), and a runner for fixture matrices.
//
//   node contract/validate_survival_contract.mjs [MATRIX ...]
//
// Prints `DISAGREE <file> <case id>: ...` for every case whose verdict (or
// `last_round_start`) differs from the matrix, then `ok N survival-contract
// fixtures`. Exit 0 when every case agrees, 1 otherwise, 2 when a matrix
// cannot be read (missing file, not JSON, wrong shape, malformed message).
//
// This file deliberately shares no code with src/contract: it is the second
// implementation that the TypeScript validators must agree with.

import { readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

// Keep in sync with src/contract/markers.ts.
export const CHECKPOINT_MARKERS = [
  "[compact-safe checkpoint]",
  "Another language model started to solve this problem",
  "Conversation Summary (Auto-Generated)",
  "This session is being continued from a previous conversation",
  "The conversation history before this point was compacted into the following summary",
];
export const BRANCH_SUMMARY_MARKERS = [
  "[compact-safe branch summary]",
  "The following is a summary of a branch that this conversation came back from",
];

/**
 * The contract's numbers (schema version 2). A matrix may carry them in its header
 * (`"constants": {"protected_exchanges": 2, "result_bound_bytes": 8192}`); these are the
 * contract's own values, used when it does not. The validator reads them from the matrix, never
 * from the library's code, so it stays an independent check.
 */
export const CONTRACT_CONSTANTS = Object.freeze({ protected_exchanges: 2, result_bound_bytes: 8192 });
const KNOWN_TYPES = new Set([
  "text",
  "thinking",
  "redacted_thinking",
  "tool_use",
  "tool_result",
  "image_url",
]);
const ROLES = new Set(["user", "assistant", "system", "assistant_interrupted"]);
const PLACEHOLDERS = new Set([
  "no summary available",
  "no summary",
  "summary unavailable",
  "placeholder",
  "todo",
  "n/a",
  "none",
]);
// A summary whose every word is one of these says nothing (a label and the words that join it, or a placeholder):
// the same list as CONTENT_FREE_WORDS in src/contract/placeholder.ts.
const CONTENT_FREE_WORDS = new Set([
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
function contentFree(s) {
  const words = s.match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.length > 0 && words.every((w) => CONTENT_FREE_WORDS.has(w.toLowerCase()));
}
const REFUSAL_PREFIXES = [
  "i'm sorry",
  "i am sorry",
  "sorry",
  "i can't",
  "i cannot",
  "i can not",
  "i'm unable",
  "i am unable",
  "as an ai",
].flatMap((p) => (p.includes("'") ? [p, p.replace("'", "\u2019")] : [p]));
// Characters stripped from both ends of a checkpoint's summary part.
const EDGE_CHARS = new Set([
  ":",
  ".",
  "-",
  "\u2014",
  "(",
  ")",
  "[",
  "]",
  '"',
  "'",
  "`",
  "\u201c",
  "\u201d",
  "\u2018",
  "\u2019",
]);

// ---------------------------------------------------------------- helpers

const blocksOf = (m) => (Array.isArray(m?.content) ? m.content : []);
const isAssistant = (m) => m.role === "assistant" || m.role === "assistant_interrupted";
const utf8Bytes = (s) => Buffer.byteLength(s, "utf8");
const ok = () => ({ valid: true, reason: null });
const fail = (reason) => ({ valid: false, reason });

/** A bounded, one-line quotation of user-supplied text for a reason. */
function quote(s, max = 40) {
  const flat = String(s).replace(/\s+/g, " ").trim();
  return JSON.stringify(flat.length > max ? flat.slice(0, max) + "\u2026" : flat);
}

function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
}

function textsOf(m) {
  return blocksOf(m)
    .filter((b) => b.type === "text" && typeof b.text === "string")
    .map((b) => b.text);
}

/** The marker that opens the first text block of a user message, or null. */
function openingMarker(m, markers) {
  if (m.role !== "user") return null;
  const first = blocksOf(m).find((b) => b.type === "text");
  if (!first || typeof first.text !== "string") return null;
  const t = first.text.trimStart();
  return markers.find((k) => t.startsWith(k)) ?? null;
}

// compact-safe's own marker makes a checkpoint only with the checkpoint's structure: the marker
// alone on the first line and a `## Coverage` section opening with a receipt.
const OWN_RECEIPT =
  /\n## Coverage\n(summary|prune-only); last round kept: \d+ messages \(\d+ tool results, \d+ assistant\); anchors \d+ chars(\n|$)/;

export function isCheckpoint(m) {
  const marker = openingMarker(m, CHECKPOINT_MARKERS);
  if (marker === null) return false;
  if (marker !== CHECKPOINT_MARKERS[0]) return true;
  const first = blocksOf(m)
    .find((b) => b.type === "text")
    .text.trimStart();
  return first.startsWith(marker + "\n") && OWN_RECEIPT.test(first);
}

// Texts compact-safe writes, never the user's instructions: the exporters' (where the history has
// none) and the guard's restatement after a compaction it repaired.
const EXPORTER_OPENER = "[compact-safe: the conversation continues from here]";
const EXPORTER_RESULT_PREFIX = "[compact-safe: tool result for ";
const GUARD_PREFIX = "[compact-safe guard] ";
const isExporterTextBlock = (t) =>
  t === EXPORTER_OPENER || t.startsWith(EXPORTER_RESULT_PREFIX) || t.startsWith(GUARD_PREFIX);

// A provider's own compaction (an Anthropic compaction block, a Responses compaction item), as the
// canonical block `provider_compaction`: the provider's summary of the history it replaced.
const PROVIDER_COMPACTION = "provider_compaction";
const isProviderSummary = (m) => blocksOf(m).some((b) => b.type === PROVIDER_COMPACTION);
const isGuardRestatement = (m) =>
  m.role === "user" &&
  blocksOf(m).length > 0 &&
  blocksOf(m).every(
    (b) => b.type === "text" && typeof b.text === "string" && b.text.startsWith(GUARD_PREFIX),
  );

/**
 * The checkpoints of a history as { message, texts }: each checkpoint message; and each provider
 * summary with no checkpoint message anywhere after it (one before a checkpoint message is the
 * start that checkpoint's compaction kept), whose texts are the summary it shows and the guard's
 * restatement when that is the message right after it.
 */
export function checkpointsIn(messages) {
  const lastTextual = messages.findLastIndex((m) => isCheckpoint(m));
  const out = [];
  messages.forEach((m, i) => {
    if (isCheckpoint(m)) out.push({ message: m, texts: textsOf(m), provider: false });
    else if (i > lastTextual && isProviderSummary(m)) {
      const shown = blocksOf(m)
        .filter((b) => b.type === PROVIDER_COMPACTION && typeof b.summary === "string" && b.summary !== "")
        .map((b) => b.summary);
      const next = messages[i + 1];
      const restated = next !== undefined && isGuardRestatement(next) ? textsOf(next) : [];
      out.push({ message: m, texts: [...shown, ...restated], provider: true });
    }
  });
  return out;
}

/** The user's own words: non-empty texts of a user message (beside tool results too), less exporter texts. */
function userWordsOf(m) {
  if (m.role !== "user") return [];
  return textsOf(m).filter((t) => t.trim() !== "" && !isExporterTextBlock(t));
}
export const isBranchSummary = (m) => openingMarker(m, BRANCH_SUMMARY_MARKERS) !== null;

export function isPlainUser(m) {
  if (userWordsOf(m).length === 0) return false;
  return !isCheckpoint(m) && !isBranchSummary(m);
}

// -------------------------------------------------- exchanges and rounds

/** Index of the first message after `from` holding a tool_result for `id`, or -1. */
function resultIndexAfter(messages, id, from) {
  for (let j = from + 1; j < messages.length; j++) {
    if (blocksOf(messages[j]).some((b) => b.type === "tool_result" && b.tool_use_id === id)) return j;
  }
  return -1;
}

/** Tool exchanges in order: { index, ids, complete, unresolved: string[] }. */
export function toolExchanges(messages) {
  const out = [];
  messages.forEach((m, i) => {
    if (!isAssistant(m)) return;
    const ids = blocksOf(m)
      .filter((b) => b.type === "tool_use")
      .map((b) => b.id);
    if (ids.length === 0) return;
    const unresolved = ids.filter((id) => resultIndexAfter(messages, id, i) < 0);
    out.push({ index: i, ids, complete: unresolved.length === 0, unresolved });
  });
  return out;
}

/**
 * The exchanges that count for the round: a batch of calls in flight at the very end (nothing
 * non-empty after it, no result) is in no provider request, so it is left out here.
 */
function countedExchanges(messages) {
  const exchanges = toolExchanges(messages);
  let last = messages.length - 1;
  while (last >= 0 && blocksOf(messages[last]).length === 0) last--;
  const tail = exchanges.at(-1);
  if (tail && tail.index === last && tail.unresolved.length === tail.ids.length)
    return exchanges.slice(0, -1);
  return exchanges;
}

export function currentRoundStart(messages) {
  let latest = -1;
  messages.forEach((m, i) => {
    if (isPlainUser(m)) latest = i;
  });
  if (latest < 0) return 0;
  const exchanges = countedExchanges(messages);
  if (exchanges.some((e) => e.index > latest)) return latest;
  if (exchanges.length === 0) return latest; // chat-only
  // Toolless tail: walk back to the user message that started the newest exchange.
  const newest = exchanges[exchanges.length - 1].index;
  let start = 0;
  for (let i = 0; i < newest; i++) if (isPlainUser(messages[i])) start = i;
  return start;
}

export function protectedStart(
  messages,
  roundStart = currentRoundStart(messages),
  constants = CONTRACT_CONSTANTS,
) {
  const kept = constants.protected_exchanges;
  const exchanges = toolExchanges(messages);
  const complete = exchanges.filter((e) => e.complete);
  const inRound = countedExchanges(messages).filter((e) => e.index >= roundStart).length;
  // The older of the two most recent complete exchanges; a lone complete exchange is protected too.
  const q = complete.length > 0 ? complete[Math.max(0, complete.length - kept)].index : undefined;
  // The rules leave a long round with fewer than two complete exchanges open; fall back to R.
  let p = inRound <= kept ? Math.min(roundStart, q ?? roundStart) : (q ?? roundStart);
  for (let changed = true; changed;) {
    changed = false;
    for (let j = p; j < messages.length && !changed; j++) {
      for (const b of blocksOf(messages[j])) {
        if (b.type !== "tool_result") continue;
        const c = exchanges.filter((e) => e.index < j && e.ids.includes(b.tool_use_id)).at(-1)?.index;
        if (c !== undefined && c < p) {
          p = c;
          changed = true;
          break;
        }
      }
    }
    const dangling = exchanges.find((e) => e.unresolved.length > 0 && e.index < p);
    if (dangling) {
      p = dangling.index;
      changed = true;
    }
  }
  return p;
}

// ------------------------------------------------------ bounded results

const truncationMarker = (n) =>
  `\n[compact-safe: tool result truncated; original ${n} bytes of UTF-8, kept head and tail]\n`;

/** Whether `replacement` is `original` or a correctly bounded head+tail copy of it. */
export function isBoundedCopy(original, replacement, limit = CONTRACT_CONSTANTS.result_bound_bytes) {
  if (replacement === original) return true;
  if (typeof original !== "string" || typeof replacement !== "string") return false;
  const n = utf8Bytes(original);
  if (n <= limit) return false;
  const marker = truncationMarker(n);
  for (let at = replacement.indexOf(marker); at >= 0; at = replacement.indexOf(marker, at + 1)) {
    const head = replacement.slice(0, at);
    const tail = replacement.slice(at + marker.length);
    if (utf8Bytes(head) + utf8Bytes(tail) > limit) continue;
    if (!original.startsWith(head) || !original.endsWith(tail)) continue;
    const last = head.charCodeAt(head.length - 1);
    const first = tail.charCodeAt(0);
    if (last >= 0xd800 && last <= 0xdbff) continue; // head ends inside a surrogate pair
    if (first >= 0xdc00 && first <= 0xdfff) continue; // tail starts inside a surrogate pair
    return true;
  }
  return false;
}

// -------------------------------------------------------------- coverage

/** UTF-8 size of a tool result's content plus its nested blocks (serialized). */
function resultBytes(r) {
  const nested = Array.isArray(r.content_blocks) && r.content_blocks.length > 0 ? r.content_blocks : null;
  return (
    utf8Bytes(typeof r.content === "string" ? r.content : "") +
    (nested ? utf8Bytes(JSON.stringify(nested)) : 0)
  );
}

/** Whether `r` keeps the protected result `b` under the contract (bounded content, same is_error, nested blocks). */
function keepsResult(b, r, limit) {
  if (!isBoundedCopy(b.content, r.content, limit)) return false;
  if ((b.is_error === true) !== (r.is_error === true)) return false;
  // Nested blocks stay as they are, or go with a result over the bound.
  const kept = Array.isArray(r.content_blocks) ? r.content_blocks : [];
  if (kept.length === 0 && resultBytes(b) > limit) return true;
  return deepEqual(Array.isArray(b.content_blocks) ? b.content_blocks : [], kept);
}

export function validateLastRoundCoverage(original, replacement, opts = {}) {
  const constants = opts.constants ?? CONTRACT_CONSTANTS;
  const roundStart = currentRoundStart(original);
  const p = protectedStart(original, roundStart, constants);
  // Every block of the replacement, each usable once: a protected item needs a copy of its own.
  const pool = replacement.flatMap((m) => blocksOf(m).map((b) => ({ m, b, used: false })));
  const take = (pred) => {
    const hit = pool.find((x) => !x.used && pred(x.b, x.m));
    if (!hit) return false;
    hit.used = true;
    return true;
  };
  const exists = (pred) => pool.some((x) => pred(x.b, x.m));
  const userText = (t) => (b, m) => m.role === "user" && b.type === "text" && b.text === t;

  // 1. The current user instructions, each plain user message on its own.
  const instruction = new Set();
  for (let i = Math.min(roundStart, p); i < original.length; i++) {
    if (!isPlainUser(original[i])) continue;
    instruction.add(i);
    for (const t of userWordsOf(original[i])) {
      if (!take(userText(t))) return fail(`last round: user text ${quote(t)} missing`);
    }
  }

  // 2-7. Every protected block of the region [p, end].
  for (let i = p; i < original.length; i++) {
    const msg = original[i];
    const summaryLike = isCheckpoint(msg) || isBranchSummary(msg);
    for (const b of blocksOf(msg)) {
      switch (b.type) {
        case "tool_use": {
          const same = (r) => r.type === "tool_use" && r.id === b.id;
          if (!exists(same)) return fail(`last round: tool call ${JSON.stringify(b.id)} missing`);
          const exact = (r) =>
            same(r) &&
            r.name === b.name &&
            deepEqual(r.input, b.input) &&
            r.thought_signature === b.thought_signature;
          if (!take(exact))
            return fail(
              `last round: tool call ${JSON.stringify(b.id)} altered (name, input or thought_signature)`,
            );
          break;
        }
        case "tool_result": {
          const same = (r) => r.type === "tool_result" && r.tool_use_id === b.tool_use_id;
          if (!exists(same)) return fail(`last round: tool result ${JSON.stringify(b.tool_use_id)} missing`);
          if (!take((r) => same(r) && keepsResult(b, r, constants.result_bound_bytes))) {
            return fail(
              `last round: tool result ${JSON.stringify(b.tool_use_id)} altered (content, is_error or content_blocks) or badly truncated`,
            );
          }
          break;
        }
        case "text": {
          if (typeof b.text !== "string" || b.text.trim() === "" || summaryLike || instruction.has(i)) break;
          if (isExporterTextBlock(b.text)) break;
          if (isAssistant(msg)) {
            if (!take((r, m) => isAssistant(m) && r.type === "text" && r.text === b.text))
              return fail(`last round: assistant text ${quote(b.text)} missing`);
          } else if (msg.role === "system") {
            if (!exists((r, m) => m.role === "system" && r.type === "text" && r.text === b.text))
              return fail(`last round: system text ${quote(b.text)} missing`);
          } else if (!take(userText(b.text))) {
            return fail(`last round: user text ${quote(b.text)} missing`);
          }
          break;
        }
        case "thinking":
          if (!isAssistant(msg)) break;
          if (
            !take(
              (r, m) =>
                isAssistant(m) &&
                r.type === "thinking" &&
                r.thinking === b.thinking &&
                r.signature === b.signature,
            )
          ) {
            return fail(`last round: thinking ${quote(b.thinking)} missing or altered`);
          }
          break;
        case "redacted_thinking":
          if (!isAssistant(msg)) break;
          if (!take((r, m) => isAssistant(m) && r.type === "redacted_thinking" && r.data === b.data)) {
            return fail(`last round: redacted thinking missing or altered`);
          }
          break;
        case "image_url":
          if (!take((r) => r.type === "image_url" && deepEqual(r.image_url, b.image_url))) {
            return fail(`last round: image ${quote(b.image_url.url, 60)} missing`);
          }
          break;
        default:
          // A provider's summary in the region is folded into the new checkpoint, as a checkpoint's text is.
          if (KNOWN_TYPES.has(b.type) || b.type === PROVIDER_COMPACTION) break;
          // Unknown blocks are kept opaque: the whole block, untouched.
          if (!take((r) => deepEqual(r, b))) {
            const id =
              typeof b.id === "string" ? b.id : typeof b.tool_use_id === "string" ? b.tool_use_id : "";
            return fail(`last round: ${b.type} ${JSON.stringify(id)} missing or altered`);
          }
      }
    }
  }
  return ok();
}

// ------------------------------------------------------- the full contract

/** The summary part of a checkpoint, normalised for the placeholder test. */
function summaryPart(m) {
  let text = textsOf(m).join("").trimStart();
  const marker = CHECKPOINT_MARKERS.find((k) => text.startsWith(k));
  if (marker) text = text.slice(marker.length);
  const cut = text.indexOf("\n## Coverage");
  if (cut >= 0) text = text.slice(0, cut);
  text = text.toLowerCase();
  let a = 0;
  let z = text.length;
  const strip = (ch) => EDGE_CHARS.has(ch) || /\s/.test(ch);
  while (a < z && strip(text[a])) a++;
  while (z > a && strip(text[z - 1])) z--;
  return text.slice(a, z);
}

export function isPlaceholderOnly(m) {
  const s = summaryPart(m);
  if (s === "" || PLACEHOLDERS.has(s) || contentFree(s)) return true;
  return s.length < 200 && REFUSAL_PREFIXES.some((p) => s.startsWith(p));
}

export function validateSurvivalContract(original, replacement, opts = {}) {
  const anchors = typeof opts.anchors === "string" ? opts.anchors.trim() : "";
  const route = opts.path ?? "summary";
  if (route !== "summary" && route !== "prune-only") throw new TypeError(`unknown compaction path ${route}`);

  const coverage = validateLastRoundCoverage(original, replacement, opts);
  if (!coverage.valid) return coverage;

  // Pairing inside the replacement; an in-flight call of the original may stay in flight.
  const inFlight = new Set();
  original.forEach((m, i) => {
    for (const b of blocksOf(m)) {
      if (b.type === "tool_use" && resultIndexAfter(original, b.id, i) < 0) inFlight.add(b.id);
    }
  });
  for (let i = 0; i < replacement.length; i++) {
    for (const b of blocksOf(replacement[i])) {
      if (b.type === "tool_result") {
        const calledBefore = (msgs, upTo, id) =>
          msgs.slice(0, upTo).some((m) => blocksOf(m).some((c) => c.type === "tool_use" && c.id === id));
        // A result without its call may stay only where the original has it without its call too.
        const orphanInOriginal = original.some(
          (m, j) =>
            blocksOf(m).some((c) => c.type === "tool_result" && c.tool_use_id === b.tool_use_id) &&
            !calledBefore(original, j, b.tool_use_id),
        );
        if (!calledBefore(replacement, i, b.tool_use_id) && !orphanInOriginal)
          return fail(`tool_result ${JSON.stringify(b.tool_use_id)} has no matching tool_use`);
      } else if (b.type === "tool_use" && !inFlight.has(b.id) && resultIndexAfter(replacement, b.id, i) < 0) {
        return fail(`tool_use ${JSON.stringify(b.id)} has no matching tool_result`);
      }
    }
  }

  // Checkpoint count.
  const checkpoints = checkpointsIn(replacement);
  const needOne = route === "summary" || checkpointsIn(original).length > 0;
  if (needOne && checkpoints.length === 0) return fail("missing checkpoint");
  if (needOne && checkpoints.length > 1) return fail(`more than one checkpoint (${checkpoints.length})`);
  if (!needOne && checkpoints.length > 0) {
    return fail(
      `prune-only compaction wrote a checkpoint (${checkpoints.length}) where the original had none`,
    );
  }

  // A provider's summary is the provider's own: not judged as a placeholder.
  for (const cp of checkpoints) {
    if (!cp.provider && isPlaceholderOnly(cp.message))
      return fail(`placeholder-only checkpoint ${quote(cp.texts.join(""), 60)}`);
  }

  if (anchors !== "") {
    if (route === "summary") {
      if (!checkpoints[0].texts.join("\n").includes(anchors))
        return fail("anchors not restated in the checkpoint");
    } else {
      const inText = (msgs) => msgs.some((m) => textsOf(m).some((t) => t.includes(anchors)));
      if (inText(original) && !inText(replacement))
        return fail("anchors dropped by the prune-only compaction");
    }
  }

  for (const bs of original.filter(isBranchSummary)) {
    const text = textsOf(bs).join("");
    if (!replacement.some((m) => textsOf(m).join("") === text)) {
      return fail(`branch summary ${quote(text)} dropped`);
    }
  }
  return ok();
}

// ------------------------------------------------------- matrix loading

class MatrixError extends Error {}

function checkBlock(b, where) {
  if (b === null || typeof b !== "object" || Array.isArray(b))
    throw new MatrixError(`${where}: block is not an object`);
  if (typeof b.type !== "string" || b.type === "") throw new MatrixError(`${where}: missing "type"`);
  const here = `${where} (${b.type})`;
  const need = (key, kind) => {
    if (!(key in b) || b[key] === undefined) throw new MatrixError(`${here}: missing "${key}"`);
    if (kind && typeof b[key] !== kind) throw new MatrixError(`${here}: "${key}" must be a ${kind}`);
  };
  const maybe = (key, kind) => {
    if (key in b && typeof b[key] !== kind) throw new MatrixError(`${here}: "${key}" must be a ${kind}`);
  };
  switch (b.type) {
    case "text":
      need("text", "string");
      break;
    case "thinking":
      need("thinking", "string");
      maybe("signature", "string");
      break;
    case "redacted_thinking":
      need("data", "string");
      break;
    case "tool_use":
      need("id", "string");
      need("name", "string");
      need("input");
      maybe("thought_signature", "string");
      break;
    case "tool_result":
      need("tool_use_id", "string");
      need("content", "string");
      maybe("is_error", "boolean");
      if ("content_blocks" in b) {
        if (!Array.isArray(b.content_blocks))
          throw new MatrixError(`${here}: "content_blocks" must be an array`);
        b.content_blocks.forEach((c, k) => checkBlock(c, `${where}.content_blocks[${k}]`));
      }
      break;
    case "image_url":
      need("image_url", "object");
      if (b.image_url === null || typeof b.image_url.url !== "string") {
        throw new MatrixError(`${here}: missing "image_url.url"`);
      }
      break;
    default:
      if ("id" in b) maybe("id", "string");
      if ("tool_use_id" in b) maybe("tool_use_id", "string");
  }
}

function checkMessages(list, where) {
  if (!Array.isArray(list)) throw new MatrixError(`${where}: must be an array of messages`);
  list.forEach((m, i) => {
    const at = `${where}[${i}]`;
    if (m === null || typeof m !== "object" || Array.isArray(m))
      throw new MatrixError(`${at}: message is not an object`);
    if (!ROLES.has(m.role))
      throw new MatrixError(`${at}: role ${JSON.stringify(m.role)} is not one of ${[...ROLES].join(", ")}`);
    if (!Array.isArray(m.content)) throw new MatrixError(`${at}: missing "content" array`);
    m.content.forEach((b, k) => checkBlock(b, `${at}.content[${k}]`));
  });
}

/** A matrix header's `constants`: positive integers, each one the contract names. */
function checkConstants(c) {
  if (c === null || typeof c !== "object" || Array.isArray(c))
    throw new MatrixError(`constants: must be an object`);
  for (const [k, v] of Object.entries(c)) {
    if (!(k in CONTRACT_CONSTANTS))
      throw new MatrixError(`constants.${k}: unknown (known: ${Object.keys(CONTRACT_CONSTANTS).join(", ")})`);
    if (!Number.isInteger(v) || v < 1) throw new MatrixError(`constants.${k}: must be a positive integer`);
  }
}

/** The contract's numbers for a matrix: its header's, else the contract's own. */
export function matrixConstants(matrix) {
  return Object.freeze({ ...CONTRACT_CONSTANTS, ...(matrix.constants ?? {}) });
}

/** Reads and checks one matrix; throws MatrixError with `<shown>: <json path>: <reason>`. */
export function loadMatrix(file, shown = file) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new MatrixError(`${shown}: cannot read file (${e.code ?? e.message})`);
  }
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new MatrixError(`${shown}: not valid JSON (${e.message})`);
  }
  try {
    if (data === null || typeof data !== "object" || Array.isArray(data))
      throw new MatrixError("(root): not an object");
    if (data.schema_version !== 2)
      throw new MatrixError(`schema_version: expected 2, got ${JSON.stringify(data.schema_version)}`);
    if ("constants" in data) checkConstants(data.constants);
    if (!Array.isArray(data.cases)) throw new MatrixError(`cases: missing array`);
    const ids = new Set();
    data.cases.forEach((c, i) => {
      const at = `cases[${i}]`;
      if (c === null || typeof c !== "object" || Array.isArray(c))
        throw new MatrixError(`${at}: case is not an object`);
      if (typeof c.id !== "string" || c.id === "") throw new MatrixError(`${at}: missing "id"`);
      if (ids.has(c.id)) throw new MatrixError(`${at}: duplicate id ${JSON.stringify(c.id)}`);
      ids.add(c.id);
      if (c.expect !== "pass" && c.expect !== "fail")
        throw new MatrixError(`${at}.expect: must be "pass" or "fail"`);
      if ("anchors" in c && typeof c.anchors !== "string")
        throw new MatrixError(`${at}.anchors: must be a string`);
      if ("last_round_start" in c && !(Number.isInteger(c.last_round_start) && c.last_round_start >= 0)) {
        throw new MatrixError(`${at}.last_round_start: must be a non-negative integer`);
      }
      if ("path" in c && c.path !== "summary" && c.path !== "prune-only") {
        throw new MatrixError(`${at}.path: must be "summary" or "prune-only"`);
      }
      checkMessages(c.original, `${at}.original`);
      checkMessages(c.replacement, `${at}.replacement`);
    });
  } catch (e) {
    if (e instanceof MatrixError) throw new MatrixError(`${shown}: ${e.message}`);
    throw e;
  }
  return data;
}

/** Runs one case; returns null when it agrees, else the disagreement text. */
export function runCase(c, constants = CONTRACT_CONSTANTS) {
  const opts = { anchors: c.anchors, path: c.path ?? "summary", constants };
  const coverage = validateLastRoundCoverage(c.original, c.replacement, opts);
  const verdict = validateSurvivalContract(c.original, c.replacement, opts);
  if (!coverage.valid && verdict.valid) return `coverage failed (${coverage.reason}) but the contract passed`;
  const got = verdict.valid ? "pass" : "fail";
  if (got !== c.expect) return `expected ${c.expect}, got ${got} (${verdict.reason ?? "no violation found"})`;
  if (c.last_round_start !== undefined) {
    const r = currentRoundStart(c.original);
    if (r !== c.last_round_start) return `expected last_round_start ${c.last_round_start}, got ${r}`;
  }
  return null;
}

function main(argv) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const files =
    argv.length > 0 ? argv.map((f) => [f, f]) : [[path.join(here, "fixtures", "matrix.json"), null]];
  const matrices = [];
  try {
    for (const [file, shown] of files) {
      const display = shown ?? (path.relative(process.cwd(), file) || file);
      matrices.push([display, loadMatrix(file, display)]);
    }
  } catch (e) {
    if (!(e instanceof MatrixError)) throw e;
    console.error(e.message);
    return 2;
  }
  let agreed = 0;
  let disagreed = 0;
  for (const [display, matrix] of matrices) {
    const constants = matrixConstants(matrix);
    for (const c of matrix.cases) {
      const problem = runCase(c, constants);
      if (problem === null) agreed++;
      else {
        disagreed++;
        console.log(`DISAGREE ${display} ${c.id}: ${problem}`);
      }
    }
  }
  console.log(`ok ${agreed} survival-contract fixtures`);
  return disagreed === 0 ? 0 : 1;
}

function invokedDirectly() {
  try {
    return realpathSync(path.resolve(process.argv[1] ?? "")) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  process.exitCode = main(process.argv.slice(2));
}
