/**
 * Writing a journal: appends with fsync, atomic rewrites with a backup, and
 * new journals. Every write holds the journal's lock (see lock.ts) unless the
 * caller says it already does.
 */
import { copyFile, open, rename, stat, unlink } from "node:fs/promises";
import { constants } from "node:fs";
import { dirname } from "node:path";
import type { HeaderEntry, HeaderPayload, JournalEntry } from "../model/index.js";
import { notRegularFile, parseJournalEntry } from "../model/index.js";
import type { AcquireLockOptions } from "./lock.js";
import { realJournalPath, withJournalLock } from "./lock.js";
import { backup, fsyncDir, removeDeadTemps, tempFileFor, writeOutputFile, writeTemp } from "./output-file.js";
import { newEntryId } from "./tree.js";
import { CompactSafeError } from "../model/errors.js";

export interface LockOption {
  /** Take the journal lock (default true). Pass false only when the caller already holds it. */
  lock?: boolean;
  /** How to wait for the lock when it is taken (default: fail at once with JournalLockedError). */
  lockOptions?: AcquireLockOptions;
}

export interface RewriteOptions extends LockOption {
  /** Test hook: runs after the new content is written and synced, just before the rename. */
  beforeRename?: () => void;
}

export interface CreateOptions extends RewriteOptions {
  /** Replace an existing file (its old content is backed up first). Default false. */
  overwrite?: boolean;
  /** Files the journal's content was read from: it is never written over one of them. */
  inputs?: readonly string[];
  /** File mode of the new journal (default 0o644, less the umask); the guard's state is 0o600. */
  mode?: number;
}

/** Thrown by `createJournal` when the file exists and `overwrite` is not set. */
export class JournalExistsError extends CompactSafeError {
  readonly file: string;
  constructor(file: string) {
    super(
      "journal_exists",
      `${file}: journal already exists (pass overwrite to replace it; a backup is kept)`,
    );
    this.name = "JournalExistsError";
    this.file = file;
  }
}

/**
 * Validates entries and serialises each as one JSON line. Throws a
 * ModelError naming `entries[i]` for an invalid entry, so nothing bad is
 * ever written.
 */
export function serializeEntries(entries: readonly JournalEntry[]): string {
  let out = "";
  entries.forEach((e, i) => {
    parseJournalEntry(e, `entries[${i}]`);
    out += JSON.stringify(e) + "\n";
  });
  return out;
}

/** A header entry for a new journal (the root of its tree). */
export function headerEntry(payload: HeaderPayload, id: string = newEntryId()): HeaderEntry {
  return { id, parent_id: null, kind: "header", created_at: payload.created_at, payload };
}

/**
 * Runs a write under the journal's lock (unless the caller holds it), first
 * removing the temporary files that killed writers left for this journal.
 */
async function underLock<T>(file: string, options: LockOption, fn: () => Promise<T>): Promise<T> {
  const run = async () => {
    await removeDeadTemps(file);
    return fn();
  };
  if (options.lock === false) return run();
  return withJournalLock(file, run, options.lockOptions);
}

/**
 * Whether `file` exists. One that is not a regular file (a FIFO, a device, a
 * folder) is refused: appending to it, backing it up or replacing it would
 * block or destroy something that is not a journal.
 */
async function exists(file: string): Promise<boolean> {
  let st;
  try {
    st = await stat(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
  const why = notRegularFile(st);
  if (why !== null) throw new CompactSafeError("not_a_file", `${file}: ${why}; refusing to write to it`);
  return true;
}

export interface AppendOptions extends LockOption {
  /** File mode when the append creates the file (default 0o666, less the umask). */
  mode?: number;
  /**
   * Append through a copy: the journal is copied to a temp file beside it, the
   * entries are appended to the copy, which is fsynced and renamed over the
   * journal. A process killed at any moment then leaves the old journal or the
   * new one, never a torn line (a plain append of more than a page can be cut
   * short by SIGKILL). Costs a copy of the journal; the journal's inode
   * changes, so use it only where every writer goes through the lock by path
   * (compact-safe's own journals). Default false.
   */
  atomic?: boolean;
}

/** Appends `buf` to the open file, whole (a short write is continued). */
async function writeAll(fh: Awaited<ReturnType<typeof open>>, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    off += bytesWritten;
  }
}

/** The text to append: `text`, after a newline when the file's last line lacks its own. */
async function appendText(fh: Awaited<ReturnType<typeof open>>, text: string): Promise<Buffer> {
  const { size } = await fh.stat();
  let prefix = "";
  if (size > 0) {
    const last = Buffer.alloc(1);
    await fh.read(last, 0, 1, size - 1);
    if (last[0] !== 0x0a) prefix = "\n";
  }
  return Buffer.from(prefix + text, "utf8");
}

/** The atomic append (`AppendOptions.atomic`): copy, append to the copy, fsync, rename over. */
async function appendThroughCopy(file: string, text: string): Promise<void> {
  const mode = (await stat(file)).mode & 0o7777;
  const tmp = tempFileFor(file);
  try {
    await copyFile(file, tmp, constants.COPYFILE_EXCL);
    const fh = await open(tmp, "a+");
    try {
      await fh.chmod(mode);
      await writeAll(fh, await appendText(fh, text));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fsyncDir(dirname(file));
}

/**
 * Appends entries, one JSON line each, with a single write per batch, then
 * fsyncs the file (and its directory when the file is new). If the file's
 * last line lacks its newline (a torn write), a newline is written first so
 * the new entries stay whole; the reader still reports the torn line. With
 * `atomic`, the append goes through a copy renamed over the journal.
 */
export async function appendEntries(
  file: string,
  entries: readonly JournalEntry[],
  options: AppendOptions = {},
): Promise<void> {
  if (entries.length === 0) return;
  const text = serializeEntries(entries);
  // The file the lock protects: through a symbolic link, its target (resolved once).
  file = await realJournalPath(file);
  await underLock(file, options, async () => {
    const created = !(await exists(file));
    if (options.atomic === true && !created) return appendThroughCopy(file, text);
    const fh = await open(file, "a+", options.mode);
    try {
      await writeAll(fh, await appendText(fh, text));
      await fh.sync();
    } finally {
      await fh.close();
    }
    if (created) await fsyncDir(dirname(file));
  });
}

export interface RewriteResult {
  /** The backup of the old content, beside the journal. */
  backup: string;
}

/**
 * Replaces the journal's content atomically, under the lock: the current
 * file is first copied to `<file>.bak-<timestamp>`, the new content is
 * written to a temp file in the same directory and fsynced, renamed over the
 * original, and the directory is fsynced. A crash at any point leaves either
 * the old or the new journal, and the backup.
 */
export async function rewriteJournal(
  file: string,
  entries: readonly JournalEntry[],
  options: RewriteOptions = {},
): Promise<RewriteResult> {
  const text = serializeEntries(entries);
  // Through a symbolic link the journal it names is rewritten (the link stays), under that journal's lock.
  file = await realJournalPath(file);
  return underLock(file, options, async () => {
    if (!(await exists(file)))
      throw new CompactSafeError(
        "no_journal",
        `${file}: cannot rewrite a journal that does not exist (use createJournal)`,
      );
    const mode = (await stat(file)).mode & 0o7777;
    const bak = await backup(file);
    const tmp = await writeTemp(file, text, mode);
    try {
      options.beforeRename?.();
      await rename(tmp, file);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    await fsyncDir(dirname(file));
    return { backup: bak };
  });
}

export interface CreateResult {
  /** Set when an existing file was overwritten: the backup of its old content. */
  backup?: string;
}

/**
 * Writes a brand-new journal: the header entry, then `entries`, under the
 * one rule for written files (output-file.ts): atomic (temp file, fsync,
 * then link or rename); an existing file (or symbolic link) is refused
 * unless `overwrite` is set, in which case the old file is backed up first;
 * never one of `inputs`, even with `overwrite`.
 */
export async function createJournal(
  file: string,
  header: HeaderEntry,
  entries: readonly JournalEntry[],
  options: CreateOptions = {},
): Promise<CreateResult> {
  if (header.kind !== "header")
    throw new CompactSafeError("invalid_message", `${file}: the first entry of a journal must be a header`);
  const text = serializeEntries([header, ...entries]);
  return underLock(file, options, () =>
    writeOutputFile(file, text, {
      force: options.overwrite === true,
      backup: true,
      inputs: options.inputs,
      existsError: (f) => new JournalExistsError(f),
      beforeRename: options.beforeRename,
      mode: options.mode,
    }),
  );
}
