/**
 * The pi writer: a fork in pi 0.73.1's own format (version 3 tree, a
 * `compaction` entry holding the checkpoint as the leaf), read back by the
 * pi importer as exactly the context pi builds from it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../../model/index.js";
import { importText } from "../detect.js";
import { liveContext } from "../../journal/tree.js";
import { compactEntries } from "../../route/compact-journal.js";
import { validateSurvivalContract } from "../../contract/validate.js";
import { PI_COMPACTION_PREFIX, PI_COMPACTION_SUFFIX } from "../../wire/pi.js";
import { piForkContext, piOrigin, piSessionFileName, toPiFork, uuidv7 } from "./pi.js";
import { forkWriterFor } from "../registry.js";
import { piSessionText } from "../../../test/pi-session.js";

type Line = Record<string, unknown> & { message?: Record<string, unknown> };

function parse(text: string): Line[] {
  assert.ok(text.endsWith("\n"));
  return text
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);
}

async function compacted(text: string) {
  const { entries } = importText(text, "s.jsonl", { format: "pi" });
  const outcome = await compactEntries(entries, { target: 300 });
  assert.equal(outcome.kind, "compacted");
  if (outcome.kind !== "compacted") throw new Error("not compacted");
  return { original: liveContext(entries), result: outcome.result };
}

test("pi fork: a version-3 session whose leaf is a compaction holding the checkpoint, kept messages chained before it", async () => {
  const text = piSessionText({ cwd: "/work/project", rounds: 6 });
  const { result } = await compacted(text);
  const now = new Date("2026-12-01T06:00:00.123Z");
  const fork = toPiFork(result.replacement, piOrigin(text), {
    tokensBefore: result.tokens_before,
    originalPath: "/work/s.jsonl",
    now,
  });
  assert.match(fork.sessionId, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(
    piSessionFileName(fork.timestamp, fork.sessionId),
    `2026-12-01T06-00-00-123Z_${fork.sessionId}.jsonl`,
  );
  const lines = parse(fork.text);
  assert.deepEqual(lines[0], {
    type: "session",
    version: 3,
    id: fork.sessionId,
    timestamp: now.toISOString(),
    cwd: "/work/project",
    parentSession: "/work/s.jsonl",
  });
  // The original's model and thinking level, then the messages, each the child of the one before.
  assert.deepEqual(
    lines.slice(1, 3).map((l) => [l.type, l.provider ?? l.thinkingLevel]),
    [
      ["model_change", "anthropic"],
      ["thinking_level_change", "high"],
    ],
  );
  for (let i = 1; i < lines.length; i++) {
    assert.match(String(lines[i]!.id), /^[0-9a-f]{8}$/);
    assert.equal(lines[i]!.parentId, i === 1 ? null : lines[i - 1]!.id);
  }
  const compaction = lines.at(-1)!;
  assert.equal(compaction.type, "compaction");
  assert.equal(compaction.firstKeptEntryId, lines[3]!.id);
  assert.equal(compaction.tokensBefore, result.tokens_before);
  assert.equal(compaction.fromHook, true);
  assert.match(String(compaction.summary), /^\[compact-safe checkpoint\]\n/);
  // Every call is followed by its result; thinking keeps its signature byte for byte.
  const messages = lines.filter((l) => l.type === "message").map((l) => l.message!);
  const last = messages.filter((m) => m.role === "assistant").at(-2)!;
  assert.deepEqual((last.content as unknown[])[0], {
    type: "thinking",
    thinking: "Round 6: read the module and its test first.",
    thinkingSignature: "EqQBCkYIBxgCKkB+sig/6==",
  });
  assert.equal(last.stopReason, "toolUse");
  assert.deepEqual(
    messages.slice(-3).map((m) => [m.role, m.toolCallId, m.toolName, m.isError]),
    [
      ["toolResult", "toolu_r6a", "read", false],
      ["toolResult", "toolu_r6b", "bash", true],
      ["assistant", undefined, undefined, undefined],
    ],
  );
  assert.ok(messages.every((m) => typeof m.timestamp === "number"));
});

test("pi fork: read back, its context is the replacement (checkpoint first, in pi's framing) and keeps the contract", async () => {
  // With pi's own compaction part way: the checkpoint folds it in, and the fork holds exactly one.
  const text = piSessionText({ cwd: "/work/project", rounds: 7, compactAfter: 3 });
  const { original, result } = await compacted(text);
  const fork = toPiFork(result.replacement, piOrigin(text), { tokensBefore: result.tokens_before });
  const read = importText(fork.text, "fork.jsonl", { format: "pi" });
  assert.deepEqual(
    read.report.skipped.map((s) => s.reason),
    [
      "model change (recorded in the following messages' meta)",
      "thinking-level change (agent setting, not sent to the model)",
    ],
  );
  const back = liveContext(read.entries);
  const sent = (m: Message) => ({ role: m.role, content: m.content });
  assert.deepEqual(back.map(sent), piForkContext(result.replacement).map(sent));
  const first = back[0]!.content[0] as { text: string };
  assert.ok(first.text.startsWith(`${PI_COMPACTION_PREFIX}[compact-safe checkpoint]\n`));
  assert.ok(first.text.endsWith(PI_COMPACTION_SUFFIX));
  const verdict = validateSurvivalContract(original, back, { path: result.path });
  assert.ok(verdict.valid, verdict.reason ?? "");
});

test("pi fork: a result closing an abandoned call is not written (pi closes it itself) and reads back the same", () => {
  const replacement: Message[] = [
    {
      role: "user",
      content: [
        {
          type: "text",
          text: "[compact-safe checkpoint]\nS\n\n## Coverage\nsummary; last round kept: 3 messages (0 tool results, 1 assistant); anchors 0 chars",
        },
      ],
    },
    { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "bash", input: { command: "ls" } }] },
    {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "c1", content: "x", is_error: true, synthetic: true }],
    },
    { role: "user", content: [{ type: "text", text: "stop, do something else" }] },
  ];
  const fork = toPiFork(replacement, { cwd: "/w" }, { tokensBefore: 10 });
  const lines = parse(fork.text);
  assert.deepEqual(
    lines.map((l) => (l.type === "message" ? l.message!.role : l.type)),
    ["session", "assistant", "user", "compaction"],
  );
  const back = liveContext(importText(fork.text, "f.jsonl", { format: "pi" }).entries);
  assert.deepEqual(
    back.map((m) => m.content.map((b) => b.type)),
    [["text"], ["tool_use"], ["tool_result"], ["text"]],
  );
  assert.equal((back[2]!.content[0] as { synthetic?: boolean }).synthetic, true);
});

test("pi fork: the origin is read from the active path of a tree file; the writer is registered for pi", () => {
  const tree = [
    { type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00Z", cwd: "/repo" },
    { type: "thinking_level_change", id: "a", parentId: null, timestamp: "t", thinkingLevel: "low" },
    { type: "model_change", id: "b", parentId: "a", timestamp: "t", provider: "openai", modelId: "gpt-5" },
    { type: "thinking_level_change", id: "c", parentId: "a", timestamp: "t", thinkingLevel: "high" },
  ]
    .map((l) => JSON.stringify(l))
    .join("\n");
  // The leaf is the last entry (c): b is on another branch.
  assert.deepEqual(piOrigin(tree), { cwd: "/repo", thinkingLevel: "high" });
  const w = forkWriterFor("pi");
  assert.ok(w);
  const fork = w({
    replacement: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    originalText: tree,
    originalPath: "/sessions/my session.jsonl",
    tokensBefore: 1,
    now: new Date("2026-12-01T00:00:00Z"),
    sessionId: "019ad000-0000-7000-8000-00000000abcd",
  });
  const path = "/sessions/2026-12-01T00-00-00-000Z_019ad000-0000-7000-8000-00000000abcd.jsonl";
  assert.equal(fork.defaultPath, path);
  assert.equal(fork.resume(path), `pi --session ${path}`);
  assert.equal(fork.resume("/a b/it's.jsonl"), `pi --session '/a b/it'\\''s.jsonl'`);
  assert.equal(uuidv7(0).slice(0, 13), "00000000-0000");
});
