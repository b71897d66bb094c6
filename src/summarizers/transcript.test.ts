/** The transcript helpers: one-line views and cuts that never split a surrogate pair. */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { oneLine, oneLineWindow, patchPaths, safeHead } from "./transcript.js";
import { headWindow } from "../redact/redact.js";

/** The definition `oneLine` must give: every white-space run collapsed to one space, trimmed, cut to `max`. */
const reference = (s: string, max: number): string => safeHead(s.replace(/\s+/g, " ").trim(), max);

test("oneLine: collapsed, trimmed and cut like its definition, reading only a head of a long input", () => {
  const piece = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom(
      " ",
      "\n",
      "\t\t",
      "\u00a0",
      "\u3000",
      "\ufeff",
      "😀",
      "\ud83d",
      "      ",
      "é",
      " x",
      "\v\f",
      "\u2000",
      "\u200a",
      "\u2028",
      "\u202f",
    ),
    // Not white space to `\s`: kept as they are.
    fc.constantFrom("\u0085", "\u180e", "\u200b"),
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

/** The definition `patchPaths` must give, line by line. */
function referencePatchPaths(s: string): string[] {
  const prefixes = ["*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ", "+++ b/"];
  const out: string[] = [];
  let afterDashes = false;
  for (const line of s.split("\n")) {
    const prefix = prefixes.find((x) => line.startsWith(x));
    let p =
      prefix !== undefined
        ? line.slice(prefix.length)
        : afterDashes && line.startsWith("+++ ")
          ? line.slice(4)
          : undefined;
    if (p !== undefined) {
      p = p.split("\t")[0]!.trim();
      if (p !== "" && p !== "/dev/null") out.push(p);
    }
    afterDashes = line.startsWith("--- ");
  }
  return out;
}

test("patchPaths: the files named by apply_patch and unified-diff headers, like its line-by-line definition", () => {
  const line = fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.constantFrom(
      "*** Update File: ",
      "*** Add File: ",
      "*** Delete File: ",
      "*** Move to: ",
      "*** Begin Patch",
    ),
    fc.constantFrom(
      "+++ b/",
      "+++ ",
      "--- a/x",
      "--- ",
      "+",
      "+added",
      "*",
      "**",
      "/dev/null",
      "\t2024-01-01",
      " src/a.ts",
    ),
  );
  fc.assert(
    fc.property(
      fc.array(
        fc.array(line, { maxLength: 3 }).map((p) => p.join("")),
        { maxLength: 30 },
      ),
      (lines) => {
        const s = lines.join("\n");
        assert.deepEqual(patchPaths(s), referencePatchPaths(s));
      },
    ),
    { seed: 20261201, numRuns: 3000 },
  );
  assert.deepEqual(
    patchPaths("*** Begin Patch\n*** Update File: src/a.ts\n+++ not a header\n--- a/b\n+++ b/c.ts\t2024\n"),
    ["src/a.ts", "c.ts"],
  );
});
