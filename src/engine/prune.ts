/**
 * The prune-only plan (tried first): outside the protected round, replace
 * large old tool results with stubs naming the tool, its arguments (bounded)
 * and the size removed; keep only the latest copy of repeated identical
 * reads; drop nested images. Pure: returns new messages, never mutates.
 */
import type { Block, Message, ToolResultBlock, ToolUseBlock } from "../model/types.js";
import { canonicalJson, isToolResult, isToolUse } from "../model/blocks.js";
import { utf8Length } from "../contract/bounds.js";
import { redactSecrets } from "./redact.js";

/** Results above this size (UTF-8 bytes) outside the protected round become stubs. */
export const PRUNE_MIN_BYTES = 240;
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

function boundedArgs(input: unknown): string {
  const json = canonicalJson(input);
  return json.length > STUB_ARGS_CHARS ? `${json.slice(0, STUB_ARGS_CHARS).replace(/[\uD800-\uDBFF]$/, "")}…` : json;
}

function stubText(call: ToolUseBlock | undefined, bytes: number, why: "large" | "repeated"): string {
  const tool = call ? `${call.name} ${boundedArgs(call.input)}` : "unknown tool";
  const reason = why === "repeated" ? "an identical later call has the current copy" : "older output";
  return redactSecrets(`${STUB_PREFIX} ${tool}; ${bytes} bytes removed (${reason})]`);
}

function isStub(content: string): boolean {
  return content.startsWith(STUB_PREFIX);
}

/** Prunes everything before `regionStart`. */
export function pruneOldResults(messages: readonly Message[], regionStart: number): { messages: Message[]; stats: PruneStats } {
  const calls = new Map<string, ToolUseBlock>();
  for (let i = 0; i < messages.length; i++) for (const b of messages[i]!.content) if (isToolUse(b)) calls.set(b.id, b);

  const stats: PruneStats = { stubbed: 0, deduplicated: 0, imagesDropped: 0, bytesRemoved: 0 };
  // Identical reads: same tool, same input, same output. The copy in the protected round (if any) counts as the latest.
  const seen = new Set<string>();
  const readKey = (r: ToolResultBlock): string | undefined => {
    const call = calls.get(r.tool_use_id);
    return call ? `${call.name}\u0000${canonicalJson(call.input)}\u0000${r.content}` : undefined;
  };
  for (let i = regionStart; i < messages.length; i++) {
    for (const b of messages[i]!.content) {
      if (isToolResult(b)) {
        const k = readKey(b);
        if (k) seen.add(k);
      }
    }
  }

  const out: Message[] = messages.slice();
  for (let i = regionStart - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (!m.content.some(isToolResult)) continue;
    let changed = false;
    const content = m.content.map((b): Block => {
      if (!isToolResult(b) || isStub(b.content)) return b;
      const key = readKey(b);
      const repeated = key !== undefined && seen.has(key);
      if (key) seen.add(key);
      const bytes = utf8Length(b.content);
      const images = b.content_blocks?.length ?? 0;
      const stub = repeated || bytes > PRUNE_MIN_BYTES ? stubText(calls.get(b.tool_use_id), bytes, repeated ? "repeated" : "large") : undefined;
      const replace = stub !== undefined && utf8Length(stub) < bytes;
      if (!replace && images === 0) return b;
      changed = true;
      const copy: ToolResultBlock = { ...b };
      delete copy.content_blocks;
      stats.imagesDropped += images;
      if (replace) {
        copy.content = stub;
        stats.bytesRemoved += bytes;
        if (repeated) stats.deduplicated++;
        else stats.stubbed++;
      }
      return copy;
    });
    if (changed) out[i] = { ...m, content };
  }
  return { messages: out, stats };
}
