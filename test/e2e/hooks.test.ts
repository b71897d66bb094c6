/**
 * `compact-safe hook claude-code|codex|pi`, run as the agents run it: the
 * built binary, from a folder outside the repository, its hook JSON on stdin;
 * one JSON object (or nothing) on stdout, and never a failed session (exit 0,
 * a problem in one line on stderr).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliPath, exampleSession } from "../support.js";
import { additionalContext, hook } from "./hook-run.js";
import { claudeCodeTranscript, codexRollout, CODEX_INSTRUCTION, INSTRUCTION } from "../hook-sessions.js";
import { piSessionText } from "../pi-session.js";
import { tempDir } from "./helpers.js";

/** Exit 0, nothing on stdout, one line on stderr matching `pattern`. */
function assertQuietFailure(r: ReturnType<typeof hook>, pattern: RegExp): void {
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr.split("\n").length, 2, `one line, then its line break: ${JSON.stringify(r.stderr)}`);
  assert.match(r.stderr, pattern);
}

test("hook claude-code: a recorded compaction that lost the last round: the instruction, the lost call and the anchors restated", (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  mkdirSync(join(dir, ".codewhale"));
  writeFileSync(join(dir, ".codewhale", "anchors.md"), "Never push to main.\n");
  const transcript = claudeCodeTranscript(dir, { compacted: true });
  const r = hook(
    "claude-code",
    {
      session_id: "s-1",
      transcript_path: transcript,
      cwd: dir,
      hook_event_name: "SessionStart",
      source: "compact",
    },
    dir,
  );
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, "");
  const out = additionalContext(r.stdout);
  assert.equal(out.hookEventName, "SessionStart");
  assert.match(out.additionalContext, /did not keep the survival contract/);
  assert.ok(out.additionalContext.includes(`\n- ${INSTRUCTION}\n`));
  assert.match(out.additionalContext, /toolu_1/);
  assert.match(out.additionalContext, /Pinned anchors \(restated verbatim\):\nNever push to main\./);
});

test("hook claude-code: on a real Claude Code session (before the compaction is recorded), its last instruction as written", (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const r = hook(
    "claude-code",
    {
      session_id: "x",
      transcript_path: exampleSession,
      cwd: dir,
      hook_event_name: "SessionStart",
      source: "compact",
    },
    dir,
  );
  assert.equal(r.status, 0, r.stderr);
  assert.equal(
    additionalContext(r.stdout).additionalContext,
    "compact-safe: the user's current instructions (the last round before this compaction), as they wrote them:\n" +
      "- and for now can we document it in known_limitations?",
  );
  const startup = hook("claude-code", { transcript_path: exampleSession, cwd: dir, source: "startup" }, dir);
  assert.equal(startup.status, 0);
  assert.equal(startup.stdout, "");
  assert.equal(startup.stderr, "");
});

test("hook codex: the verdict on Codex's compaction, told to the user", (t) => {
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
  const lost = hook("codex", { ...base, transcript_path: codexRollout(dir, false) }, dir);
  assert.equal(lost.status, 0, lost.stderr);
  const message = (JSON.parse(lost.stdout) as { systemMessage: string }).systemMessage;
  assert.match(message, /did not keep the survival contract/);
  assert.ok(message.includes(`\n- ${CODEX_INSTRUCTION}`), message);
  const kept = hook("codex", { ...base, transcript_path: codexRollout(dir, true) }, dir);
  assert.equal(kept.status, 0, kept.stderr);
  assert.match(
    (JSON.parse(kept.stdout) as { systemMessage: string }).systemMessage,
    /kept the survival contract/,
  );
  const other = hook(
    "codex",
    { ...base, hook_event_name: "PreCompact", transcript_path: codexRollout(dir, false) },
    dir,
  );
  assert.equal(other.status, 0);
  assert.equal(other.stdout, "");
});

test("hook pi: the verdict, the record and the restatement the extension delivers", (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const file = join(dir, "session.jsonl");
  writeFileSync(file, piSessionText({ cwd: dir, rounds: 4, compactAfter: 4 }));
  const r = hook("pi", { session_file: file, cwd: dir }, dir);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as {
    line: string;
    kept: boolean;
    record: { compaction: string };
    restatement: string;
  };
  assert.equal(out.kept, false);
  assert.match(out.line, /^compact-safe: pi's compaction \S+ did not keep the survival contract/);
  assert.match(out.restatement, /toolu_r3a, toolu_r3b/);
});

test("hooks: garbage on stdin, a missing transcript, an unknown agent or option: exit 0, one line on stderr", (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  for (const agent of ["claude-code", "codex", "pi"]) {
    assertQuietFailure(
      hook(agent, "{not json\n\x00garbage", dir),
      new RegExp(`^compact-safe hook ${agent}: standard input is not JSON`),
    );
    assertQuietFailure(hook(agent, "", dir), /standard input is empty/);
    assertQuietFailure(hook(agent, "[1, 2]", dir), /not a JSON object/);
    const missing = join(dir, "nope.jsonl");
    assertQuietFailure(
      hook(
        agent,
        {
          hook_event_name: "PostCompact",
          source: "compact",
          transcript_path: missing,
          session_file: missing,
          cwd: dir,
        },
        dir,
      ),
      new RegExp(`^compact-safe hook ${agent}: .*nope\\.jsonl: no such file`),
    );
    // A transcript that is no session of that agent.
    writeFileSync(join(dir, "junk.jsonl"), "this is not a session\n");
    const junk = join(dir, "junk.jsonl");
    assertQuietFailure(
      hook(
        agent,
        { hook_event_name: "PostCompact", source: "compact", transcript_path: junk, session_file: junk },
        dir,
      ),
      /junk\.jsonl/,
    );
  }
  assertQuietFailure(hook("gemini", "{}", dir), /^compact-safe hook gemini: unknown agent "gemini"/);
  const noAgent = spawnSync(process.execPath, [cliPath, "hook"], { input: "{}", encoding: "utf8", cwd: dir });
  assertQuietFailure(noAgent, /^compact-safe hook: no agent given/);
  const extra = spawnSync(process.execPath, [cliPath, "hook", "codex", "--bogus", "x"], {
    input: "{}",
    encoding: "utf8",
    cwd: dir,
  });
  assert.equal(extra.status, 0, extra.stderr);
  assert.equal(extra.stdout, "");
});

test("hooks: a session path that starts with - is a file (taken from the input's cwd), never an option or stdin", (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  claudeCodeTranscript(dir, { compacted: true, name: "--format" });
  copyFileSync(codexRollout(dir, false), join(dir, "-rollout.jsonl"));
  writeFileSync(join(dir, "-"), piSessionText({ cwd: dir, rounds: 4, compactAfter: 4 }));
  const cc = hook("claude-code", { source: "compact", transcript_path: "--format", cwd: dir }, dir);
  assert.equal(cc.status, 0, cc.stderr);
  assert.ok(additionalContext(cc.stdout).additionalContext.includes(INSTRUCTION));
  const codex = hook(
    "codex",
    { hook_event_name: "PostCompact", transcript_path: "-rollout.jsonl", cwd: dir },
    dir,
  );
  assert.equal(codex.status, 0, codex.stderr);
  assert.ok(codex.stdout.includes(CODEX_INSTRUCTION));
  const pi = hook("pi", { session_file: "-" }, dir);
  assert.equal(pi.status, 0, pi.stderr);
  assert.match(pi.stdout, /did not keep the survival contract/);
});

test("hook AGENT loads the hook bundle and no other module of the package but the entry point", (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const transcript = claudeCodeTranscript(dir, { compacted: true });
  const r = spawnSync(process.execPath, [cliPath, "hook", "claude-code"], {
    input: JSON.stringify({
      transcript_path: transcript,
      cwd: dir,
      hook_event_name: "SessionStart",
      source: "compact",
    }),
    encoding: "utf8",
    cwd: dir,
    env: { ...process.env, NODE_DEBUG: "esm" },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(additionalContext(r.stdout).additionalContext, /did not keep the survival contract/);
  // The package's modules loaded, as the ESM loader reports them (NODE_DEBUG=esm names every URL it loads).
  const dist = new URL("../../src/", import.meta.url).href;
  const loaded = new Set(
    [...r.stderr.matchAll(/file:\/\/\S+?\.js(?=['"\s,)]|$)/g)]
      .map((m) => m[0])
      .filter((u) => u.startsWith(dist))
      .map((u) => u.slice(dist.length)),
  );
  assert.deepEqual([...loaded].sort(), ["cli/hook-bundle.js", "cli/main.js"]);
});
