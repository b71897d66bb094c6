import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { byteLines, eachLine, objectLines, splitLines } from "./lines.js";
import { ReportBuilder } from "./report.js";

test("eachLine gives the lines splitLines gives, numbered and marked alike, on any text", () => {
  const piece = fc.constantFrom("\n", "\r\n", "\r", "{}", '{"a":1}', " ", "x", "é", "\n\n");
  fc.assert(
    fc.property(
      fc.array(piece, { maxLength: 30 }).map((a) => a.join("")),
      (text) => {
        assert.deepEqual([...eachLine(text)], splitLines(text));
      },
    ),
    { numRuns: 2000 },
  );
  for (const text of ["", "\n", "a", "a\n", "a\r\n", "\r", "a\nb", "a\n\nb\n"])
    assert.deepEqual([...eachLine(text)], splitLines(text), JSON.stringify(text));
});

test("eachLine stops where its reader stops: the lines after are never made", () => {
  const text = Array.from({ length: 1000 }, (_, i) => `{"i":${i}}`).join("\n");
  const it = eachLine(text);
  assert.deepEqual(it.next().value, { line: 1, text: '{"i":0}', last_unterminated: false });
  assert.deepEqual(it.next().value, { line: 2, text: '{"i":1}', last_unterminated: false });
  const rest = [...it];
  assert.equal(rest.length, 998);
  assert.deepEqual(rest.at(-1), { line: 1000, text: '{"i":999}', last_unterminated: true });
});

test("objectLines takes over the lines a head gives (detection's parse) and parses the others", () => {
  const text = '{"a":1}\n\n{"b":2}\nnot json\n{"c":3}';
  const taken = { ok: true as const, value: { a: "taken" } };
  const rb = new ReportBuilder("claude-code", "x.jsonl");
  const got = [...objectLines(text, rb, [taken, undefined, undefined])].map(({ raw, o }) => [raw.line, o]);
  assert.equal(got[0]![1], taken.value, "line 1 is the head's own object, not parsed again");
  assert.deepEqual(got, [
    [1, { a: "taken" }],
    [3, { b: 2 }],
    [5, { c: 3 }],
  ]);
  const fresh = new ReportBuilder("claude-code", "x.jsonl");
  for (const _ of objectLines(text, fresh)) void _;
  assert.deepEqual(rb.report.skipped, fresh.report.skipped, "blank and broken lines are reported alike");
  assert.equal(rb.report.skipped.length, 2);
});

test("byteLines gives the lines splitLines gives of the bytes' UTF-8 text, on any bytes (invalid UTF-8 included)", () => {
  const piece = fc.oneof(
    fc
      .constantFrom("\n", "\r\n", "\r", "{}", '{"a":"é"}', " ", "x", "\u2028", "😀")
      .map((s) => Buffer.from(s)),
    // Bytes that are no UTF-8 on their own: cut sequences, stray continuation bytes, overlong forms.
    fc
      .constantFrom([0xe2, 0x82], [0xf0, 0x9f], [0x80], [0xc0, 0xaf], [0xff], [0xed, 0xa0, 0x80])
      .map((a) => Buffer.from(a)),
  );
  fc.assert(
    fc.property(
      fc.array(piece, { maxLength: 30 }).map((a) => Buffer.concat(a)),
      (bytes) => {
        assert.deepEqual(byteLines(bytes), splitLines(bytes.toString("utf8")));
      },
    ),
    { numRuns: 3000 },
  );
  for (const text of ["", "\n", "a", "a\n", "a\r\n", "\r", "a\nb", "a\n\nb\n", "\r\n\r\n"])
    assert.deepEqual(byteLines(Buffer.from(text)), splitLines(text), JSON.stringify(text));
});
