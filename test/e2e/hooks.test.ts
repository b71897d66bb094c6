/**
 * The hook recipes of the README, run as Claude Code runs them: a JSON object
 * on stdin, one JSON object (or nothing) on stdout, never a failed session.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
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

test("Claude Code SessionStart hook: run before Claude Code records its compaction (as 2.1.328 does), it restates the last round's instruction as written", (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  // The transcript as the hook sees it: the history being compacted, no boundary or summary yet.
  const full = readFileSync(session(dir), "utf8").trimEnd().split("\n");
  const transcript = join(dir, "s-1.jsonl");
  writeFileSync(
    transcript,
    full.filter((l) => !/compact_boundary|isCompactSummary/.test(l)).join("\n") + "\n",
  );
  const r = runHook({ session_id: "s-1", transcript_path: transcript, cwd: dir, source: "compact" });
  assert.equal(r.status, 0, r.stderr);
  const ctx = (JSON.parse(r.stdout) as { hookSpecificOutput: { additionalContext: string } })
    .hookSpecificOutput.additionalContext;
  assert.match(ctx, /the last round before this compaction/);
  assert.match(ctx, /\n- Rename the config loader and keep the old name as an alias\.$/);
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

const codexHook = join(repoRoot, "examples", "hooks", "codex-post-compact.mjs");

/**
 * A Codex rollout whose compaction (a `compacted` item, as Codex writes one)
 * kept only its summary and the first request: the last instruction and the
 * call that answered it are gone.
 */
function rollout(dir: string, keepLast: boolean): string {
  const at = "2026-12-01T00:00:00.000Z";
  const item = (type: string, payload: Record<string, unknown>) => ({ timestamp: at, type, payload });
  const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
  const call = { type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: "call_1" };
  const output = { type: "function_call_output", call_id: "call_1", output: "src\ntest" };
  const summary = user(
    "Another language model started to solve this problem and produced a summary: a listing.",
  );
  const lines = [
    item("session_meta", {
      id: "0199b26c-0000-7000-8000-000000000001",
      timestamp: at,
      cwd: dir,
      originator: "codex_cli_rs",
      cli_version: "0.169.0",
    }),
    item("response_item", user("List the files.")),
    item("response_item", {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "Listing." }],
    }),
    item("response_item", user("Now list them again and keep the hidden ones.")),
    item("response_item", call),
    item("response_item", output),
    item("compacted", {
      message: "a listing",
      replacement_history: keepLast
        ? [
            user("List the files."),
            summary,
            user("Now list them again and keep the hidden ones."),
            call,
            output,
          ]
        : [user("List the files."), summary],
    }),
  ];
  const file = join(dir, "rollout-2026-12-01T00-00-00-0199b26c-0000-7000-8000-000000000001.jsonl");
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return file;
}

function runCodexHook(input: unknown) {
  return spawnSync(process.execPath, [codexHook], { input: JSON.stringify(input), encoding: "utf8" });
}

test("Codex PostCompact hook: a compaction that lost the last round is reported to the user with the instruction as written", (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const base = {
    session_id: "s",
    turn_id: "t",
    cwd: dir,
    hook_event_name: "PostCompact",
    model: "m",
    trigger: "auto",
  };
  const lost = runCodexHook({ ...base, transcript_path: rollout(dir, false) });
  assert.equal(lost.status, 0, lost.stderr);
  const out = JSON.parse(lost.stdout) as { systemMessage: string };
  assert.match(out.systemMessage, /did not keep the survival contract/);
  assert.match(out.systemMessage, /- Now list them again and keep the hidden ones\./);
  assert.match(out.systemMessage, /call_1/);
  const kept = runCodexHook({ ...base, transcript_path: rollout(dir, true) });
  assert.equal(kept.status, 0, kept.stderr);
  assert.match(
    (JSON.parse(kept.stdout) as { systemMessage: string }).systemMessage,
    /kept the survival contract/,
  );
});

test("Codex PostCompact hook: another event prints nothing; broken input never fails the session", (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const other = runCodexHook({ hook_event_name: "PreCompact", transcript_path: rollout(dir, false) });
  assert.equal(other.status, 0);
  assert.equal(other.stdout, "");
  const broken = spawnSync(process.execPath, [codexHook], { input: "{not json", encoding: "utf8" });
  assert.equal(broken.status, 0);
  assert.equal(broken.stdout, "");
  assert.match(broken.stderr, /^compact-safe hook: /);
  const missing = runCodexHook({ hook_event_name: "PostCompact", transcript_path: join(dir, "nope.jsonl") });
  assert.equal(missing.status, 0);
  assert.match(missing.stderr, /nope\.jsonl/);
});
