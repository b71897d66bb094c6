/**
 * The LangChain middleware across the steps of one loop: each message is
 * read once while it stays the same, one edited in place is read again, and
 * the decision to compact is the engine's (`shouldCompact`, its threshold).
 * Work is counted (messages read), never timed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AIMessage,
  ChatMessage,
  HumanMessage,
  ToolMessage,
  type BaseMessage,
} from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import type { CompactResult } from "../engine/compact.js";
import { measurePressure } from "../engine/pressure.js";
import { CONSTANTS } from "../model/constants.js";
import { langChainReadCount } from "../wire/langchain.js";
import {
  compactSafeMiddleware,
  fromLangChainMessages,
  LangChainReader,
  toLangChainMessages,
} from "./langchain.js";

const SUMMARY = ["## Objective", "Read the files the user named.", "## Work done", "Read them."].join("\n");

/** `n` rounds: a request, a tool call, its result (LangGraph gives every message an id). */
function rounds(n: number, from = 0): BaseMessage[] {
  const out: BaseMessage[] = [];
  for (let i = from; i < from + n; i++) {
    out.push(new HumanMessage({ id: `h${i}`, content: `step ${i}: read f${i}.ts` }));
    out.push(
      new AIMessage({
        id: `a${i}`,
        content: `reading f${i}.ts`,
        tool_calls: [{ id: `call_${i}`, name: "read_file", args: { path: `f${i}.ts` }, type: "tool_call" }],
      }),
    );
    out.push(new ToolMessage({ id: `t${i}`, tool_call_id: `call_${i}`, content: `// f${i}.ts\nexport {};` }));
  }
  return out;
}

type Hook = (
  state: { messages: BaseMessage[] },
  runtime: object,
) => Promise<{ messages: BaseMessage[] } | undefined>;
const hookOf = (mw: ReturnType<typeof compactSafeMiddleware>): Hook => mw.beforeModel as unknown as Hook;

test("compactSafeMiddleware reads each message once across steps, and again when it is edited in place", async () => {
  const results: CompactResult[] = [];
  const hook = hookOf(
    compactSafeMiddleware({
      model: new FakeListChatModel({ responses: [SUMMARY] }),
      window: 1_000_000,
      onCompaction: (r) => void results.push(r),
    }),
  );
  const history = rounds(40);
  const at0 = langChainReadCount.messages;
  assert.equal(await hook({ messages: history }, { context: {} }), undefined);
  assert.equal(langChainReadCount.messages - at0, history.length, "the first call reads every message");
  for (let s = 1; s <= 3; s++) {
    history.push(...rounds(1, 100 + s));
    const at = langChainReadCount.messages;
    assert.equal(await hook({ messages: [...history] }, { context: {} }), undefined);
    assert.equal(langChainReadCount.messages - at, 3, `step ${s} reads its three new messages only`);
  }
  assert.deepEqual(results, [], "nothing to compact yet");
  // An edit in place: that message is read again, and nothing else is.
  (history[8] as ToolMessage).content = `${String(history[8]!.content)} (edited)`;
  const at = langChainReadCount.messages;
  assert.equal(await hook({ messages: history }, { context: {} }), undefined);
  assert.equal(langChainReadCount.messages - at, 1, "the edited message only is read again");
  // The step sees what it says now: grown past the threshold, the history is compacted.
  (history[8] as ToolMessage).content = `${String(history[8]!.content)}${"x".repeat(4_000_000)}`;
  const update = await hook({ messages: history }, { context: {} });
  assert.ok(update !== undefined);
  assert.equal(results.length, 1);
  assert.equal((results[0] as CompactResult).ok, true);
});

test("LangChainReader gives what fromLangChainMessages gives, after edits in place of every kind it sees", () => {
  const reader = new LangChainReader();
  // Parts of one compact-safe message (parallel tool results) are joined as fromLangChainMessages joins them.
  const history = toLangChainMessages(fromLangChainMessages(rounds(3)));
  const parallel = toLangChainMessages([
    {
      role: "assistant",
      content: [
        { type: "tool_use", id: "p1", name: "read_file", input: { path: "x" } },
        { type: "tool_use", id: "p2", name: "read_file", input: { path: "y" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "p1", content: "x" },
        { type: "tool_result", tool_use_id: "p2", content: "y" },
      ],
    },
  ]);
  history.push(...parallel);
  assert.deepEqual(reader.read(history), fromLangChainMessages(history));
  const first = reader.read(history);
  assert.equal(reader.read(history)[7], first[7], "the joined message is the same object on the next read");
  (history[0] as HumanMessage).content = "a new request";
  (history[1] as AIMessage).tool_calls!.push({
    id: "call_x",
    name: "read_file",
    args: { path: "z" },
    type: "tool_call",
  });
  history[2]!.additional_kwargs = { note: 1 };
  assert.deepEqual(reader.read(history), fromLangChainMessages(history));
});

test("compactSafeMiddleware compacts at the engine's threshold of the window (shouldCompact), not a constant of its own", async () => {
  const history = rounds(30);
  const tokens = measurePressure({ messages: fromLangChainMessages(history) }).tokens;
  const run = async (window: number, threshold?: number): Promise<boolean> => {
    const results: CompactResult[] = [];
    const hook = hookOf(
      compactSafeMiddleware({
        model: new FakeListChatModel({ responses: [SUMMARY] }),
        window,
        threshold,
        onCompaction: (r) => void results.push(r),
      }),
    );
    await hook({ messages: history }, { context: {} });
    return results.length > 0;
  };
  // At the threshold: compacts; one token under it: does not.
  const t = CONSTANTS.threshold;
  assert.equal(await run(Math.floor(tokens / t)), true);
  assert.equal(await run(Math.ceil((tokens + 1) / t) + 1), false);
  // Another threshold is the engine's decision with that threshold.
  assert.equal(await run(Math.floor(tokens / 0.5), 0.5), true);
  assert.equal(await run(Math.floor(tokens / 0.5), 0.6), false);
});

test("LangChainReader sees an assignment in place to every field a conversion reads, of every message type", () => {
  const edits: [number, string, unknown][] = [
    // A human message (the common fields), an AI message and a tool message of `rounds`, and a ChatMessage.
    [0, "content", "a new request"],
    [0, "id", "h0-new"],
    [0, "name", "someone"],
    [0, "additional_kwargs", { note: 1 }],
    [0, "response_metadata", { model: "m" }],
    [1, "tool_calls", [{ id: "call_0", name: "write_file", args: { path: "g.ts" }, type: "tool_call" }]],
    [
      1,
      "invalid_tool_calls",
      [{ id: "bad", name: "read_file", args: "{", error: "not JSON", type: "invalid_tool_call" }],
    ],
    [1, "usage_metadata", { input_tokens: 10, output_tokens: 2, total_tokens: 12 }],
    [2, "tool_call_id", "call_other"],
    [2, "status", "error"],
    [2, "artifact", { rows: 3 }],
    [2, "metadata", { source: "cache" }],
    [3, "role", "critic"],
  ];
  for (const [index, field, value] of edits) {
    const history: BaseMessage[] = [
      ...rounds(1),
      new ChatMessage({ id: "c0", content: "noted", role: "reviewer" }),
    ];
    const reader = new LangChainReader();
    reader.read(history);
    (history[index] as unknown as Record<string, unknown>)[field] = value;
    assert.deepEqual(reader.read(history), fromLangChainMessages(history), `${field} of message ${index}`);
  }
});
