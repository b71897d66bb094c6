/**
 * A call in flight when an agent compacted, which the agent then went on without: it is abandoned in the
 * compaction's replacement as in the history before it, so the live context after the compaction closes
 * it too (the replacement used to leave it open, which dragged the protected round back to it and gave a
 * verdict that a hook reading the session's tail could not see).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message } from "../../model/index.js";
import { liveContext } from "../../journal/tree.js";
import { importText } from "../detect.js";
import { auditEntries } from "../../route/audit.js";
import { piHook } from "../../route/hooks.js";
import { protectedRound } from "../../contract/rounds.js";
import { ABANDONED_RESULT_TEXT, closeAbandonedCalls } from "./abandoned.js";

const at = "2026-12-03T00:00:00.000Z";
const line = (o: Record<string, unknown>) => JSON.stringify({ timestamp: at, ...o });
const msg = (id: string, parentId: string | null, message: Record<string, unknown>) =>
  line({ type: "message", id, parentId, message: { timestamp: 1, ...message } });
const assistant = (content: unknown[]) => ({
  role: "assistant",
  content,
  api: "anthropic-messages",
  provider: "anthropic",
  model: "m",
  stopReason: content.some((b) => (b as { type: string }).type === "toolCall") ? "toolUse" : "stop",
});
const toolCall = (id: string) => ({
  type: "toolCall",
  id,
  name: "bash",
  arguments: { command: `run ${id}` },
});
const result = (id: string) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "bash",
  content: [{ type: "text", text: `output of ${id}\n`.repeat(40) }],
  isError: false,
});

/**
 * A pi session: a task, a call pi compacted in the middle of (keeping the task's messages), then a new
 * instruction and three exchanges, and a second compaction that keeps from that instruction on.
 */
function session(): string {
  const lines = [line({ type: "session", version: 3, id: "s", cwd: "/w" })];
  let parent: string | null = null;
  const add = (id: string, message: Record<string, unknown>) => {
    lines.push(msg(id, parent, message));
    parent = id;
  };
  add("u1", { role: "user", content: "Fix the build." });
  for (let i = 1; i <= 3; i++) {
    add(`a${i}`, assistant([toolCall(`t${i}`)]));
    add(`r${i}`, result(`t${i}`));
  }
  add("open", assistant([{ type: "text", text: "Let me try another way:" }, toolCall("t-open")]));
  lines.push(
    line({
      type: "compaction",
      id: "c1",
      parentId: "open",
      summary: "The build was being fixed.",
      firstKeptEntryId: "u1",
      tokensBefore: 5000,
    }),
  );
  parent = "c1";
  add("u2", { role: "user", content: "alright, where were we?" });
  for (let i = 4; i <= 6; i++) {
    add(`a${i}`, assistant([toolCall(`t${i}`)]));
    add(`r${i}`, result(`t${i}`));
  }
  add("done", assistant([{ type: "text", text: "The build passes." }]));
  lines.push(
    line({
      type: "compaction",
      id: "c2",
      parentId: "done",
      summary: "The build passes.",
      firstKeptEntryId: "u2",
      tokensBefore: 5000,
    }),
  );
  return lines.join("\n") + "\n";
}

test("closeAbandonedCalls: a call open at the end of a replacement is closed when the conversation goes on after it, unless its result is recorded elsewhere", () => {
  const call: Message = {
    role: "assistant",
    content: [
      { type: "tool_use", id: "x", name: "bash", input: {} },
      { type: "tool_use", id: "y", name: "bash", input: {} },
    ],
  };
  const alone = closeAbandonedCalls([call]);
  assert.deepEqual([alone.closed, alone.inFlight, alone.value.length], [0, 2, 1]);
  const after = closeAbandonedCalls([call], true, new Set(["y"]));
  assert.deepEqual([after.closed, after.inFlight], [1, 1]);
  assert.deepEqual(
    after.value[1]!.content.map((b) => [
      (b as { tool_use_id: string }).tool_use_id,
      (b as { content: string }).content,
    ]),
    [["x", ABANDONED_RESULT_TEXT]],
  );
});

test("a call pi compacted in the middle of and then went on without is closed after the compaction too: no verdict blames it", () => {
  const { entries } = importText(session(), "s.jsonl", { format: "pi" });
  // The live context after the first compaction: the call is followed by its synthetic result.
  const c1 = entries.find((e) => e.kind === "compaction" && e.payload.summary.includes("being fixed"));
  assert.ok(c1 && c1.kind === "compaction");
  const replacement = c1.payload.replacement;
  const k = replacement.findIndex((m) => m.content.some((b) => b.type === "tool_use" && b.id === "t-open"));
  assert.ok(k >= 0);
  assert.deepEqual(
    replacement[k + 1]!.content.map((b) => (b as { tool_use_id?: string }).tool_use_id),
    ["t-open"],
  );
  // So the protected round of what follows is not dragged back to the call, and both compactions are judged
  // on the same closure before and after them.
  const before = liveContext(
    entries.slice(
      0,
      entries.findIndex((e) => e.kind === "compaction" && e !== c1),
    ),
  );
  assert.deepEqual(protectedRound(before).unresolvedCallIds, []);
  const audit = auditEntries(entries);
  assert.deepEqual(
    audit.compactions.map((c) => [c.kept, c.reason]),
    [
      [true, null],
      [true, null],
    ],
  );
});

test("the pi hook reading the session's tail gives the whole file's verdict on it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cs-abandoned-"));
  try {
    const file = join(dir, "s.jsonl");
    const text = session();
    writeFileSync(file, text);
    const whole = await piHook({ session_file: file }, dir, { firstWindow: Infinity });
    for (const firstWindow of [256, 1024, 4096]) {
      const tail = await piHook({ session_file: file }, dir, { firstWindow });
      assert.deepEqual(tail.output, whole.output, `first window ${firstWindow}`);
    }
    assert.equal(whole.output?.kept, true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
