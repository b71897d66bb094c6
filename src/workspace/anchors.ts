/**
 * The user's pinned anchors (`.codewhale/anchors.md`, legacy
 * `.deepseek/anchors.md`): read once through `O_NOFOLLOW` with a size limit,
 * control characters escaped; written and cleared atomically. I/O at the
 * edge; nothing here prints or exits.
 */
import { constants, existsSync } from "node:fs";
import { lstat, mkdir, rename, unlink, open, type FileHandle } from "node:fs/promises";
import { basename, join } from "node:path";
import { CompactSafeError } from "../model/errors.js";
import { CONSTANTS } from "../model/constants.js";

/** Where anchors are written (and read first). */
export const ANCHORS_FILE = join(".codewhale", "anchors.md");
/** The legacy location, read when the current one is absent. */
export const LEGACY_ANCHORS_FILE = join(".deepseek", "anchors.md");

/** A user-caused problem with the anchors file (a symbolic link, unreadable); the message names the path. */
export class AnchorsError extends CompactSafeError {
  readonly file: string;
  constructor(file: string, message: string) {
    super("invalid_anchors", `${file}: ${message}`);
    this.name = "AnchorsError";
    this.file = file;
  }
}

async function lstatOrNull(path: string) {
  try {
    return await lstat(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw e;
  }
}

/** The largest anchors file read or written: 64 KiB (anchors are restated in every checkpoint). */
export const MAX_ANCHORS_BYTES = CONSTANTS.maxAnchorsBytes;

/**
 * Control characters shown escaped, visibly: C0 except tab and newline (a
 * carriage return only when it does not end a CRLF line), DEL, C1 (which
 * includes the 8-bit CSI), and the bidirectional overrides and isolates that
 * reorder what a reader sees. An escape sequence loses its ESC (`\x1b[31m`
 * prints as the text `\x1b[31m`), so it can no longer drive the terminal.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;

/** `text` with its control characters written as `\xNN` / `\uNNNN`, and how many there were. */
export function escapeControlCharacters(text: string): { text: string; escaped: number } {
  let escaped = 0;
  const out = text.replace(CONTROL, (c) => {
    escaped++;
    const code = c.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
  return { text: out, escaped };
}

/** Pinned anchors as read: `text` has its control characters escaped (`escaped` counts them when there were any). */
export interface Anchors {
  text: string;
  file: string;
  escaped?: number;
}

/**
 * Where the file `name` inside an already opened folder can be opened by path:
 * on Linux through `/proc/self/fd`, which resolves in the very folder the
 * descriptor holds (the effect of `openat`), so swapping the folder for a
 * link after it was opened changes nothing. Elsewhere, the path by name.
 */
const PROC_FD = process.platform === "linux" && existsSync("/proc/self/fd");

async function openAnchorsFile(folder: string, file: string): Promise<FileHandle | null> {
  const NOFOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW;
  let dir: FileHandle | undefined;
  if (PROC_FD) {
    try {
      dir = await open(folder, NOFOLLOW | constants.O_DIRECTORY);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return null;
      // A link (or a file) where the folder should be: which one, for the message only.
      if (code === "ENOTDIR" || code === "ELOOP") {
        if ((await lstatOrNull(folder))?.isSymbolicLink())
          throw new AnchorsError(folder, "is a symbolic link; refusing to read anchors through it");
        return null;
      }
      throw new AnchorsError(folder, `cannot be read (${code ?? (e as Error).message})`);
    }
  } else {
    const dirStat = await lstatOrNull(folder);
    if (dirStat === null) return null;
    if (dirStat.isSymbolicLink())
      throw new AnchorsError(folder, "is a symbolic link; refusing to read anchors through it");
  }
  // The file is opened once, without following a link, and read from that descriptor: nothing can
  // be swapped in between a check and the read. O_NONBLOCK: opening a FIFO does not wait for a writer.
  try {
    const path = dir ? `/proc/self/fd/${dir.fd}/${basename(file)}` : file;
    return await open(path, NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    if (code === "ELOOP" || code === "EMLINK")
      throw new AnchorsError(file, "is a symbolic link; refusing to read anchors through it");
    throw new AnchorsError(file, `cannot be read (${code ?? (e as Error).message})`);
  } finally {
    await dir?.close();
  }
}

async function readAnchorsAt(workspace: string, rel: string): Promise<Anchors | null> {
  const file = join(workspace, rel);
  const folder = join(workspace, rel.split(/[\\/]/)[0]!);
  const fh = await openAnchorsFile(folder, file);
  if (fh === null) return null;
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new AnchorsError(file, "is not a regular file");
    if (st.size > MAX_ANCHORS_BYTES) throw tooLarge(file, st.size);
    // Read up to one byte past the limit: a file that grew since fstat is caught too.
    const buf = Buffer.alloc(MAX_ANCHORS_BYTES + 1);
    let got = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, got, buf.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
      if (got === buf.length) throw tooLarge(file);
    }
    const { text, escaped } = escapeControlCharacters(buf.subarray(0, got).toString("utf8"));
    return escaped > 0 ? { text, file, escaped } : { text, file };
  } catch (e) {
    if (e instanceof AnchorsError) throw e;
    throw new AnchorsError(
      file,
      `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  } finally {
    await fh.close();
  }
}

/** `bytes` undefined: the file grew past the limit while it was read. */
function tooLarge(file: string, bytes?: number): AnchorsError {
  const size = bytes === undefined ? `more than ${MAX_ANCHORS_BYTES}` : String(bytes);
  return new AnchorsError(
    file,
    `is larger than the ${MAX_ANCHORS_BYTES / 1024} KiB limit for anchors (${size} bytes); shorten it`,
  );
}

/**
 * The pinned anchors of a workspace: `.codewhale/anchors.md`, else the legacy
 * `.deepseek/anchors.md`; null when neither exists. The file is opened once
 * with `O_NOFOLLOW` and read from that descriptor; a symbolic link (at the
 * file or its folder), anything but a regular file, or a file over
 * `MAX_ANCHORS_BYTES` is refused with an `AnchorsError` naming the path.
 * Control characters come back escaped (`escapeControlCharacters`): that is
 * the text `anchor show` prints and every checkpoint restates.
 */
export async function readAnchors(workspace: string): Promise<Anchors | null> {
  return (
    (await readAnchorsAt(workspace, ANCHORS_FILE)) ?? (await readAnchorsAt(workspace, LEGACY_ANCHORS_FILE))
  );
}

/**
 * Writes `.codewhale/anchors.md` (creating the folder), atomically (temp file,
 * fsync, rename). Refuses a symbolic link at the file or the folder, and text
 * over `MAX_ANCHORS_BYTES`. Returns the path written.
 */
export async function writeAnchors(workspace: string, text: string): Promise<string> {
  const folder = join(workspace, ".codewhale");
  const file = join(workspace, ANCHORS_FILE);
  const dirStat = await lstatOrNull(folder);
  if (dirStat?.isSymbolicLink())
    throw new AnchorsError(folder, "is a symbolic link; refusing to write anchors through it");
  if (dirStat !== null && !dirStat.isDirectory())
    throw new AnchorsError(folder, "exists and is not a folder");
  if (dirStat === null) await mkdir(folder, { recursive: true });
  const st = await lstatOrNull(file);
  if (st?.isSymbolicLink())
    throw new AnchorsError(file, "is a symbolic link; refusing to write anchors through it");
  if (st !== null && !st.isFile()) throw new AnchorsError(file, "is not a regular file");
  const content = text.endsWith("\n") || text === "" ? text : `${text}\n`;
  const bytes = Buffer.byteLength(content, "utf8");
  if (bytes > MAX_ANCHORS_BYTES) throw tooLarge(file, bytes);
  const tmp = `${file}.tmp-${process.pid}`;
  const fh = await open(tmp, "w", 0o644);
  try {
    await fh.writeFile(content, "utf8");
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  return file;
}

/**
 * Removes the pinned anchors (`.codewhale/anchors.md`, and the legacy file so
 * that it does not take over). Returns the paths removed. A symbolic link is
 * refused, not followed.
 */
export async function clearAnchors(workspace: string): Promise<string[]> {
  const removed: string[] = [];
  for (const rel of [ANCHORS_FILE, LEGACY_ANCHORS_FILE]) {
    const file = join(workspace, rel);
    const folder = join(workspace, rel.split(/[\\/]/)[0]!);
    const dirStat = await lstatOrNull(folder);
    if (dirStat === null) continue;
    if (dirStat.isSymbolicLink())
      throw new AnchorsError(folder, "is a symbolic link; refusing to remove anchors through it");
    const st = await lstatOrNull(file);
    if (st === null) continue;
    if (st.isSymbolicLink())
      throw new AnchorsError(file, "is a symbolic link; refusing to remove it (delete it yourself)");
    await unlink(file);
    removed.push(file);
  }
  return removed;
}
