/**
 * The pi importer on what pi 0.73.1 writes when it compacts a session a
 * second time: the new compaction's `firstKeptEntryId` may lie before the
 * earlier compaction (pi cuts from the earlier one's first kept entry on),
 * and pi's context then holds every message from there, the earlier
 * compaction entry itself contributing nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { importText } from "./detect.js";
import { liveContext } from "../journal/tree.js";
import { PI_COMPACTION_PREFIX, PI_COMPACTION_SUFFIX } from "./pi.js";

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
