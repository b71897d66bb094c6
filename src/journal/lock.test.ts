import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import {
  acquireLock,
  isProcessAlive,
  JournalLockedError,
  lockFileFor,
  realJournalPath,
  withJournalLock,
} from "./lock.js";

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
    assert.match(held.token, /^[0-9a-f-]{36}$/);
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

test("an empty lock (left by an older version killed mid-creation) is named as such, and broken once 2 s old", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    writeFileSync(lockFileFor(f), "");
    await assert.rejects(acquireLock(f), (err: unknown) => {
      assert.ok(err instanceof JournalLockedError);
      assert.equal(err.holder, null);
      assert.match(
        err.message,
        /journal lock .*j\.jsonl\.lock is empty or unreadable \(left by a writer of an older version/,
      );
      assert.doesNotMatch(err.message, /another compact-safe is writing/);
      return true;
    });
    const old = new Date(Date.now() - 3_000);
    utimesSync(lockFileFor(f), old, old);
    const lock = await acquireLock(f);
    await lock.release();
  }));

/** The name of breaker claim `n` on the lock file currently in place (see lock.ts). */
function claimOf(f: string, n: number): string {
  const lf = lockFileFor(f);
  const id = createHash("sha256")
    .update(`${statSync(lf).ino}\n${readFileSync(lf, "utf8")}`)
    .digest("hex")
    .slice(0, 32);
  return `${lf}.claim-${id}-${n}`;
}

test("a breaker killed while holding its claim does not block the next breaker; its claim is swept", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    writeFileSync(
      lockFileFor(f),
      JSON.stringify({ pid: deadPid(), hostname: hostname(), created_at: "2020-01-01T00:00:00Z" }),
    );
    const dead = JSON.stringify({ pid: deadPid(), hostname: hostname(), created_at: "x" });
    writeFileSync(claimOf(f, 0), dead);
    // a dead breaker's half-made lock file is swept too
    writeFileSync(
      `${lockFileFor(f)}.new-${deadPid()}-${"0".repeat(8)}-0000-0000-0000-${"0".repeat(12)}`,
      "{",
    );
    // and a dead breaker's claim on a lock that is long gone
    writeFileSync(`${lockFileFor(f)}.claim-${"a".repeat(32)}-0`, dead);
    const lock = await acquireLock(f);
    assert.equal(JSON.parse(readFileSync(lockFileFor(f), "utf8")).pid, process.pid);
    assert.deepEqual(
      readdirSync(dir).filter((n) => n !== "j.jsonl.lock"),
      [],
      "only the lock itself is left",
    );
    await lock.release();
  }));

test("a stale lock that a live process is breaking is left to it: locked, not broken twice", () =>
  withTemp(async (dir) => {
    const f = join(dir, "j.jsonl");
    const stale = JSON.stringify({
      pid: deadPid(),
      hostname: hostname(),
      created_at: "2020-01-01T00:00:00Z",
    });
    writeFileSync(lockFileFor(f), stale);
    // a live breaker (this process stands in for it) holds claim 0
    writeFileSync(claimOf(f, 0), JSON.stringify({ pid: process.pid, hostname: hostname(), created_at: "x" }));
    await assert.rejects(acquireLock(f, { wait: true, timeoutMs: 200, pollMs: 5 }), JournalLockedError);
    assert.equal(readFileSync(lockFileFor(f), "utf8"), stale, "the stale lock is still in place");
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

test("every name of one journal shares one lock: a symbolic link and its target, both ways", () =>
  withTemp(async (dir) => {
    const real = join(dir, "real.jsonl");
    writeFileSync(real, "");
    const link = join(dir, "link.jsonl");
    symlinkSync("real.jsonl", link);
    const viaLink = await acquireLock(link);
    try {
      assert.equal(viaLink.lockFile, `${realpathSync(real)}.lock`);
      await assert.rejects(acquireLock(real), JournalLockedError);
    } finally {
      await viaLink.release();
    }
    const viaReal = await acquireLock(real);
    try {
      await assert.rejects(acquireLock(link), JournalLockedError);
      // A path through a linked folder is the same journal too.
      const folder = join(dir, "folder");
      symlinkSync(".", folder);
      await assert.rejects(acquireLock(join(folder, "link.jsonl")), JournalLockedError);
    } finally {
      await viaReal.release();
    }
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.endsWith(".lock")),
      [],
    );
  }));

test("a journal not created yet, named through a dangling link, is locked at the link's target", () =>
  withTemp(async (dir) => {
    const link = join(dir, "link.jsonl");
    symlinkSync("later.jsonl", link);
    assert.equal(await realJournalPath(link), join(realpathSync(dir), "later.jsonl"));
    const held = await acquireLock(link);
    try {
      await assert.rejects(acquireLock(join(dir, "later.jsonl")), JournalLockedError);
    } finally {
      await held.release();
    }
    // No such file and no link: its folder's real path and its name.
    assert.equal(await realJournalPath(join(dir, "new.jsonl")), join(realpathSync(dir), "new.jsonl"));
  }));
