/**
 * `jsonLength` is `JSON.stringify(value).length`, counted without building
 * the text: on any JSON value, any string (controls, quotes, backslashes,
 * paired and lone surrogates), and on what it hands to `JSON.stringify`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { jsonLength, roughTokens } from "./imported-compaction.js";
import type { Message } from "../../model/types.js";

const text = fc.oneof(
  fc.string({ unit: "binary" }), // any code unit, lone surrogates included
  fc.string({ unit: "grapheme" }),
  fc.constantFrom('"', "\\", "\b\t\n\f\r", "\u0000\u001f\u007f", "\ud83d\ude00", "\ud83d", "\ude00x\ud800"),
);

test("jsonLength: the length of JSON.stringify on any JSON value and any string", () => {
  fc.assert(
    fc.property(fc.jsonValue({ depthSize: "medium" }), (v) => jsonLength(v) === JSON.stringify(v).length),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.dictionary(text, fc.array(text)), (v) => jsonLength(v) === JSON.stringify(v).length),
    { numRuns: 2000 },
  );
});

test("jsonLength: what JSON.stringify leaves out, writes as null, or writes its own way", () => {
  const sparse: unknown[] = [1];
  sparse[3] = 2;
  const withNullProto = Object.assign(Object.create(null) as object, { a: 1 });
  const values: unknown[] = [
    { a: undefined, b: () => 1, c: Symbol("s"), d: 1 },
    [undefined, () => 1, Symbol("s")],
    sparse,
    [NaN, Infinity, -0, 1e21, 1.5e-7, -12.5],
    { toJSON: () => "x" },
    new Date(0),
    new Map([[1, 2]]),
    withNullProto,
    { "2": 1, b: 2, "1": 3 },
    { nested: [{ deeper: [{ text: 'a "quoted" \\ line\n' }] }] },
    [],
    {},
  ];
  for (const v of values) assert.equal(jsonLength(v), JSON.stringify(v).length, JSON.stringify(v));
  let deep: unknown = "x";
  for (let i = 0; i < 1500; i++) deep = [deep];
  assert.equal(
    jsonLength(deep),
    JSON.stringify(deep).length,
    "deeper than the walk: JSON.stringify's figure",
  );
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.throws(() => jsonLength(cyclic), TypeError, "a cycle is JSON.stringify's error");
  assert.throws(() => jsonLength({ n: 1n }), TypeError, "a BigInt is JSON.stringify's error");
});

test("roughTokens: JSON characters of the contents over four, as written out", () => {
  const messages: Message[] = [
    { role: "user", content: [{ type: "text", text: 'fix the "bug" in src/a.ts\n\u00e9\ud83d\ude00' }] },
    {
      role: "assistant",
      content: [
        { type: "tool_use", id: "t1", name: "Read", input: { path: "src/a.ts", n: 3, deep: [null, true] } },
      ],
    },
  ];
  assert.equal(roughTokens(messages), Math.ceil(JSON.stringify(messages.map((m) => m.content)).length / 4));
  assert.equal(roughTokens([]), 0);
});
