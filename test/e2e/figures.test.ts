/**
 * `context` and `report` agree on a compaction's token figures (both count
 * the live context it replaced and its replacement the same way); where an
 * imported compaction records other figures (an agent's own count of its
 * prompt), `context` shows them on a row of their own, labelled. A prune-only
 * fork read back is a prune-only compaction, never a "summary".
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { corpusDir, corpusSuite } from "../support.js";
import { run, tempDir } from "./helpers.js";

interface View {
  id: string;
  preview: boolean;
  path: string;
  tokens: { before_total: number; after_total: number };
}
interface Context {
  last_compaction: {
    id: string;
    path: string;
    tokens_before: number;
    tokens_after: number;
    estimated_tokens_before?: number;
    estimated_tokens_after?: number;
  } | null;
}

async function figures(file: string): Promise<{ context: Context; views: View[]; human: string }> {
  const c = await run(["context", file, "--json"]);
  assert.equal(c.code, 0, c.stderr);
  const r = await run(["report", file, "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const h = await run(["context", file]);
  assert.equal(h.code, 0, h.stderr);
  return {
    context: JSON.parse(c.stdout) as Context,
    views: (JSON.parse(r.stdout) as { views: View[] }).views,
    human: h.stdout,
  };
}

corpusSuite("context and report figures", () => {
  test("an imported Claude Code compaction: context's estimated figures are report's; the agent's own count is labelled", async () => {
    const file = join(corpusDir, "claude-code", "entire-0e-3fdc072c53-0.jsonl");
    const { context, views, human } = await figures(file);
    const last = context.last_compaction!;
    const view = views.find((v) => v.id === last.id)!;
    assert.ok(view, "report shows the compaction context names");
    assert.equal(last.estimated_tokens_before, view.tokens.before_total);
    assert.equal(last.estimated_tokens_after, view.tokens.after_total);
    const n = (x: number) => x.toLocaleString("en-US");
    assert.match(
      human,
      new RegExp(
        `tokens\\s+${n(view.tokens.before_total)} → ${n(view.tokens.after_total)} \\(estimated, as report counts them\\)`,
      ),
    );
    // Claude Code's own figure (its billed prompt) differs: shown, and said whose it is.
    assert.notEqual(last.tokens_before, view.tokens.before_total);
    assert.match(human, new RegExp(`recorded\\s+${n(last.tokens_before)} → .*imported from claude-code`));
  });

  test("compact-safe's own compaction: context and report give the same figures, with no second row", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const src = join(corpusDir, "claude-code", "ccviewer-mock-fe5e1c67.jsonl");
      const j = join(dir, "j.jsonl");
      assert.equal((await run(["import", src, "--out", j])).code, 0);
      assert.equal((await run(["compact", j])).code, 0);
      const { context, views, human } = await figures(j);
      const last = context.last_compaction!;
      const view = views.find((v) => v.id === last.id)!;
      assert.deepEqual(
        [last.estimated_tokens_before, last.estimated_tokens_after],
        [view.tokens.before_total, view.tokens.after_total],
      );
      assert.deepEqual(
        [last.tokens_before, last.tokens_after],
        [view.tokens.before_total, view.tokens.after_total],
      );
      assert.doesNotMatch(human, /^\s+recorded\s/m);
    } finally {
      cleanup();
    }
  });

  test("a prune-only Codex fork read back: a prune-only compaction in context, audit and report (was: summary)", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const orig = join(dir, "rollout-2025-11-12T17-48-11-orig.jsonl");
      copyFileSync(join(corpusDir, "codex", "moonmind-rollout-2025-11-12T17-48-11.jsonl"), orig);
      const c = await run(["compact", orig, "--prune-only", "--fork"]);
      assert.equal(c.code, 0, c.stderr);
      const fork = readdirSync(dir).find(
        (f) => f.endsWith(".jsonl") && f !== "rollout-2025-11-12T17-48-11-orig.jsonl",
      );
      assert.ok(fork, "the fork was written");
      const file = join(dir, fork);
      const { context, views, human } = await figures(file);
      assert.equal(context.last_compaction!.path, "prune-only");
      assert.match(human, /last compaction\s+prune-only, /);
      assert.equal(views.find((v) => !v.preview)!.path, "prune-only");
      // Nothing before it in the fork: 0, not the size of an empty list.
      assert.equal(context.last_compaction!.tokens_before, 0);
      const a = await run(["audit", file]);
      assert.match(a.stdout, /\(codex, prune-only, /);
      assert.doesNotMatch(a.stdout, /summary/);
    } finally {
      cleanup();
    }
  });
});
