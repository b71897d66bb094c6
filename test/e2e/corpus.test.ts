/**
 * The end-to-end corpus suite (skipped, saying so, on a clone without ../shared),
 * through the built binary: the quick-start pipeline on EVERY corpus file
 * (import → export (before) → compact --in-place to 30 % → export (after) →
 * validate before after --path <receipt path> → context shows the compaction
 * and one checkpoint), a known broken line of a real session reported with its
 * number, and `validate --matrix` on the project and peer matrices.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { corpusDir, corpusFiles, corpusSuite, peerMatrix, projectMatrix } from "../support.js";
import { cliMatchesRunMatrix, matrixLikeMjs, pool, run, tempDir } from "./helpers.js";

corpusSuite("e2e", () => {
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
          "summary_budget",
          "target",
          "target_missed",
          "target_reached",
          "tokens_after",
          "tokens_before",
        ]);
        assert.equal(receipt.journal, j);
        assert.equal(receipt.target, target);
        // Why a missed target was missed is said; a reached one says nothing.
        assert.equal(
          receipt.target_missed === null,
          receipt.target_reached,
          `${name}: ${receipt.target_missed}`,
        );
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

  test("import reports the known broken line of a real session with its number", async (t) => {
    const { dir, cleanup } = tempDir();
    t.after(cleanup);
    const src = join(corpusDir, "claude-code", "entire-7d-66f047ac98-0.jsonl");
    const broken = await run(["import", src, "--out", join(dir, "b.jsonl")]);
    assert.equal(broken.code, 0, broken.stderr);
    assert.match(broken.stdout, /line 172: /, "the known broken line is reported with its number");
  });

  test("validate --matrix on the peer matrix gives runMatrix's verdicts", async () => {
    assert.deepEqual(await cliMatchesRunMatrix(peerMatrix), []);
  });

  test("validate --matrix on the project and peer matrices: same output and exit code as the .mjs validator", async () => {
    await matrixLikeMjs([projectMatrix, peerMatrix]);
  });
});
