import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { acquireLock, isProcessAlive, JournalLockedError, lockFileFor, withJournalLock } from "./lock.js";

function withTemp<R>(fn: (dir: string) => Promise<R>): Promise<R> {
  const dir = mkdtempSync(join(tmpdir(), "cs-lock-"));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  const pid = Number(r.stdout);
  assert.ok(pid > 0);
  assert.equal(isProcessAlive(pid), false);
  return pid;
}

test("the lock file holds pid, hostname and created_at, and is removed on release", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    const lock = await acquireLock(f);
    assert.equal(lock.lockFile, `${f}.lock`);
    const held = JSON.parse(readFileSync(lockFileFor(f), "utf8"));
    assert.equal(held.pid, process.pid);
    assert.equal(held.hostname, hostname());
    assert.match(held.created_at, /^\d{4}-/);
    await lock.release();
    assert.equal(existsSync(lockFileFor(f)), false);
    await lock.release(); // twice is harmless
  }));

test("a live lock gives JournalLockedError naming the holder's pid", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    const lock = await acquireLock(f);
    try {
      await assert.rejects(acquireLock(f), (err: unknown) => {
        assert.ok(err instanceof JournalLockedError);
        assert.equal(
          err.message,
          `journal is locked by pid ${process.pid} (${f}.lock); another compact-safe is writing it`,
        );
        return true;
      });
    } finally {
      await lock.release();
    }
    // a lock held by a pid on another host cannot be checked, so it counts as live
    writeFileSync(
      lockFileFor(f),
      JSON.stringify({ pid: 4242, hostname: "elsewhere.invalid", created_at: "x" }),
    );
    await assert.rejects(acquireLock(f), /locked by pid 4242 on host elsewhere\.invalid/);
  }));

test("a stale lock from a dead pid is broken", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    const pid = deadPid();
    writeFileSync(
      lockFileFor(f),
      JSON.stringify({ pid, hostname: hostname(), created_at: "2020-01-01T00:00:00Z" }),
    );
    const lock = await acquireLock(f);
    assert.equal(JSON.parse(readFileSync(lockFileFor(f), "utf8")).pid, process.pid);
    await lock.release();
  }));

test("an unreadable lock file counts as held until it is old, then it is broken", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    writeFileSync(lockFileFor(f), "");
    await assert.rejects(acquireLock(f), /locked by an unknown process/);
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockFileFor(f), old, old);
    const lock = await acquireLock(f);
    await lock.release();
  }));

test("wait: a second taker gets the lock once the first releases it", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    const order: string[] = [];
    const first = await acquireLock(f);
    const second = withJournalLock(
      f,
      () => {
        order.push("second");
      },
      { wait: true, pollMs: 1 },
    );
    order.push("first");
    await first.release();
    await second;
    assert.deepEqual(order, ["first", "second"]);
    assert.equal(existsSync(lockFileFor(f)), false);
  }));

test("withJournalLock releases the lock when the function throws", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    await assert.rejects(
      withJournalLock(f, () => {
        throw new Error("boom");
      }),
      /boom/,
    );
    assert.equal(existsSync(lockFileFor(f)), false);
  }));

test("release does not remove a lock that is no longer ours", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    const lock = await acquireLock(f);
    const other = JSON.stringify({ pid: 1, hostname: hostname(), created_at: "later" });
    writeFileSync(lockFileFor(f), other);
    await lock.release();
    assert.equal(readFileSync(lockFileFor(f), "utf8"), other);
  }));
