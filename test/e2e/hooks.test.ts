/**
 * The hook recipes of the README, run as Claude Code runs them: a JSON object
 * on stdin, one JSON object (or nothing) on stdout, never a failed session.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../support.js";
import { tempDir } from "./helpers.js";

const hook = join(repoRoot, "examples", "hooks", "claude-code-session-start.mjs");

/** A Claude Code session whose own compaction kept only its summary. */
function session(dir: string): string {
  const base = { isSidechain: false, userType: "external", cwd: dir, sessionId: "s-1", version: "2.1.328" };
  let n = 0;
  const line = (parent: string | null, o: Record<string, unknown>) => ({
    ...base,
    parentUuid: parent,
    uuid: `u${++n}`,
    timestamp: `2026-12-01T00:00:0${n}Z`,
    ...o,
  });
  const lines: Record<string, unknown>[] = [
    line(null, {
      type: "user",
      message: { role: "user", content: "Rename the config loader and keep the old name as an alias." },
    }),
    line("u1", {
      type: "assistant",
      message: {
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "src/config.ts" } }],
      },
    }),
    line("u2", {
      type: "user",
      message: {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "export function loadConfig() {}" },
        ],
      },
    }),
    line("u3", {
      type: "assistant",
      message: { role: "assistant", content: [{ type: "text", text: "Renaming now." }] },
    }),
  ];
  lines.push({
    ...base,
    parentUuid: null,
    logicalParentUuid: "u4",
    type: "system",
    subtype: "compact_boundary",
    content: "Conversation compacted",
    isMeta: false,
    timestamp: "2026-12-01T00:01:00Z",
    uuid: "b1",
    level: "info",
    compactMetadata: { trigger: "manual", preTokens: 5000 },
  });
  lines.push({
    ...base,
    parentUuid: "b1",
    type: "user",
    isCompactSummary: true,
    uuid: "s1",
    timestamp: "2026-12-01T00:01:01Z",
    message: {
      role: "user",
      content: "This session is being continued from a previous conversation. Summary: a rename.",
    },
  });
  const file = join(dir, "s-1.jsonl");
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return file;
}

function runHook(input: unknown) {
  return spawnSync(process.execPath, [hook], { input: JSON.stringify(input), encoding: "utf8" });
}

test("Claude Code SessionStart hook: after a compaction that lost the last round, it restates the instruction and the anchors", (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const transcript = session(dir);
  mkdirSync(join(dir, ".codewhale"));
  writeFileSync(join(dir, ".codewhale", "anchors.md"), "Never push to main.\n");
  const r = runHook({
    session_id: "s-1",
    transcript_path: transcript,
    cwd: dir,
    hook_event_name: "SessionStart",
    source: "compact",
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as {
    hookSpecificOutput: { hookEventName: string; additionalContext: string };
  };
  assert.equal(out.hookSpecificOutput.hookEventName, "SessionStart");
  const ctx = out.hookSpecificOutput.additionalContext;
  assert.match(ctx, /did not keep the survival contract/);
  assert.match(ctx, /- Rename the config loader and keep the old name as an alias\./);
  assert.match(ctx, /toolu_1/);
  assert.match(ctx, /Pinned anchors \(restated verbatim\):\nNever push to main\./);
});

test("Claude Code SessionStart hook: another source prints nothing; broken input never fails the session", (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const transcript = session(dir);
  const startup = runHook({ session_id: "s-1", transcript_path: transcript, cwd: dir, source: "startup" });
  assert.equal(startup.status, 0);
  assert.equal(startup.stdout, "");
  const broken = spawnSync(process.execPath, [hook], { input: "{not json", encoding: "utf8" });
  assert.equal(broken.status, 0);
  assert.equal(broken.stdout, "");
  assert.match(broken.stderr, /^compact-safe hook: /);
  const missing = runHook({ transcript_path: join(dir, "nope.jsonl"), cwd: dir, source: "compact" });
  assert.equal(missing.status, 0);
  assert.match(missing.stderr, /nope\.jsonl/);
});
