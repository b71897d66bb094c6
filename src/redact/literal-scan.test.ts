/** The one-pass literal scan that pre-checks secret redaction. */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { LiteralSet } from "./literal-scan.js";

/** The definition: a literal occurs when the text, A–Z read as a–z, includes it. */
const naive = (literals: readonly string[], text: string): number[] => {
  const folded = text.replace(/[A-Z]/g, (c) => c.toLowerCase());
  return literals.flatMap((l, i) => (folded.includes(l) ? [i] : []));
};

test("LiteralSet finds exactly the literals a text holds in any case, as includes does on its ASCII-folded text", () => {
  const lit = fc.constantFrom("a", "b", "c", "k", "e", "y", "-", "_", ".", "\n");
  const textChar = fc.constantFrom(
    "a",
    "B",
    "c",
    "K",
    "e",
    "Y",
    "-",
    "_",
    ".",
    "é",
    "😀",
    "\n",
    "\u212a",
    "İ",
    // Characters whose low byte is a letter (k, e, y): read as bytes, they must not pass for one.
    "\u016b",
    "\u0165",
    "\u0179",
  );
  const word = fc.array(lit, { minLength: 1, maxLength: 6 }).map((cs) => cs.join(""));
  fc.assert(
    fc.property(
      fc.uniqueArray(word, { minLength: 1, maxLength: 30 }),
      fc.array(fc.oneof(lit, textChar), { maxLength: 300 }),
      (literals, chars) => {
        const set = new LiteralSet(literals);
        const text = chars.join("");
        const found = set.scan(text).sort((a, b) => a - b);
        assert.deepEqual(found, naive(literals, text));
        literals.forEach((_, i) => assert.equal(set.has(i), found.includes(i)));
      },
    ),
    { seed: 20261201, numRuns: 1500 },
  );
});

test("LiteralSet: literals inside others, at the ends, in texts shorter than three characters", () => {
  const set = new LiteralSet(["key", "api_key", "ey", "s.", "sk-ant-"]);
  assert.deepEqual(
    set.scan("the api_key").sort((a, b) => a - b),
    [0, 1, 2],
  );
  assert.deepEqual(set.scan("sk-ant-"), [4]);
  assert.deepEqual(set.scan("s."), [3]);
  assert.deepEqual(set.scan("ke"), []);
  assert.deepEqual(set.scan(""), []);
  // A scan forgets the one before it.
  set.scan("key");
  set.scan("nothing");
  assert.equal(set.has(0), false);
  assert.deepEqual(
    set.scan("THE API_KEY").sort((a, b) => a - b),
    [0, 1, 2],
  );
  // A text longer than the reused buffer, then a short one: nothing of the first is read again.
  assert.deepEqual(set.scan(`${"x".repeat(70_000)}sk-ant-`), [4]);
  assert.deepEqual(set.scan(`${"x".repeat(1000)} API_KEY`).sort(), [0, 1, 2]);
  assert.deepEqual(set.scan("xy"), []);
  // Literals that share their first three characters, told apart from the fourth on, in any case.
  const shared = new LiteralSet(["contentful", "confluent", "conf", "con", "enterprise"]);
  assert.deepEqual(shared.scan("the CONFIG").sort(), [2, 3]);
  assert.deepEqual(shared.scan("Contentful and confluence").sort(), [0, 2, 3]);
  assert.deepEqual(shared.scan("client events entered"), []);
  assert.deepEqual(shared.scan("ENTERPRISE"), [4]);
  assert.deepEqual(shared.scan("conf").sort(), [2, 3]);
  assert.throws(() => new LiteralSet(["ok", ""]), /empty literal/);
  assert.throws(() => new LiteralSet(["Key"]), /lower-case ASCII/);
  assert.throws(() => new LiteralSet(["clé"]), /lower-case ASCII/);
});

test("LiteralSet records where each positional literal starts, every occurrence, in order; others once", () => {
  const lit = fc.constantFrom("k", "e", "y", "a", "p", "i", "-", ".");
  const word = fc.array(lit, { minLength: 1, maxLength: 5 }).map((cs) => cs.join(""));
  const textChar = fc.constantFrom("k", "E", "y", "A", "p", "I", "-", ".", " ", "é", "\u016b", "😀");
  fc.assert(
    fc.property(
      fc.uniqueArray(word, { minLength: 1, maxLength: 12 }),
      fc.array(fc.oneof(lit, textChar), { maxLength: 200 }),
      (literals, chars) => {
        const positional = literals.flatMap((l, i) => (l.length >= 3 ? [i] : []));
        const set = new LiteralSet(literals, positional);
        const text = chars.join("");
        const found = set.scan(text).sort((a, b) => a - b);
        assert.deepEqual(found, naive(literals, text));
        const folded = text.replace(/[A-Z]/g, (c) => c.toLowerCase());
        const starts: number[] = [];
        for (let at = 0; at < text.length; at++)
          for (const i of positional) if (folded.startsWith(literals[i]!, at)) starts.push(at);
        assert.deepEqual(set.positions(text), starts);
        assert.equal(set.positions(`${text}!`), undefined, "the positions are of the text scanned");
      },
    ),
    { seed: 20261204, numRuns: 1000 },
  );
  assert.throws(() => new LiteralSet(["ab", "key"], [0]), /three characters or more/);
  assert.throws(() => new LiteralSet(["key"], [1]), /three characters or more/);
});
