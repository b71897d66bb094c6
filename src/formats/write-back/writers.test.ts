/** The library's write-back (`writeFork`): the fork, read back, is the replacement; other formats are refused. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { exampleSession } from "../../../test/support.js";
import { compactEntries } from "../../route/index.js";
import { liveContext } from "../../journal/tree.js";
import { validateSurvivalContract } from "../../contract/validate.js";
import { importText } from "../detect.js";
import { FormatError } from "../common/types.js";
import { writeFork } from "../registry.js";

test("writeFork: a Claude Code session's fork, read back, is the replacement and keeps the contract", async () => {
  const text = readFileSync(exampleSession, "utf8");
  const { entries, report } = importText(text, exampleSession);
  const outcome = await compactEntries(entries, { target: 2000 });
  assert.equal(outcome.kind, "compacted");
  if (outcome.kind !== "compacted") return;
  const fork = writeFork(report.format, {
    replacement: outcome.result.replacement,
    originalText: text,
    originalPath: "/sessions/project/original.jsonl",
    tokensBefore: outcome.result.tokens_before,
    sessionId: "11111111-2222-4333-8444-555555555555",
  });
  assert.equal(fork.sessionId, "11111111-2222-4333-8444-555555555555");
  assert.equal(fork.defaultPath, "/sessions/project/11111111-2222-4333-8444-555555555555.jsonl");
  assert.equal(fork.resume(fork.defaultPath), "claude --resume 11111111-2222-4333-8444-555555555555");
  const back = liveContext(importText(fork.text, fork.defaultPath, { format: "claude-code" }).entries);
  assert.equal(back.length, outcome.result.replacement.length);
  const verdict = validateSurvivalContract(liveContext(entries), back, { path: outcome.result.path });
  assert.ok(verdict.valid, verdict.reason ?? "");
});

test("writeFork: a format without a writer is a FormatError naming the ones that have one", () => {
  assert.throws(
    () =>
      writeFork("openai", {
        replacement: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
        originalText: "[]",
        originalPath: "a.json",
        tokensBefore: 1,
      }),
    (e: unknown) =>
      e instanceof FormatError &&
      e.code === "unknown_format" &&
      /not built \(it is for: claude-code/.test(e.message),
  );
});
