/**
 * Reading a session file's bytes, as every import of a file does: opened
 * without blocking and checked to be a regular file (a FIFO or a device
 * would block or never end), each failure a one-line `FormatError`.
 */
import { constants } from "node:fs";
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
    if (e instanceof FormatError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new FormatError(`${path}: no such file`);
    if (code === "EISDIR") throw new FormatError(`${path}: is a directory, not a session file`);
    throw new FormatError(
      `${path}: cannot be read (${code ?? (e instanceof Error ? e.message : String(e))})`,
    );
  }
}
