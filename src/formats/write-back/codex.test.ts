/**
 * The Codex fork writer on a rollout Codex 0.169 started (paginated lines,
 * its own session ids): the fork is a legacy rollout under a new id, and
 * the items it did not change are the original's own.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { codexOrigin, codexRolloutName, toCodexFork, uuidV7 } from "./codex.js";
import { importText } from "../detect.js";
import { liveContext } from "../../journal/tree.js";

const at = "2026-05-01T10:00:00.000Z";
let ordinal = 0;
const line = (type: string, payload: unknown, metadata?: unknown) =>
  JSON.stringify({ timestamp: at, ordinal: ordinal++, type, payload, ...(metadata ? { metadata } : {}) });
const rollout = [
  line("session_meta", {
    session_id: "01a00000-0000-7000-8000-000000000001",
    id: "01a00000-0000-7000-8000-000000000001",
    timestamp: at,
    cwd: "/w",
    originator: "codex_exec",
    cli_version: "0.169.0",
    source: "exec",
    model_provider: "openai",
    history_mode: "paginated",
    context_window: { window_id: "w1" },
    base_instructions: { text: "You are a coding agent." },
  }),
  line(
    "response_item",
    { type: "message", role: "user", content: [{ type: "input_text", text: "list the files" }] },
    { history_sequence: 1 },
  ),
  line("response_item", {
    type: "reasoning",
    summary: [{ type: "summary_text", text: "**Listing**" }],
    content: null,
    encrypted_content: "gAAAAB-opaque/+=",
  }),
  line("response_item", {
    type: "function_call",
    name: "shell",
    arguments: '{"command": ["ls"]}',
    call_id: "c1",
  }),
  line("response_item", { type: "function_call_output", call_id: "c1", output: "a.txt\nb.txt" }),
  line("response_item", {
    type: "message",
    role: "assistant",
    content: [{ type: "output_text", text: "Two files." }],
  }),
].join("\n");

test("a fork of a paginated 0.169 rollout: legacy layout, new ids, the original's items byte for byte", () => {
  const live = liveContext(importText(rollout, "r.jsonl").entries);
  const now = new Date(2026, 4, 2, 8, 9, 10);
  const fork = toCodexFork(live, codexOrigin(rollout), { now });
  const lines = fork.text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown> & { payload: Record<string, unknown> });
  const meta = lines[0]!.payload;
  assert.equal(meta.id, fork.sessionId);
  assert.equal(meta.session_id, fork.sessionId);
  assert.equal(meta.history_mode, undefined, "paginated needs an ordinal on every line: the fork is legacy");
  assert.equal(meta.context_window, undefined);
  assert.deepEqual(meta.base_instructions, { text: "You are a coding agent." });
  assert.equal(meta.model_provider, "openai");
  assert.ok(lines.every((l) => !("ordinal" in l)));
  assert.equal(fork.fileName, `rollout-2026-05-02T08-09-10-${fork.sessionId}.jsonl`);
  // Unchanged items go back verbatim (the arguments string with its spacing, the encrypted reasoning).
  const items = lines[1]!.payload.replacement_history as unknown[];
  for (const l of rollout.split("\n").slice(1, 6)) {
    const payload = JSON.stringify((JSON.parse(l) as { payload: unknown }).payload);
    assert.ok(
      items.some((it) => JSON.stringify(it) === payload),
      payload,
    );
  }
  assert.deepEqual(lines[3]!.payload, { type: "user_message", message: "list the files", images: [] });
});

test("uuidV7 is a time-ordered version-7 UUID; rollout names use local time", () => {
  const a = uuidV7(new Date(1_700_000_000_000));
  const b = uuidV7(new Date(1_700_000_000_001));
  assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(a.slice(0, 13).replace("-", ""), (1_700_000_000_000).toString(16).padStart(12, "0"));
  assert.ok(a < b);
  assert.equal(codexRolloutName("X", new Date(2025, 0, 2, 3, 4, 5)), "rollout-2025-01-02T03-04-05-X.jsonl");
});
