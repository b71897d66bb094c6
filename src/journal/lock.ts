/**
 * One lock per journal: a file `<journal>.lock` beside it (the journal's real
 * path: a symbolic link to a journal shares its lock), holding
 * `{ pid, hostname, created_at, token }`. A lock left by a dead process on
 * this host is detected and broken; a lock held by a live process (or by a
 * process on another host, which cannot be checked) gives a
 * `JournalLockedError`.
 *
 * Crash safety: the lock file is never seen half-written. Its content is
 * written to a temporary file `<journal>.lock.new-<pid>-<uuid>`, fsynced,
 * and then hard-linked to `<journal>.lock`; `link` fails with EEXIST when
 * the lock is held, so taking the lock is one atomic step that either
 * publishes a complete lock or nothing.
 *
 * Race-free breaking: removing a stale lock by name is dangerous, because
 * between judging it stale and removing it another breaker may already have
 * removed it and taken the lock afresh. So the removal of a stale lock S is
 * serialised by a claim: a breaker first creates
 * `<journal>.lock.claim-<id(S)>-<n>` (atomically, like the lock), where
 * id(S) identifies S by content and inode. Only the holder of a claim on S
 * re-reads the lock and unlinks it if it is still S. While it is S, nothing
 * else can change it: its owner is dead, taking the lock fails on an
 * existing file, and no other live process holds a claim on S. Claim n+1 is
 * only taken when the holder of claim n is dead (a breaker killed mid-way).
 * Once S is gone it never comes back (each lock has a unique token), so
 * late claimants find a different lock and leave it alone. Claims are
 * removed after S is unlinked; any left by killed breakers are swept by the
 * next holder.
 */
import { createHash, randomUUID } from "node:crypto";
import { link, lstat, open, readdir, readlink, realpath, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { CompactSafeError } from "../model/errors.js";

export interface LockHolder {
  pid: number;
  hostname: string;
  created_at: string;
  /** Unique per lock taken (absent in locks written by versions before 0.2). */
  token?: string;
}

export class JournalLockedError extends CompactSafeError {
  readonly lockFile: string;
  readonly holder: LockHolder | null;
  constructor(lockFile: string, holder: LockHolder | null) {
    super(
      "journal_locked",
      holder === null
        ? `journal lock ${lockFile} is empty or unreadable (left by a writer of an older version that was killed?); ` +
            `it is broken automatically once it is ${UNREADABLE_GRACE_MS / 1000} s old, or remove it if no compact-safe is running`
        : `journal is locked by ${
            holder.hostname === hostname()
              ? `pid ${holder.pid}`
              : `pid ${holder.pid} on host ${holder.hostname}`
          } (${lockFile}); another compact-safe is writing it`,
    );
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
  /** The journal as the caller named it. */
  readonly file: string;
  /** `<real path of the journal>.lock`. */
  readonly lockFile: string;
  readonly holder: LockHolder;
  /** Removes the lock file if it is still ours. Safe to call twice. */
  release(): Promise<void>;
}

/** The lock file of a journal (give it the journal's real path: see `realJournalPath`). */
export function lockFileFor(file: string): string {
  return `${file}.lock`;
}

/** Symbolic links followed at most (as the system's own limit, ELOOP). */
const MAX_LINKS = 40;

/**
 * The journal's identity as a path: every symbolic link (of the file and of
 * its folders) resolved, so that every name of one journal (a link to it, a
 * path through a linked folder, `./j` and `j`) gives one path, and one lock.
 * A journal that does not exist yet (or a dangling link to one) resolves to
 * where it would be created: its folder's real path and its name.
 */
export async function realJournalPath(file: string): Promise<string> {
  let path = resolve(file);
  for (let hops = 0; hops <= MAX_LINKS; hops++) {
    try {
      return await realpath(path);
    } catch (err) {
      if (code(err) !== "ENOENT" && code(err) !== "ENOTDIR") throw err;
    }
    // Missing, or a dangling link: follow the link by hand, else resolve the folder.
    let isLink = false;
    try {
      isLink = (await lstat(path)).isSymbolicLink();
    } catch (err) {
      if (code(err) !== "ENOENT" && code(err) !== "ENOTDIR") throw err;
    }
    if (!isLink) {
      const dir = dirname(path);
      if (dir === path) return path;
      try {
        return join(await realpath(dir), basename(path));
      } catch (err) {
        if (code(err) !== "ENOENT" && code(err) !== "ENOTDIR") throw err;
        return path; // no such folder: the write will say so
      }
    }
    path = resolve(dirname(path), await readlink(path));
  }
  return path;
}

/**
 * A lock file that is empty or unparsable cannot come from this version (its
 * locks are published complete); one left by an older version that was
 * killed while creating it is broken once it is this old.
 */
const UNREADABLE_GRACE_MS = 2_000;
/** Without `wait`, how long to let another process finish breaking a stale lock before giving up. */
const BREAKING_GRACE_MS = 3_000;

function parseHolder(raw: string): LockHolder | null {
  try {
    const v = JSON.parse(raw) as Partial<LockHolder>;
    if (typeof v.pid === "number" && Number.isInteger(v.pid) && v.pid > 0 && typeof v.hostname === "string") {
      const holder: LockHolder = { pid: v.pid, hostname: v.hostname, created_at: String(v.created_at ?? "") };
      if (typeof v.token === "string") holder.token = v.token;
      return holder;
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

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

async function unlinkQuiet(file: string): Promise<void> {
  await unlink(file).catch((err: unknown) => {
    if (code(err) !== "ENOENT") throw err;
  });
}

/** The temporary file beside `lockFile` that a complete lock or claim is written to before it is linked. */
function tempName(lockFile: string): string {
  return `${lockFile}.new-${process.pid}-${randomUUID()}`;
}

/**
 * Creates `target` holding `body`, complete or not at all: written to a
 * temporary file, fsynced, then hard-linked into place. False when `target`
 * exists.
 */
async function createComplete(target: string, lockFile: string, body: string): Promise<boolean> {
  const tmp = tempName(lockFile);
  const fh = await open(tmp, "wx", 0o644);
  try {
    try {
      await fh.writeFile(body, "utf8");
      await fh.sync();
    } finally {
      await fh.close();
    }
    await link(tmp, target);
    return true;
  } catch (err) {
    if (code(err) === "EEXIST") return false;
    throw err;
  } finally {
    await unlinkQuiet(tmp);
  }
}

interface LockState {
  raw: string;
  ino: number;
  ageMs: number;
}

/** The current lock file's content, inode and age; null when there is none. */
async function readLock(file: string): Promise<LockState | null> {
  let fh;
  try {
    fh = await open(file, "r");
  } catch (err) {
    if (code(err) === "ENOENT") return null;
    throw err;
  }
  try {
    const st = await fh.stat();
    const raw = await fh.readFile("utf8");
    return { raw, ino: st.ino, ageMs: Date.now() - st.mtimeMs };
  } finally {
    await fh.close();
  }
}

/** Identifies one lock file: its content (which holds a unique token) and its inode. */
function lockId(state: LockState): string {
  return createHash("sha256").update(`${state.ino}\n${state.raw}`).digest("hex").slice(0, 32);
}

function ownClaimBody(): string {
  return JSON.stringify({ pid: process.pid, hostname: hostname(), created_at: new Date().toISOString() });
}

/** The most claims on one stale lock (each taken only after the previous claimant died). */
const MAX_CLAIMS = 64;

/**
 * Removes the stale lock `stale` if it is still in place, under a claim (see
 * the module comment). "busy" when a live process is breaking it now.
 */
async function breakStaleLock(lockFile: string, stale: LockState): Promise<"done" | "busy"> {
  const id = lockId(stale);
  const claimName = (n: number) => `${lockFile}.claim-${id}-${n}`;
  let n = 0;
  for (let tries = 0; ; tries++) {
    if (n >= MAX_CLAIMS || tries > 4 * MAX_CLAIMS) return "busy";
    if (await createComplete(claimName(n), lockFile, ownClaimBody())) break;
    const other = await readLock(claimName(n));
    if (other === null) continue; // its claimant finished meanwhile: try the same number again
    const claimant = parseHolder(other.raw);
    // Claims are published complete, so an unparsable one is not a breaker at work.
    if (claimant !== null && (claimant.hostname !== hostname() || isProcessAlive(claimant.pid)))
      return "busy";
    n++; // the claimant died: the next claim number is free to take
  }
  try {
    const now = await readLock(lockFile);
    if (now !== null && lockId(now) === id) await unlinkQuiet(lockFile);
  } finally {
    for (let k = n; k >= 0; k--) await unlinkQuiet(claimName(k));
  }
  return "done";
}

/**
 * Removes what killed processes left beside the lock: half-made lock or
 * claim files (`.new-<pid>-…` of a dead pid) and claims of dead breakers.
 */
async function sweepLeftovers(lockFile: string): Promise<void> {
  const dir = dirname(lockFile);
  const base = basename(lockFile);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(`${base}.`)) continue;
    const rest = name.slice(base.length + 1);
    const temp = /^new-(\d+)-[0-9a-f-]{36}$/.exec(rest);
    if (temp !== null) {
      const pid = Number(temp[1]);
      if (pid !== process.pid && !isProcessAlive(pid))
        await unlinkQuiet(join(dir, name)).catch(() => undefined);
      continue;
    }
    if (/^claim-[0-9a-f]{32}-\d+$/.test(rest)) {
      const claim = await readLock(join(dir, name)).catch(() => null);
      const claimant = claim === null ? null : parseHolder(claim.raw);
      if (claimant !== null && claimant.hostname === hostname() && !isProcessAlive(claimant.pid))
        await unlinkQuiet(join(dir, name)).catch(() => undefined);
    }
  }
}

type Attempt = { ok: true; lock: JournalLock } | { ok: false; holder: LockHolder | null; breaking: boolean };

async function tryAcquire(file: string, lockFile: string): Promise<Attempt> {
  for (let round = 0; round < 100; round++) {
    const holder: LockHolder = {
      pid: process.pid,
      hostname: hostname(),
      created_at: new Date().toISOString(),
      token: randomUUID(),
    };
    const body = JSON.stringify(holder);
    if (await createComplete(lockFile, lockFile, body)) {
      let released = false;
      const lock: JournalLock = {
        file,
        lockFile,
        holder,
        async release() {
          if (released) return;
          released = true;
          const now = await readLock(lockFile).catch(() => null);
          if (now !== null && now.raw === body) await unlinkQuiet(lockFile).catch(() => undefined);
        },
      };
      await sweepLeftovers(lockFile);
      return { ok: true, lock };
    }
    const current = await readLock(lockFile);
    if (current === null) continue; // released meanwhile
    const owner = parseHolder(current.raw);
    if (!isStale(owner, current.ageMs)) return { ok: false, holder: owner, breaking: false };
    if ((await breakStaleLock(lockFile, current)) === "busy")
      return { ok: false, holder: owner, breaking: true };
  }
  return { ok: false, holder: null, breaking: true };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Takes the lock of `file`. Throws `JournalLockedError` when a live process
 * holds it (after `timeoutMs` when `wait` is set). A stale lock that another
 * process is breaking right now is waited for briefly even without `wait`.
 */
export async function acquireLock(file: string, options: AcquireLockOptions = {}): Promise<JournalLock> {
  // Keyed on the journal's identity: a link to it and its real path share one lock.
  const lockFile = lockFileFor(await realJournalPath(file));
  const start = Date.now();
  const deadline = start + (options.timeoutMs ?? 30_000);
  const pollMs = options.pollMs ?? 25;
  for (;;) {
    const r = await tryAcquire(file, lockFile);
    if (r.ok) return r.lock;
    const now = Date.now();
    const retry = options.wait ? now < deadline : r.breaking && now < start + BREAKING_GRACE_MS;
    if (!retry) throw new JournalLockedError(lockFile, r.holder);
    await sleep(r.breaking ? Math.min(pollMs, 5) : pollMs);
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
