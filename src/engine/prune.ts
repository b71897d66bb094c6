/**
 * The prune-only plan (tried first): outside the protected round, replace
 * large old tool results with stubs naming the tool, its arguments (bounded)
 * and the size removed; keep only the latest copy of repeated identical
 * reads; drop nested images. What is kept outside the protected round is
 * redacted (text, tool inputs, small results; never the current
 * instructions, system messages, checkpoints, branch summaries or signed
 * thinking, which the contract keeps as they are). Pure: returns new
 * messages, never mutates.
 */
import type { Block, Message, ToolResultBlock, ToolUseBlock } from "../model/types.js";
import { isText, isToolResult, isToolUse } from "../model/blocks.js";
import { utf8Length } from "../contract/bounds.js";
import { isBranchSummary, isCheckpoint } from "../contract/classify.js";
import { redactSecrets, redactValue } from "../redact/redact.js";
import { CONSTANTS } from "../model/constants.js";
import { recallHint, toolRef } from "../model/refs.js";

/** Tool arguments quoted in a stub are bounded to this many characters. */
export const STUB_ARGS_CHARS = 200;

export interface PruneStats {
  /** Results replaced by a stub because they were large. */
  stubbed: number;
  /** Older copies of repeated identical reads replaced by a stub. */
  deduplicated: number;
  /** Nested images dropped. */
  imagesDropped: number;
  /** UTF-8 bytes of result content removed. */
  bytesRemoved: number;
}

export const STUB_PREFIX = "[compact-safe: pruned tool result;";

/** Characters past the stub bound that are redacted with it, so a secret across the cut is seen whole. */
const REDACT_MARGIN = 1024;

/**
 * The arguments as JSON, redacted before they are cut to the bound (a secret is never cut in two first);
 * `redact` false: cut as they are (`pruneSizeBeforeRedaction`).
 */
function boundedArgs(input: unknown, redact: boolean): string {
  const raw = (JSON.stringify(input) ?? "null").slice(0, STUB_ARGS_CHARS + REDACT_MARGIN);
  const json = redact ? redactSecrets(raw) : raw;
  return json.length > STUB_ARGS_CHARS
    ? `${json.slice(0, STUB_ARGS_CHARS).replace(/[\uD800-\uDBFF]$/, "")}…`
    : json;
}

/**
 * A stub: the tool and its arguments, the size removed and why, and the ref
 * that `compact-safe mcp`'s `recall` tool gives the original back by (the
 * call's id: the journal keeps the original, so it resolves after any later
 * compaction too).
 */
function stubText(
  result: ToolResultBlock,
  call: ToolUseBlock | undefined,
  bytes: number,
  why: "large" | "repeated",
  redact: boolean,
): string {
  const tool = call
    ? `${redact ? redactSecrets(call.name) : call.name} ${boundedArgs(call.input, redact)}`
    : "unknown tool";
  const reason = why === "repeated" ? "an identical later call has the current copy" : "older output";
  return `${STUB_PREFIX} ${tool}; ${bytes} bytes removed (${reason}); ${recallHint(toolRef(result.tool_use_id))}]`;
}

/**
 * A message kept outside the protected round, with its text, tool inputs and
 * tool results redacted (thinking stays: it is signed); the same object when
 * nothing changes. `keepTexts`: its text blocks stay as they are (a current
 * instruction's words, which the contract compares byte for byte).
 */
export function redactKept(m: Message, keepTexts = false): Message {
  let changed = false;
  const content = m.content.map((b): Block => {
    if (isText(b)) {
      if (keepTexts) return b;
      const text = redactSecrets(b.text);
      if (text === b.text) return b;
      changed = true;
      return { ...b, text };
    }
    if (isToolUse(b)) {
      const input = redactValue(b.input);
      if (input === b.input) return b;
      changed = true;
      return { ...b, input };
    }
    if (isToolResult(b)) {
      if (isStub(b.content)) return b;
      const text = redactSecrets(b.content);
      if (text === b.content) return b;
      changed = true;
      return { ...b, content: text };
    }
    return b;
  });
  return changed ? { ...m, content } : m;
}

function isStub(content: string): boolean {
  return content.startsWith(STUB_PREFIX);
}

/** Longest argument value a "read" may have; calls with bigger or nested arguments (writes, patches) are never deduplicated. */
const READ_ARG_MAX = 512;

/**
 * The identity of a read-like call: its name and its small scalar arguments,
 * in key order. Undefined for calls with nested or large arguments, which are
 * not reads (and would cost a full serialisation to compare).
 */
function readCallKey(call: ToolUseBlock): string | undefined {
  const input = call.input;
  if (input === null || typeof input !== "object" || Array.isArray(input)) return undefined;
  let key = call.name;
  for (const k of Object.keys(input).sort()) {
    const v = (input as Record<string, unknown>)[k];
    if (v !== null && typeof v === "object") return undefined;
    const text = String(v);
    if (text.length > READ_ARG_MAX) return undefined;
    key += `\u0000${k}=${typeof v}:${text}`;
  }
  return key;
}

/** What pruning decided for one old tool result: whether an identical later read has it, its size, its images. */
interface ResultFacts {
  at: number;
  block: number;
  repeated: boolean;
  bytes: number;
  images: number;
}

/** A pruning decided once, built with or without its redaction (`planPrune`). */
export interface PrunePlan {
  build(redact: boolean): { messages: Message[]; stats: PruneStats };
}

/**
 * A pruning of everything before `regionStart`, decided once: `build(true)`
 * is the pruned history, with what it keeps there redacted except the
 * messages at `verbatim` (the current instructions, which the contract
 * compares byte for byte: `protectedRound(messages).instructionIndices`);
 * `build(false)` is the same history but for its secrets (to size it before
 * paying for the redaction: the engine's `pruneSizeBeforeRedaction`, never a
 * result to keep).
 */
export function planPrune(
  messages: readonly Message[],
  regionStart: number,
  verbatim: readonly number[] = [],
): PrunePlan {
  const calls = new Map<string, ToolUseBlock>();
  for (let i = 0; i < messages.length; i++)
    for (const b of messages[i]!.content) if (isToolUse(b)) calls.set(b.id, b);

  // Identical reads: same tool, same input, same output. The copy in the protected round (if any) counts as the latest.
  // Keyed by call (tool name and input); the contents seen for that call are compared with ===,
  // which is cheap for strings of different lengths.
  const seen = new Map<string, string[]>();
  const callKey = (r: ToolResultBlock): string | undefined => {
    const call = calls.get(r.tool_use_id);
    return call ? readCallKey(call) : undefined;
  };
  /** Records this read; true when an identical one (same call, same output) was already seen later on. */
  const repeatedRead = (r: ToolResultBlock): boolean => {
    const key = callKey(r);
    if (key === undefined) return false;
    const contents = seen.get(key);
    if (!contents) {
      seen.set(key, [r.content]);
      return false;
    }
    if (contents.includes(r.content)) return true;
    contents.push(r.content);
    return false;
  };
  for (let i = regionStart; i < messages.length; i++) {
    for (const b of messages[i]!.content) if (isToolResult(b)) repeatedRead(b);
  }
  // The old results, newest first (the order repeated reads are found in).
  const facts: ResultFacts[] = [];
  for (let i = regionStart - 1; i >= 0; i--) {
    const content = messages[i]!.content;
    for (let j = 0; j < content.length; j++) {
      const b = content[j]!;
      if (!isToolResult(b) || isStub(b.content)) continue;
      facts.push({
        at: i,
        block: j,
        repeated: repeatedRead(b),
        bytes: utf8Length(b.content),
        images: b.content_blocks?.length ?? 0,
      });
    }
  }
  return { build: (redact) => buildPruned(messages, regionStart, verbatim, calls, facts, redact) };
}

/** The pruned history of `planPrune`'s decisions (`redact` false: secrets left in, stubs included). */
function buildPruned(
  messages: readonly Message[],
  regionStart: number,
  verbatim: readonly number[],
  calls: ReadonlyMap<string, ToolUseBlock>,
  facts: readonly ResultFacts[],
  redact: boolean,
): { messages: Message[]; stats: PruneStats } {
  const stats: PruneStats = { stubbed: 0, deduplicated: 0, imagesDropped: 0, bytesRemoved: 0 };
  const out: Message[] = messages.slice();
  for (const { at, block, repeated, bytes, images } of facts) {
    const b = messages[at]!.content[block] as ToolResultBlock;
    const stub =
      repeated || bytes > CONSTANTS.pruneMinBytes
        ? stubText(b, calls.get(b.tool_use_id), bytes, repeated ? "repeated" : "large", redact)
        : undefined;
    const replace = stub !== undefined && utf8Length(stub) < bytes;
    if (!replace && images === 0) continue;
    const copy: ToolResultBlock = { ...b };
    delete copy.content_blocks;
    stats.imagesDropped += images;
    if (replace) {
      copy.content = stub;
      stats.bytesRemoved += bytes;
      if (repeated) stats.deduplicated++;
      else stats.stubbed++;
    }
    // The first change to a message copies it (and its content); later ones write into that copy.
    if (out[at] === messages[at]) out[at] = { ...messages[at]!, content: messages[at]!.content.slice() };
    out[at]!.content[block] = copy;
  }
  // Then what stays is redacted (stubs already are).
  if (!redact) return { messages: out, stats };
  const keep = new Set(verbatim);
  for (let i = 0; i < regionStart; i++) {
    const m = out[i]!;
    if (keep.has(i) || m.role === "system" || isCheckpoint(m) || isBranchSummary(m)) continue;
    out[i] = redactKept(m);
  }
  return { messages: out, stats };
}
