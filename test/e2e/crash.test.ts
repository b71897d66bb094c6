/**
 * Crash safety: `compact --in-place` killed with SIGKILL at random moments.
 * After every kill the journal reads back cleanly, every original line is
 * byte-identical, and there are zero or one new compaction entries (never a
 * torn one).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { exampleSession } from "../support.js";
import { parseJournal } from "../../src/journal/index.js";
import { exited, run, spawnCli, tempDir } from "./helpers.js";

const TRIALS = 60;
const small = exampleSession;

test(
  `compact killed with SIGKILL at ${TRIALS} random moments never tears the journal`,
  { timeout: 170_000 },
  async (t) => {
    const { dir, cleanup } = tempDir();
    t.after(cleanup);
    const pristine = join(dir, "pristine.jsonl");
    assert.equal((await run(["import", small, "--out", pristine])).code, 0);
    const original = readFileSync(pristine);
    const args = (j: string) => ["compact", j, "--in-place", "--target", "5000", "--workspace", dir];

    // Measure one full run to spread the kills over its duration (start-up included).
    const probe = join(dir, "probe.jsonl");
    copyFileSync(pristine, probe);
    const t0 = process.hrtime.bigint();
    const full = await exited(spawnCli(args(probe)));
    const duration = Number(process.hrtime.bigint() - t0) / 1e6;
    assert.equal(full.code, 0);

    const outcomes = { untouched: 0, compacted: 0, finished: 0 };
    const delays: number[] = [];
    for (let i = 0; i < TRIALS; i++) {
      const j = join(dir, `trial-${i}.jsonl`);
      copyFileSync(pristine, j);
      // A distinct point in each slice of [0, 1.1 × duration), randomised inside the slice.
      const delay = ((i + Math.random()) / TRIALS) * duration * 1.1;
      delays.push(delay);
      const child = spawnCli(args(j));
      const timer = setTimeout(() => child.kill("SIGKILL"), delay);
      const end = await exited(child);
      clearTimeout(timer);
      if (end.signal === null) outcomes.finished++;

      const bytes = readFileSync(j);
      assert.deepEqual(bytes.subarray(0, original.length), original, `trial ${i}: original lines changed`);
      const { entries, report } = parseJournal(bytes, j);
      assert.deepEqual(
        report.problems,
        [],
        `trial ${i} (kill after ${delay.toFixed(1)} ms): the journal does not read back cleanly`,
      );
      const added = entries.slice(parseJournal(original).entries.length);
      assert.ok(added.length <= 1, `trial ${i}: ${added.length} new entries`);
      if (added.length === 1) {
        assert.equal(added[0]!.kind, "compaction");
        assert.ok(
          bytes.subarray(original.length).toString("utf8").endsWith("\n"),
          `trial ${i}: the new line is complete`,
        );
        outcomes.compacted++;
      } else {
        assert.equal(bytes.length, original.length, `trial ${i}: bytes appended without an entry`);
        outcomes.untouched++;
      }
      rmSync(j, { force: true });
      rmSync(`${j}.lock`, { force: true });
    }
    assert.equal(
      new Set(delays.map((d) => d.toFixed(3))).size,
      TRIALS,
      "every trial kills at a different point",
    );
    t.diagnostic(
      `full run ${duration.toFixed(0)} ms; ${outcomes.untouched} untouched, ${outcomes.compacted} with one compaction (${outcomes.finished} finished before the kill)`,
    );
  },
);
