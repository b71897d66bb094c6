/** The transcript helpers: one-line views and cuts that never split a surrogate pair. */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { oneLine, oneLineWindow, safeHead } from "./transcript.js";
import { headWindow } from "../engine/redact.js";

/** The definition `oneLine` must give: every white-space run collapsed to one space, trimmed, cut to `max`. */
const reference = (s: string, max: number): string => safeHead(s.replace(/\s+/g, " ").trim(), max);

test("oneLine: collapsed, trimmed and cut like its definition, reading only a head of a long input", () => {
  const piece = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom(" ", "\n", "\t\t", "\u00a0", "\u3000", "\ufeff", "😀", "\ud83d", "      ", "é"),
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 200 }), fc.integer({ min: 0, max: 60 }), (parts, max) => {
      const s = parts.join("");
      assert.equal(oneLine(s, max), reference(s, max));
    }),
    { seed: 20261201, numRuns: 2000 },
  );
  // A long run of spaces before the words: the head read grows until the result is whole.
  const spaced = `${" ".repeat(5000)}a${"\n".repeat(3000)}b c`;
  assert.equal(oneLine(spaced, 10), "a b c");
  // A surrogate pair across the cut is dropped whole.
  assert.equal(oneLine("ab😀", 3), "ab");
});

test("oneLineWindow: the one-line view read on to the end of the word at the cut, as if built to the whole margin", () => {
  const piece = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom(" ", "\n", "\t", "😀", "x".repeat(70), "y".repeat(300), "sk-proj-aB3dE5gH7jK9mN1pQ2rS4t"),
  );
  fc.assert(
    fc.property(
      fc.array(piece, { maxLength: 80 }),
      fc.integer({ min: 0, max: 200 }),
      fc.integer({ min: 1, max: 400 }),
      (parts, cut, margin) => {
        const s = parts.join("");
        assert.equal(oneLineWindow(s, cut, margin), headWindow(oneLine(s, cut + margin), cut, margin, " "));
      },
    ),
    { seed: 20261201, numRuns: 2000 },
  );
});
