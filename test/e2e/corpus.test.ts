/**
 * The end-to-end corpus suite (skipped, saying so, on a clone without ../shared),
 * through the built binary: the quick-start pipeline on EVERY corpus file
 * (import → export (before) → compact --in-place to 30 % → export (after) →
 * validate before after --path <receipt path> → context shows the compaction
 * and one checkpoint), a known broken line of a real session reported with its
 * number, and `validate --matrix` on the project and peer matrices. Then
 * `context` and `report` agreeing on a compaction's token figures (where an
 * imported compaction records other figures, e.g. an agent's own count of
 * its prompt, `context` shows them on a labelled row of their own), and a
 * prune-only fork read back as a prune-only compaction, never a "summary".
 *
 * `import` and `compact` run in the binary on every file; `export`, `validate` and
 * `context` run in it on one file of each source format (BINARY_STEPS) and, on the
 * others, in process through the same functions the commands call (`loadSession`,
 * `exportLive`, `loadMessageFile`, `validateSurvivalContract`, `buildContextView`):
 * the same checks on every file, at a fifth of the processes (issue 26 item 5).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { corpusDir, corpusFiles, corpusSuite, peerMatrix, projectMatrix } from "../support.js";
import { cliMatchesRunMatrix, matrixLikeMjs, pool, run, tempDir } from "./helpers.js";
import { loadMessageFile, loadSession, sessionLive } from "../../src/cli/io.js";
import { buildContextView } from "../../src/cli/commands/context.js";
import { exportLive } from "../../src/formats/registry.js";
import { validateSurvivalContract } from "../../src/contract/index.js";
import { DEFAULT_WINDOW } from "../../src/route/index.js";

/** One CLI call's bound: minutes, where a call takes seconds. */
const perCall = { timeoutMs: 300_000 };

/**
 * The files whose every step runs in the binary: one of each source format, with the corpus's
 * harder cases (the largest session, with three imported compactions; a broken line and an
 * imported compaction; two imported compactions).
 */
const BINARY_STEPS = new Set([
  "claude-code/entire-cd-95adddad32-0.jsonl",
  "codex/coda-rollout-2025-10-04T22-31-15.jsonl",
  "gjc/gjc-03-raddit-dashboard-pr.jsonl",
  "openai/replay-function_calling-marshmallow-1867.traj",
  "pi/pi-mono-before-compaction.jsonl",
]);

interface PipelineView {
  last_compaction: { id: string; path: string; trigger: string } | null;
  checkpoints: number;
  checkpoint_violation: boolean;
  estimated_tokens: number;
}

/** `export`, `validate --json` and `context --json` of the pipeline: in the binary, or in process. */
interface Steps {
  exportTo(journal: string, out: string): Promise<void>;
  validate(before: string, after: string, path: string): Promise<{ valid: boolean; reason: string | null }>;
  context(journal: string): Promise<PipelineView>;
}

function binarySteps(name: string): Steps {
  return {
    async exportTo(journal, out) {
      const r = await run(["export", journal, "--to", "anthropic", "--out", out], perCall);
      assert.equal(r.code, 0, `${name}: export failed: ${r.stderr}`);
    },
    async validate(before, after, path) {
      const r = await run(["validate", before, after, "--path", path, "--json"], perCall);
      assert.equal(r.code, 0, `${name}: validate failed: ${r.stdout} ${r.stderr}`);
      return JSON.parse(r.stdout) as { valid: boolean; reason: string | null };
    },
    async context(journal) {
      const r = await run(["context", journal, "--json"], perCall);
      assert.equal(r.code, 0, `${name}: context failed: ${r.stderr}`);
      return JSON.parse(r.stdout) as PipelineView;
    },
  };
}

/** What the commands do, without the process: the functions their actions call, in the same order. */
const inProcessSteps: Steps = {
  async exportTo(journal, out) {
    const session = await loadSession(journal);
    writeFileSync(out, exportLive("anthropic", sessionLive(session), session));
  },
  async validate(before, after, path) {
    let a = await loadMessageFile(before);
    let b = await loadMessageFile(after);
    if (a.via === "anthropic" && b.via === "canonical") b = await loadMessageFile(after, "anthropic");
    if (b.via === "anthropic" && a.via === "canonical") a = await loadMessageFile(before, "anthropic");
    const v = validateSurvivalContract(a.messages, b.messages, { path: path as "summary" | "prune-only" });
    return { valid: v.valid, reason: v.reason };
  },
  async context(journal) {
    return buildContextView(await loadSession(journal), DEFAULT_WINDOW, process.cwd());
  },
};

corpusSuite("e2e", () => {
  const files = corpusFiles();

  // No bound on the whole test (a loaded machine makes 20 files' calls slow, not wrong); each call is
  // bounded instead, far above what one takes, so a hang still fails (`perCall`).
  test("every corpus file: import, export, compact to 30 %, export, validate, context", async (t) => {
    assert.ok(files.length >= 10, `expected the corpus, found ${files.length} files`);
    const inBinary = files.filter((f) => BINARY_STEPS.has(relative(corpusDir, f)));
    assert.equal(inBinary.length, BINARY_STEPS.size, "every BINARY_STEPS file is in the corpus");
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
      const binary = BINARY_STEPS.has(relative(corpusDir, file));
      const steps = binary ? binarySteps(name) : inProcessSteps;
      const j = join(dir, `${i}.journal.jsonl`);
      const before = join(dir, `${i}.before.json`);
      const after = join(dir, `${i}.after.json`);
      const imp = await run(["import", file, "--out", j], perCall);
      assert.equal(imp.code, 0, `${name}: import failed: ${imp.stderr}`);
      // The known broken line of a real session is reported with its number.
      if (name === "entire-7d-66f047ac98-0.jsonl")
        assert.match(imp.stdout, /line 172: /, "the known broken line is reported with its number");
      await steps.exportTo(j, before);
      const view0 = await steps.context(j);
      const target = Math.floor(view0.estimated_tokens * 0.3);
      const cmp = await run(
        ["compact", j, "--in-place", "--target", String(target), "--json", "--workspace", dir],
        perCall,
      );
      assert.equal(cmp.code, 0, `${name}: compact failed: ${cmp.stderr}`);
      const receipt = JSON.parse(cmp.stdout) as Record<string, unknown>;
      assert.deepEqual(Object.keys(receipt).sort(), [
        "checkpoint_id",
        "coverage",
        "journal",
        "path",
        "provider_compactions",
        "summary_budget",
        "target",
        "target_missed",
        "target_reached",
        "tokens_after",
        "tokens_before",
      ]);
      assert.equal(receipt.journal, j);
      assert.equal(receipt.target, target);
      // No corpus session holds a provider's own compaction.
      assert.deepEqual(receipt.provider_compactions, { kept: 0, folded: 0 });
      // Why a missed target was missed is said; a reached one says nothing.
      assert.equal(
        receipt.target_missed === null,
        receipt.target_reached,
        `${name}: ${receipt.target_missed}`,
      );
      assert.ok((receipt.tokens_after as number) < (receipt.tokens_before as number), `${name}: no shrink`);
      await steps.exportTo(j, after);
      const val = await steps.validate(before, after, receipt.path as string);
      assert.deepEqual(val, { valid: true, reason: null }, `${name}: validate`);
      const view = await steps.context(j);
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
      return `${name.padEnd(48)} ${String(receipt.path).padEnd(10)} ${receipt.tokens_before} → ${receipt.tokens_after} (target ${target})${binary ? " [every step in the binary]" : ""}`;
    }
  });

  test("validate --matrix on the peer matrix gives runMatrix's verdicts", async () => {
    assert.deepEqual(await cliMatchesRunMatrix(peerMatrix), []);
  });

  test("validate --matrix on the project and peer matrices: same output and exit code as the .mjs validator", async () => {
    await matrixLikeMjs([projectMatrix, peerMatrix]);
  });
});

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

/**
 * A prompt the user typed while Claude Code worked, delivered mid-turn (a
 * `queue-operation` enqueue, then remove: no user line records it), read
 * through the binary on a real corpus session (entire-7d, Claude Code 2.0.76:
 * "stop", typed while a Read ran, answered "I'll stop here."): `compact`'s
 * checkpoint names it, `report` shows it as the user's retained text, and
 * `audit` counts it as a user instruction of the last round (a compaction
 * that drops it loses a user text).
 */
corpusSuite("queued prompts through the binary", () => {
  const session = join(corpusDir, "claude-code", "entire-7d-66f047ac98-0.jsonl");

  test("compact: the checkpoint names the prompt delivered mid-turn; report shows it as the user's text", async (t) => {
    const { dir, cleanup } = tempDir();
    t.after(cleanup);
    const out = join(dir, "j.jsonl");
    const r = await run(["compact", session, "--out", out, "--target", "20000", "--workspace", dir], perCall);
    assert.equal(r.code, 0, r.stderr);
    const entries = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as { kind: string; payload: { replacement?: { content: { text?: string }[] }[] } },
      );
    const compaction = entries.findLast((e) => e.kind === "compaction")!;
    const checkpoint = compaction.payload
      .replacement!.map((m) => m.content.map((b) => b.text ?? "").join("\n"))
      .find((x) => x.startsWith("[compact-safe checkpoint]"))!;
    assert.ok(checkpoint, "a summary path: the checkpoint is written");
    assert.match(checkpoint, /kept word for word above this note: "stop"\)/);

    const rep = await run(["report", session, "--json"], perCall);
    assert.equal(rep.code, 0, rep.stderr);
    const model = JSON.parse(rep.stdout) as {
      messages: { role: string; blocks: { text?: string }[] }[];
      views: { rows: { m: number; why: string }[] }[];
    };
    const at = model.messages.findIndex((m) => m.role === "user" && m.blocks[0]?.text === "stop");
    assert.ok(at >= 0, "the report's history holds the queued prompt as a user message");
    assert.equal(model.views[0]!.rows.find((row) => row.m === at)!.why, "retained user text");
  });

  test("audit: an agent's compaction that drops the prompt delivered mid-turn loses a user text of the last round", async (t) => {
    const { dir, cleanup } = tempDir();
    t.after(cleanup);
    // The session up to the model's answer to "stop" (line 102), then Claude Code's own compaction
    // (its boundary and summary lines, as Claude Code writes them) whose summary does not carry it.
    const lines = readFileSync(session, "utf8").split("\n").slice(0, 102);
    const last = JSON.parse(lines.at(-1)!) as {
      uuid: string;
      sessionId: string;
      message: { content: unknown };
    };
    assert.deepEqual(last.message.content, [
      {
        type: "text",
        text: "I'll stop here. Did you want to take a different approach, or is there something else you'd like to discuss first?",
      },
    ]);
    const boundary = {
      parentUuid: null,
      logicalParentUuid: last.uuid,
      isSidechain: false,
      type: "system",
      subtype: "compact_boundary",
      content: "Conversation compacted",
      compactMetadata: { trigger: "auto", preTokens: 90_000 },
      uuid: "00000000-0000-4000-8000-00000000b001",
      timestamp: "2026-01-06T17:20:00.000Z",
      sessionId: last.sessionId,
    };
    const summary = {
      parentUuid: boundary.uuid,
      isSidechain: false,
      type: "user",
      isCompactSummary: true,
      message: {
        role: "user",
        content:
          "This session is being continued from a previous conversation that ran out of context.\n" +
          "Summary: the user wants `entire session list` to show the commit message; the lookup by the " +
          "Entire-Checkpoint trailer is being implemented in strategy/common.go.",
      },
      uuid: "00000000-0000-4000-8000-00000000b002",
      timestamp: "2026-01-06T17:20:00.000Z",
      sessionId: last.sessionId,
    };
    const file = join(dir, "compacted.jsonl");
    writeFileSync(file, [...lines, JSON.stringify(boundary), JSON.stringify(summary)].join("\n") + "\n");
    const r = await run(["audit", file, "--json"], perCall);
    assert.equal(r.code, 1, r.stderr);
    const audit = JSON.parse(r.stdout) as {
      compactions: { kept: boolean; losses: { user_texts: string[] } }[];
    };
    assert.equal(audit.compactions.length, 1);
    assert.equal(audit.compactions[0]!.kept, false);
    assert.ok(audit.compactions[0]!.losses.user_texts.includes("stop"), JSON.stringify(audit.compactions[0]));
  });
});

// ---------------------------------------------------------------- the plan from TaskCreate/TaskUpdate
//
// On a real Claude Code session that keeps its plan with `TaskCreate`/`TaskUpdate` (Claude Code 2.1.17+),
// cut while task #4 is in progress and again once every task is completed, compacted by the binary on the
// summary path: the note's Next step names task #4 with the plan's statuses, then reports the plan done.

const TASKS_SESSION = join(corpusDir, "claude-code", "entire-fc-99c919b212-0.jsonl");

/** The session's first lines up to the one holding `marker` (inclusive), written as a new session. */
function cutTasksSession(dir: string, name: string, marker: string): string {
  const lines = readFileSync(TASKS_SESSION, "utf8").split("\n");
  const end = lines.findIndex((l) => l.includes(marker));
  assert.ok(end > 0, `the corpus session holds ${marker}`);
  const file = join(dir, name);
  writeFileSync(file, `${lines.slice(0, end + 1).join("\n")}\n`);
  return file;
}

/** The Next step section of the note `compact` wrote into the journal. */
async function nextStepOf(dir: string, file: string): Promise<string> {
  const out = join(dir, `${file.split("/").pop()}.journal.jsonl`);
  const r = await run([
    "compact",
    file,
    "--format",
    "claude-code",
    "--out",
    out,
    "--target",
    "8000",
    "--json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { path: string }).path, "summary");
  const entry = readFileSync(out, "utf8")
    .split("\n")
    .filter((l) => l.includes('"compaction"'))
    .map((l) => JSON.parse(l) as { kind?: string; payload?: { summary?: string } })
    .find((e) => e.kind === "compaction");
  const note = entry?.payload?.summary ?? "";
  const start = note.indexOf("## Next step\n");
  assert.ok(start !== -1, "the note has a Next step");
  const end = note.indexOf("\n## ", start + 1);
  return note.slice(start, end === -1 ? undefined : end);
}

corpusSuite("the plan from TaskCreate/TaskUpdate", () => {
  test("a session cut while a task is in progress: the Next step names it, the plan with its statuses", async () => {
    const { dir, cleanup } = tempDir();
    try {
      // Task #4 was set in progress; its completion comes later.
      const file = cutTasksSession(dir, "in-progress.jsonl", "Now update `handleGeminiSessionEnd()`");
      const next = await nextStepOf(dir, file);
      assert.match(next, /^Next: #4 Update Gemini handleGeminiSessionEnd and fix logging \(in_progress/m);
      assert.match(next, /^Plan \(the latest TaskCreate\/TaskUpdate list/m);
      assert.match(next, /^- \[completed\] #3 Add markSessionEnded helper and Claude handler$/m);
      assert.match(next, /^- \[pending\] #5 Run verification \(fmt, lint, tests\)$/m);
    } finally {
      cleanup();
    }
  });

  test("a session cut once every task is completed: the plan is reported done, not as the plan", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const lines = readFileSync(TASKS_SESSION, "utf8").split("\n");
      // The result of the update that completed task #5 (the last one).
      const done = lines.findIndex(
        (l) => l.includes('"taskId":"5"') && l.includes('"to":"completed"') && l.includes("tool_result"),
      );
      assert.ok(done > 0);
      const file = join(dir, "done.jsonl");
      writeFileSync(file, `${lines.slice(0, done + 3).join("\n")}\n`);
      const next = await nextStepOf(dir, file);
      assert.match(
        next,
        /The plan is done: all 5 items of the latest TaskCreate\/TaskUpdate list completed \(the last: #5 Run verification/,
      );
      assert.doesNotMatch(next, /^Plan \(the latest/m);
    } finally {
      cleanup();
    }
  });
});
