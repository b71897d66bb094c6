/**
 * Reading a session file's bytes, as every import of a file does: opened
 * without blocking and checked to be a regular file (a FIFO or a device
 * would block or never end), each failure a one-line `FormatError`.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { notRegularFile } from "../model/files.js";
import { FormatError } from "./common/types.js";

/** The bytes of the session file `path`. */
export async function readSessionFile(path: string): Promise<Buffer> {
  try {
    const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const why = notRegularFile(await fh.stat());
      if (why !== null) throw new FormatError(`${path}: ${why}`);
      return await fh.readFile();
    } finally {
      await fh.close();
    }
  } catch (e) {
    throw readError(path, e);
  }
}

/**
 * `readSessionFile` on the calling thread, for a thread that reads nothing else meanwhile (a batch's
 * worker): one read where the other takes a trip to the thread pool for each 512 KiB.
 */
export function readSessionFileSync(path: string): Buffer {
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const why = notRegularFile(fstatSync(fd));
      if (why !== null) throw new FormatError(`${path}: ${why}`);
      return readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    throw readError(path, e);
  }
}

/** A failure to read `path`, as a one-line `FormatError`. */
function readError(path: string, e: unknown): FormatError {
  if (e instanceof FormatError) return e;
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return new FormatError(`${path}: no such file`);
  if (code === "EISDIR") return new FormatError(`${path}: is a directory, not a session file`);
  return new FormatError(`${path}: cannot be read (${code ?? (e instanceof Error ? e.message : String(e))})`);
}
