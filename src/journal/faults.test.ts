/**
 * Fault tests with real child processes (issue 4, "Done when"): concurrent
 * appenders never interleave lines, and a rewrite killed before its rename
 * leaves the old journal and its backup intact.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JournalEntry } from "../model/index.js";
import { readJournal } from "./read.js";
import { acquireLock, isProcessAlive, lockFileFor } from "./lock.js";
import { activePath } from "./tree.js";
import { appendEntries, createJournal, headerEntry } from "./write.js";

const worker = (name: string) => fileURLToPath(new URL(`../../test/journal/${name}`, import.meta.url));
const T = "2025-01-01T00:00:00.000Z";
const header = headerEntry(
  { session_id: "s", created_at: T, schema_version: 2, source_format: "journal" },
  "root",
);

function withTemp<R>(fn: (dir: string) => Promise<R>): Promise<R> {
  const dir = mkdtempSync(join(tmpdir(), "cs-faults-"));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

function run(
  args: string[],
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stderr }));
  });
}

test("processes appending at once never interleave lines, and every entry arrives", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    await createJournal(f, header, []);
    const WORKERS = 4;
    const BATCHES = 60;
    // payloads of 16-80 KiB per entry make each batch far larger than a pipe buffer or page
    const runs = Array.from({ length: WORKERS }, (_, w) =>
      run([worker("append-worker.js"), f, `w${w}`, "root", String(BATCHES), String(16_384 * (1 + w))]),
    );
    for (const r of await Promise.all(runs)) assert.deepEqual([r.code, r.signal, r.stderr], [0, null, ""]);

    const raw = readFileSync(f, "utf8");
    assert.ok(raw.endsWith("\n"));
    const lines = raw.slice(0, -1).split("\n");
    const parsed = lines.map((l, i) => {
      try {
        return JSON.parse(l) as JournalEntry;
      } catch {
        assert.fail(`line ${i + 1} does not parse: interleaved write`);
      }
    });
    const { entries, report } = await readJournal(f);
    assert.deepEqual(report.problems, []);
    const perWorker = Array.from({ length: BATCHES }, (_, b) => 1 + (b % 4)).reduce((a, b) => a + b, 0);
    assert.equal(entries.length, 1 + WORKERS * perWorker);
    assert.equal(parsed.length, entries.length);
    // each batch was written contiguously: a worker's batch b occupies consecutive lines k = 0..size-1
    for (let i = 1; i < parsed.length; i++) {
      const [w, b, k] = parsed[i]!.id.split("-");
      if (k !== "0")
        assert.equal(parsed[i - 1]!.id, `${w}-${b}-${Number(k) - 1}`, `line ${i + 1} split a batch`);
      const text = (parsed[i]!.payload as { content: { text: string }[] }).content[0]!.text;
      assert.ok(text.startsWith(`${parsed[i]!.id}:`));
    }
    // every worker's chain is complete from its last entry to the root
    for (let w = 0; w < WORKERS; w++) {
      const last = `w${w}-${BATCHES - 1}-${(BATCHES - 1) % 4}`;
      assert.equal(activePath(entries, last).length, 1 + perWorker);
    }
    assert.equal(existsSync(lockFileFor(f)), false);
  }));

test("a rewrite killed before its rename leaves the old journal and the backup intact; its stale lock is broken", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    const body = Array.from({ length: 50 }, (_, i): JournalEntry => ({
      id: `e${i}`,
      parent_id: i === 0 ? "root" : `e${i - 1}`,
      kind: i % 2 ? "assistant" : "user",
      created_at: T,
      payload: {
        role: i % 2 ? "assistant" : "user",
        content: [{ type: "text", text: `message ${i} ✓`.repeat(50) }],
      },
    }));
    await createJournal(f, header, body);
    const before = readFileSync(f);

    const r = await run([worker("rewrite-worker.js"), f]);
    assert.equal(r.signal, "SIGKILL", `worker should die by SIGKILL (code ${r.code}, stderr ${r.stderr})`);

    assert.deepEqual(readFileSync(f), before, "the original journal is byte-identical");
    const backups = readdirSync(dir).filter((n) => n.startsWith("j.jsonl.bak-"));
    assert.equal(backups.length, 1);
    assert.deepEqual(readFileSync(join(dir, backups[0]!)), before, "the backup is byte-identical");
    // the killed writer left its temp file (fully written) and its lock behind
    assert.equal(readdirSync(dir).filter((n) => n.includes(".tmp-")).length, 1);
    assert.equal(existsSync(lockFileFor(f)), true);

    // the dead writer's lock is stale: the next writer breaks it, and removes the dead writer's temp file
    await appendEntries(f, [{ ...body[0]!, id: "after", parent_id: "e49" }]);
    const { entries, report } = await readJournal(f);
    assert.deepEqual(report.problems, []);
    assert.equal(entries.length, 52);
    assert.equal(existsSync(lockFileFor(f)), false);
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.includes(".tmp-")),
      [],
      "the killed writer's temp file is removed by the next write",
    );
  }));

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  const pid = Number(r.stdout);
  assert.ok(pid > 0 && !isProcessAlive(pid));
  return pid;
}

test(
  "racing breakers of a stale lock: at most one holder at a time, every worker holds it once",
  { timeout: 150_000 },
  () =>
    withTemp(async (dir) => {
      const ROUNDS = 6;
      const WORKERS = 10;
      const f = join(dir, "j.jsonl");
      for (let round = 0; round < ROUNDS; round++) {
        const log = join(dir, `log-${round}`);
        writeFileSync(log, "");
        // Every round starts from a stale lock; workers in "die" mode leave one behind for the next holder.
        writeFileSync(
          lockFileFor(f),
          JSON.stringify({ pid: deadPid(), hostname: hostname(), created_at: "2020-01-01T00:00:00Z" }),
        );
        const startAt = Date.now() + 1_500;
        const runs = Array.from({ length: WORKERS }, (_, w) =>
          run([worker("lock-worker.js"), "race", f, log, String(startAt), w % 2 ? "die" : "release", "5"]),
        );
        for (const r of await Promise.all(runs))
          assert.deepEqual([r.code, r.signal, r.stderr], [0, null, ""]);
        const lines = readFileSync(log, "utf8").trimEnd().split("\n");
        assert.equal(lines.length, 2 * WORKERS, `round ${round}: every worker held the lock once`);
        const holders = new Set<string>();
        for (let i = 0; i < lines.length; i += 2) {
          const [enter, pid] = lines[i]!.split(" ");
          assert.equal(
            enter,
            "enter",
            `round ${round}, line ${i + 1}: two holders at once:\n${lines.join("\n")}`,
          );
          assert.equal(
            lines[i + 1],
            `exit ${pid}`,
            `round ${round}, line ${i + 2}: two holders at once:\n${lines.join("\n")}`,
          );
          holders.add(pid!);
        }
        assert.equal(holders.size, WORKERS);
      }
      // no claim or half-made lock file is left beside the journal once the last holder's stale lock is broken
      const lock = await acquireLock(f);
      await lock.release();
      assert.deepEqual(
        readdirSync(dir).filter((n) => n.startsWith("j.jsonl.lock")),
        [],
      );
    }),
);

test("a process killed while taking or releasing the lock leaves no lock or a complete one, never an empty one", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    // At least 25 kills, and more (up to 200) until one has landed while the lock was held: how often that
    // happens depends on the machine's load, never whether the lock files stay whole.
    const MIN_KILLS = 25;
    const MAX_KILLS = 200;
    let held = 0;
    for (let i = 0; i < MAX_KILLS && (i < MIN_KILLS || held === 0); i++) {
      const child = spawn(process.execPath, [worker("lock-worker.js"), "cycle", f], {
        stdio: ["ignore", "pipe", "ignore"],
      });
      const end = new Promise((resolve) => child.once("exit", resolve));
      // the kill waits until the worker's take/release loop runs (however slowly node starts on a busy
      // machine), then lands at spread moments of it
      await new Promise<void>((resolve) => {
        child.stdout.on("data", () => resolve());
        child.once("exit", () => resolve());
      });
      await new Promise((resolve) => setTimeout(resolve, (i * 7) % 30));
      child.kill("SIGKILL");
      await end;
      if (existsSync(lockFileFor(f))) {
        const raw = readFileSync(lockFileFor(f), "utf8");
        let holder: { pid?: unknown };
        try {
          holder = JSON.parse(raw) as { pid?: unknown };
        } catch {
          assert.fail(`kill ${i}: the lock file is incomplete: ${JSON.stringify(raw)}`);
        }
        assert.equal(holder.pid, child.pid, `kill ${i}`);
        held++;
      }
      // the next taker breaks the dead process's lock at once and sweeps its half-made files
      const lock = await acquireLock(f);
      await lock.release();
      assert.deepEqual(
        readdirSync(dir).filter((n) => n.startsWith("j.jsonl.lock")),
        [],
        `kill ${i}`,
      );
    }
    assert.ok(held > 0, "some kills landed while the lock was held");
  }));

test("the worker scripts are compiled next to the tests", () => {
  for (const name of ["append-worker.js", "rewrite-worker.js", "read-memory-worker.js", "lock-worker.js"]) {
    const r = spawnSync(process.execPath, [worker(name)], { encoding: "utf8" });
    assert.equal(r.status, 2, `${name} without arguments prints its usage`);
    assert.match(r.stderr, /^usage:/);
  }
});
