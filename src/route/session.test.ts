import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { linearJournal } from "../../test/support.js";
import { looksLikeJournalBytes, looksLikeJournalText, readSession } from "./session.js";

const entry = JSON.stringify(linearJournal([{ role: "user", content: [{ type: "text", text: "hi" }] }])[0]);

test("a journal is known from its bytes' first non-blank line as from its whole text, on any bytes", () => {
  const piece = fc.constantFrom(
    entry,
    '{"type":"user"}',
    "\n",
    "\r\n",
    " ",
    "\t",
    "\u00a0",
    "\ufeff",
    "é",
    "not json",
    "{",
  );
  fc.assert(
    fc.property(
      fc.array(piece, { maxLength: 12 }).map((a) => Buffer.from(a.join(""))),
      (bytes) => {
        assert.equal(looksLikeJournalBytes(bytes), looksLikeJournalText(bytes.toString("utf8")));
      },
    ),
    { numRuns: 2000 },
  );
  assert.equal(looksLikeJournalBytes(Buffer.from(`\n  \r\n${entry}\r\n`)), true);
  assert.equal(looksLikeJournalBytes(Buffer.from('{"type":"user"}\n')), false);
});

test("readSession of bytes: a journal after blank lines is read as a journal", async () => {
  const lines = linearJournal([{ role: "user", content: [{ type: "text", text: "hi" }] }]).map((e) =>
    JSON.stringify(e),
  );
  const s = await readSession("x.jsonl", { content: Buffer.from(`\n\r\n${lines.join("\r\n")}\n`) });
  assert.equal(s.kind, "journal");
  assert.equal(s.entries.length, 2);
});
