/**
 * The guard's state holds the conversation verbatim: a state folder the
 * guard creates is 0700 and every file it writes there 0600, also in a
 * folder that existed before (whose own mode is left as it is). Driven
 * through the real core on a pi (Chat) session across a repaired
 * compaction, which writes the session's journal (created, then appended
 * to) and the sessions index.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGuardCore } from "../core.js";
import { answerOn } from "../judging/answer.js";
import type { WireRequest } from "../types.js";

const chat = (messages: unknown[]): WireRequest => ({
  method: "POST",
  url: "/v1/chat/completions",
  headers: {},
  body: Buffer.from(
    JSON.stringify({ model: "m", messages, tools: [{ type: "function", function: { name: "bash" } }] }),
  ),
});
const SYSTEM = { role: "system", content: "You are an expert coding assistant operating inside pi." };
const callMsg = (id: string) => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } }],
});
const toolMsg = (id: string) => ({ role: "tool", tool_call_id: id, content: `result ${id}` });

/** A session through a compaction the guard repairs: the state gets a journal (created, appended to) and the index. */
async function runSession(stateDir: string): Promise<void> {
  const core = createGuardCore({ stateDir });
  const history = [
    SYSTEM,
    { role: "user", content: "refactor utils" },
    callMsg("a"),
    toolMsg("a"),
    { role: "assistant", content: "refactored" },
  ];
  await core.handle(chat(history));
  await core.handle(chat([...history, { role: "user", content: "and the tests" }]));
  // pi's summarization request, and the upstream's answer relayed: what proves the compaction.
  const summ = await core.handle(
    chat([
      { role: "system", content: "You are a context summarization assistant." },
      {
        role: "user",
        content:
          "<conversation>\n[User]: refactor utils\n\n[Assistant]: refactored\n</conversation>\n\nCreate a structured context checkpoint summary",
      },
    ]),
  );
  summ.relayed!(answerOn("openai-chat", {}, "work: the utils refactor is done", 0, 0).body as Buffer);
  const after = [
    SYSTEM,
    {
      role: "user",
      content:
        "The conversation history before this point was compacted into the following summary:\n\nwork: the utils refactor is done",
    },
    { role: "user", content: "next" },
  ];
  const o = await core.handle(chat(after));
  assert.equal(o.verdict?.kept, false);
  await core.idle();
  await core.close();
}

const modeOf = (p: string) => statSync(p).mode & 0o777;

test("a state folder the guard creates is 0700, and its files 0600", { timeout: 60_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), "cs-guard-modes-"));
  const previous = process.umask(0o022);
  try {
    const state = join(root, "deep", "state");
    await runSession(state);
    assert.equal(modeOf(join(root, "deep")), 0o700);
    assert.equal(modeOf(state), 0o700);
    const names = readdirSync(state);
    assert.ok(names.includes("sessions.index"), names.join(", "));
    assert.ok(names.filter((n) => n.endsWith(".jsonl")).length >= 1, names.join(", "));
    for (const n of names) assert.equal(modeOf(join(state, n)), 0o600, n);
  } finally {
    process.umask(previous);
    rmSync(root, { recursive: true, force: true });
  }
});

test(
  "in a state folder that exists already, the files the guard creates are 0600; the folder keeps its mode",
  { timeout: 60_000 },
  async () => {
    const root = mkdtempSync(join(tmpdir(), "cs-guard-modes-"));
    const previous = process.umask(0o022);
    try {
      const state = join(root, "state");
      mkdirSync(state);
      chmodSync(state, 0o755);
      await runSession(state);
      assert.equal(modeOf(state), 0o755);
      const names = readdirSync(state);
      assert.ok(names.length >= 2, names.join(", "));
      for (const n of names) assert.equal(modeOf(join(state, n)), 0o600, n);
    } finally {
      process.umask(previous);
      rmSync(root, { recursive: true, force: true });
    }
  },
);
