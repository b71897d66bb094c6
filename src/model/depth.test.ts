/** Hostile nesting and malformed messages: clear errors naming the path, never a stack overflow or a TypeError. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "./types.js";
import { ModelError, parseJournalEntry, parseMessage, parseMessages } from "./schema.js";
import { canonicalJson } from "./blocks.js";
import { JsonDepthError, MAX_JSON_DEPTH, jsonDepthError, parseJsonLimited, tooDeepAt } from "./depth.js";
import { estimateTokens } from "../engine/tokens.js";
import { compactMessagesSafe } from "../engine/compact.js";

/** `[[[…1…]]]`, `levels` arrays deep. */
function nested(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const callWith = (input: unknown): Message => ({
  role: "assistant",
  content: [{ type: "tool_use", id: "t1", name: "Edit", input }],
});
const result: Message = {
  role: "user",
  content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }],
};

test("tooDeepAt counts brackets outside strings only, escapes included, and locates the crossing bracket", () => {
  assert.equal(tooDeepAt("[[1]]", 2), -1);
  assert.equal(tooDeepAt("[[[1]]]", 2), 2);
  // Brackets in strings, an escaped quote, an escaped backslash before a closing quote.
  assert.equal(tooDeepAt(`["[[[[", "\\"[[[[", "\\\\", {"a": "{{{{"}]`, 2), -1);
  assert.equal(tooDeepAt(`["\\\\", [[1]]]`, 2), 8);
  assert.equal(tooDeepAt(`"unterminated [[[[[`, 1), -1);
  assert.equal(tooDeepAt("[".repeat(100_000), MAX_JSON_DEPTH), MAX_JSON_DEPTH);
  const e = jsonDepthError('{\n  "a": [[[[1]]]]\n}', 3);
  assert.ok(e instanceof JsonDepthError);
  assert.deepEqual([e.line, e.column, e.limit], [2, 10, 3]);
  assert.match(e.message, /nested deeper than 3 levels \(the limit\), at line 2, column 10/);
  assert.deepEqual(parseJsonLimited('{"a":[1,{"b":2}]}'), { a: [1, { b: 2 }] });
  assert.throws(() => parseJsonLimited("[".repeat(600) + "]".repeat(600)), JsonDepthError);
  assert.throws(() => parseJsonLimited("[1,"), SyntaxError);
});

test("parseMessage refuses a message nested deeper than 256 levels, naming the path (bounded walk, cycles too)", () => {
  assert.doesNotThrow(() => parseMessage(callWith(nested(250))));
  assert.throws(
    () => parseMessages([user("hi"), callWith({ a: nested(20_000) })]),
    (e: unknown) =>
      e instanceof ModelError &&
      e.path.startsWith("messages[1].content[0].input.a[0][0]") &&
      /nested deeper than 256 levels \(the limit\)/.test(e.message),
  );
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.throws(() => parseMessage(callWith(cyclic)), ModelError);
  // Nested content_blocks: the shape walk is bounded as well.
  let block: Record<string, unknown> = { type: "text", text: "x" };
  for (let i = 0; i < 20_000; i++)
    block = { type: "tool_result", tool_use_id: "t", content: "", content_blocks: [block] };
  assert.throws(() => parseMessage({ role: "user", content: [block] }), ModelError);
});

test("a journal entry: the message payload and the other fields are depth-checked", () => {
  const entry = (payload: unknown, extra: Record<string, unknown> = {}) => ({
    id: "a",
    parent_id: null,
    kind: "assistant",
    created_at: "2025-01-01T00:00:00Z",
    payload,
    ...extra,
  });
  assert.throws(
    () => parseJournalEntry(entry(callWith(nested(5000))), "line 3"),
    (e: unknown) => e instanceof ModelError && e.path.startsWith("line 3.payload.content[0].input"),
  );
  assert.throws(
    () => parseJournalEntry(entry(callWith({}), { meta: nested(5000) })),
    (e: unknown) => e instanceof ModelError && e.path.startsWith("entry.meta"),
  );
});

test("canonicalJson of a deep value is a ModelError naming the path, not a RangeError", () => {
  assert.equal(canonicalJson({ b: [2, { d: 1, c: 0 }], a: 1 }), '{"a":1,"b":[2,{"c":0,"d":1}]}');
  assert.throws(
    () => canonicalJson({ x: nested(50_000) }, "input"),
    (e: unknown) => e instanceof ModelError && e.path.startsWith("input.x[0]"),
  );
});

test("the token estimate: a deep tool input is a ModelError naming the message; deep content_blocks are walked without recursion", () => {
  assert.throws(
    () => estimateTokens([user("hi"), callWith(nested(50_000))]),
    (e: unknown) =>
      e instanceof ModelError &&
      e.path.startsWith("messages[1].content[0].input[0]") &&
      /nested deeper than/.test(e.message),
  );
  let block: Record<string, unknown> = { type: "text", text: "x" };
  for (let i = 0; i < 50_000; i++)
    block = { type: "tool_result", tool_use_id: "t", content: "", content_blocks: [block] };
  const n = estimateTokens([{ role: "user", content: [block as never] }]);
  assert.ok(Number.isFinite(n) && n > 50_000);
});

test("compactMessagesSafe validates the messages first: a text block without text, or a deep input, names the path", async () => {
  const history: Message[] = [
    user("first"),
    { role: "assistant", content: [{ type: "text" } as never] },
    user("second " + "x".repeat(4000)),
    { role: "assistant", content: [{ type: "text", text: "ok" }] },
    user("third"),
  ];
  await assert.rejects(
    compactMessagesSafe(history),
    (e: unknown) => e instanceof ModelError && e.message === 'messages[1].content[0] (text): missing "text"',
  );
  await assert.rejects(
    compactMessagesSafe([user("a"), callWith(nested(20_000)), result, user("b")]),
    (e: unknown) => e instanceof ModelError && e.path.startsWith("messages[1].content[0].input"),
  );
});
