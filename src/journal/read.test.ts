import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import type { JournalEntry } from "../model/index.js";
import { formatProblems, parseJournal, readJournal, readJournalSync } from "./read.js";

const T = "2025-01-01T00:00:00.000Z";
function entry(id: string, parent: string | null, text = `text of ${id}`): JournalEntry {
  return {
    id,
    parent_id: parent,
    kind: "user",
    created_at: T,
    payload: { role: "user", content: [{ type: "text", text }] },
  };
}
const line = (e: unknown) => JSON.stringify(e) + "\n";

function withTemp<R>(fn: (dir: string) => Promise<R>): Promise<R> {
  const dir = mkdtempSync(join(tmpdir(), "cs-read-"));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

/** Writes `content` and reads it back with the streaming reader (small chunks, to cross chunk edges). */
async function roundTrip(content: string | Uint8Array, chunkSize = 5) {
  return withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    writeFileSync(f, content);
    const streamed = await readJournal(f, { chunkSize });
    assert.deepEqual(streamed, readJournalSync(f), "streaming and buffer readers agree");
    return streamed;
  });
}

test("a clean journal reads back every entry with no problems", async () => {
  const es = [entry("a", null), entry("b", "a", "héllo — ✓ 😀"), entry("c", "b")];
  const { entries, report } = await roundTrip(es.map(line).join(""), 1);
  assert.deepEqual(entries, es);
  assert.equal(report.lines, 3);
  assert.equal(report.entries, 3);
  assert.deepEqual(report.problems, []);
});

test("blank lines and CRLF endings are tolerated; a last line without newline that parses is kept", async () => {
  const content = line(entry("a", null)).replace("\n", "\r\n") + "\n   \n" + JSON.stringify(entry("b", "a"));
  const { entries, report } = await roundTrip(content);
  assert.deepEqual(
    entries.map((e) => e.id),
    ["a", "b"],
  );
  assert.equal(report.lines, 4);
  assert.deepEqual(report.problems, []);
});

test("broken JSON is reported with its line number and the rest is read", async () => {
  const content = line(entry("a", null)) + '{"id": "b", "kind": \n' + line(entry("c", "a"));
  const { entries, report } = await roundTrip(content);
  assert.deepEqual(
    entries.map((e) => e.id),
    ["a", "c"],
  );
  assert.equal(report.problems.length, 1);
  assert.equal(report.problems[0]!.line, 2);
  assert.match(report.problems[0]!.reason, /^broken JSON: /);
});

test("hostile nesting: a line over the JSON limit is a broken line; a message over the message limit an invalid entry", async () => {
  const deepText = (levels: number) => "[".repeat(levels) + "1" + "]".repeat(levels);
  const call = (input: string) =>
    JSON.stringify({
      id: "b",
      parent_id: "a",
      kind: "assistant",
      created_at: T,
      payload: { role: "assistant", content: [{ type: "tool_use", id: "t", name: "X", input: "@" }] },
    }).replace('"@"', input) + "\n";
  for (const [levels, reason] of [
    [20_000, /^broken JSON: nested deeper than 512 levels \(the limit\), at column \d+$/],
    [400, /^invalid entry: entry\.payload\.content\[0\]\.input\[0\].*nested deeper than 256 levels/],
  ] as const) {
    const content = line(entry("a", null)) + call(deepText(levels)) + line(entry("c", "a"));
    const { entries, report } = await roundTrip(content, 4096);
    assert.deepEqual(
      entries.map((e) => e.id),
      ["a", "c"],
    );
    assert.equal(report.problems.length, 1);
    assert.equal(report.problems[0]!.line, 2);
    assert.match(report.problems[0]!.reason, reason);
  }
});

test("an unknown kind and a schema error are reported with the model's reason", async () => {
  const unknown = { ...entry("b", "a"), kind: "telemetry" };
  const bad = entry("c", "a");
  (bad.payload as { content: unknown[] }).content = [{ type: "tool_use", name: "x", input: {} }];
  const content = line(entry("a", null)) + line(unknown) + line(bad) + line(entry("d", "a"));
  const { entries, report } = await roundTrip(content);
  assert.deepEqual(
    entries.map((e) => e.id),
    ["a", "d"],
  );
  assert.deepEqual(report.problems, [
    {
      line: 2,
      reason:
        'unknown kind: entry: unknown kind "telemetry" (expected one of header, user, assistant, tool_result, compaction, branch_summary, message, system)',
    },
    { line: 3, reason: 'invalid entry: entry.payload.content[0] (tool_use): missing "id"' },
  ]);
});

test("a missing parent is reported and the entry is kept", async () => {
  const { entries, report } = await roundTrip(line(entry("a", null)) + line(entry("b", "ghost")));
  assert.equal(entries.length, 2);
  assert.equal(report.problems.length, 1);
  assert.equal(report.problems[0]!.line, 2);
  assert.match(report.problems[0]!.reason, /^parent "ghost" is missing/);
});

test("a duplicate id is reported with the first line and skipped", async () => {
  const { entries, report } = await roundTrip(
    line(entry("a", null, "first")) + line(entry("b", "a")) + line(entry("a", null, "second")),
  );
  assert.deepEqual(
    entries.map((e) => e.id),
    ["a", "b"],
  );
  assert.equal((entries[0]!.payload as { content: { text: string }[] }).content[0]!.text, "first");
  assert.deepEqual(report.problems, [
    { line: 3, reason: 'duplicate id "a" (first on line 1); this entry is skipped' },
  ]);
});

test("a cycle in parent links is reported once, at the line that closes it", async () => {
  const content =
    line(entry("root", null)) +
    line(entry("x", "z")) +
    line(entry("y", "x")) +
    line(entry("z", "y")) +
    line(entry("self", "self"));
  const { entries, report } = await roundTrip(content);
  assert.equal(entries.length, 5);
  assert.equal(report.problems.length, 2);
  assert.equal(report.problems[0]!.line, 4);
  assert.match(report.problems[0]!.reason, /^cycle in parent links: .*"x" \(line 2\)/);
  assert.equal(report.problems[1]!.line, 5);
  assert.match(report.problems[1]!.reason, /^cycle in parent links: "self" \(line 5\) -> "self"/);
});

test("invalid UTF-8 is reported with its line number", async () => {
  const good = Buffer.from(line(entry("a", null)));
  const bad = Buffer.from(line(entry("b", "a", "AB")));
  const i = bad.indexOf("AB");
  bad[i] = 0xc3; // a lead byte followed by an ASCII byte: invalid
  bad[i + 1] = 0x28;
  const { entries, report } = await roundTrip(Buffer.concat([good, bad, Buffer.from(line(entry("c", "a")))]));
  assert.deepEqual(
    entries.map((e) => e.id),
    ["a", "c"],
  );
  assert.deepEqual(report.problems, [{ line: 2, reason: "invalid UTF-8" }]);
});

test("a journal truncated in the middle of its last line reports that line; earlier entries are intact", async () => {
  const es = Array.from({ length: 20 }, (_, i) =>
    entry(`e${i}`, i === 0 ? null : `e${i - 1}`, "x".repeat(i * 13)),
  );
  const full = es.map(line).join("");
  const cut = full.slice(0, full.length - 25); // inside the last line
  const { entries, report } = await roundTrip(cut, 64);
  assert.deepEqual(entries, es.slice(0, 19));
  assert.equal(report.lines, 20);
  assert.equal(report.problems.length, 1);
  assert.equal(report.problems[0]!.line, 20);
  assert.match(report.problems[0]!.reason, /^truncated last line \(no trailing newline/);
});

test("formatProblems gives file:line: reason", () => {
  const { report } = parseJournal("nope\n", "s.jsonl");
  assert.equal(formatProblems(report).length, 1);
  assert.match(formatProblems(report)[0]!, /^s\.jsonl:1: broken JSON: /);
});

test("readJournal throws on a missing file, naming it", async () => {
  await assert.rejects(readJournal("/nonexistent/dir/j.jsonl"), /\/nonexistent\/dir\/j\.jsonl/);
});

test("property: any chunk size gives the same result as reading all at once", async () => {
  const lineArb = fc.oneof(
    fc
      .record({
        id: fc.constantFrom("a", "b", "c", "d"),
        parent: fc.constantFrom(null, "a", "b", "zz"),
        text: fc.string({ unit: "grapheme" }),
      })
      .map((r) => line(entry(r.id, r.parent, r.text))),
    fc.string({ unit: "grapheme", maxLength: 20 }).map((s) => s.replace(/\n/g, "") + "\n"),
  );
  await withTemp(async (dir) => {
    const f = join(dir, "p.jsonl");
    await fc.assert(
      fc.asyncProperty(
        fc.array(lineArb, { maxLength: 12 }),
        fc.integer({ min: 1, max: 40 }),
        fc.boolean(),
        async (ls, chunk, chop) => {
          let content = ls.join("");
          if (chop && content.length > 3) content = content.slice(0, -3);
          writeFileSync(f, content);
          const streamed = await readJournal(f, { chunkSize: chunk });
          const whole = parseJournal(content, f);
          assert.deepEqual(streamed, whole);
          // every non-blank line is either an entry or a problem (duplicates, missing parents and cycles are extra notes)
          const nonBlank = content.split("\n").filter((l) => /[^ \t\r]/.test(l)).length;
          const lineProblems = whole.report.problems.filter((p) => !/^(parent|cycle)/.test(p.reason)).length;
          assert.equal(whole.entries.length + lineProblems, nonBlank);
        },
      ),
      { numRuns: 150 },
    );
  });
});
