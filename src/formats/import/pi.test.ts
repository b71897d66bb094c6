/**
 * The pi importer on what pi 0.73.1 writes when it compacts a session a
 * second time: the new compaction's `firstKeptEntryId` may lie before the
 * earlier compaction (pi cuts from the earlier one's first kept entry on),
 * and pi's context then holds every message from there, the earlier
 * compaction entry itself contributing nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { importText } from "../detect.js";
import { liveContext } from "../../journal/tree.js";
import { PI_COMPACTION_PREFIX, PI_COMPACTION_SUFFIX } from "../../wire/pi.js";
import { toPiFork } from "../write-back/pi.js";
import { auditEntries } from "../../route/audit.js";

test("pi import: a second compaction whose first kept entry lies before the first one keeps every message from there", () => {
  const at = "2026-12-01T00:00:00.000Z";
  const msg = (id: string, parentId: string | null, role: string, text: string) => ({
    type: "message",
    id,
    parentId,
    timestamp: at,
    message:
      role === "user"
        ? { role, content: [{ type: "text", text }], timestamp: 1 }
        : {
            role,
            content: [{ type: "text", text }],
            api: "openai-completions",
            provider: "fake",
            model: "fake-model",
            usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
            stopReason: "stop",
            timestamp: 1,
          },
  });
  const lines = [
    { type: "session", version: 3, id: "s", timestamp: at, cwd: "/w" },
    msg("a1", null, "user", "old request"),
    msg("a2", "a1", "assistant", "old answer"),
    msg("a3", "a2", "user", "kept request"),
    msg("a4", "a3", "assistant", "kept answer"),
    {
      type: "compaction",
      id: "c1",
      parentId: "a4",
      timestamp: at,
      summary: "first",
      firstKeptEntryId: "a3",
      tokensBefore: 9,
    },
    msg("a5", "c1", "user", "continue"),
    msg("a6", "a5", "assistant", "ok"),
    {
      type: "compaction",
      id: "c2",
      parentId: "a6",
      timestamp: at,
      summary: "second",
      firstKeptEntryId: "a3",
      tokensBefore: 9,
    },
  ];
  const { entries, report } = importText(lines.map((l) => JSON.stringify(l)).join("\n") + "\n", "s.jsonl", {
    format: "pi",
  });
  assert.deepEqual(report.notes, []);
  const texts = liveContext(entries).map((m) => (m.content[0] as { text: string }).text);
  assert.deepEqual(texts, [
    `${PI_COMPACTION_PREFIX}second${PI_COMPACTION_SUFFIX}`,
    "kept request",
    "kept answer",
    "continue",
    "ok",
  ]);
});

test("pi import and fork: redacted thinking and a tool call's thought signature come back byte for byte", () => {
  const at = "2026-12-01T00:00:00.000Z";
  const content = [
    {
      type: "thinking",
      thinking: "[Reasoning redacted]",
      thinkingSignature: "RED+opaque/==",
      redacted: true,
    },
    { type: "thinking", thinking: "plain", thinkingSignature: "sig/1==" },
    { type: "text", text: "Calling." },
    {
      type: "toolCall",
      id: "call_1",
      name: "bash",
      arguments: { command: "ls" },
      thoughtSignature: "ts/Zz==",
    },
  ];
  const lines = [
    { type: "session", version: 3, id: "s", timestamp: at, cwd: "/w" },
    {
      type: "message",
      id: "u1",
      parentId: null,
      timestamp: at,
      message: { role: "user", content: "go", timestamp: 1 },
    },
    {
      type: "message",
      id: "a1",
      parentId: "u1",
      timestamp: at,
      message: {
        role: "assistant",
        content,
        api: "anthropic-messages",
        provider: "anthropic",
        model: "m",
        stopReason: "toolUse",
        timestamp: 2,
      },
    },
  ];
  const { entries } = importText(lines.map((l) => JSON.stringify(l)).join("\n") + "\n", "s.jsonl", {
    format: "pi",
  });
  const live = liveContext(entries);
  assert.deepEqual(live[1]!.content.slice(0, 1), [{ type: "redacted_thinking", data: "RED+opaque/==" }]);
  assert.equal((live[1]!.content[3] as { thought_signature?: string }).thought_signature, "ts/Zz==");
  const fork = toPiFork(live, { cwd: "/w" }, { tokensBefore: 1 });
  const written = fork.text
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as { message?: { role: string; content: unknown } })
    .find((l) => l.message?.role === "assistant")!;
  assert.deepEqual(written.message!.content, content);
});

test("pi import: a branch summary kept by pi's compaction reads the same before and after it (the audit keeps it)", () => {
  const at = "2026-12-01T00:00:00.000Z";
  const user = (id: string, parentId: string | null, text: string) => ({
    type: "message",
    id,
    parentId,
    timestamp: at,
    message: { role: "user", content: [{ type: "text", text }], timestamp: 1 },
  });
  const reply = (id: string, parentId: string, text: string) => ({
    type: "message",
    id,
    parentId,
    timestamp: at,
    message: {
      role: "assistant",
      content: [{ type: "text", text }],
      api: "openai-completions",
      provider: "fake",
      model: "fake-model",
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
      stopReason: "stop",
      timestamp: 1,
    },
  });
  const lines = [
    { type: "session", version: 3, id: "s1", timestamp: at, cwd: "/w" },
    user("u1", null, "First request."),
    reply("a1", "u1", "First answer."),
    {
      type: "branch_summary",
      id: "b1",
      parentId: "a1",
      timestamp: at,
      fromId: "x9",
      summary: "Tried another way.",
    },
    user("u2", "b1", "Second request."),
    reply("a2", "u2", "Second answer."),
    {
      type: "compaction",
      id: "c1",
      parentId: "a2",
      timestamp: at,
      summary: "## Goal\nTwo requests.",
      firstKeptEntryId: "b1",
      tokensBefore: 10,
    },
  ];
  const { entries } = importText(lines.map((l) => JSON.stringify(l)).join("\n") + "\n", "s.jsonl");
  const [audit] = auditEntries(entries).compactions;
  assert.equal(audit!.kept, true, audit!.reason ?? "");
});

test("pi import: a pi 1.x session (system messages, a usage entry, a retain-none compaction with its systemMessage)", async () => {
  const { readFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { repoRoot } = await import("../../../test/support.js");
  const text = readFileSync(join(repoRoot, "test", "fixtures", "pi", "pi-1.6-session.jsonl"), "utf8");
  const { entries, report } = importText(text, "pi-1.6-session.jsonl", { format: "pi" });
  // The retain-none compaction names itself as its first kept entry: nothing kept, and no "not found" note.
  assert.deepEqual(report.notes, []);
  // The system message (pi's prompt and tools) and the usage entry are left out by design, nothing else.
  assert.deepEqual(
    report.skipped.map((s) => [s.line, s.by_design]),
    [
      [2, true],
      [5, true],
    ],
  );
  const texts = liveContext(entries).map((m) => (m.content[0] as { text: string }).text);
  assert.deepEqual(texts, [
    `${PI_COMPACTION_PREFIX}## Goal\nRead the notes.${PI_COMPACTION_SUFFIX}`,
    "continue",
  ]);
  const audit = auditEntries(entries);
  assert.equal(audit.compactions.length, 1);
  assert.equal(audit.compactions[0]!.id, "c0000001");
});
