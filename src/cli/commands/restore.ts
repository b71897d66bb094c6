/**
 * `compact-safe restore JOURNAL`: moves the leaf back to just before a
 * compaction by appending a leaf-move entry (nothing is deleted), so the
 * live context is the pre-compaction history again.
 */
import type { Command } from "commander";
import type { CompactionEntry } from "../../model/index.js";
import {
  activePath,
  appendEntries,
  indexEntries,
  latestCompaction,
  leafMoveEntry,
  newEntryId,
  projectPath,
  readJournal,
  realJournalPath,
  withJournalLock,
} from "../../journal/index.js";
import { estimateTokens } from "../../engine/tokens.js";
import { CliError, EXIT, usageError } from "../errors.js";
import { looksLikeJournal, requireFile } from "../io.js";
import { STDIN_NAME, STDIO } from "../stdin.js";
import { num, out, printJson } from "../output.js";

export interface RestoreResult {
  /** The compaction undone. */
  compaction_id: string;
  /** The entry the leaf now hangs off (the compaction's parent). */
  restored_to: string;
  /** The appended leaf-move entry. */
  entry_id: string;
  /** Live messages and estimated tokens after the restore. */
  messages: number;
  estimated_tokens: number;
  journal: string;
}

export function register(program: Command): void {
  program
    .command("restore")
    .summary("undo a compaction by moving the leaf back (appends; never deletes)")
    .description(
      "Move the leaf of JOURNAL back to just before a compaction (the latest on the active path, or " +
        "--before ID) by appending a leaf-move entry. Nothing is deleted: the compaction stays in the " +
        "journal, and the live context is the pre-compaction history again (see `context`).\n\n" +
        "Exit codes: 0 ok; 2 usage or input error (not a journal, no compaction, unknown id); " +
        "4 journal locked.",
    )
    .argument("<journal>", "the journal")
    .option("--before <compaction-id>", "the compaction to undo (default: the latest on the active path)")
    .option("--json", "print the result as JSON")
    .action(async (file: string, o: { before?: string; json?: boolean }) => {
      if (file === STDIO)
        throw usageError(
          `${STDIN_NAME}: restore appends to a journal file, and standard input is none; give the journal's path`,
        );
      await requireFile(file);
      if (!(await looksLikeJournal(file)))
        throw usageError(
          `${file}: not a compact-safe journal (import it first: compact-safe import FILE --out JOURNAL)`,
        );
      // The lock, the read and the append on one file: the journal's real path, resolved once.
      const real = await realJournalPath(file);
      const result = await withJournalLock(real, async (): Promise<RestoreResult> => {
        const { entries } = await readJournal(real);
        const path = activePath(entries);
        let target: CompactionEntry | undefined;
        if (o.before !== undefined) {
          const e = indexEntries(entries).get(o.before);
          if (e === undefined) throw usageError(`${file}: no entry with id ${JSON.stringify(o.before)}`);
          if (e.kind !== "compaction")
            throw usageError(`${file}: entry ${JSON.stringify(o.before)} is a ${e.kind}, not a compaction`);
          target = e;
        } else {
          target = latestCompaction(path);
          if (target === undefined)
            throw usageError(`${file}: no compaction on the active path; nothing to restore`);
        }
        const parent = target.parent_id;
        if (parent === null || parent === undefined)
          throw new CliError(
            `${file}: compaction ${target.id} has no parent entry to restore to`,
            EXIT.USAGE,
          );
        const move = leafMoveEntry(
          parent,
          `restore: leaf moved back to before compaction ${target.id}`,
          newEntryId(),
        );
        await appendEntries(real, [move], { lock: false });
        const live = projectPath(activePath([...entries, move]));
        return {
          compaction_id: target.id,
          restored_to: parent,
          entry_id: move.id,
          messages: live.length,
          estimated_tokens: estimateTokens(live),
          journal: file,
        };
      });
      if (o.json) printJson(result);
      else {
        out(
          `restored ${file} to before compaction ${result.compaction_id} (leaf-move entry ${result.entry_id} appended)`,
        );
        out(
          `  live context: ${num(result.messages)} messages, ${num(result.estimated_tokens)} estimated tokens`,
        );
      }
    });
}
