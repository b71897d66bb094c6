import { test } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  chmodSync,
  writeFileSync,
} from "node:fs";
import { execFileSync, spawnSync } from "node:child_process";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import type { JournalEntry } from "../model/index.js";
import { ModelError } from "../model/index.js";
import { readJournal } from "./read.js";
import { JournalLockedError, lockFileFor } from "./lock.js";
import { liveContext } from "./tree.js";
import {
  appendEntries,
  createJournal,
  headerEntry,
  JournalExistsError,
  rewriteJournal,
  serializeEntries,
} from "./write.js";
import { removeDeadTemps } from "./output-file.js";

const T = "2025-01-01T00:00:00.000Z";
const entry = (id: string, parent: string | null, text = id): JournalEntry => ({
  id,
  parent_id: parent,
  kind: "user",
  created_at: T,
  payload: { role: "user", content: [{ type: "text", text }] },
});
const header = headerEntry(
  { session_id: "s1", created_at: T, schema_version: 2, source_format: "journal" },
  "h",
);

function withTemp<R>(fn: (dir: string) => Promise<R>): Promise<R> {
  const dir = mkdtempSync(join(tmpdir(), "cs-write-"));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

test("serializeEntries writes one line per entry, escaping newlines, and rejects invalid entries", () => {
  const text = serializeEntries([entry("a", null, "two\nlines\u2028and more")]);
  assert.equal(text.split("\n").length, 2);
  assert.ok(text.endsWith("\n"));
  const bad = { ...entry("b", null), payload: { role: "robot", content: [] } } as unknown as JournalEntry;
  assert.throws(
    () => serializeEntries([entry("a", null), bad]),
    (err: unknown) => {
      assert.ok(err instanceof ModelError);
      assert.match(err.message, /^entries\[1\]\.payload: unknown role "robot"/);
      return true;
    },
  );
});

test("createJournal writes a new journal and refuses to overwrite unless asked", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    assert.deepEqual(await createJournal(f, header, [entry("a", "h")]), {});
    const { entries, report } = await readJournal(f);
    assert.deepEqual(entries, [header, entry("a", "h")]);
    assert.deepEqual(report.problems, []);
    await assert.rejects(createJournal(f, header, []), JournalExistsError);
    const before = readFileSync(f);
    const r = await createJournal(f, header, [entry("b", "h")], { overwrite: true });
    assert.ok(r.backup && r.backup.startsWith(`${f}.bak-`));
    assert.deepEqual(readFileSync(r.backup), before);
    assert.deepEqual(
      (await readJournal(f)).entries.map((e) => e.id),
      ["h", "b"],
    );
    assert.equal(existsSync(lockFileFor(f)), false);
    // no temp files are left behind
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.includes(".tmp-")),
      [],
    );
  }));

test("appendEntries appends whole lines, creates the file, and reads back in order", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    await appendEntries(f, [header]);
    await appendEntries(f, [entry("a", "h"), entry("b", "a")]);
    await appendEntries(f, []);
    await appendEntries(f, [entry("c", "b")]);
    const { entries, report } = await readJournal(f);
    assert.deepEqual(
      entries.map((e) => e.id),
      ["h", "a", "b", "c"],
    );
    assert.equal(report.lines, 4);
    assert.deepEqual(report.problems, []);
    assert.equal(existsSync(lockFileFor(f)), false);
  }));

test("appending after a torn last line starts a new line, so the new entries stay whole", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    await createJournal(f, header, [entry("a", "h")]);
    writeFileSync(f, readFileSync(f).subarray(0, -9)); // tear the last line
    await appendEntries(f, [entry("b", "h")]);
    const { entries, report } = await readJournal(f);
    assert.deepEqual(
      entries.map((e) => e.id),
      ["h", "b"],
    );
    assert.equal(report.problems.length, 1);
    assert.equal(report.problems[0]!.line, 2);
    assert.match(report.problems[0]!.reason, /^broken JSON/);
  }));

test("an atomic append goes through a copy renamed over the journal: old bytes kept, mode kept, no temp left", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    await createJournal(f, header, [entry("a", "h")]);
    chmodSync(f, 0o600);
    const before = readFileSync(f);
    const inode = statSync(f).ino;
    await appendEntries(f, [entry("b", "a", "x".repeat(20_000))], { atomic: true });
    const after = readFileSync(f);
    assert.deepEqual(after.subarray(0, before.length), before);
    assert.ok(after.toString("utf8").endsWith("\n"));
    // A new file took the journal's name (a kill before the rename leaves the old one whole).
    assert.notEqual(statSync(f).ino, inode);
    assert.equal(statSync(f).mode & 0o777, 0o600);
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.includes(".tmp-")),
      [],
    );
    const { entries, report } = await readJournal(f);
    assert.deepEqual(
      entries.map((e) => e.id),
      ["h", "a", "b"],
    );
    assert.deepEqual(report.problems, []);
  }));

test("appendEntries fails with JournalLockedError while another live process holds the lock, and lock:false skips it", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    await createJournal(f, header, []);
    writeFileSync(lockFileFor(f), JSON.stringify({ pid: process.ppid, hostname: hostname(), created_at: T }));
    await assert.rejects(appendEntries(f, [entry("a", "h")]), JournalLockedError);
    await assert.rejects(rewriteJournal(f, [header]), JournalLockedError);
    assert.deepEqual(
      (await readJournal(f)).entries.map((e) => e.id),
      ["h"],
    );
    await appendEntries(f, [entry("a", "h")], { lock: false });
    assert.deepEqual(
      (await readJournal(f)).entries.map((e) => e.id),
      ["h", "a"],
    );
  }));

test("rewriteJournal backs up the old file, replaces the content atomically and keeps the mode", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    await createJournal(f, header, [entry("a", "h"), entry("b", "a")]);
    chmodSync(f, 0o600);
    const old = readFileSync(f);
    const { backup } = await rewriteJournal(f, [header, entry("a", "h")]);
    assert.match(backup, /\.bak-\d{8}T\d{6}\.\d{3}Z(-\d+)?$/);
    assert.deepEqual(readFileSync(backup), old);
    assert.deepEqual(
      (await readJournal(f)).entries.map((e) => e.id),
      ["h", "a"],
    );
    assert.equal(statSync(f).mode & 0o777, 0o600);
    // a second rewrite in the same millisecond still gets its own backup
    const again = await rewriteJournal(f, [header]);
    assert.notEqual(again.backup, backup);
    assert.equal(readdirSync(dir).filter((n) => n.includes(".tmp-")).length, 0);
  }));

test("a rewrite that fails before its rename leaves the old journal, the backup, and no temp file", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    await createJournal(f, header, [entry("a", "h")]);
    const old = readFileSync(f);
    await assert.rejects(
      rewriteJournal(f, [header], {
        beforeRename: () => {
          throw new Error("simulated crash");
        },
      }),
      /simulated crash/,
    );
    assert.deepEqual(readFileSync(f), old);
    const backups = readdirSync(dir).filter((n) => n.startsWith("j.jsonl.bak-"));
    assert.equal(backups.length, 1);
    assert.deepEqual(readFileSync(join(dir, backups[0]!)), old);
    assert.equal(readdirSync(dir).filter((n) => n.includes(".tmp-")).length, 0);
    assert.equal(existsSync(lockFileFor(f)), false);
  }));

test("rewriteJournal refuses a missing file and invalid entries without touching anything", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    await assert.rejects(rewriteJournal(f, [header]), /does not exist \(use createJournal\)/);
    await createJournal(f, header, []);
    const bad = { ...header, kind: "nope" } as unknown as JournalEntry;
    await assert.rejects(rewriteJournal(f, [bad]), ModelError);
    assert.deepEqual(readdirSync(dir).sort(), ["j.jsonl"]);
  }));

test("a journal written with these functions projects its live context", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    await createJournal(f, header, [entry("a", "h", "hello")]);
    await appendEntries(f, [
      {
        id: "c",
        parent_id: "a",
        kind: "compaction",
        created_at: T,
        payload: {
          summary: "s",
          tokens_before: 9,
          tokens_after: 1,
          model: "extractive",
          path: "summary",
          coverage: null,
          trigger: "manual",
          replacement: [{ role: "user", content: [{ type: "text", text: "R" }] }],
        },
      },
      entry("d", "c", "after"),
    ]);
    const { entries } = await readJournal(f);
    assert.deepEqual(
      liveContext(entries).map((m) => (m.content[0] as { text: string }).text),
      ["R", "after"],
    );
  }));

test("temp files left by killed writers of this journal are removed by its next write; a live writer's are kept", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    });
    const uuid = "0123abcd-0000-4000-8000-0123456789ab";
    const deadTemp = join(dir, `.j.jsonl.tmp-${Number(dead.stdout)}-${uuid}`);
    const liveTemp = join(dir, `.j.jsonl.tmp-${process.ppid}-${uuid}`);
    const otherJournal = join(dir, `.k.jsonl.tmp-${Number(dead.stdout)}-${uuid}`);
    for (const t of [deadTemp, liveTemp, otherJournal]) writeFileSync(t, "a full copy\n");
    await createJournal(f, header, [entry("a", "h")]);
    assert.equal(existsSync(deadTemp), false, "the dead writer's temp is removed (import --out)");
    assert.equal(existsSync(liveTemp), true, "a live writer's temp is kept");
    assert.equal(existsSync(otherJournal), true, "another journal's temp is not this write's business");
    writeFileSync(deadTemp, "left after the link by a writer killed before its unlink\n");
    await appendEntries(f, [entry("b", "a")]);
    assert.equal(existsSync(deadTemp), false, "appends sweep too (compact --in-place, restore)");
    writeFileSync(deadTemp, "again\n");
    assert.equal(await removeDeadTemps(f), 1);
    assert.equal(await removeDeadTemps(f), 0);
  }));

test(
  "a FIFO is refused at once by the reader and the writers, naming it (it used to block the open)",
  { timeout: 60_000 },
  () =>
    withTemp(async (dir) => {
      const fifo = join(dir, "j.fifo");
      execFileSync("mkfifo", [fifo]);
      const named = (verb: string) =>
        new RegExp(`${fifo.replace(/[.]/g, "\\.")}: is a named pipe \\(FIFO\\), not a regular file${verb}`);
      await assert.rejects(readJournal(fifo), named("$"));
      await assert.rejects(appendEntries(fifo, [entry("a", "h")]), named("; refusing to write to it$"));
      await assert.rejects(rewriteJournal(fifo, [header]), named("; refusing to write to it$"));
      await assert.rejects(
        createJournal(fifo, header, [], { overwrite: true }),
        named("; refusing to write to it$"),
      );
      await assert.rejects(
        readJournal("/dev/zero"),
        /\/dev\/zero: is a character device, not a regular file$/,
      );
      await assert.rejects(readJournal(dir), /: is a folder, not a file$/);
    }),
);
