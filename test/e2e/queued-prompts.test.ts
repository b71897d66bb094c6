/**
 * A prompt the user typed while Claude Code worked, delivered mid-turn (a
 * `queue-operation` enqueue, then remove: no user line records it), read
 * through the binary on a real corpus session (entire-7d, Claude Code 2.0.76:
 * "stop", typed while a Read ran, answered "I'll stop here."): `compact`'s
 * checkpoint names it, `report` shows it as the user's retained text, and
 * `audit` counts it as a user instruction of the last round (a compaction
 * that drops it loses a user text).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { corpusDir, corpusSuite } from "../support.js";
import { run, tempDir } from "./helpers.js";

const perCall = { timeoutMs: 300_000 };

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
