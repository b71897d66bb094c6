/** Two `compact` processes on one journal at once: one succeeds, the other exits 4, and the journal is valid. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readJournalSync } from "../../src/journal/index.js";
import type { JournalEntry, Message } from "../../src/model/index.js";
import { run, tempDir } from "./helpers.js";

/**
 * A journal big enough (about 40 MB) that each `compact` holds the lock for a
 * good half second (reading, compacting, appending): far longer than the gap
 * between two processes started together, so the two runs really overlap.
 */
function bigJournal(file: string): void {
  const lines: string[] = [];
  const at = "2026-01-01T00:00:00.000Z";
  const header: JournalEntry = {
    id: "h",
    parent_id: null,
    kind: "header",
    created_at: at,
    payload: { session_id: "s", created_at: at, schema_version: 2, source_format: "journal" },
  };
  lines.push(JSON.stringify(header));
  let parent = "h";
  const add = (id: string, kind: JournalEntry["kind"], payload: Message): void => {
    lines.push(JSON.stringify({ id, parent_id: parent, kind, created_at: at, payload }));
    parent = id;
  };
  add("u0", "user", {
    role: "user",
    content: [{ type: "text", text: "Read every module and fix the failing tests." }],
  });
  const output = "module source line with some code in it;\n".repeat(48);
  for (let i = 0; i < 10_000; i++) {
    add(`a${i}`, "assistant", {
      role: "assistant",
      content: [{ type: "tool_use", id: `c${i}`, name: "Read", input: { file_path: `src/m${i}.ts` } }],
    });
    add(`r${i}`, "tool_result", {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `c${i}`, content: `${i}: ${output}` }],
    });
  }
  writeFileSync(file, lines.join("\n") + "\n");
}

test(
  "two concurrent compactions of one journal: exactly one succeeds, the other exits 4 (3 rounds)",
  { timeout: 120_000 },
  async (t) => {
    const { dir, cleanup } = tempDir();
    t.after(cleanup);
    for (let round = 0; round < 3; round++) {
      const j = join(dir, `j${round}.jsonl`);
      bigJournal(j);
      const before = readFileSync(j);
      const entriesBefore = readJournalSync(j).entries.length;
      const args = ["compact", j, "--in-place", "--target", "5000", "--workspace", dir, "--json"];
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
