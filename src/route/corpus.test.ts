/**
 * The audit verdicts of every compaction the corpus sessions record, pinned:
 * Claude Code's own compactions keep only a summary, so each loses the
 * protected last round; pi's keep it but for one tool result; Codex's
 * rollouts here record none. A change in a verdict is a change on purpose.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { relative } from "node:path";
import { corpusDir, corpusFiles, corpusSuite } from "../../test/support.js";
import { readFileSync } from "node:fs";
import { importFile, importText } from "../formats/detect.js";
import { claudeCodeOrigin, toClaudeCodeFork } from "../formats/write-back/claude-code.js";
import { codexOrigin, toCodexFork } from "../formats/write-back/codex.js";
import { piForkContext, piOrigin, toPiFork } from "../formats/write-back/pi.js";
import type { Message } from "../model/index.js";
import { liveContext } from "../journal/tree.js";
import { validateSurvivalContract } from "../contract/validate.js";
import { compactEntries } from "./compact-journal.js";
import { auditEntries } from "./audit.js";

const PINNED: Record<string, string[]> = {
  "claude-code/ccviewer-mock-fe5e1c67.jsonl": [],
  "claude-code/entire-0e-3fdc072c53-0.jsonl": ["claude-code lost u1 c2 r2 a1"],
  "claude-code/entire-1a-8a83a35a9b-0.jsonl": [],
  "claude-code/entire-7d-66f047ac98-0.jsonl": [],
  "claude-code/entire-98-78b713483d-0.jsonl": ["claude-code lost u1 c2 r2 a2"],
  "claude-code/entire-ad-a8171575ce-0.jsonl": [],
  "claude-code/entire-cd-95adddad32-0.jsonl": [
    "claude-code lost u1 c2 r2 a0",
    "claude-code lost u3 c2 r2 a0",
    "claude-code lost u1 c2 r2 a1",
  ],
  "claude-code/entire-d3-7d736cbc10-0.jsonl": [],
  // Opens its file with the compaction: nothing before it to judge, neither kept nor lost.
  "claude-code/entire-fc-99c919b212-0.jsonl": ["claude-code unjudged u0 c0 r0 a0 no-history"],
  "codex/acidicsoil-rollout-2025-11-17T15-30-28.jsonl": [],
  "codex/coda-rollout-2025-10-04T22-31-15.jsonl": [],
  "codex/moonmind-rollout-2025-11-12T17-48-11.jsonl": [],
  "codex/neurodata-rollout-2025-09-26T17-01-04.jsonl": [],
  "codex/openprintkit-rollout-2025-10-31T19-02-58.jsonl": [],
  "gjc/gjc-03-raddit-dashboard-pr.jsonl": ["pi kept u0 c0 r0 a0"],
  "openai/replay-function_calling-marshmallow-1867.traj": [],
  // The second: pi compacted with a call in flight and went on without its result; the call is abandoned
  // before the compaction and after it alike (it was judged lost when the replacement left it open).
  "pi/pi-mono-before-compaction.jsonl": ["pi kept u0 c0 r0 a0", "pi kept u0 c0 r0 a0"],
  "pi/pi-mono-large-session.jsonl": [],
  "pi/pi-mono-root-compact.jsonl": ["pi kept u0 c0 r0 a0"],
  "pi/pi-mono-root-session.jsonl": ["pi kept u0 c0 r0 a0"],
};

corpusSuite("route", () => {
  test("audit: the verdict on every compaction recorded in the corpus sessions", async () => {
    const got: Record<string, string[]> = {};
    for (const file of corpusFiles().sort()) {
      const { entries } = await importFile(file);
      got[relative(corpusDir, file)] = auditEntries(entries).compactions.map(
        (c) =>
          `${c.source} ${c.kept === null ? "unjudged" : c.kept ? "kept" : "lost"} u${c.losses.user_texts.length} c${c.losses.tool_calls.length} ` +
          `r${c.losses.tool_results.length} a${c.losses.assistant_texts.length}` +
          `${c.placeholder ? " placeholder" : ""}${c.stacked_checkpoints ? " stacked" : ""}` +
          `${c.messages_before === 0 ? " no-history" : ""}`,
      );
    }
    assert.deepEqual(got, PINNED);
  });

  test("write-back: for every Claude Code session, the fork read back keeps what must survive of the original", async () => {
    const files = corpusFiles().filter((f) => relative(corpusDir, f).startsWith("claude-code/"));
    assert.ok(files.length >= 3);
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      const { entries } = importText(text, file, { format: "claude-code" });
      const original = liveContext(entries);
      const outcome = await compactEntries(entries, { target: 2000 });
      assert.equal(outcome.kind, "compacted", `${file}: ${outcome.kind}`);
      if (outcome.kind !== "compacted") continue;
      const fork = toClaudeCodeFork(outcome.result.replacement, claudeCodeOrigin(text), {
        tokensBefore: outcome.result.tokens_before,
      });
      const back = liveContext(
        importText(fork.text, `${fork.sessionId}.jsonl`, { format: "claude-code" }).entries,
      );
      const verdict = validateSurvivalContract(original, back, { path: outcome.result.path });
      assert.ok(verdict.valid, `${relative(corpusDir, file)}: ${verdict.reason}`);
      // The fork's context is the replacement, with the checkpoint first (Claude Code's compact summary).
      assert.equal(back.length, outcome.result.replacement.length);
    }
  });

  test("write-back: for every Codex rollout, the fork read back is the replacement and keeps what must survive of the original", async () => {
    const files = corpusFiles().filter((f) => relative(corpusDir, f).startsWith("codex/"));
    assert.ok(files.length >= 3);
    // A Codex function_call_output carries no error flag (the model sees its text only): compared without it.
    const seen = (ms: readonly Message[]) =>
      ms.map((m) => ({
        role: m.role,
        content: m.content.map((b) => (b.type === "tool_result" ? { ...b, is_error: undefined } : b)),
      }));
    const paths = new Set<string>();
    for (const file of files) {
      const name = relative(corpusDir, file);
      const text = readFileSync(file, "utf8");
      const { entries } = importText(text, file, { format: "codex" });
      const original = liveContext(entries);
      // The default (prune-only where it reaches the target) and a small target (the summary path).
      for (const target of [undefined, 2000]) {
        const outcome = await compactEntries(entries, target === undefined ? {} : { target });
        assert.equal(outcome.kind, "compacted", `${name}: ${outcome.kind}`);
        if (outcome.kind !== "compacted") continue;
        paths.add(outcome.result.path);
        const fork = toCodexFork(outcome.result.replacement, codexOrigin(text));
        const lines = fork.text
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
        assert.deepEqual(
          lines.map((l) => l.type),
          ["session_meta", "compacted", "event_msg", "event_msg"],
        );
        assert.equal(lines[0]!.payload.id, fork.sessionId);
        const back = liveContext(importText(fork.text, fork.fileName, { format: "codex" }).entries);
        const verdict = validateSurvivalContract(original, back, { path: outcome.result.path });
        assert.ok(verdict.valid, `${name} (${outcome.result.path}): ${verdict.reason}`);
        assert.deepEqual(seen(back), seen(outcome.result.replacement), `${name} (${outcome.result.path})`);
        // Reasoning goes back as the original's own item, encrypted content byte for byte.
        const items = lines[1]!.payload.replacement_history as Record<string, unknown>[];
        const reasoning = items.filter((it) => it.type === "reasoning");
        assert.ok(reasoning.length > 0, name);
        for (const it of reasoning)
          assert.ok(text.includes(JSON.stringify(it)), `${name}: reasoning item rewritten`);
      }
    }
    assert.deepEqual([...paths].sort(), ["prune-only", "summary"]);
  });

  test("write-back: for every pi (and GJC) session, the fork read back keeps what must survive and its context is the replacement", async () => {
    // pi's own sessions, and GJC's (a pi-derived agent, same format).
    const files = corpusFiles().filter((f) => /^(pi|gjc)\//.test(relative(corpusDir, f)));
    assert.ok(files.length >= 4);
    for (const file of files) {
      const name = relative(corpusDir, file);
      const text = readFileSync(file, "utf8");
      const { entries } = importText(text, file, { format: "pi" });
      const original = liveContext(entries);
      const outcome = await compactEntries(entries, { target: 2000 });
      assert.equal(outcome.kind, "compacted", `${name}: ${outcome.kind}`);
      if (outcome.kind !== "compacted") continue;
      const { replacement, path } = outcome.result;
      const fork = toPiFork(replacement, piOrigin(text), { tokensBefore: outcome.result.tokens_before });
      const read = importText(fork.text, "fork.jsonl", { format: "pi" });
      assert.deepEqual(
        read.report.skipped.filter((s) => !s.by_design),
        [],
        `${name}: every line of the fork reads`,
      );
      const back = liveContext(read.entries);
      const verdict = validateSurvivalContract(original, back, { path });
      assert.ok(verdict.valid, `${name}: ${verdict.reason}`);
      // Exactly what pi builds from it: the checkpoint first (in pi's framing), then the rest in order.
      // Closures of abandoned calls aside: pi writes none and closes such calls itself when it sends
      // them; the importer closes them on reading, so it may close one the original's context left open.
      assert.deepEqual(
        back.filter(notSynthetic).map(asSent),
        piForkContext(replacement).filter(notSynthetic).map(asSent),
        name,
      );
    }
  });
});

function notSynthetic(m: Message): boolean {
  return !m.content.every((b) => (b as { synthetic?: boolean }).synthetic === true);
}

/** A message as a provider gets it: role and blocks (no provenance, no usage; `is_error: false` is no flag). */
function asSent(m: Message): unknown {
  return {
    role: m.role,
    content: m.content.map((b) => {
      if (b.type !== "tool_result" || (b as { is_error?: boolean }).is_error !== false) return b;
      const { is_error: _drop, ...rest } = b as { is_error?: boolean };
      return rest;
    }),
  };
}
