/**
 * Child process for the memory test: reads a journal with `readJournal` and
 * prints, as JSON, the resident set size before reading, the peak resident
 * set size of the process, and what was read.
 * Usage: node read-memory-worker.js FILE
 */
import { readJournal } from "../../src/journal/read.js";

const file = process.argv[2];
if (!file) {
  process.stderr.write("usage: read-memory-worker FILE\n");
  process.exit(2);
}
const baselineRss = process.memoryUsage().rss;
const { entries, report } = await readJournal(file);
const peakRss = process.resourceUsage().maxRSS * 1024;
const retainedRss = process.memoryUsage().rss;
process.stdout.write(
  JSON.stringify({
    baselineRss,
    peakRss,
    retainedRss,
    entries: entries.length,
    problems: report.problems.length,
    lines: report.lines,
  }),
);
