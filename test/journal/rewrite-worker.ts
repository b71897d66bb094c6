/**
 * Child process for the crash-during-rewrite fault test: reads the journal,
 * then rewrites it with one entry fewer, and SIGKILLs itself just before the
 * rename (after the backup and the temp file are written and synced).
 * Usage: node rewrite-worker.js FILE
 */
import { readJournal } from "../../src/journal/read.js";
import { rewriteJournal } from "../../src/journal/write.js";

const file = process.argv[2];
if (!file) {
  process.stderr.write("usage: rewrite-worker FILE\n");
  process.exit(2);
}
const { entries } = await readJournal(file);
await rewriteJournal(file, entries.slice(0, -1), {
  beforeRename: () => {
    process.kill(process.pid, "SIGKILL");
  },
});
process.stderr.write("rewrite-worker: still alive after SIGKILL\n");
process.exit(3);
