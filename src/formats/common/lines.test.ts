import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { eachLine, splitLines } from "./lines.js";

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
