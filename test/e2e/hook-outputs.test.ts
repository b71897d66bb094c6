/**
 * What `compact-safe hook claude-code|codex|pi` prints, pinned byte for byte
 * on small sessions (stdout and stderr, the session folder written `<dir>`):
 * the hooks load only their own format's importer and audit only the
 * compaction they answer about (issue 26), and answer exactly as they did
 * when they imported with the format detector and audited every compaction.
 * The expected texts were printed by the hooks before that change, but for
 * the wording the tail read brought (issue 26, docs/DECISIONS.md): a message
 * of the context before a compaction is named from the end (`message 3 from
 * the end`, was `message 2`), and a kept compaction says the messages after it
 * (`5 messages after it`, was `5 -> 5 messages`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hook } from "./hook-run.js";
import { claudeCodeTranscript, codexRollout } from "../hook-sessions.js";
import { piSessionText } from "../pi-session.js";
import { lastCompaction } from "../pi-extension.js";
import { tempDir } from "./helpers.js";

interface Case {
  name: string;
  agent: string;
  /** Writes the session in `dir`; returns the hook's input. */
  input(dir: string): Record<string, unknown>;
}

const ccInput = (dir: string, transcript: string) => ({
  hook_event_name: "SessionStart",
  source: "compact",
  transcript_path: transcript,
  cwd: dir,
});
const codexInput = (dir: string, rollout: string) => ({
  hook_event_name: "PostCompact",
  trigger: "auto",
  transcript_path: rollout,
  cwd: dir,
});
/** The text of `file` twice over (its tool call ids repeated: the second ones renamed `_dup2`). */
function twice(file: string): string {
  const text = readFileSync(file, "utf8");
  writeFileSync(file, text + text);
  return file;
}
function pi(dir: string, o: { compactAfter: number; rounds: number }, named = true) {
  const text = piSessionText({ cwd: dir, rounds: o.rounds, resultBytes: 300, compactAfter: o.compactAfter });
  const file = join(dir, "pi.jsonl");
  writeFileSync(file, text);
  return named
    ? { session_file: file, compaction_id: lastCompaction(text).id, cwd: dir }
    : { session_file: file, cwd: dir };
}

const CASES: Case[] = [
  {
    name: "claude-code, before the compaction is recorded, with anchors",
    agent: "claude-code",
    input: (dir) => {
      mkdirSync(join(dir, ".codewhale"));
      writeFileSync(join(dir, ".codewhale", "anchors.md"), "Never push to main.\n");
      return ccInput(dir, claudeCodeTranscript(dir, { compacted: false }));
    },
  },
  {
    name: "claude-code, the compaction recorded",
    agent: "claude-code",
    input: (dir) => ccInput(dir, claudeCodeTranscript(dir, { compacted: true })),
  },
  {
    name: "claude-code, the transcript twice over",
    agent: "claude-code",
    input: (dir) => ccInput(dir, twice(claudeCodeTranscript(dir, { compacted: true }))),
  },
  {
    name: "claude-code, given a Codex rollout",
    agent: "claude-code",
    input: (dir) => ccInput(dir, codexRollout(dir, false)),
  },
  {
    name: "codex, a compaction that lost the last round",
    agent: "codex",
    input: (dir) => codexInput(dir, codexRollout(dir, false)),
  },
  {
    name: "codex, a compaction that kept it",
    agent: "codex",
    input: (dir) => codexInput(dir, codexRollout(dir, true)),
  },
  {
    name: "codex, the rollout twice over (two compactions, repeated call ids)",
    agent: "codex",
    input: (dir) => codexInput(dir, twice(codexRollout(dir, false))),
  },
  {
    name: "codex, given a Claude Code transcript",
    agent: "codex",
    input: (dir) => codexInput(dir, claudeCodeTranscript(dir, { compacted: true })),
  },
  {
    name: "codex, an empty rollout",
    agent: "codex",
    input: (dir) => {
      writeFileSync(join(dir, "empty.jsonl"), "");
      return codexInput(dir, join(dir, "empty.jsonl"));
    },
  },
  {
    name: "pi, the compaction named",
    agent: "pi",
    input: (dir) => pi(dir, { rounds: 12, compactAfter: 10 }),
  },
  {
    name: "pi, no compaction named (the last one)",
    agent: "pi",
    input: (dir) => pi(dir, { rounds: 6, compactAfter: 5 }, false),
  },
  {
    name: "pi, a folder for a session",
    agent: "pi",
    input: (dir) => ({ session_file: dir, cwd: dir }),
  },
];

const EXPECTED: Record<string, { stdout: string; stderr: string }> = {
  "claude-code, before the compaction is recorded, with anchors": {
    stdout:
      '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"compact-safe: the user\'s current instructions (the last round before this compaction), as they wrote them:\\n- Rename the config loader and keep the old name as an alias.\\n\\nPinned anchors (restated verbatim):\\nNever push to main.\\n"}}\n',
    stderr: "",
  },
  "claude-code, the compaction recorded": {
    stdout:
      '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"compact-safe: the compaction just made did not keep the survival contract (last round: user text \\"Rename the config loader and keep the old name as an alias.\\" missing (message 4 from the end)).\\n\\nThe user\'s current instructions, as they wrote them:\\n- Rename the config loader and keep the old name as an alias.\\n\\nTool calls of the last round no longer in the context: toolu_1."}}\n',
    stderr: "",
  },
  "claude-code, the transcript twice over": {
    stdout:
      '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"compact-safe: the compaction just made did not keep the survival contract (last round: user text \\"Rename the config loader and keep the old name as an alias.\\" missing (message 4 from the end)).\\n\\nThe user\'s current instructions, as they wrote them:\\n- Rename the config loader and keep the old name as an alias.\\n\\nTool calls of the last round no longer in the context: toolu_1."}}\n',
    stderr: "",
  },
  "claude-code, given a Codex rollout": {
    stdout: "",
    stderr:
      "compact-safe hook claude-code: <dir>/rollout-2026-12-01T00-00-00-0199b26c-0000-7000-8000-000000000001.jsonl: none of its 7 lines reads as claude-code; it looks like a codex session (give --format codex, or leave the format to be detected)\n",
  },
  "codex, a compaction that lost the last round": {
    stdout:
      '{"systemMessage":"compact-safe: this compaction did not keep the survival contract (last round: user text \\"Now list them again and keep the hidden ones.\\" missing (message 3 from the end)).\\nYour current instructions, as you wrote them (restate them if they still apply):\\n- Now list them again and keep the hidden ones.\\nTool calls of the last round no longer in the context: call_1."}\n',
    stderr: "",
  },
  "codex, a compaction that kept it": {
    stdout:
      '{"systemMessage":"compact-safe: this compaction kept the survival contract (5 messages after it)."}\n',
    stderr: "",
  },
  "codex, the rollout twice over (two compactions, repeated call ids)": {
    stdout:
      '{"systemMessage":"compact-safe: this compaction did not keep the survival contract (last round: user text \\"Now list them again and keep the hidden ones.\\" missing (message 3 from the end)).\\nYour current instructions, as you wrote them (restate them if they still apply):\\n- Now list them again and keep the hidden ones.\\nTool calls of the last round no longer in the context: call_1."}\n',
    stderr: "",
  },
  "codex, given a Claude Code transcript": {
    stdout: "",
    stderr:
      "compact-safe hook codex: <dir>/s-1.jsonl: none of its 6 lines reads as codex; it looks like a claude-code session (give --format claude-code, or leave the format to be detected)\n",
  },
  "codex, an empty rollout": {
    stdout: "",
    stderr:
      "compact-safe hook codex: <dir>/empty.jsonl: none of its 1 lines reads as codex; line 1: blank line\n",
  },
  "pi, the compaction named": {
    stdout:
      '{"line":"compact-safe: pi\'s compaction 00000036 did not keep the survival contract: last round: thinking block \\"Round 9: read the module and its test fi…\\" missing or altered (message 9 from the end)","kept":false,"record":{"compaction":"00000036","kept":false,"reason":"last round: thinking block \\"Round 9: read the module and its test fi…\\" missing or altered (message 9 from the end)","losses":{"user_texts":[],"tool_calls":["toolu_r9a","toolu_r9b"],"tool_results":["toolu_r9a","toolu_r9b"],"assistant_texts":["Reading module 9.","Module 9 updated."]}},"restatement":"compact-safe: the compaction just made lost part of the last round (last round: thinking block \\"Round 9: read the module and its test fi…\\" missing or altered (message 9 from the end)).\\n\\nTool calls of the last round no longer in the context: toolu_r9a, toolu_r9b."}\n',
    stderr: "",
  },
  "pi, no compaction named (the last one)": {
    stdout:
      '{"line":"compact-safe: pi\'s compaction 0000001d did not keep the survival contract: last round: thinking block \\"Round 4: read the module and its test fi…\\" missing or altered (message 9 from the end)","kept":false,"record":{"compaction":"0000001d","kept":false,"reason":"last round: thinking block \\"Round 4: read the module and its test fi…\\" missing or altered (message 9 from the end)","losses":{"user_texts":[],"tool_calls":["toolu_r4a","toolu_r4b"],"tool_results":["toolu_r4a","toolu_r4b"],"assistant_texts":["Reading module 4.","Module 4 updated."]}},"restatement":"compact-safe: the compaction just made lost part of the last round (last round: thinking block \\"Round 4: read the module and its test fi…\\" missing or altered (message 9 from the end)).\\n\\nTool calls of the last round no longer in the context: toolu_r4a, toolu_r4b."}\n',
    stderr: "",
  },
  "pi, a folder for a session": {
    stdout: "",
    stderr: "compact-safe hook pi: <dir>: is a folder, not a file\n",
  },
};

for (const c of CASES)
  test(`hook ${c.agent} prints what it printed before issue 26: ${c.name}`, (t) => {
    const { dir, cleanup } = tempDir();
    t.after(cleanup);
    const r = hook(c.agent, c.input(dir), dir);
    assert.equal(r.status, 0, r.stderr);
    const got = { stdout: r.stdout.split(dir).join("<dir>"), stderr: r.stderr.split(dir).join("<dir>") };
    if (process.env.PIN_CAPTURE) {
      appendFileSync(process.env.PIN_CAPTURE, `${JSON.stringify([c.name, got])}\n`);
      return;
    }
    assert.deepEqual(got, EXPECTED[c.name]);
  });
