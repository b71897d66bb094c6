/**
 * Prompts typed while Claude Code works: its `queue-operation` lines (shaped
 * as the corpus sessions of Claude Code 2.0.76 to 2.1.32 and as 2.1.33x
 * writes them) and its `queued_command` attachment. A prompt delivered
 * mid-turn is a user message before the model's next message; one that
 * starts a turn is its own user line already; one withdrawn is not read.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { importClaudeCode } from "./claude-code.js";
import { repoRoot } from "../../../test/support.js";
import { liveContext } from "../../journal/tree.js";
import { protectedRound } from "../../contract/rounds.js";
import { unwrapUserText } from "../../summarizers/extractive/user-text.js";
import type { JournalEntry, Message } from "../../model/index.js";

const SID = "3a782158-6c7c-4d4d-9c73-eae031da5b18";
const base = { isSidechain: false, userType: "external", cwd: "/w", sessionId: SID, version: "2.0.76" };

const user = (uuid: string, parent: string | null, content: unknown, ts = "2026-01-06T17:14:00.000Z") => ({
  ...base,
  parentUuid: parent,
  type: "user",
  message: { role: "user", content },
  uuid,
  timestamp: ts,
});
const assistant = (uuid: string, parent: string, id: string, content: unknown[]) => ({
  ...base,
  parentUuid: parent,
  type: "assistant",
  message: { model: "claude-opus-4-5-20251101", id, type: "message", role: "assistant", content },
  uuid,
  timestamp: "2026-01-06T17:14:30.000Z",
});
const read = (id: string) => ({ type: "tool_use", id, name: "Read", input: { file_path: "/w/common.go" } });
const result = (id: string) => [{ tool_use_id: id, type: "tool_result", content: "package strategy" }];
const op = (operation: string, extra: object = {}) => ({
  type: "queue-operation",
  operation,
  timestamp: "2026-01-06T17:14:29.009Z",
  sessionId: SID,
  ...extra,
});

function jsonl(lines: object[]): string {
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

function live(entries: JournalEntry[]): Message[] {
  return liveContext(entries);
}

const texts = (ms: Message[]) =>
  ms.map((m) => `${m.role}:${m.content.map((b) => (b.type === "text" ? b.text : b.type)).join("|")}`);

/** The corpus's 2.0.76 shape (entire-7d, lines 94-102): "stop" typed while a Read ran, read with its result. */
const midTurn = [
  user("u0", null, "implement it please"),
  assistant("a1", "u0", "msg_1", [read("toolu_1")]),
  user("r1", "a1", result("toolu_1")),
  op("enqueue", { content: "stop" }),
  assistant("a2", "r1", "msg_2", [{ type: "text", text: "Now let me implement this." }]),
  assistant("a3", "a2", "msg_2", [read("toolu_2")]),
  op("remove", { timestamp: "2026-01-06T17:14:36.853Z" }),
  user("r2", "a3", result("toolu_2")),
  assistant("a4", "r2", "msg_3", [{ type: "text", text: "I'll stop here." }]),
];

test("a prompt delivered mid-turn (enqueue, then remove) is a user message after the results it was sent with", () => {
  const r = importClaudeCode(jsonl(midTurn), "s.jsonl");
  assert.deepEqual(texts(live(r.entries)), [
    "user:implement it please",
    "assistant:tool_use",
    "user:tool_result",
    "assistant:Now let me implement this.|tool_use",
    "user:tool_result",
    "user:stop",
    "assistant:I'll stop here.",
  ]);
  const q = r.entries.find((e) => e.id === "queued-4")!;
  assert.equal(q.parent_id, "r2");
  assert.equal(r.entries.find((e) => e.id === "a4")!.parent_id, "queued-4");
  assert.equal(q.created_at, "2026-01-06T17:14:36.853Z", "the time it was delivered");
  assert.deepEqual(
    r.report.skipped.filter((s) => !s.by_design),
    [],
  );
  assert.match(
    r.report.skipped.find((s) => s.line === 7)!.reason,
    /remove\): the queued prompt of line 4 was delivered mid-turn/,
  );
  // The contract's last round: the delivered prompt is the user's current instruction.
  const ms = live(r.entries);
  const round = protectedRound(ms);
  assert.ok(round.instructionIndices.some((i) => texts([ms[i]!])[0] === "user:stop"));
  assert.equal(unwrapUserText("stop", ms[5]).kind, "direction");
});

test("a prompt that starts a turn (dequeue) is its own user line: not added twice", () => {
  const r = importClaudeCode(
    jsonl([
      ...midTurn.slice(0, 3),
      op("enqueue", { content: "and add a test" }),
      op("dequeue"),
      user("u9", "r1", "and add a test"),
      assistant("a9", "u9", "msg_9", [{ type: "text", text: "Adding it." }]),
    ]),
    "s.jsonl",
  );
  assert.equal(texts(live(r.entries)).filter((t) => t === "user:and add a test").length, 1);
});

test("a prompt taken back (popAll) or removed unread (cancelled) is not an instruction", () => {
  for (const leave of [op("popAll"), op("remove", { content: "stop", reason: "cancelled" })]) {
    const lines = [...midTurn];
    lines[6] = leave;
    const r = importClaudeCode(jsonl(lines), "s.jsonl");
    assert.ok(!texts(live(r.entries)).includes("user:stop"), JSON.stringify(leave));
    assert.equal(r.report.skipped.filter((s) => !s.by_design).length, 0);
  }
});

test("a remove that names its prompt (2.1.33x) takes that one, not the oldest; the oldest is still queued", () => {
  const r = importClaudeCode(
    jsonl([
      ...midTurn.slice(0, 3),
      op("enqueue", { content: "first" }),
      op("enqueue", { content: "second" }),
      op("remove", { content: "second", reason: "absorbed_mid_turn" }),
      assistant("a4", "r1", "msg_3", [{ type: "text", text: "ok" }]),
    ]),
    "s.jsonl",
  );
  const t = texts(live(r.entries));
  assert.ok(t.includes("user:second"));
  assert.ok(!t.includes("user:first"), "still queued: not delivered to the model");
});

test("a queued_command attachment (2.1.33x) is the delivered prompt, once; the next message hangs off it", () => {
  const r = importClaudeCode(
    jsonl([
      ...midTurn.slice(0, 3),
      op("enqueue", { content: "doc sweep too pls" }),
      op("remove", { content: "doc sweep too pls", reason: "absorbed_mid_turn" }),
      {
        ...base,
        parentUuid: "r1",
        type: "attachment",
        attachment: {
          type: "queued_command",
          prompt: "doc sweep too pls",
          commandMode: "prompt",
          origin: { kind: "human" },
        },
        uuid: "att1",
        timestamp: "2026-01-06T17:14:29.009Z",
      },
      assistant("a4", "att1", "msg_3", [{ type: "text", text: "Sweeping the docs too." }]),
    ]),
    "s.jsonl",
  );
  assert.deepEqual(texts(live(r.entries)).slice(-2), [
    "user:doc sweep too pls",
    "assistant:Sweeping the docs too.",
  ]);
  assert.equal(texts(live(r.entries)).filter((t) => t === "user:doc sweep too pls").length, 1);
  assert.equal(r.entries.find((e) => e.id === "a4")!.parent_id, "att1");
  assert.equal(r.report.skipped.filter((s) => !s.by_design).length, 0);
});

test("a queued notification of the harness (one tagged element) is read as injected context, not the user's words", () => {
  const note =
    "<agent-notification>\n<agent-id>a8c2528</agent-id>\n<status>completed</status>\n" +
    '<summary>Agent "Code simplicity review" completed.</summary>\n</agent-notification>';
  const lines = [...midTurn];
  lines[3] = op("enqueue", { content: note });
  const r = importClaudeCode(jsonl(lines), "s.jsonl");
  const m = live(r.entries).find((x) => x.content.some((b) => b.type === "text" && b.text === note))!;
  assert.equal(m.meta?.is_meta, true);
  assert.equal(unwrapUserText(note, m).kind, "injected");
});

test("a resumed session that repeats the queue's lines reads the prompt once", () => {
  const r = importClaudeCode(jsonl([...midTurn, ...midTurn.slice(3, 4), ...midTurn.slice(6, 7)]), "s.jsonl");
  assert.equal(texts(live(r.entries)).filter((t) => t === "user:stop").length, 1);
});

test("a prompt delivered as the file ends (no answer recorded yet) is the last user message", () => {
  const r = importClaudeCode(jsonl(midTurn.slice(0, 8)), "s.jsonl");
  assert.deepEqual(texts(live(r.entries)).slice(-2), ["user:tool_result", "user:stop"]);
});

test("a real Claude Code 2.1.332 session (recorded): the prompt sent while Bash ran is one user message after the result, before the answer; no line unknown", () => {
  const file = join(repoRoot, "test", "fixtures", "claude-code", "claude-code-2.1.332-queued-prompt.jsonl");
  const r = importClaudeCode(readFileSync(file, "utf8"), file);
  assert.deepEqual(
    r.report.skipped.filter((s) => !s.by_design),
    [],
  );
  const ms = live(r.entries);
  assert.deepEqual(texts(ms), [
    "user:run the slow command",
    "assistant:tool_use",
    "user:tool_result",
    "user:also please don't amend commits",
    "assistant:Done (fake model).",
  ]);
  // The attachment line (26) is the message; the remove (25) adds nothing more; the answer hangs off it.
  const q = r.entries.find((e) => e.kind === "user" && (e.payload as Message).meta?.queued === true)!;
  assert.equal(q.id, "58c53ed1-ef37-47cd-ac0b-a132e04e3579");
  assert.equal(r.entries.find((e) => e.parent_id === q.id)!.kind, "assistant");
  assert.match(
    r.report.skipped.find((s) => s.line === 25)!.reason,
    /remove, absorbed_mid_turn\): the queued prompt of line 22/,
  );
  assert.match(r.report.skipped.find((s) => s.line === 18)!.reason, /tools used/);
  const round = protectedRound(ms);
  assert.ok(round.instructionIndices.includes(3), "the user's current instruction, in the last round");
});
