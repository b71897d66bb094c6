/**
 * The one rule for every file compact-safe writes (a new journal, an export,
 * a report page, a fork of an agent session):
 *
 * - an existing target (a regular file or a symbolic link, dangling or not)
 *   is refused unless `force` (then it is replaced, backed up first when
 *   `backup` is set);
 * - the target is never one of the `inputs` (compared by file identity,
 *   device and inode, so a symbolic or hard link to an input counts too),
 *   even with `force`;
 * - the content goes to a temporary file in the target's folder, is fsynced,
 *   and then linked (new target) or renamed (replaced target) into place,
 *   and the folder is fsynced: a reader never sees half a file, and a
 *   symbolic link at the target is replaced, never written through.
 *
 * The journal writers (write.ts) and every command of the command line use
 * it; the command line maps its errors to one-line messages naming --force.
 */
import { randomUUID } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { copyFile, link, lstat, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { notRegularFile } from "../model/index.js";
import { CompactSafeError } from "../model/errors.js";
import { isProcessAlive } from "./lock.js";

/** Thrown when the target exists (file or symbolic link, dangling or not) and `force` is not set. */
export class OutputExistsError extends CompactSafeError {
  readonly file: string;
  constructor(file: string) {
    super("output_exists", `${file}: already exists (pass force to replace it)`);
    this.name = "OutputExistsError";
    this.file = file;
  }
}

/** Thrown when the target is one of the inputs (the same file under any name), with or without `force`. */
export class OutputIsInputError extends CompactSafeError {
  readonly file: string;
  readonly input: string;
  constructor(file: string, input: string) {
    super(
      "output_is_input",
      file === input
        ? `${file}: is the input; the output must be another file`
        : `${file}: is the input ${input} (the same file); the output must be another file`,
    );
    this.name = "OutputIsInputError";
    this.file = file;
    this.input = input;
  }
}

export interface OutputOptions {
  /** Replace an existing target (never an input). Default false. */
  force?: boolean;
  /** Files the content was read from: the target must be none of them. */
  inputs?: readonly string[];
  /** With `force`, copy an existing target to `<target>.bak-<timestamp>` first. */
  backup?: boolean;
  /** File mode of the written file (default 0o644, less the umask). */
  mode?: number;
  /** The error for an existing target (default `OutputExistsError`). */
  existsError?: (file: string) => Error;
  /** Test hook: runs after the content is written and synced, just before the link or rename. */
  beforeRename?: () => void;
}

export interface OutputResult {
  /** Set when an existing target was replaced with `backup`: the copy of its old content. */
  backup?: string;
}

const code = (e: unknown) => (e as NodeJS.ErrnoException).code;

async function statOrNull(file: string, follow: boolean): Promise<Stats | null> {
  try {
    return follow ? await stat(file) : await lstat(file);
  } catch (e) {
    const c = code(e);
    if (c === "ENOENT" || c === "ENOTDIR" || c === "ELOOP") return null;
    throw e;
  }
}

/**
 * Checks `target` against the rule, writing nothing: throws
 * `OutputIsInputError` when it is an input, `OutputExistsError` (or
 * `existsError`) when it exists without `force`, and an error for a target
 * that is a folder, FIFO or device. Returns whether it exists.
 */
export async function checkOutput(target: string, options: OutputOptions = {}): Promise<boolean> {
  const own = await statOrNull(target, false);
  if (own === null) return false;
  // What the name leads to (a symbolic link is followed): one of the inputs under another name?
  const leads = await statOrNull(target, true);
  for (const input of options.inputs ?? []) {
    const st = await statOrNull(input, true);
    if (st === null) continue;
    if (
      (leads !== null && leads.dev === st.dev && leads.ino === st.ino) ||
      (own.dev === st.dev && own.ino === st.ino)
    )
      throw new OutputIsInputError(target, input);
  }
  if (!own.isSymbolicLink()) {
    const why = notRegularFile(own);
    if (why !== null)
      throw new CompactSafeError("output_exists", `${target}: ${why}; refusing to write to it`);
  }
  if (!options.force) throw (options.existsError ?? ((f: string) => new OutputExistsError(f)))(target);
  return true;
}

/**
 * Writes `data` to `target` under the rule (see the module comment). The
 * caller holds whatever lock the target needs.
 */
export async function writeOutputFile(
  target: string,
  data: string | Uint8Array,
  options: OutputOptions = {},
): Promise<OutputResult> {
  await removeDeadTemps(target);
  const present = await checkOutput(target, options);
  // A symbolic link is replaced, not backed up through: only a regular file's content is copied.
  const bak =
    present && options.backup && (await statOrNull(target, false))?.isFile() === true
      ? await backup(target)
      : undefined;
  const tmp = await writeTemp(target, data, options.mode);
  try {
    options.beforeRename?.();
    if (present) await rename(tmp, target);
    else {
      // link fails when the target appeared meanwhile (as a file or a link): it is then refused, not replaced.
      try {
        await link(tmp, target);
      } catch (e) {
        if (code(e) === "EEXIST") {
          if (!options.force)
            throw (options.existsError ?? ((f: string) => new OutputExistsError(f)))(target);
          await checkOutput(target, options);
          await rename(tmp, target);
        } else throw e;
      }
      await unlink(tmp).catch((e: unknown) => {
        if (code(e) !== "ENOENT") throw e;
      });
    }
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fsyncDir(dirname(target));
  return bak === undefined ? {} : { backup: bak };
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The temporary file a write of `file` goes through (see `writeTemp`). */
export function tempFileFor(file: string): string {
  return join(dirname(file), `.${basename(file)}.tmp-${process.pid}-${randomUUID()}`);
}

/**
 * Removes `.<name>.tmp-<pid>-<uuid>` files beside `file` whose writer is no
 * longer alive (a write killed before its rename or link, or just after a
 * link). Returns how many were removed. Files of live pids are left alone:
 * they may belong to a writer at work.
 */
export async function removeDeadTemps(file: string): Promise<number> {
  const dir = dirname(file);
  const pattern = new RegExp(
    `^\\.${escapeRegExp(basename(file))}\\.tmp-(\\d+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`,
  );
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const m = pattern.exec(name);
    if (m === null) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || isProcessAlive(pid)) continue;
    try {
      await unlink(join(dir, name));
      removed++;
    } catch (err) {
      if (code(err) !== "ENOENT") throw err;
    }
  }
  return removed;
}

export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, "r");
  try {
    await fh.sync();
  } catch (err) {
    // Some filesystems do not support fsync on a directory; the data itself is synced.
    const c = code(err);
    if (c !== "EINVAL" && c !== "ENOTSUP" && c !== "EISDIR") throw err;
  } finally {
    await fh.close();
  }
}

function timestamp(): string {
  return new Date().toISOString().replace(/[-:]/g, "");
}

/** Copies `file` to a new `<file>.bak-<timestamp>` beside it, fsynced. Returns the backup path. */
export async function backup(file: string): Promise<string> {
  const base = `${file}.bak-${timestamp()}`;
  for (let n = 0; ; n++) {
    const target = n === 0 ? base : `${base}-${n}`;
    try {
      await copyFile(file, target, constants.COPYFILE_EXCL);
    } catch (err) {
      if (code(err) === "EEXIST") continue;
      throw err;
    }
    const fh = await open(target, "r");
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    return target;
  }
}

/** Writes `data` to a fresh temp file beside `file` and fsyncs it. Returns its path. */
export async function writeTemp(file: string, data: string | Uint8Array, mode?: number): Promise<string> {
  const tmp = tempFileFor(file);
  const fh = await open(tmp, "wx", mode ?? 0o644);
  try {
    await fh.writeFile(data);
    if (mode !== undefined) await fh.chmod(mode);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fh.close();
  return tmp;
}
