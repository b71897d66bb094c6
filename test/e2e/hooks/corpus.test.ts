/**
 * `compact-safe hook claude-code|codex|pi` on corpus sessions (skipped, saying so, on a clone without
 * ../shared): exit 0 and the answer each agent expects.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { corpusDir, corpusSuite } from "../../support.js";
import { tempDir } from "../helpers.js";
import { additionalContext, hook } from "../hook-run.js";

corpusSuite("hooks on corpus sessions", () => {
  test("hook claude-code, codex and pi on corpus sessions: exit 0 and the answer each agent expects", (t) => {
    const { dir, cleanup } = tempDir();
    t.after(cleanup);
    // A Claude Code session whose last round holds an instruction (the hook runs before the compaction is recorded).
    const cc = hook(
      "claude-code",
      {
        source: "compact",
        transcript_path: join(corpusDir, "claude-code", "entire-98-78b713483d-0.jsonl"),
        cwd: dir,
      },
      dir,
    );
    assert.equal(cc.status, 0, cc.stderr);
    assert.match(
      additionalContext(cc.stdout).additionalContext,
      /^compact-safe: the user's current instructions/,
    );
    // A Codex rollout, then a compaction that kept nothing but its summary, as Codex records one.
    const rollout = join(dir, "rollout.jsonl");
    writeFileSync(
      rollout,
      readFileSync(join(corpusDir, "codex", "coda-rollout-2025-10-04T22-31-15.jsonl"), "utf8").trimEnd() +
        "\n" +
        JSON.stringify({
          timestamp: "2026-12-01T00:00:00.000Z",
          type: "compacted",
          payload: { message: "summary", replacement_history: [] },
        }) +
        "\n",
    );
    const codex = hook(
      "codex",
      { hook_event_name: "PostCompact", trigger: "auto", transcript_path: rollout, cwd: dir },
      dir,
    );
    assert.equal(codex.status, 0, codex.stderr);
    assert.match(
      (JSON.parse(codex.stdout) as { systemMessage: string }).systemMessage,
      /did not keep the survival contract/,
    );
    // pi's own compactions: the last of one session (made with a call in flight, which pi then abandoned),
    // and of another; both kept the contract.
    const before = hook(
      "pi",
      { session_file: join(corpusDir, "pi", "pi-mono-before-compaction.jsonl"), cwd: dir },
      dir,
    );
    assert.equal(before.status, 0, before.stderr);
    assert.equal((JSON.parse(before.stdout) as { kept: boolean }).kept, true);
    const root = hook(
      "pi",
      { session_file: join(corpusDir, "pi", "pi-mono-root-compact.jsonl"), cwd: dir },
      dir,
    );
    assert.equal(root.status, 0, root.stderr);
    assert.equal((JSON.parse(root.stdout) as { kept: boolean }).kept, true);
  });
});
