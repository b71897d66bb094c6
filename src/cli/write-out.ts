/**
 * Every file a command writes goes through here: `--out -` is standard
 * output; any other target is written under the journal layer's one rule
 * (journal/output-file.ts: an existing file or link refused unless --force,
 * never the input, temp file + fsync + rename), with its refusals worded for
 * the command line (naming --force).
 */
import type { HeaderEntry, JournalEntry } from "../model/index.js";
import {
  createJournal,
  JournalExistsError,
  OutputExistsError,
  serializeEntries,
  writeOutputFile,
} from "../journal/index.js";
import { CliError, EXIT } from "./errors.js";
import { STDIO } from "./stdin.js";

export interface WriteOutOptions {
  /** --force: replace an existing target (never an input). */
  force: boolean;
  /** The files the content was read from (standard input excluded). */
  inputs: readonly string[];
}

/** Whether `--out` names standard output. */
export const toStdout = (out: string | undefined): boolean => out === STDIO;

/** The journal layer's refusals of an existing target, worded for the command line (naming --force). */
export function worded(e: unknown): unknown {
  if (e instanceof JournalExistsError)
    return new CliError(
      `${e.file}: journal already exists (use --force to replace it; a backup is kept)`,
      EXIT.USAGE,
    );
  if (e instanceof OutputExistsError)
    return new CliError(`${e.file}: already exists (use --force to replace it)`, EXIT.USAGE);
  return e;
}

/** Writes `text` to standard output, waiting until it is handed to the system. */
export function writeStdout(text: string): Promise<void> {
  return new Promise((resolve) => {
    process.stdout.write(text, () => resolve());
  });
}

/** Writes a file a command produces (`-`: standard output) under the one rule. */
export async function writeOut(
  target: string,
  text: string,
  o: WriteOutOptions & { mode?: number },
): Promise<void> {
  if (target === STDIO) return writeStdout(text);
  try {
    await writeOutputFile(target, text, { force: o.force, inputs: o.inputs, mode: o.mode });
  } catch (e) {
    throw worded(e);
  }
}

/**
 * Writes a new journal (`-`: to standard output); an existing one is
 * replaced only with --force (backed up first), and never the input.
 */
export async function writeNewJournal(
  file: string,
  header: HeaderEntry,
  rest: readonly JournalEntry[],
  o: WriteOutOptions,
): Promise<void> {
  if (file === STDIO) return writeStdout(serializeEntries([header, ...rest]));
  try {
    await createJournal(file, header, rest, { overwrite: o.force, inputs: o.inputs });
  } catch (e) {
    throw worded(e);
  }
}
