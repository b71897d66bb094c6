/** Two `compact` processes on one journal at once: one succeeds, the other exits 4, and the journal is valid. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { corpusDir } from "../support.js";
import { readJournalSync } from "../../src/journal/index.js";
import { run, tempDir } from "./helpers.js";

// A large session, so that each compaction holds the lock for a while (reading, compacting, appending).
const big = join(corpusDir, "pi", "pi-mono-before-compaction.jsonl");

test(
  "two concurrent compactions of one journal: exactly one succeeds, the other exits 4 (3 rounds)",
  { timeout: 120_000 },
  async (t) => {
    const { dir, cleanup } = tempDir();
    t.after(cleanup);
    for (let round = 0; round < 3; round++) {
      const j = join(dir, `j${round}.jsonl`);
      assert.equal((await run(["import", big, "--out", j])).code, 0);
      const before = readFileSync(j);
      const entriesBefore = readJournalSync(j).entries.length;
      const args = ["compact", j, "--in-place", "--target", "20000", "--workspace", dir, "--json"];
      const [a, b] = await Promise.all([run(args), run(args)]);
      const codes = [a.code, b.code].sort();
      assert.deepEqual(
        codes,
        [0, 4],
        `round ${round}: exit codes ${a.code}/${b.code}: ${a.stderr} ${b.stderr}`,
      );
      const loser = a.code === 4 ? a : b;
      assert.match(loser.stderr, /^compact-safe: journal is locked by pid \d+/);
      const winner = a.code === 0 ? a : b;
      const receipt = JSON.parse(winner.stdout) as { checkpoint_id: string };
      const after = readFileSync(j);
      assert.deepEqual(after.subarray(0, before.length), before);
      const { entries, report } = readJournalSync(j);
      assert.deepEqual(report.problems, []);
      assert.equal(entries.length, entriesBefore + 1);
      assert.equal(entries[entries.length - 1]!.id, receipt.checkpoint_id);
    }
  },
);
