/** The one-pass literal scan that pre-checks secret redaction. */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { LiteralSet } from "./literal-scan.js";

const naive = (literals: readonly string[], text: string): number[] =>
  literals.flatMap((l, i) => (text.includes(l) ? [i] : []));

test("LiteralSet finds exactly the literals a text holds, as includes does", () => {
  const alphabet = fc.constantFrom("a", "b", "c", "k", "e", "y", "-", "_", ".", "é", "😀", "\n");
  const word = fc.array(alphabet, { minLength: 1, maxLength: 6 }).map((cs) => cs.join(""));
  fc.assert(
    fc.property(
      fc.uniqueArray(word, { minLength: 1, maxLength: 30 }),
      fc.array(alphabet, { maxLength: 300 }),
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
  assert.throws(() => new LiteralSet(["ok", ""]), /empty literal/);
});
