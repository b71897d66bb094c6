/**
 * The plan as it stands, through the built binary, on a real Claude Code session that keeps its plan
 * with `TaskCreate`/`TaskUpdate` (Claude Code 2.1.17+; skipped, saying so, on a clone without
 * ../shared): the session cut while task #4 is in progress (and again once every task is completed)
 * is compacted on the summary path, and the note's Next step names task #4 with the plan's statuses
 * (and then reports the plan done, not as the plan).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { corpusDir, corpusSuite } from "../support.js";
import { run, tempDir } from "./helpers.js";

const SESSION = join(corpusDir, "claude-code", "entire-fc-99c919b212-0.jsonl");

/** The session's first lines up to the one holding `marker` (inclusive), written as a new session. */
function cut(dir: string, name: string, marker: string): string {
  const lines = readFileSync(SESSION, "utf8").split("\n");
  const end = lines.findIndex((l) => l.includes(marker));
  assert.ok(end > 0, `the corpus session holds ${marker}`);
  const file = join(dir, name);
  writeFileSync(file, `${lines.slice(0, end + 1).join("\n")}\n`);
  return file;
}

/** The Next step section of the note `compact` wrote into the journal. */
async function nextStepOf(dir: string, file: string): Promise<string> {
  const out = join(dir, `${file.split("/").pop()}.journal.jsonl`);
  const r = await run([
    "compact",
    file,
    "--format",
    "claude-code",
    "--out",
    out,
    "--target",
    "8000",
    "--json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { path: string }).path, "summary");
  const entry = readFileSync(out, "utf8")
    .split("\n")
    .filter((l) => l.includes('"compaction"'))
    .map((l) => JSON.parse(l) as { kind?: string; payload?: { summary?: string } })
    .find((e) => e.kind === "compaction");
  const note = entry?.payload?.summary ?? "";
  const start = note.indexOf("## Next step\n");
  assert.ok(start !== -1, "the note has a Next step");
  const end = note.indexOf("\n## ", start + 1);
  return note.slice(start, end === -1 ? undefined : end);
}

corpusSuite("the plan from TaskCreate/TaskUpdate", () => {
  test("a session cut while a task is in progress: the Next step names it, the plan with its statuses", async () => {
    const { dir, cleanup } = tempDir();
    try {
      // Task #4 was set in progress; its completion comes later.
      const file = cut(dir, "in-progress.jsonl", "Now update `handleGeminiSessionEnd()`");
      const next = await nextStepOf(dir, file);
      assert.match(next, /^Next: #4 Update Gemini handleGeminiSessionEnd and fix logging \(in_progress/m);
      assert.match(next, /^Plan \(the latest TaskCreate\/TaskUpdate list/m);
      assert.match(next, /^- \[completed\] #3 Add markSessionEnded helper and Claude handler$/m);
      assert.match(next, /^- \[pending\] #5 Run verification \(fmt, lint, tests\)$/m);
    } finally {
      cleanup();
    }
  });

  test("a session cut once every task is completed: the plan is reported done, not as the plan", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const lines = readFileSync(SESSION, "utf8").split("\n");
      // The result of the update that completed task #5 (the last one).
      const done = lines.findIndex(
        (l) => l.includes('"taskId":"5"') && l.includes('"to":"completed"') && l.includes("tool_result"),
      );
      assert.ok(done > 0);
      const file = join(dir, "done.jsonl");
      writeFileSync(file, `${lines.slice(0, done + 3).join("\n")}\n`);
      const next = await nextStepOf(dir, file);
      assert.match(
        next,
        /The plan is done: all 5 items of the latest TaskCreate\/TaskUpdate list completed \(the last: #5 Run verification/,
      );
      assert.doesNotMatch(next, /^Plan \(the latest/m);
    } finally {
      cleanup();
    }
  });
});
