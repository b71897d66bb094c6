/**
 * One lock per journal: a file `<journal>.lock` beside it, created with
 * O_EXCL, holding `{ pid, hostname, created_at }`. A lock left by a dead
 * process on this host is detected and broken; a lock held by a live
 * process (or by a process on another host, which cannot be checked) gives
 * a `JournalLockedError`.
 */
import { randomUUID } from "node:crypto";
import { link, open, readFile, rename, unlink } from "node:fs/promises";
import { hostname } from "node:os";

export interface LockHolder {
  pid: number;
  hostname: string;
  created_at: string;
}

export class JournalLockedError extends Error {
  readonly lockFile: string;
  readonly holder: LockHolder | null;
  constructor(lockFile: string, holder: LockHolder | null) {
    const who =
      holder === null
        ? "an unknown process (unreadable lock file)"
        : holder.hostname === hostname()
          ? `pid ${holder.pid}`
          : `pid ${holder.pid} on host ${holder.hostname}`;
    super(`journal is locked by ${who} (${lockFile}); another compact-safe is writing it`);
    this.name = "JournalLockedError";
    this.lockFile = lockFile;
    this.holder = holder;
  }
}

export interface AcquireLockOptions {
  /** Keep trying while the lock is held by a live process (default false: fail at once). */
  wait?: boolean;
  /** With `wait`, give up after this many milliseconds (default 30,000). */
  timeoutMs?: number;
  /** With `wait`, the delay between attempts (default 25 ms). */
  pollMs?: number;
}

export interface JournalLock {
  readonly file: string;
  readonly lockFile: string;
  readonly holder: LockHolder;
  /** Removes the lock file if it is still ours. Safe to call twice. */
  release(): Promise<void>;
}

/** The lock file of a journal. */
export function lockFileFor(file: string): string {
  return `${file}.lock`;
}

/** A lock file that is empty or unparsable is treated as being written right now, until it is this old. */
const UNREADABLE_GRACE_MS = 10_000;

function parseHolder(raw: string): LockHolder | null {
  try {
    const v = JSON.parse(raw) as Partial<LockHolder>;
    if (typeof v.pid === "number" && Number.isInteger(v.pid) && v.pid > 0 && typeof v.hostname === "string") {
      return { pid: v.pid, hostname: v.hostname, created_at: String(v.created_at ?? "") };
    }
  } catch {
    // fall through
  }
  return null;
}

/** True when `pid` is a live process on this host (EPERM means it exists but belongs to someone else). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

function isStale(holder: LockHolder | null, ageMs: number): boolean {
  if (holder === null) return ageMs > UNREADABLE_GRACE_MS;
  return holder.hostname === hostname() && !isProcessAlive(holder.pid);
}

/**
 * Removes a stale lock without removing a fresh one that another process
 * may have created meanwhile: the lock is renamed aside (atomic), checked to
 * be the stale one, and put back if it was not.
 */
async function breakStaleLock(lockFile: string, staleRaw: string): Promise<void> {
  const aside = `${lockFile}.stale-${process.pid}-${randomUUID()}`;
  try {
    await rename(lockFile, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return; // someone else broke it
    throw err;
  }
  const moved = await readFile(aside, "utf8").catch(() => staleRaw);
  if (moved !== staleRaw) {
    // We moved a live lock that replaced the stale one: put it back unless a newer one exists.
    await link(aside, lockFile).catch(() => undefined);
  }
  await unlink(aside).catch(() => undefined);
}

type Attempt = { ok: true; lock: JournalLock } | { ok: false; holder: LockHolder | null };

async function tryAcquire(file: string, lockFile: string): Promise<Attempt> {
  const holder: LockHolder = { pid: process.pid, hostname: hostname(), created_at: new Date().toISOString() };
  const body = JSON.stringify(holder);
  try {
    const fh = await open(lockFile, "wx");
    try {
      await fh.writeFile(body);
    } finally {
      await fh.close();
    }
    let released = false;
    const lock: JournalLock = {
      file,
      lockFile,
      holder,
      async release() {
        if (released) return;
        released = true;
        const raw = await readFile(lockFile, "utf8").catch(() => null);
        if (raw === body) await unlink(lockFile).catch(() => undefined);
      },
    };
    return { ok: true, lock };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  let raw: string;
  let ageMs = 0;
  try {
    const fh = await open(lockFile, "r");
    try {
      raw = await fh.readFile("utf8");
      ageMs = Date.now() - (await fh.stat()).mtimeMs;
    } finally {
      await fh.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return tryAcquire(file, lockFile); // released meanwhile
    throw err;
  }
  const current = parseHolder(raw);
  if (isStale(current, ageMs)) {
    await breakStaleLock(lockFile, raw);
    return tryAcquire(file, lockFile);
  }
  return { ok: false, holder: current };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Takes the lock of `file`. Throws `JournalLockedError` when a live process
 * holds it (after `timeoutMs` when `wait` is set).
 */
export async function acquireLock(file: string, options: AcquireLockOptions = {}): Promise<JournalLock> {
  const lockFile = lockFileFor(file);
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const pollMs = options.pollMs ?? 25;
  for (;;) {
    const r = await tryAcquire(file, lockFile);
    if (r.ok) return r.lock;
    if (!options.wait || Date.now() >= deadline) throw new JournalLockedError(lockFile, r.holder);
    await sleep(pollMs);
  }
}

/** Runs `fn` while holding the lock of `file`, and releases it afterwards (also on error). */
export async function withJournalLock<T>(
  file: string,
  fn: (lock: JournalLock) => Promise<T> | T,
  options: AcquireLockOptions = {},
): Promise<T> {
  const lock = await acquireLock(file, options);
  try {
    return await fn(lock);
  } finally {
    await lock.release();
  }
}
