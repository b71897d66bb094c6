/**
 * The library's one route for a file: what `compact-safe compact` does, as
 * one call. Each test writes a small journal in a temporary folder.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { importText } from "../formats/detect.js";
import { acquireLock, createJournal, readJournal } from "../journal/index.js";
import { CompactSafeError } from "../model/errors.js";
import type { CompactionEntry, HeaderEntry } from "../model/index.js";
import { compactJournal } from "./compact-journal.js";
import { toolSession as session } from "../../test/support.js";

async function journal(dir: string, name: string, results = 8): Promise<string> {
  const { entries } = importText(session(results), "s.json");
  const file = join(dir, name);
  await createJournal(file, entries[0] as HeaderEntry, entries.slice(1));
  return file;
}

function tmp(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), "cs-route-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("compactJournal appends ONE compaction entry, child of the leaf, carrying the engine's payload", async (t) => {
  const dir = tmp(t);
  const file = await journal(dir, "j.jsonl");
  const before = await readJournal(file);
  const steps: string[] = [];
  const outcome = await compactJournal(file, { target: 2000, onStep: (s) => steps.push(s) });
  assert.equal(outcome.kind, "compacted");
  if (outcome.kind !== "compacted") return;
  assert.equal(outcome.journal, file);
  assert.deepEqual(steps, ["reading", "compacting", "writing"]);
  const after = await readJournal(file);
  assert.equal(after.entries.length, before.entries.length + 1);
  const entry = after.entries.at(-1) as CompactionEntry;
  assert.equal(entry.kind, "compaction");
  assert.equal(entry.parent_id, before.entries.at(-1)!.id);
  assert.deepEqual(entry.payload, outcome.result.payload);
  assert.equal(entry.payload.trigger, "manual");
});

test("compactJournal: a dry run, an unneeded compaction and a history that cannot shrink write nothing", async (t) => {
  const dir = tmp(t);
  const file = await journal(dir, "j.jsonl");
  const bytes = readFileSync(file);
  const dry = await compactJournal(file, { target: 2000, dryRun: true });
  assert.equal(dry.kind, "compacted");
  assert.equal(dry.journal, null);
  const unneeded = await compactJournal(file, { ifNeeded: true, window: 200_000 });
  assert.equal(unneeded.kind, "not-needed");
  if (unneeded.kind === "not-needed") assert.ok(unneeded.decision.tokens < unneeded.decision.thresholdTokens);
  const small = await journal(dir, "small.jsonl", 1);
  const smallBytes = readFileSync(small);
  const nothing = await compactJournal(small, { target: 10 });
  assert.equal(nothing.kind, "nothing");
  assert.deepEqual(readFileSync(file), bytes);
  assert.deepEqual(readFileSync(small), smallBytes);
});

test("compactJournal: a held lock throws at once with the stable code journal_locked; nothing is written", async (t) => {
  const dir = tmp(t);
  const file = await journal(dir, "j.jsonl");
  const bytes = readFileSync(file);
  const lock = await acquireLock(file);
  try {
    await assert.rejects(
      compactJournal(file, { target: 2000 }),
      (e: unknown) => e instanceof CompactSafeError && e.code === "journal_locked",
    );
  } finally {
    await lock.release();
  }
  assert.deepEqual(readFileSync(file), bytes);
});

test("the command line and the library write the same compaction (one route)", async (t) => {
  const dir = tmp(t);
  const viaCli = await journal(dir, "cli.jsonl");
  const viaLib = await journal(dir, "lib.jsonl");
  const bin = fileURLToPath(new URL("../cli/main.js", import.meta.url));
  const r = spawnSync(
    process.execPath,
    [bin, "compact", viaCli, "--target", "2000", "--json", "--workspace", dir],
    {
      encoding: "utf8",
    },
  );
  assert.equal(r.status, 0, r.stderr);
  const lib = await compactJournal(viaLib, { target: 2000, workspace: dir });
  assert.equal(lib.kind, "compacted");
  const a = (await readJournal(viaCli)).entries.at(-1) as CompactionEntry;
  const b = (await readJournal(viaLib)).entries.at(-1) as CompactionEntry;
  assert.equal(a.kind, "compaction");
  assert.deepEqual(a.payload, b.payload);
});

test("compactJournal through a symbolic link takes the real journal's lock and appends to the real journal", async (t) => {
  const dir = tmp(t);
  const file = await journal(dir, "real.jsonl");
  const link = join(dir, "link.jsonl");
  symlinkSync("real.jsonl", link);
  const held = await acquireLock(file);
  try {
    await assert.rejects(compactJournal(link, { target: 2000 }), { code: "journal_locked" });
  } finally {
    await held.release();
  }
  const before = (await readJournal(file)).entries.length;
  const outcome = await compactJournal(link, { target: 2000 });
  assert.equal(outcome.kind, "compacted");
  assert.equal(outcome.journal, link);
  assert.equal((await readJournal(file)).entries.length, before + 1);
  assert.ok(lstatSync(link).isSymbolicLink(), "the link stays a link");
});
