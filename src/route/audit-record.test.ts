import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { mayRecordCompaction } from "./audit-record.js";

/** The definition: any of the marks, or a JSON escape of a letter, anywhere in the bytes. */
const NEEDLES = ['"compact', '"isCompactSummary"', "\\u004", "\\u005", "\\u006", "\\u007"];
const byDefinition = (b: Buffer) => NEEDLES.some((n) => b.includes(n));

test("mayRecordCompaction is true exactly when a mark or a letter's escape is in the bytes, on any bytes", () => {
  const piece = fc.constantFrom(
    '"compact',
    '"isCompactSummary"',
    '"isCompactSummary',
    "ompact",
    "compact",
    '"',
    '"is',
    '"isC',
    "Summary",
    '"c',
    "\\u00",
    "\\u0041",
    "\\u007a",
    "\\u003",
    "\\u008",
    "\\",
    "u00",
    "4",
    "x",
    "é",
  );
  fc.assert(
    fc.property(
      fc.array(piece, { maxLength: 16 }).map((a) => Buffer.from(a.join(""))),
      (bytes) => {
        assert.equal(mayRecordCompaction(bytes), byDefinition(bytes), JSON.stringify(bytes.toString()));
      },
    ),
    { numRuns: 5000 },
  );
  assert.equal(mayRecordCompaction(Buffer.from('{"type":"compacted"}')), true);
  assert.equal(mayRecordCompaction(Buffer.from('{"isCompactSummary":true}')), true);
  assert.equal(mayRecordCompaction(Buffer.from('{"text":"a compact car \\u0030"}')), false);
});
