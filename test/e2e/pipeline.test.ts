/**
 * The quick-start pipeline on EVERY corpus file, through the built binary:
 * import → export (before) → compact --in-place to 30 % → export (after) →
 * validate before after --path <receipt path> → context shows the compaction
 * and one checkpoint.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { readFileSync, writeFileSync } from "node:fs";
import { corpusFiles } from "../support.js";
import { pool, run, tempDir } from "./helpers.js";

const files = corpusFiles();

test(
  "every corpus file: import, export, compact to 30 %, export, validate, context",
  { timeout: 170_000 },
  async (t) => {
    assert.ok(files.length >= 10, `expected the corpus, found ${files.length} files`);
    const { dir, cleanup } = tempDir();
    t.after(cleanup);
    const failures: string[] = [];
    const rows = await pool(files, 2, async (file, i) => {
      try {
        return await pipeline(file, i);
      } catch (e) {
        failures.push((e as Error).message);
        return `${basename(file)}: FAILED`;
      }
    });
    t.diagnostic(`\n${rows.join("\n")}`);
    assert.deepEqual(failures, []);

    async function pipeline(file: string, i: number): Promise<string> {
      const name = basename(file);
      const j = join(dir, `${i}.journal.jsonl`);
      const before = join(dir, `${i}.before.json`);
      const after = join(dir, `${i}.after.json`);
      const imp = await run(["import", file, "--out", j]);
      assert.equal(imp.code, 0, `${name}: import failed: ${imp.stderr}`);
      const exp1 = await run(["export", j, "--to", "anthropic", "--out", before]);
      assert.equal(exp1.code, 0, `${name}: export failed: ${exp1.stderr}`);
      const ctx0 = await run(["context", j, "--json"]);
      assert.equal(ctx0.code, 0, `${name}: context failed: ${ctx0.stderr}`);
      const view0 = JSON.parse(ctx0.stdout) as { estimated_tokens: number };
      const target = Math.floor(view0.estimated_tokens * 0.3);
      const cmp = await run([
        "compact",
        j,
        "--in-place",
        "--target",
        String(target),
        "--json",
        "--workspace",
        dir,
      ]);
      assert.equal(cmp.code, 0, `${name}: compact failed: ${cmp.stderr}`);
      const receipt = JSON.parse(cmp.stdout) as Record<string, unknown>;
      assert.deepEqual(Object.keys(receipt).sort(), [
        "checkpoint_id",
        "coverage",
        "journal",
        "path",
        "target",
        "target_reached",
        "tokens_after",
        "tokens_before",
      ]);
      assert.equal(receipt.journal, j);
      assert.equal(receipt.target, target);
      assert.ok((receipt.tokens_after as number) < (receipt.tokens_before as number), `${name}: no shrink`);
      const exp2 = await run(["export", j, "--to", "anthropic", "--out", after]);
      assert.equal(exp2.code, 0, `${name}: export after failed: ${exp2.stderr}`);
      const val = await run(["validate", before, after, "--path", receipt.path as string, "--json"]);
      assert.equal(val.code, 0, `${name}: validate failed: ${val.stdout} ${val.stderr}`);
      assert.deepEqual(JSON.parse(val.stdout), { valid: true, reason: null });
      const ctx = await run(["context", j, "--json"]);
      assert.equal(ctx.code, 0, `${name}: context after failed: ${ctx.stderr}`);
      const view = JSON.parse(ctx.stdout) as {
        last_compaction: { id: string; path: string; trigger: string } | null;
        checkpoints: number;
        checkpoint_violation: boolean;
        estimated_tokens: number;
      };
      assert.equal(
        view.last_compaction?.id,
        receipt.checkpoint_id,
        `${name}: context does not show the new compaction`,
      );
      assert.equal(view.last_compaction?.path, receipt.path);
      assert.equal(view.last_compaction?.trigger, "manual");
      assert.equal(view.estimated_tokens, receipt.tokens_after);
      // The summary path writes exactly one checkpoint; prune-only keeps the one that was there (if any).
      if (receipt.path === "summary") assert.equal(view.checkpoints, 1, `${name}: expected one checkpoint`);
      else assert.ok(view.checkpoints <= 1);
      assert.equal(view.checkpoint_violation, false);
      return `${name.padEnd(48)} ${String(receipt.path).padEnd(10)} ${receipt.tokens_before} → ${receipt.tokens_after} (target ${target})`;
    }
  },
);

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
