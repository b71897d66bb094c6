/** What kind of path an input is, for the "not a regular file" errors of every reader. */
import type { Stats } from "node:fs";

/**
 * Why a path that exists cannot be read as an input file (a FIFO or a device
 * would block or never end); null for a regular file. Phrased to follow
 * `<path>: `.
 */
export function notRegularFile(st: Stats): string | null {
  if (st.isFile()) return null;
  if (st.isDirectory()) return "is a folder, not a file";
  if (st.isFIFO()) return "is a named pipe (FIFO), not a regular file";
  if (st.isCharacterDevice()) return "is a character device, not a regular file";
  if (st.isBlockDevice()) return "is a block device, not a regular file";
  if (st.isSocket()) return "is a socket, not a regular file";
  return "is not a regular file";
}
