/**
 * The AI SDK conversion does work linear in the history's size, and across
 * the steps of one loop converts each message once. Work is counted (map
 * writes, conversions), never timed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ModelMessage } from "ai";
import { fromModelMessages, toModelMessages } from "./ai-sdk.js";

/** `n` rounds of user text, an assistant tool call, its tool result. */
export function toolHistory(n: number, from = 0): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (let i = from; i < from + n; i++) {
    out.push({ role: "user", content: `step ${i}: read the next file` });
    out.push({
      role: "assistant",
      content: [
        { type: "text", text: `reading src/f${i}.ts` },
        { type: "tool-call", toolCallId: `call_${i}`, toolName: "read", input: { path: `src/f${i}.ts` } },
      ],
    });
    out.push({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `call_${i}`,
          toolName: "read",
          output: { type: "text", value: `// src/f${i}.ts\nexport const x${i} = ${i};` },
        },
      ],
    });
  }
  return out;
}

/** Calls of `Map.prototype.set` while `f` runs (a copy of a map writes every entry again). */
function mapWrites(f: () => void): number {
  const original = Map.prototype.set;
  let count = 0;
  Map.prototype.set = function (this: Map<unknown, unknown>, k: unknown, v: unknown) {
    count++;
    return original.call(this, k, v);
  };
  try {
    f();
  } finally {
    Map.prototype.set = original;
  }
  return count;
}

test("converting an AI SDK history does work linear in its size, both ways (no copy of the tool names per part)", () => {
  const small = toolHistory(100);
  const large = toolHistory(1000);
  const from = (h: ModelMessage[]): number => mapWrites(() => fromModelMessages(h));
  const fromSmall = from(small);
  const fromLarge = from(large);
  assert.ok(fromSmall > 0, "the count sees the conversion's map writes");
  // Ten times the messages: about ten times the work (a quadratic conversion does about a hundred times).
  assert.ok(fromLarge <= 12 * fromSmall, `from: ${fromSmall} writes at 300 messages, ${fromLarge} at 3,000`);
  const back = (h: ModelMessage[]): number => {
    const messages = fromModelMessages(h);
    return mapWrites(() => toModelMessages(messages));
  };
  const backSmall = back(small);
  const backLarge = back(large);
  assert.ok(backSmall > 0);
  assert.ok(backLarge <= 12 * backSmall, `to: ${backSmall} writes at 300 messages, ${backLarge} at 3,000`);
  // And the conversion is still exact.
  assert.deepEqual(toModelMessages(fromModelMessages(large)), large);
});
