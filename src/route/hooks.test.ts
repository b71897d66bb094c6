import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  claudeCodeHook,
  codexHook,
  HookInputError,
  parseHookInput,
  piHook,
  runHook,
  type ClaudeCodeHookOutput,
  type CodexHookOutput,
  type PiHookOutput,
} from "./hooks.js";
import {
  claudeCodeTranscript,
  codexRollout,
  CODEX_INSTRUCTION,
  INSTRUCTION,
} from "../../test/hook-sessions.js";
import { piSessionText } from "../../test/pi-session.js";

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), "cs-hooks-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function pinAnchors(dir: string, text = "Never push to main.\n"): void {
  mkdirSync(join(dir, ".codewhale"), { recursive: true });
  writeFileSync(join(dir, ".codewhale", "anchors.md"), text);
}

/** A GitHub token (built here so no scanner takes this file for a leak). */
const TOKEN = ["ghp", "_", "Zq8WmR2xVt5Lk9Pn3Hb7Jc1Yd6Fs4Ga0Eu2Qw"].join("");

const context = (r: { output: ClaudeCodeHookOutput | undefined }) =>
  r.output!.hookSpecificOutput.additionalContext;

test("claude-code hook: before Claude Code records its compaction, it restates the last round's instruction as written, then the anchors", async (t) => {
  const dir = tempDir(t);
  pinAnchors(dir);
  const transcript = claudeCodeTranscript(dir, { compacted: false });
  const r = await claudeCodeHook({ source: "compact", transcript_path: transcript, cwd: dir });
  assert.equal(r.output!.hookSpecificOutput.hookEventName, "SessionStart");
  assert.equal(
    context(r),
    "compact-safe: the user's current instructions (the last round before this compaction), as they wrote them:\n" +
      `- ${INSTRUCTION}\n\nPinned anchors (restated verbatim):\nNever push to main.\n`,
  );
  assert.deepEqual(r.warnings, []);
});

test("claude-code hook: a recorded compaction that lost the last round is audited and what it lost restated", async (t) => {
  const dir = tempDir(t);
  const transcript = claudeCodeTranscript(dir, { compacted: true });
  const ctx = context(await claudeCodeHook({ source: "compact", transcript_path: transcript, cwd: dir }));
  assert.match(ctx, /^compact-safe: the compaction just made did not keep the survival contract \(/);
  assert.match(ctx, new RegExp(`\\n- ${INSTRUCTION.replace(/\./g, "\\.")}\\n`));
  assert.match(ctx, /Tool calls of the last round no longer in the context: toolu_1\./);
});

test("claude-code hook: another source, or no transcript, answers nothing", async (t) => {
  const dir = tempDir(t);
  const transcript = claudeCodeTranscript(dir, { compacted: false });
  assert.equal((await claudeCodeHook({ source: "startup", transcript_path: transcript })).output, undefined);
  assert.equal((await claudeCodeHook({ source: "compact" })).output, undefined);
});

test("codex hook: the verdict on the rollout's last compaction, with the lost instruction as written", async (t) => {
  const dir = tempDir(t);
  const lost = await codexHook({ hook_event_name: "PostCompact", transcript_path: codexRollout(dir, false) });
  const message = (lost.output as CodexHookOutput).systemMessage;
  assert.match(message, /^compact-safe: this compaction did not keep the survival contract/);
  assert.ok(message.includes(`\n- ${CODEX_INSTRUCTION}`), message);
  assert.match(message, /call_1/);
  const kept = await codexHook({ hook_event_name: "PostCompact", transcript_path: codexRollout(dir, true) });
  assert.match(
    kept.output!.systemMessage,
    /^compact-safe: this compaction kept the survival contract \(\d+ messages after it\)\.$/,
  );
  const other = await codexHook({ hook_event_name: "PreCompact", transcript_path: codexRollout(dir, false) });
  assert.equal(other.output, undefined);
});

test("pi hook: the verdict on the compaction named, what to keep in the session and what to restate", async (t) => {
  const dir = tempDir(t);
  pinAnchors(dir);
  const file = join(dir, "session.jsonl");
  writeFileSync(file, piSessionText({ cwd: dir, rounds: 4, compactAfter: 4 }));
  const r = (await piHook({ session_file: file, compaction_id: "no-such-id", cwd: dir }))
    .output as PiHookOutput;
  assert.equal(r.kept, false);
  assert.match(r.line, /^compact-safe: pi's compaction \S+ did not keep the survival contract: /);
  assert.equal(r.record.compaction, r.line.split(" ")[3]);
  assert.deepEqual(r.record.losses.tool_calls, ["toolu_r3a", "toolu_r3b"]);
  assert.match(
    r.restatement!,
    /Tool calls of the last round no longer in the context: toolu_r3a, toolu_r3b\./,
  );
  assert.match(r.restatement!, /Pinned anchors \(restated verbatim\):\nNever push to main\.\n$/);
  await assert.rejects(piHook({ cwd: dir }), HookInputError);
});

test("hooks: what they restate of the session is redacted (pi's record, Claude Code's and Codex's instructions)", async (t) => {
  const dir = tempDir(t);
  const said = `Deploy with ${TOKEN} and report back.`;
  const cc = JSON.stringify(
    await claudeCodeHook({
      source: "compact",
      transcript_path: claudeCodeTranscript(dir, { compacted: true, instruction: said }),
    }),
  );
  const pre = JSON.stringify(
    await claudeCodeHook({
      source: "compact",
      transcript_path: claudeCodeTranscript(dir, { compacted: false, instruction: said, name: "pre.jsonl" }),
    }),
  );
  const codex = JSON.stringify(
    await codexHook({ hook_event_name: "PostCompact", transcript_path: codexRollout(dir, false, said) }),
  );
  const file = join(dir, "pi.jsonl");
  writeFileSync(
    file,
    piSessionText({ cwd: dir, rounds: 4, compactAfter: 4 }).replace(
      "Reading module 3.",
      `Reading module 3 with ${TOKEN}.`,
    ),
  );
  const pi = JSON.stringify(await piHook({ session_file: file }));
  for (const [name, out] of Object.entries({ cc, pre, codex, pi })) {
    assert.ok(!out.includes(TOKEN.slice(4)), `${name}: ${out}`);
    assert.match(out, /\[REDACTED:[a-z_-]+\]/, name);
  }
});

test("hooks: a session path is taken from the input's cwd, whatever it starts with: never an option, never stdin", async (t) => {
  const dir = tempDir(t);
  const file = claudeCodeTranscript(dir, { compacted: false, name: "-s.jsonl" });
  for (const name of ["-s.jsonl", "--help", "-"]) {
    if (name !== "-s.jsonl")
      renameSync(join(dir, name === "--help" ? "-s.jsonl" : "--help"), join(dir, name));
    const r = await claudeCodeHook({ source: "compact", transcript_path: name, cwd: dir }, "/nonexistent");
    assert.ok(context(r).includes(INSTRUCTION), name);
  }
  assert.ok(file.startsWith(dir));
  // Without a cwd in the input, from the folder the hook runs in.
  const r = await claudeCodeHook({ source: "compact", transcript_path: "-" }, dir);
  assert.ok(context(r).includes(INSTRUCTION));
});

test("hooks: input that is not the agent's hook JSON is a HookInputError naming the problem", async () => {
  assert.throws(
    () => parseHookInput("{not json"),
    (e: Error) => e instanceof HookInputError && /not JSON/.test(e.message),
  );
  assert.throws(() => parseHookInput(""), /standard input is empty/);
  assert.throws(() => parseHookInput("[1]"), /not a JSON object/);
  await assert.rejects(
    runHook("claude-code", '{"source":"compact","transcript_path":42}'),
    /"transcript_path" must be a string/,
  );
});

test("claude-code hook: an anchors file it cannot use is a warning; the instructions are still restated", async (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, ".codewhale"));
  writeFileSync(join(dir, "elsewhere.md"), "Never push to main.\n");
  symlinkSync(join(dir, "elsewhere.md"), join(dir, ".codewhale", "anchors.md"));
  const r = await claudeCodeHook({
    source: "compact",
    transcript_path: claudeCodeTranscript(dir, { compacted: false }),
    cwd: dir,
  });
  assert.ok(context(r).includes(INSTRUCTION));
  assert.ok(!context(r).includes("Pinned anchors"));
  assert.equal(r.warnings.length, 1);
  assert.match(r.warnings[0]!, /^anchors not restated: .*anchors\.md/);
});
