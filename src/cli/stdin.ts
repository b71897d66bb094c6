/**
 * Standard input as a session: `-` in place of a file, for every command that
 * reads one. It is read whole, once per process (every later read gets the
 * same bytes), and is then read as a file's content is: the format detected
 * from the content, a journal by the journal layer's tolerant reader.
 * Messages name it `(stdin)`.
 */
import { importBytes, importFile, type ImportOptions } from "../formats/detect.js";
import type { ImportResult } from "../formats/common/types.js";
import { usageError } from "./errors.js";

/** The argument that stands for standard input (as an input) or standard output (as `--out`). */
export const STDIO = "-";
/** How messages name standard input. */
export const STDIN_NAME = "(stdin)";

let stdin: Promise<Buffer> | undefined;

/** The whole of standard input (read once; a terminal is refused: a session is piped in). */
export function readStdin(): Promise<Buffer> {
  if (stdin === undefined) {
    if (process.stdin.isTTY === true)
      return Promise.reject(
        usageError(`${STDIN_NAME}: standard input is a terminal; pipe a session into it (… - < FILE)`),
      );
    stdin = (async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin)
        chunks.push(typeof c === "string" ? Buffer.from(c) : (c as Buffer));
      return Buffer.concat(chunks);
    })();
  }
  return stdin;
}

/** The name messages give an input: `(stdin)` for `-`, the path otherwise. */
export function inputName(file: string): string {
  return file === STDIO ? STDIN_NAME : file;
}

/** The files among the inputs (standard input is no file a write could hit). */
export function inputFiles(...files: readonly (string | undefined)[]): string[] {
  return files.filter((f): f is string => f !== undefined && f !== STDIO);
}

/** Imports a session file, or standard input for `-` (the format detected from the content unless given). */
export async function importInput(file: string, options: ImportOptions = {}): Promise<ImportResult> {
  if (file !== STDIO) return importFile(file, options);
  return importBytes(await readStdin(), STDIN_NAME, options);
}
