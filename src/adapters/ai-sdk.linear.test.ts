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

test("across the steps of one loop, an unchanged message is converted once; one edited in place is read again", async () => {
  const { compactSafePrepareStep } = await import("./ai-sdk.js");
  const { conversionCount } = await import("../wire/ai-sdk.js");
  const events: number[] = [];
  const step = compactSafePrepareStep({ window: 1_000_000, onCompaction: (e) => events.push(e.stepNumber) });
  const history = toolHistory(50);
  const before = conversionCount.messages;
  assert.equal(await step({ messages: history, stepNumber: 0, steps: [] }), undefined);
  assert.equal(conversionCount.messages - before, history.length, "the first call converts every message");
  // Three more steps, each appending a round: only the new messages are converted.
  for (let s = 1; s <= 3; s++) {
    history.push(...toolHistory(1, 1000 + s));
    const at = conversionCount.messages;
    assert.equal(await step({ messages: history, stepNumber: s, steps: [] }), undefined);
    assert.equal(conversionCount.messages - at, 3, `step ${s} converts its three new messages only`);
  }
  // A host that edits a message in place (appends to a tool result's text): that message is read again,
  // and the step sees what it says now (here: enough to pass the threshold, so the step compacts).
  const tool = history[5] as { content: { output: { value: string } }[] };
  tool.content[0]!.output.value += "x".repeat(4_000_000);
  const at = conversionCount.messages;
  const r = await step({ messages: history, stepNumber: 4, steps: [] });
  assert.equal(conversionCount.messages - at >= 1, true, "the edited message is converted again");
  assert.deepEqual(events, [4]);
  assert.ok(r !== undefined, "the step runs on the replacement");
  // A replaced part or a swapped content array is seen too.
  const { fromModelMessagesIndexed } = await import("../wire/ai-sdk.js");
  const cache = new WeakMap();
  const msgs = toolHistory(2);
  fromModelMessagesIndexed(msgs, undefined, "messages", cache);
  (msgs[1] as { content: unknown[] }).content[0] = { type: "text", text: "rewritten" };
  msgs[0]!.content = "a new request";
  const again = fromModelMessagesIndexed(msgs, undefined, "messages", cache).messages;
  assert.deepEqual(again[0]!.content, [{ type: "text", text: "a new request" }]);
  assert.deepEqual(again[1]!.content[0], { type: "text", text: "rewritten" });
  assert.deepEqual(again, fromModelMessagesIndexed(msgs, undefined).messages);
});
