/**
 * The quick-start pipeline through the built binary on a history whose exported
 * requests reshape it (the same pipeline on every corpus file is in corpus.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readFileSync, writeFileSync } from "node:fs";
import { run, tempDir } from "./helpers.js";

test("a history whose requests reshape it (words beside results, a call in flight, two user messages in a row): validate passes on the exported before and after, both providers", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const big = (k: number) => `output line ${k}\n`.repeat(400);
  const messages: unknown[] = [{ role: "user", content: [{ type: "text", text: "Fix the failing tests." }] }];
  for (let k = 0; k < 6; k++) {
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: `step ${k}` },
        { type: "tool_use", id: `toolu_${k}`, name: "Bash", input: { command: `npm test -- ${k}` } },
      ],
    });
    messages.push({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: `toolu_${k}`, content: big(k) },
        // What the user typed while the tool ran, sent beside its result (Claude Code does this).
        ...(k === 3 ? [{ type: "text", text: "and do not touch the snapshots" }] : []),
      ],
    });
  }
  messages.push({ role: "user", content: [{ type: "text", text: "also run the linter" }] });
  messages.push({
    role: "assistant",
    content: [{ type: "tool_use", id: "toolu_live", name: "Bash", input: { command: "npm run lint" } }],
  });
  const src = join(dir, "session.json");
  writeFileSync(src, JSON.stringify(messages));
  const j = join(dir, "s.jsonl");
  assert.equal((await run(["import", src, "--out", j])).code, 0);
  const before = { anthropic: join(dir, "b.anthropic.json"), openai: join(dir, "b.openai.json") };
  const after = { anthropic: join(dir, "a.anthropic.json"), openai: join(dir, "a.openai.json") };
  for (const p of ["anthropic", "openai"] as const)
    assert.equal((await run(["export", j, "--to", p, "--out", before[p]])).code, 0);
  const cmp = await run(["compact", j, "--in-place", "--target", "2000", "--json", "--workspace", dir]);
  assert.equal(cmp.code, 0, cmp.stderr);
  const receipt = JSON.parse(cmp.stdout) as { path: string };
  for (const p of ["anthropic", "openai"] as const) {
    assert.equal((await run(["export", j, "--to", p, "--out", after[p]])).code, 0);
    const val = await run(["validate", before[p], after[p], "--path", receipt.path, "--json"]);
    assert.equal(val.code, 0, `${p}: ${val.stdout} ${val.stderr}`);
  }
  // The words typed beside a result are an instruction: they survive verbatim.
  const kept = JSON.parse(readFileSync(after.openai, "utf8")) as { messages: { content: unknown }[] };
  assert.ok(kept.messages.some((m) => m.content === "and do not touch the snapshots"));
});
