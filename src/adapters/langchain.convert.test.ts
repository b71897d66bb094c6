/**
 * compact-safe/langchain conversion: LangChain's own message classes and
 * stored form ⇄ compact-safe messages, nothing lost either way (property
 * tests over generated compact-safe histories and generated LangChain
 * messages).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  AIMessage,
  BaseMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
} from "@langchain/core/messages";
import { REMOVE_ALL_MESSAGES as LANGGRAPH_REMOVE_ALL } from "@langchain/langgraph";
import { history } from "../../test/arbitraries.js";
import type { Message } from "../model/types.js";
import { ModelError } from "../model/schema.js";
import {
  fromLangChainMessages,
  fromLangChainStored,
  REMOVE_ALL_MESSAGES,
  toLangChainMessages,
  toLangChainStored,
} from "./langchain.js";

type Rec = Record<string, unknown>;

/** A message's fields as LangChain holds them, with LangChain's defaults filled in. */
function view(m: BaseMessage): Rec {
  const r = m as unknown as Rec;
  const out: Rec = { type: m.getType() };
  for (const k of [
    "content",
    "id",
    "name",
    "additional_kwargs",
    "response_metadata",
    "tool_calls",
    "invalid_tool_calls",
    "usage_metadata",
    "tool_call_id",
    "status",
    "artifact",
    "role",
  ])
    if (r[k] !== undefined) out[k] = r[k];
  return JSON.parse(JSON.stringify(out)) as Rec;
}

test("REMOVE_ALL_MESSAGES is LangGraph's own constant", () => {
  assert.equal(REMOVE_ALL_MESSAGES, LANGGRAPH_REMOVE_ALL);
});

test("generated compact-safe histories → LangChain messages → back: deepEqual", () => {
  fc.assert(
    fc.property(history, (h) => {
      const lc = toLangChainMessages(h);
      for (const m of lc) assert.ok(BaseMessage.isInstance(m));
      assert.deepEqual(fromLangChainMessages(lc), h);
    }),
    { numRuns: 150 },
  );
});

test("generated compact-safe histories → stored dump (JSON) → LangChain classes → back: deepEqual", () => {
  fc.assert(
    fc.property(history, (h) => {
      const dump = JSON.parse(JSON.stringify(toLangChainStored(h))) as unknown[];
      assert.deepEqual(fromLangChainStored(dump as never), h);
      // LangChain's own reader takes the dump; its messages read back the same.
      const classes = mapStoredMessagesToChatMessages(dump as never);
      assert.deepEqual(fromLangChainMessages(classes), h);
      // and LangChain's own writer gives the dump again.
      assert.deepEqual(
        fromLangChainStored(JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages(classes)))),
        h,
      );
    }),
    { numRuns: 100 },
  );
});

test("compact-safe fields LangChain has no place for survive: meta, usage, assistant_interrupted, extra block fields, tool_use between blocks", () => {
  const h: Message[] = [
    { role: "system", content: [], meta: { source: "x" } },
    {
      role: "assistant_interrupted",
      content: [
        { type: "tool_use", id: "a", name: "Read", input: { p: 1 }, thought_signature: "sig" },
        { type: "text", text: "between" },
        { type: "tool_use", id: "b", name: "Read", input: {} },
      ],
      usage: { input_tokens: 10, output_tokens: 3, scope: "child" },
      meta: { model: "m", n: [1, 2] },
    },
    {
      role: "user",
      content: [
        { type: "text", text: "note" },
        { type: "tool_result", tool_use_id: "a", content: "", is_error: false, synthetic: true },
        { type: "tool_result", tool_use_id: "b", content: "x", is_error: true, content_blocks: [] },
        { type: "text", text: "after", cache_control: { type: "ephemeral" } },
      ],
      usage: { input_tokens: 1 },
    },
    {
      role: "assistant",
      content: [
        { type: "weird_block", payload: [1] },
        { type: "text", text: "" },
      ],
    },
    { role: "user", content: [] },
  ];
  assert.deepEqual(fromLangChainMessages(toLangChainMessages(h)), h);
  assert.deepEqual(fromLangChainStored(JSON.parse(JSON.stringify(toLangChainStored(h)))), h);
});

// ---- LangChain → compact-safe → LangChain -------------------------------------------------

const word = fc.constantFrom("read", "the", "file", "ok", "ünï", "😀", "");
const textArb = fc.array(word, { minLength: 0, maxLength: 4 }).map((w) => w.join(" "));
const idArb = fc.option(fc.stringMatching(/^[a-z0-9_-]{1,8}$/), { nil: undefined });
const kwargs = fc.option(fc.dictionary(fc.constantFrom("x", "lc_source", "refusal"), fc.jsonValue()), {
  nil: undefined,
});

const part = fc.oneof(
  textArb.map((text) => ({ type: "text", text })),
  fc.record({
    type: fc.constant("thinking"),
    thinking: textArb,
    signature: fc.base64String({ maxLength: 12 }),
  }),
  fc.record({ type: fc.constant("redacted_thinking"), data: fc.base64String({ maxLength: 12 }) }),
  fc.record({ type: fc.constant("reasoning"), reasoning: textArb, id: fc.constant("rs_1") }),
  fc.constant({ type: "image_url", image_url: "data:image/png;base64,AAAA" }),
  fc.constant({ type: "image_url", image_url: { url: "https://x/y.png", detail: "low" } }),
  fc.constant({ type: "image", source_type: "base64", mime_type: "image/png", data: "AAAA" }),
  fc.constant({ type: "text" }),
);
const contentArb = fc.oneof(textArb, fc.array(part, { maxLength: 4 }));

const toolCall = fc.record(
  {
    name: fc.constantFrom("Read", "Bash"),
    args: fc.dictionary(fc.constantFrom("path", "cmd"), fc.string({ maxLength: 5 })),
    id: fc.stringMatching(/^call_[a-z0-9]{1,6}$/),
    type: fc.constant("tool_call" as const),
  },
  { requiredKeys: ["name", "args", "id"] },
);

const usageMeta = fc.option(
  fc.record(
    {
      input_tokens: fc.nat(1000),
      output_tokens: fc.nat(100),
      total_tokens: fc.nat(1100),
      input_token_details: fc.record({ cache_read: fc.nat(200) }),
    },
    { requiredKeys: ["input_tokens", "output_tokens", "total_tokens"] },
  ),
  { nil: undefined },
);

const lcMessage: fc.Arbitrary<BaseMessage> = fc.oneof(
  fc
    .record({
      content: contentArb,
      id: idArb,
      name: fc.option(fc.constant("ann"), { nil: undefined }),
      additional_kwargs: kwargs,
    })
    .map((f) => new HumanMessage(strip(f))),
  fc.record({ content: contentArb, id: idArb }).map((f) => new SystemMessage(strip(f))),
  fc
    .record({ content: contentArb, role: fc.constantFrom("assistant", "critic", "system") })
    .map((f) => new ChatMessage(f)),
  fc
    .record({
      content: contentArb,
      id: idArb,
      tool_calls: fc.uniqueArray(toolCall, { maxLength: 3, selector: (c) => c.id }),
      invalid_tool_calls: fc.option(
        fc.constant([{ name: "Bad", args: "{oops", id: "bad_1", error: "parse", type: "invalid_tool_call" }]),
        { nil: undefined },
      ),
      usage_metadata: usageMeta,
      response_metadata: fc.option(fc.record({ finish_reason: fc.constantFrom("stop", "tool_calls") }), {
        nil: undefined,
      }),
      additional_kwargs: kwargs,
    })
    .map((f) => new AIMessage(strip(f) as never)),
  // Anthropic's shape: the calls are also tool_use blocks in the content.
  fc
    .record({
      text: textArb,
      tool_calls: fc.uniqueArray(toolCall, { minLength: 1, maxLength: 3, selector: (c) => c.id }),
    })
    .map(
      (f) =>
        new AIMessage({
          content: [
            { type: "text", text: f.text },
            ...f.tool_calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.args })),
          ],
          tool_calls: f.tool_calls,
        }),
    ),
  fc
    .record({
      content: contentArb,
      id: idArb,
      tool_call_id: fc.stringMatching(/^call_[a-z0-9]{1,6}$/),
      status: fc.option(fc.constantFrom("success" as const, "error" as const), { nil: undefined }),
      artifact: fc.option(fc.jsonValue(), { nil: undefined }),
      name: fc.option(fc.constant("Read"), { nil: undefined }),
    })
    .map((f) => new ToolMessage(strip(f) as never)),
);

/** A stored message with the defaults LangChain's writer fills in. */
function normalized(s: { type: string; data: Rec }): unknown {
  const data: Rec = { additional_kwargs: {}, response_metadata: {}, ...s.data };
  if (s.type === "ai") {
    data.tool_calls ??= [];
    data.invalid_tool_calls ??= [];
  }
  return { type: s.type, data };
}

function strip<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

test("generated LangChain messages → compact-safe → LangChain: every field the same", () => {
  fc.assert(
    fc.property(fc.array(lcMessage, { maxLength: 8 }), (msgs) => {
      const back = toLangChainMessages(fromLangChainMessages(msgs));
      assert.deepEqual(back.map(view), msgs.map(view));
      for (let i = 0; i < msgs.length; i++) assert.equal(back[i]!.constructor, msgs[i]!.constructor);
    }),
    { numRuns: 200 },
  );
});

test("generated LangChain messages → stored dump → compact-safe → stored dump → LangChain: the same", () => {
  fc.assert(
    fc.property(fc.array(lcMessage, { maxLength: 8 }), (msgs) => {
      const dump = JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages(msgs))) as never[];
      const again = JSON.parse(JSON.stringify(toLangChainStored(fromLangChainStored(dump)))) as never[];
      assert.deepEqual(
        mapStoredMessagesToChatMessages(again).map(view),
        mapStoredMessagesToChatMessages(dump).map(view),
      );
      // The dump itself, not only what LangChain's classes read of it: no field added or lost.
      assert.deepEqual(again.map(normalized), dump.map(normalized));
    }),
    { numRuns: 200 },
  );
});

test("LangChain messages read as compact-safe's model: calls, results, errors, thinking, usage", () => {
  const msgs = [
    new SystemMessage("be brief"),
    new HumanMessage({ content: "read a", id: "h1" }),
    new AIMessage({
      content: [
        { type: "thinking", thinking: "plan", signature: "c2ln" },
        { type: "text", text: "reading" },
      ],
      tool_calls: [{ id: "c1", name: "Read", args: { path: "a" } }],
      usage_metadata: {
        input_tokens: 120,
        output_tokens: 7,
        total_tokens: 127,
        input_token_details: { cache_read: 100 },
      },
      id: "a1",
    }),
    new ToolMessage({ content: "boom", tool_call_id: "c1", status: "error", artifact: { code: 1 } }),
  ];
  const cs = fromLangChainMessages(msgs);
  assert.deepEqual(cs[0], { role: "system", content: [{ type: "text", text: "be brief" }] });
  assert.deepEqual(cs[1], {
    role: "user",
    content: [{ type: "text", text: "read a" }],
    meta: { langchain: { id: "h1" } },
  });
  assert.equal(cs[2]!.role, "assistant");
  assert.deepEqual(cs[2]!.content, [
    { type: "thinking", thinking: "plan", signature: "c2ln" },
    { type: "text", text: "reading" },
    { type: "tool_use", id: "c1", name: "Read", input: { path: "a" } },
  ]);
  assert.deepEqual(cs[2]!.usage, { input_tokens: 20, output_tokens: 7, cache_read_input_tokens: 100 });
  assert.deepEqual(cs[3]!.content, [
    { type: "tool_result", tool_use_id: "c1", content: "boom", is_error: true },
  ]);
  assert.deepEqual((cs[3]!.meta!.langchain as Rec).artifact, { code: 1 });
});

test("a malformed LangChain message is refused with the input's own path", () => {
  assert.throws(
    () => fromLangChainStored([{ type: "tool", data: { content: "x" } }] as never),
    /^LangChainMessageError: messages\[0\]\.data\.tool_call_id: a tool message needs its tool_call_id/,
  );
  assert.throws(
    () =>
      fromLangChainStored([
        { type: "human", data: { content: "x" } },
        { type: "robot", data: {} },
      ] as never),
    /messages\[1\]\.type: unknown LangChain message type "robot"/,
  );
  assert.throws(
    () => fromLangChainMessages([{ content: "x" } as never]),
    /messages\[0\]: not a LangChain message/,
  );
  // A ModelError like every malformed message: code invalid_message, the path on the error.
  const e = (() => {
    try {
      fromLangChainStored([{ type: "ai", data: { content: 3 } }] as never);
    } catch (err) {
      return err;
    }
  })();
  assert.ok(e instanceof ModelError && e.code === "invalid_message" && e.path === "messages[0].data.content");
});
