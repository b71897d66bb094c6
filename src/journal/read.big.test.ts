/**
 * Size tests for the reader: a 100 MB journal stays within about 3x its size
 * in memory, and a 50 MB single line neither crashes the reader nor floods
 * the report. Files are generated in a temp dir and deleted afterwards.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readJournal } from "./read.js";

const T = "2025-01-01T00:00:00.000Z";
const MB = 1_000_000;

function withTemp<R>(fn: (dir: string) => Promise<R>): Promise<R> {
  const dir = mkdtempSync(join(tmpdir(), "cs-big-"));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

/** Writes a journal of about `target` bytes: a chain of messages of mixed sizes, some non-ASCII. */
function writeJournal(file: string, target: number): number {
  const fd = openSync(file, "w");
  let size = 0;
  let i = 0;
  try {
    while (size < target) {
      const n = 200 + ((i * 7919) % 20_000);
      const text = (i % 3 === 0 ? "héllo wörld ✓ " : "plain ascii text ")
        .repeat(Math.ceil(n / 14))
        .slice(0, n);
      const role = i % 2 ? "assistant" : "user";
      const e = {
        id: `e${i}`,
        parent_id: i ? `e${i - 1}` : null,
        kind: role,
        created_at: T,
        payload: { role, content: [{ type: "text", text }] },
      };
      const b = Buffer.from(JSON.stringify(e) + "\n");
      writeSync(fd, b);
      size += b.length;
      i++;
    }
  } finally {
    closeSync(fd);
  }
  return i;
}

/** Writes one entry whose text is `bytes` long, split so the whole line is never built in memory. */
function writeHugeLine(
  file: string,
  bytes: number,
  { broken = false, newline = true, after = "" } = {},
): void {
  const head = JSON.stringify({
    id: "huge",
    parent_id: null,
    kind: "user",
    created_at: T,
    payload: { role: "user", content: [{ type: "text", text: "@" }] },
  });
  const [pre, post] = head.split("@") as [string, string];
  const fd = openSync(file, "w");
  try {
    writeSync(fd, pre);
    const block = Buffer.alloc(MB, "abcdefghij");
    for (let left = bytes; left > 0; left -= block.length)
      writeSync(fd, block, 0, Math.min(left, block.length));
    if (!broken) writeSync(fd, post);
    if (newline) writeSync(fd, "\n");
    if (after) writeSync(fd, after);
  } finally {
    closeSync(fd);
  }
}

test("reading a 100 MB journal holds less than 3x its size in memory", () =>
  withTemp(async (dir) => {
    const f = join(dir, "big.jsonl");
    const count = writeJournal(f, 100 * MB);
    const size = statSync(f).size;
    const worker = fileURLToPath(new URL("../../test/journal/read-memory-worker.js", import.meta.url));
    const r = spawnSync(process.execPath, [worker, f], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const m = JSON.parse(r.stdout) as {
      baselineRss: number;
      peakRss: number;
      entries: number;
      problems: number;
      lines: number;
    };
    assert.equal(m.entries, count);
    assert.equal(m.lines, count);
    assert.equal(m.problems, 0);
    const used = m.peakRss - m.baselineRss;
    assert.ok(
      used < 3 * size,
      `peak memory above baseline ${(used / MB).toFixed(0)} MB for a ${(size / MB).toFixed(0)} MB journal`,
    );
  }));

test("a 50 MB single line is read whole", () =>
  withTemp(async (dir) => {
    const f = join(dir, "huge.jsonl");
    writeHugeLine(f, 50 * MB);
    const { entries, report } = await readJournal(f);
    assert.deepEqual(report.problems, []);
    assert.equal(entries.length, 1);
    const text = (entries[0]!.payload as { content: { text: string }[] }).content[0]!.text;
    assert.equal(text.length, 50 * MB);
    assert.equal(text.slice(0, 12), "abcdefghijab");
  }));

test("a broken 50 MB line is reported in one short line and the next line is still read", () =>
  withTemp(async (dir) => {
    const f = join(dir, "huge-broken.jsonl");
    const next =
      JSON.stringify({ id: "next", kind: "user", created_at: T, payload: { role: "user", content: [] } }) +
      "\n";
    writeHugeLine(f, 50 * MB, { broken: true, after: next });
    const { entries, report } = await readJournal(f);
    assert.deepEqual(
      entries.map((e) => e.id),
      ["next"],
    );
    assert.equal(report.problems.length, 1);
    assert.equal(report.problems[0]!.line, 1);
    assert.match(report.problems[0]!.reason, /^broken JSON: /);
    assert.ok(report.problems[0]!.reason.length < 300 && !report.problems[0]!.reason.includes("\n"));
  }));

test("a 50 MB last line cut off before its end is reported as truncated", () =>
  withTemp(async (dir) => {
    const f = join(dir, "huge-cut.jsonl");
    writeHugeLine(f, 50 * MB, { broken: true, newline: false });
    const { entries, report } = await readJournal(f);
    assert.equal(entries.length, 0);
    assert.equal(report.lines, 1);
    assert.equal(report.problems.length, 1);
    assert.match(report.problems[0]!.reason, /^truncated last line/);
  }));
