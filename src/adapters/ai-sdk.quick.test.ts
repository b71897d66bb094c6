/**
 * The quick conversion of the common AI SDK messages (`quickMessageFromModel`:
 * one read instead of the plain-data check, the schema and the conversion
 * each walking the message) gives what the long way gives: the same
 * messages, the same tool names read and added, the same errors, and falls
 * back on every shape it does not take.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { modelMessageSchema } from "ai";
import {
  conversionMemo,
  fromModelMessagesIndexed,
  Names,
  quickMessageFromModel,
  type ConversionCache,
  type SchemaLike,
} from "../wire/ai-sdk.js";
import { surelyValidModelMessage } from "../wire/ai-sdk-quick.js";
import { toModelMessages } from "./ai-sdk.js";
import { syntheticSession } from "../../bench/synthetic.js";
import { MAX_MESSAGE_DEPTH } from "../model/depth.js";
import { CONSTANTS } from "../model/constants.js";

const aiSchema = modelMessageSchema as unknown as SchemaLike;
/** The long way: the `ai` schema, without the quick conversion. */
const long: SchemaLike = { safeParse: (v) => aiSchema.safeParse(v) };
/** The same schema, with the quick conversion. */
const quick: SchemaLike = { safeParse: (v) => aiSchema.safeParse(v), acceptsQuickShapes: true };

type Outcome =
  { ok: true; messages: unknown; indexOf: number[]; names: unknown[] } | { ok: false; error: string };

/** The conversion by `schema`, with the tool names each message read and added and its fingerprint (its cache entry). */
function convert(messages: unknown[], schema: SchemaLike): Outcome {
  const cache: ConversionCache = new WeakMap();
  try {
    const r = fromModelMessagesIndexed(messages, schema, "messages", cache);
    const names = messages.map((m) => {
      const e = typeof m === "object" && m !== null ? cache.get(m) : undefined;
      return e === undefined ? undefined : { reads: e.reads, writes: e.writes, fingerprint: e.fingerprint };
    });
    return { ok: true, messages: r.messages, indexOf: r.indexOf, names };
  } catch (e) {
    return { ok: false, error: `${(e as Error).name}: ${(e as Error).message}` };
  }
}

function same(messages: unknown[], what: string): Outcome {
  const a = convert(messages, long);
  const b = convert(messages, quick);
  assert.deepStrictEqual(b, a, what);
  const c = convert(messages, undefined as unknown as SchemaLike);
  if (a.ok) assert.deepStrictEqual(c.ok && c.messages, a.messages, `${what} (no schema)`);
  return a;
}

const call = (id: string, input: unknown, name = "Read") => ({
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: id, toolName: name, input }],
});
const result = (id: string, name = "Read", type = "text") => ({
  role: "tool",
  content: [{ type: "tool-result", toolCallId: id, toolName: name, output: { type, value: "ok" } }],
});

/** An assistant message of one reasoning part with these provider options. */
function reasoning(providerOptions: unknown) {
  return { role: "assistant", content: [{ type: "reasoning", text: "hm", providerOptions }] };
}

/** A tool result whose output has a `text` field besides its value. */
function withOutputField(m: ReturnType<typeof result>) {
  Object.assign(m.content[0]!.output, { text: "t" });
  return m;
}

/** A tool result whose output has a symbol-keyed field. */
function withOutputSymbol(m: ReturnType<typeof result>) {
  Object.assign(m.content[0]!.output, { [Symbol("s")]: 1 });
  return m;
}

/** `o` with a non-enumerable own field `key`. */
function hidden(o: object, key: string) {
  Object.defineProperty(o, key, { value: "m1", enumerable: false });
  return o;
}

test("quick conversion: a synthetic session converts as the long way, every message taken quickly", () => {
  const messages = toModelMessages(syntheticSession(400)) as unknown as unknown[];
  same(messages, "synthetic session");
  const names = new Names();
  for (const m of messages) {
    assert.equal(surelyValidModelMessage(m), true, "what the quick way takes is surely valid");
    assert.equal(aiSchema.safeParse(m).success, true);
    assert.notEqual(quickMessageFromModel(m, names), undefined, JSON.stringify(m).slice(0, 200));
  }
});

test("quick conversion: string contents, reasoning with a signature, error results", () => {
  same(
    [
      { role: "system", content: "be brief" },
      { role: "user", content: "hello" },
      { role: "assistant", content: "hi" },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "thinking", providerOptions: { anthropic: { signature: "sig" } } },
          { type: "reasoning", text: "more" },
          { type: "text", text: "calling" },
          { type: "tool-call", toolCallId: "a", toolName: "Bash", input: { command: "ls" } },
          { type: "tool-call", toolCallId: "b", toolName: "Read", input: "raw" },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "a",
            toolName: "Bash",
            output: { type: "error-text", value: "no" },
          },
          { type: "tool-result", toolCallId: "b", toolName: "Read", output: { type: "text", value: "x" } },
        ],
      },
      { role: "user", content: [{ type: "text", text: "next" }] },
    ],
    "mixed",
  );
});

test("quick conversion: every shape it does not take goes the long way, with the same result", () => {
  const sparse: unknown[] = [{ type: "text", text: "a" }];
  sparse[2] = { type: "text", text: "b" };
  const cases: [string, unknown[]][] = [
    ["an extra message field", [{ role: "user", content: "x", id: "m1" }]],
    ["provider options on the message", [{ role: "user", content: "x", providerOptions: { a: { b: 1 } } }]],
    ["an extra part field", [{ role: "user", content: [{ type: "text", text: "x", id: 1 }] }]],
    ["a tool result naming another tool", [call("c", {}), result("c", "Write")]],
    ["a tool result of no call", [result("zz")]],
    [
      "a json output",
      [
        call("c", {}),
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "c",
              toolName: "Read",
              output: { type: "json", value: { a: 1 } },
            },
          ],
        },
      ],
    ],
    ["an empty content", [{ role: "assistant", content: [] }]],
    ["a text part in a tool message", [{ role: "tool", content: [{ type: "text", text: "x" }] }]],
    ["a tool call in a user message", [{ role: "user", content: call("c", {}).content }]],
    ["an image", [{ role: "user", content: [{ type: "image", image: "https://e.x/a.png" }] }]],
    ["an unknown role", [{ role: "robot", content: "x" }]],
    ["a class instance", [Object.assign(Object.create({ k: 1 }) as object, { role: "user", content: "x" })]],
    ["a tool call input with a URL", [call("c", { u: new URL("https://e.x/") })]],
    ["a tool call input with a BigInt", [call("c", { n: 1n })]],
    ["a tool call input with a function", [call("c", { f: () => 1 })]],
    ["a sparse content array", [{ role: "user", content: sparse }]],
    ["a symbol-keyed field", [{ role: "user", content: [{ type: "text", text: "x", [Symbol("s")]: 1 }] }]],
    [
      "a symbol-keyed message field",
      [{ role: "user", content: [{ type: "text", text: "x" }], [Symbol("s")]: 1 }],
    ],
    ["a symbol-keyed output field", [call("c", {}), withOutputSymbol(result("c"))]],
    [
      "a key of another quick shape on a text part",
      [{ role: "user", content: [{ type: "text", text: "x", value: "v" }] }],
    ],
    [
      "a tool call with an output",
      [{ role: "assistant", content: [{ ...call("c", {}).content[0], output: "o" }] }],
    ],
    ["a signature that is no string", [reasoning({ anthropic: { signature: 1 } })]],
    ["another provider beside Anthropic", [reasoning({ anthropic: { signature: "s" }, openai: {} })]],
    ["a signature beside another field", [reasoning({ anthropic: { signature: "s", text: "t" } })]],
    ["reasoning options without a signature", [reasoning({ anthropic: {} })]],
    ["an output with a text besides its value", [call("c", {}), withOutputField(result("c"))]],
    ["a non-enumerable message field", [hidden({ role: "user", content: "x" }, "id")]],
    [
      "an inherited enumerable field",
      [Object.assign(Object.create({ role: "user" }) as object, { content: "x" })],
    ],
  ];
  for (const [what, messages] of cases) same(messages, what);
});

test("quick conversion: a throwing getter, a cycle through the input, too deep: the long way's errors", () => {
  const getter = { role: "user", content: [{ type: "text" }] };
  Object.defineProperty(getter.content[0], "text", {
    enumerable: true,
    get() {
      throw new Error("boom");
    },
  });
  const cyclic = call("c", {}) as { content: { input: unknown }[] };
  (cyclic.content[0]!.input as Record<string, unknown>).back = cyclic;
  const deep = (levels: number) => {
    let v: unknown = "leaf";
    for (let i = 0; i < levels; i++) v = [v];
    return v;
  };
  // The input sits at the fourth level: 3 + its own levels in all.
  const fits = MAX_MESSAGE_DEPTH - 3;
  for (const [what, messages, ok] of [
    ["a getter that throws", [getter], false],
    ["a cycle back to the message", [cyclic], false],
    ["an input as deep as the limit allows", [call("c", deep(fits))], true],
    ["an input one level deeper", [call("c", deep(fits + 1))], false],
  ] as [string, unknown[], boolean][]) {
    const r = same(messages, what);
    assert.equal(r.ok, ok, `${what}: ${r.ok ? "converted" : r.error}`);
  }
});

test("quick conversion: inputs that share objects are counted together against the limit, as the long way counts them", () => {
  // An object whose JSON form holds 2^k + ... values, small in memory: each level shares one object twice.
  const doubling = (levels: number) => {
    let v: unknown = 0;
    for (let i = 0; i < levels; i++) v = { a: v, b: v };
    return v;
  };
  // 2^23 - 1 values: one input (with the 7 values around it) fits, two do not.
  const half = doubling(22);
  const one = call("c", half);
  const two = {
    role: "assistant",
    content: [
      { type: "tool-call", toolCallId: "c", toolName: "Read", input: half },
      { type: "tool-call", toolCallId: "d", toolName: "Read", input: half },
    ],
  };
  assert.ok(2 * (2 ** 23 - 1) + 11 > CONSTANTS.maxJsonValues, "the two inputs together are over the limit");
  assert.ok(2 ** 23 - 1 + 7 <= CONSTANTS.maxJsonValues, "one is not");
  assert.equal(same([one], "one shared input").ok, true);
  const r = same([two], "two inputs sharing it");
  assert.equal(r.ok, false);
  assert.match(!r.ok ? r.error : "", /more than 16777216 values/);
});

test("quick conversion: a loop that edits a message in place is read again, the quick way too", () => {
  const messages = [
    { role: "user", content: [{ type: "text", text: "first" }] },
    call("c", { path: "a" }),
    result("c"),
  ] as { role: string; content: { text?: string }[] }[];
  const cache: ConversionCache = new WeakMap();
  const memo = conversionMemo();
  const first = fromModelMessagesIndexed(messages, quick, "messages", cache, memo).messages.slice();
  messages[0]!.content[0]!.text = "edited";
  const second = fromModelMessagesIndexed(messages, quick, "messages", cache, memo).messages;
  assert.deepEqual(first[0]!.content, [{ type: "text", text: "first" }]);
  assert.deepEqual(second[0]!.content, [{ type: "text", text: "edited" }]);
  assert.deepStrictEqual(second.slice(1), first.slice(1));
});

test("quick conversion: a getter that converts other messages while a message is read does not mix their blocks", () => {
  const other = toModelMessages(syntheticSession(6)) as unknown as unknown[];
  const part = { type: "text" } as { type: string; text?: string };
  Object.defineProperty(part, "text", {
    enumerable: true,
    get() {
      // Another conversion, run from inside this one's read of the part.
      fromModelMessagesIndexed(other, quick);
      return "read";
    },
  });
  const messages = [
    { role: "user", content: [{ type: "text", text: "before" }, part, { type: "text", text: "after" }] },
  ];
  const r = same(messages, "a reentrant getter");
  assert.ok(r.ok);
  assert.deepEqual(r.messages, [
    { role: "user", content: ["before", "read", "after"].map((text) => ({ type: "text", text })) },
  ]);
});
