/**
 * The adapters' work across the steps of one loop, counted (never timed):
 * the messages a step shares with the last one are neither looked up,
 * converted, validated nor measured again; a message edited in place is read
 * again; and every figure is the one a fresh conversion and measure give.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  assistantModelMessageSchema,
  modelMessageSchema,
  systemModelMessageSchema,
  toolModelMessageSchema,
  userModelMessageSchema,
  type ModelMessage,
} from "ai";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { Message } from "../model/types.js";
import { measurePressure, PressureMemo, shouldCompact } from "../engine/pressure.js";
import { fastEstimator, type TokenEstimator } from "../engine/tokens.js";
import { compactSafePrepareStep, fromModelMessages, toModelMessages } from "./ai-sdk.js";
import { conversionMemo, fromModelMessagesIndexed, type ConversionCache } from "../wire/ai-sdk.js";
import { surelyValidModelMessage } from "../wire/ai-sdk-quick.js";
import { LangChainReader, toLangChainMessages } from "./langchain.js";

/** `n` rounds of user text, an assistant tool call, its tool result. */
function toolHistory(n: number, from = 0): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (let i = from; i < from + n; i++)
    out.push(
      { role: "user", content: `step ${i}: read the next file` },
      {
        role: "assistant",
        content: [
          { type: "text", text: `reading src/f${i}.ts` },
          { type: "tool-call", toolCallId: `call_${i}`, toolName: "read", input: { path: `src/f${i}.ts` } },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: `call_${i}`,
            toolName: "read",
            output: { type: "text", value: `// src/f${i}.ts` },
          },
        ],
      },
    );
  return out;
}

/** An estimator that counts the messages it measures. */
function counting(): TokenEstimator & { calls: number } {
  const e = {
    name: "counting",
    calls: 0,
    text: (s: string) => fastEstimator.text(s),
    message(m: Message) {
      e.calls++;
      return fastEstimator.message(m);
    },
  };
  return e;
}

function chat(n: number, from = 0): Message[] {
  const out: Message[] = [];
  for (let i = from; i < from + n; i++) {
    out.push({ role: "user", content: [{ type: "text", text: `question ${i}` }] });
    out.push({
      role: "assistant",
      content: [{ type: "text", text: `answer ${i} `.repeat(i % 7) }],
      usage: i % 3 === 0 ? { input_tokens: 100 + i } : undefined,
    } as Message);
  }
  return out.map((m) => {
    if (m.usage === undefined) delete m.usage;
    return m;
  });
}

test("PressureMemo: a step measures only the messages it does not share with the last one, with the same figures", () => {
  const e = counting();
  const memo = new PressureMemo();
  const history = chat(50);
  const fresh = (ms: Message[], billed?: { tokens: number; index: number }) =>
    measurePressure({ messages: ms, estimator: fastEstimator, billed });
  assert.deepEqual(measurePressure({ messages: history, estimator: e, memo }), fresh(history));
  assert.equal(e.calls, history.length, "the first call measures every message");
  // Appended messages (a new array each step, or the host's own array pushed to): only they are measured.
  for (let s = 0; s < 3; s++) {
    history.push(...chat(1, 100 + s));
    const before = e.calls;
    assert.deepEqual(measurePressure({ messages: history, estimator: e, memo }), fresh(history));
    assert.equal(e.calls - before, 2, `step ${s} measures its two new messages`);
  }
  // A message replaced by a new object: it and what follows are measured again.
  history[90] = { role: "user", content: [{ type: "text", text: "a much longer question ".repeat(50) }] };
  let before = e.calls;
  assert.deepEqual(measurePressure({ messages: history, estimator: e, memo }), fresh(history));
  assert.equal(e.calls - before, history.length - 90);
  // A host's billed figure, also with a negative index (as `slice` reads it); shouldCompact's decision.
  for (const billed of [
    { tokens: 5_000, index: 40 },
    { tokens: 5_000, index: -3 },
  ])
    assert.deepEqual(
      measurePressure({ messages: history, estimator: e, billed, memo }),
      fresh(history, billed),
    );
  before = e.calls;
  assert.deepEqual(
    shouldCompact({ messages: history, estimator: e, memo }, { window: 2_000 }),
    shouldCompact({ messages: history }, { window: 2_000 }),
  );
  assert.equal(e.calls, before, "nothing new: nothing measured");
  // A shorter history (a compaction replaced it), then another estimator: measured afresh.
  assert.deepEqual(
    measurePressure({ messages: history.slice(0, 10), estimator: e, memo }),
    fresh(history.slice(0, 10)),
  );
  before = e.calls;
  const other = counting();
  measurePressure({ messages: history, estimator: other, memo });
  assert.equal(other.calls, history.length);
  assert.equal(e.calls, before);
});

/** A WeakMap that counts its lookups. */
class CountingCache extends WeakMap<object, never> {
  gets = 0;
  override get(k: object): never | undefined {
    this.gets++;
    return super.get(k);
  }
}

test("AI SDK: a step that appends to the last one's messages converts from where it ended; an edit in place is read again", () => {
  const cache = new CountingCache();
  const memo = conversionMemo();
  const history = toolHistory(40);
  const convert = () =>
    fromModelMessagesIndexed(history, undefined, "messages", cache as unknown as ConversionCache, memo);
  assert.deepEqual(convert(), fromModelMessagesIndexed(history, undefined));
  assert.equal(cache.gets, history.length);
  for (let s = 1; s <= 3; s++) {
    history.push(...toolHistory(1, 500 + s));
    const gets = cache.gets;
    assert.deepEqual(convert(), fromModelMessagesIndexed(history, undefined));
    assert.equal(cache.gets - gets, 3, `step ${s}: only its three new messages are looked up`);
    assert.equal(memo.resumed, s);
  }
  // An older message edited in place (a tool result's text grows): the step reads it again.
  const tool = history[8] as { content: { output: { value: string } }[] };
  tool.content[0]!.output.value += " (edited)";
  const again = convert();
  assert.equal(memo.resumed, 3, "the step did not carry on from the last one");
  assert.deepEqual(again, fromModelMessagesIndexed(history, undefined));
  const block = again.messages[8]!.content[0] as { content: string };
  assert.match(block.content, /\(edited\)$/);
  // An edit that keeps the text's length (the text is compared as a value, not by its length).
  const text = (history[4] as { content: { text: string }[] }).content[0]!;
  text.text = text.text.replace("reading", "READING");
  assert.equal(convert().messages[4]!.content[0]!.type, "text");
  assert.deepEqual(convert().messages[4]!.content[0], { type: "text", text: text.text });
  // A replaced message object, a swapped content: seen as well.
  history[3] = { role: "user", content: "a new request" };
  (history[4] as { content: unknown[] }).content[0] = { type: "text", text: "rewritten" };
  assert.deepEqual(convert(), fromModelMessagesIndexed(history, undefined));
});

test("AI SDK prepareStep: a later step with nothing to compact converts and measures only its new messages", async () => {
  const { conversionCount } = await import("../wire/ai-sdk.js");
  const e = counting();
  const step = compactSafePrepareStep({ window: 10_000_000, estimator: e });
  const history = toolHistory(30);
  await step({ messages: history, stepNumber: 0, steps: [] });
  const measured = e.calls;
  assert.ok(measured > 0);
  let messages = history;
  for (let s = 1; s <= 3; s++) {
    messages = [...messages, ...toolHistory(1, 100 + s)];
    const [c, m] = [conversionCount.messages, e.calls];
    assert.equal(await step({ messages, stepNumber: s, steps: [] }), undefined);
    assert.equal(conversionCount.messages - c, 3);
    // Three AI SDK messages are three compact-safe messages here (user, assistant, tool results).
    assert.equal(e.calls - m, 3, `step ${s} measures only its new messages`);
  }
});

test("AI SDK: the quick check accepts only what modelMessageSchema accepts, and spares the schema the common shapes", () => {
  const samples: unknown[] = [
    ...toolHistory(3),
    { role: "system", content: "be brief" },
    { role: "system", content: [{ type: "text", text: "x" }] },
    {
      role: "user",
      content: [{ type: "text", text: "hi", providerOptions: { openai: { a: [1, null, "x"] } } }],
    },
    { role: "user", content: [{ type: "text", text: "hi", providerOptions: { openai: { a: Infinity } } }] },
    { role: "user", content: [{ type: "text", text: "hi", providerOptions: { openai: { a: NaN } } }] },
    {
      role: "user",
      content: [{ type: "text", text: "hi", providerOptions: { openai: { a: [undefined] } } }],
    },
    { role: "user", content: [{ type: "text", text: "hi", providerOptions: { openai: 3 } }] },
    { role: "user", content: [{ type: "text", text: "hi", providerOptions: { openai: undefined } }] },
    { role: "user", content: [{ type: "text", text: "hi", providerOptions: { openai: { k: undefined } } }] },
    { role: "user", content: [{ type: "text", text: "hi", providerOptions: { [Symbol("s")]: {} } }] },
    { role: "user", content: [{ type: "text", text: "hi", providerOptions: Object.create(null) }] },
    { role: "user", content: [{ type: "text", text: 3 }] },
    { role: "user", content: [{ type: "reasoning", text: "no" }] },
    { role: "user", content: [{ type: "image", image: "https://example.com/a.png" }] },
    {
      role: "assistant",
      content: [{ type: "reasoning", text: "hm", providerOptions: { anthropic: { signature: "s" } } }],
    },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "1", toolName: "t" }] },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "1", toolName: "t", input: undefined }] },
    {
      role: "assistant",
      content: [{ type: "tool-call", toolCallId: "1", toolName: "t", input: 1, providerExecuted: "yes" }],
    },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: 1, toolName: "t", input: {} }] },
    {
      role: "assistant",
      content: [
        { type: "tool-result", toolCallId: "1", toolName: "t", output: { type: "json", value: { a: 1 } } },
      ],
    },
    { role: "assistant", content: "plain", providerOptions: { x: { y: { z: [true, { w: "v" }] } } } },
    {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "1", toolName: "t", output: { type: "json", value: undefined } },
      ],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "1",
          toolName: "t",
          output: { type: "error-json", value: [1, 2] },
        },
      ],
    },
    {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "1", toolName: "t", output: { type: "content", value: [] } },
      ],
    },
    {
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "1", toolName: "t", output: { type: "text" } }],
    },
    { role: "tool", content: [{ type: "tool-approval-response", approvalId: "a", approved: true }] },
    { role: "tool", content: "text" },
    { role: "developer", content: "x" },
    { role: "user" },
    [],
  ];
  let accepted = 0;
  for (const [i, v] of samples.entries()) {
    const quick = surelyValidModelMessage(v);
    if (quick) accepted++;
    if (quick)
      assert.ok(modelMessageSchema.safeParse(v).success, `sample ${i}: accepted, but the schema refuses it`);
  }
  assert.ok(accepted >= 12, `the quick check accepts the common shapes (${accepted})`);
  // The adapter asks the schemas nothing about a history of common shapes; a broken message still gets the schema's word.
  const schemas = [
    modelMessageSchema,
    systemModelMessageSchema,
    userModelMessageSchema,
    assistantModelMessageSchema,
    toolModelMessageSchema,
  ] as unknown as { safeParse: (v: unknown) => unknown }[];
  let calls = 0;
  const originals = schemas.map((s) => s.safeParse);
  schemas.forEach((s, i) => {
    s.safeParse = (v: unknown) => {
      calls++;
      return originals[i]!.call(s, v);
    };
  });
  try {
    const history = toolHistory(20);
    assert.deepEqual(toModelMessages(fromModelMessages(history)), history);
    assert.equal(calls, 0);
    const broken = [
      ...history,
      { role: "tool", content: [{ type: "tool-result", toolCallId: "x" }] },
    ] as ModelMessage[];
    assert.throws(() => fromModelMessages(broken), /messages\[60\]\.content\[0\]\.toolName/);
    assert.ok(calls > 0);
  } finally {
    schemas.forEach((s, i) => (s.safeParse = originals[i]!));
  }
});

test("AI SDK: the parts converted by their shape give back the same parts as the round trip decides", () => {
  const history = [
    {
      role: "user",
      content: [
        { type: "text", text: "hi" },
        { type: "text", text: "x", extra: 1 },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "reasoning", text: "a" },
        { type: "reasoning", text: "b", providerOptions: { anthropic: { signature: "s" } } },
        { type: "reasoning", text: "c", providerOptions: { anthropic: { signature: "s", other: 1 } } },
        { type: "reasoning", text: "d", providerOptions: { anthropic: { signature: "s" }, openai: {} } },
        { type: "tool-call", toolCallId: "c1", toolName: "read", input: { p: 1 } },
        { type: "tool-call", toolCallId: "c2", toolName: "read", input: { p: 2 }, providerExecuted: false },
        { type: "tool-call", toolCallId: "c3", toolName: "grep", input: "raw" },
      ],
    },
    {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "text", value: "one" } },
        {
          type: "tool-result",
          toolCallId: "c2",
          toolName: "other",
          output: { type: "error-text", value: "two" },
        },
        {
          type: "tool-result",
          toolCallId: "c3",
          toolName: "grep",
          output: { type: "json", value: { n: 3 } },
        },
        { type: "tool-result", toolCallId: "c9", toolName: "", output: { type: "text", value: "orphan" } },
        { type: "tool-result", toolCallId: "c9", toolName: "nine", output: { type: "text", value: "named" } },
      ],
    },
  ] as unknown as ModelMessage[];
  const messages = fromModelMessages(history);
  assert.deepEqual(toModelMessages(messages), history);
  assert.deepEqual(messages[1]!.content.slice(0, 2), [
    { type: "thinking", thinking: "a" },
    { type: "thinking", thinking: "b", signature: "s" },
  ]);
  assert.deepEqual(messages[2]!.content[0], { type: "tool_result", tool_use_id: "c1", content: "one" });
  assert.ok("ai_sdk" in messages[2]!.content[1]!, "a result that names another tool keeps its part");
});

test("LangChain reader: a step reads only its new messages and joins them as a fresh read does, also mid-way through a split message", () => {
  const source: Message[] = [
    { role: "user", content: [{ type: "text", text: "go" }] },
    {
      role: "assistant",
      content: [
        { type: "tool_use", id: "a", name: "read", input: {} },
        { type: "tool_use", id: "b", name: "read", input: {} },
        { type: "tool_use", id: "c", name: "read", input: {} },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "a", content: "1" },
        { type: "tool_result", tool_use_id: "b", content: "2" },
        { type: "tool_result", tool_use_id: "c", content: "3" },
      ],
    },
    { role: "assistant", content: [{ type: "text", text: "done" }] },
  ];
  const lc = toLangChainMessages(source);
  assert.ok(lc.length > source.length, "the tool results are split into ToolMessages");
  const reader = new LangChainReader();
  for (let k = 1; k <= lc.length; k++) {
    const looked = reader.looked;
    const got = reader.read(lc.slice(0, k));
    assert.equal(reader.looked - looked, 1, `step ${k} looks at its one new message`);
    assert.deepEqual(got, new LangChainReader().read(lc.slice(0, k)), `after ${k} messages`);
  }
  assert.deepEqual(reader.read(lc), source);
});

test("LangChain reader: an older message edited in place is read again", () => {
  const history: BaseMessage[] = [];
  for (let i = 0; i < 20; i++)
    history.push(
      new HumanMessage({ id: `h${i}`, content: `q${i}` }),
      new AIMessage({ id: `a${i}`, content: [{ type: "text", text: `answer ${i}` }] }),
    );
  const reader = new LangChainReader();
  reader.read(history);
  const looked = reader.looked;
  reader.read(history);
  assert.equal(reader.looked, looked, "nothing new: nothing looked up");
  (history[3]!.content as { text: string }[])[0]!.text += " (edited)";
  history[8]!.content = "replaced";
  // Same length, other text.
  (history[5]!.content as { text: string }[])[0]!.text = "ANSWER 2";
  const got = reader.read(history);
  assert.deepEqual(got, new LangChainReader().read(history));
  assert.deepEqual(got[3]!.content, [{ type: "text", text: "answer 1 (edited)" }]);
  assert.deepEqual(got[8]!.content, [{ type: "text", text: "replaced" }]);
  assert.deepEqual(got[5]!.content, [{ type: "text", text: "ANSWER 2" }]);
  assert.ok(reader.looked > looked);
});
