/**
 * The README's library example, compiled and run against the package's
 * public entry point, so that the README stays true.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { scratchDir } from "./scratch.js";
import { join } from "node:path";
import {
  compactMessagesSafe,
  shouldCompact,
  extractiveSummarizer,
  validateSurvivalContract,
  readAnchors,
  readLiveState,
  isCheckpoint,
  type Message,
} from "../src/index.js";

async function maybeCompact(history: Message[], workspace: string, target = 100_000): Promise<Message[]> {
  const decision = shouldCompact({ messages: history }, { window: 200_000, threshold: 0.8 });
  if (!decision.compact) return history;
  const result = await compactMessagesSafe(history, {
    summarizer: extractiveSummarizer(),
    target,
    trigger: "auto",
    anchors: (await readAnchors(workspace))?.text,
    liveState: await readLiveState(workspace, []),
  });
  if (!result.ok) return history;
  return result.replacement;
}

test("the README's agent-loop example compacts a history under pressure and keeps the anchors", async () => {
  const ws = scratchDir("cs-readme-");
  mkdirSync(join(ws, ".codewhale"));
  writeFileSync(join(ws, ".codewhale", "anchors.md"), "Never push to main.\n");
  const history: Message[] = [{ role: "user", content: [{ type: "text", text: "Port the parser." }] }];
  for (let i = 0; i < 60; i++) {
    history.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `c${i}`, name: "Read", input: { file_path: `src/p${i}.ts` } }],
    });
    history.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `c${i}`, content: `${"const x = 1;\n".repeat(1200)}` }],
    });
  }
  // Under the threshold: untouched.
  const small = history.slice(0, 3);
  assert.equal(await maybeCompact(small, ws), small);
  // Over it, with the README's target: old reads are pruned (prune-only writes no checkpoint).
  const pruned = await maybeCompact(history, ws);
  assert.notEqual(pruned, history);
  assert.equal(pruned.filter(isCheckpoint).length, 0);
  assert.ok(
    validateSurvivalContract(history, pruned, { anchors: "Never push to main.", path: "prune-only" }).valid,
  );
  // With a target that pruning cannot reach: summarized, one checkpoint restating the anchors.
  const out = await maybeCompact(history, ws, 5_000);
  assert.equal(out.filter(isCheckpoint).length, 1);
  assert.ok(validateSurvivalContract(history, out, { anchors: "Never push to main." }).valid);
});
