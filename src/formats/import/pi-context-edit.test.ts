/**
 * pi 1.x `context_edit` entries: the imported context is what pi sends (its
 * `buildSessionProjection`: the latest edit per target on the active path,
 * `replacement: null` omits the target, a replacement replaces its content),
 * a compaction whose first kept entry is an omitted attempt keeps from the
 * next message, the audit judges the compaction on the edited context, and a
 * fork neither brings back an omitted message nor loses an edit.
 *
 * The fixture (test/fixtures/pi/pi-1.6-context-edit.jsonl, hand-written in pi
 * 1.6.0's shape) holds two failed attempts pi omitted on retry, a tool result
 * replaced twice (the later wins, a string made one text part), a compaction
 * whose `firstKeptEntryId` is the first omitted attempt (as pi's cut lands
 * when it walks back over entries that send nothing), and an edit after the
 * compaction of a message it kept. Its expected context was checked against
 * pi 1.6.0's own `buildSessionContext`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "../../model/index.js";
import { importText } from "../detect.js";
import { liveContext } from "../../journal/tree.js";
import { compactEntries } from "../../route/compact-journal.js";
import { auditEntries } from "../../route/audit.js";
import { PI_COMPACTION_PREFIX, PI_COMPACTION_SUFFIX } from "../../wire/pi.js";
import { piOrigin, toPiFork } from "../write-back/pi.js";
import { repoRoot } from "../../../test/support.js";

const FIXTURE = join(repoRoot, "test", "fixtures", "pi", "pi-1.6-context-edit.jsonl");

/** One line per message: role and its text, call or result. */
function shown(messages: readonly Message[]): string[] {
  return messages.map((m) => {
    const parts = m.content.map((b) => {
      if (b.type === "text") return (b as { text: string }).text;
      if (b.type === "tool_use") return `call ${(b as { id: string }).id}`;
      if (b.type === "tool_result") {
        const r = b as { tool_use_id: string; content: string };
        return `result ${r.tool_use_id}: ${r.content}`;
      }
      return b.type;
    });
    return `${m.role}: ${parts.join(" | ")}`;
  });
}

test("pi 1.x context edits: the imported context is what pi sends (omissions, latest replacement, an edit after the compaction)", () => {
  const { entries, report } = importText(readFileSync(FIXTURE, "utf8"), "pi-1.6-context-edit.jsonl");
  assert.equal(report.format, "pi");
  assert.deepEqual(report.notes, []);
  // Nothing is skipped as unknown: the edits and the messages they omit are left out by design.
  assert.ok(
    report.skipped.every((s) => s.by_design),
    JSON.stringify(report.skipped),
  );
  assert.deepEqual(
    report.skipped.filter((s) => /omitted/.test(s.reason)).map((s) => s.line),
    [6, 14],
  );
  assert.deepEqual(shown(liveContext(entries)), [
    `user: ${PI_COMPACTION_PREFIX}The user asked to check the build; it failed at src/x.ts:3 (TS2322).${PI_COMPACTION_SUFFIX}`,
    "assistant: The build fails at src/x.ts:3 (TS2322: a string assigned to a number).",
    "user: Fix the type error in src/x.ts.",
    "assistant: call toolu_02",
    "user: result toolu_02: Edited src/x.ts.",
    "user: Run the tests.",
    "assistant: call toolu_03",
    "user: result toolu_03: 12 passing",
    "assistant: All 12 tests pass.",
  ]);
  // The history before the compaction holds the tool result as the latest edit left it.
  const before = entries.filter((e) => e.kind === "tool_result").map((e) => shown([e.payload as Message])[0]);
  assert.equal(before[0], "user: result toolu_01: [build log cleared: src/x.ts:3:7 error TS2322]");
  // An edited message says which edit made it.
  const fixed = entries.find((e) => (e.payload as Message).meta?.source_id === "0a000006")!;
  assert.equal((fixed.payload as Message).meta?.context_edit, "ed000005");
});

test("pi 1.x context edits: the audit judges pi's compaction on the edited context (the omitted attempts are not lost)", () => {
  const { entries } = importText(readFileSync(FIXTURE, "utf8"), "pi-1.6-context-edit.jsonl");
  const [audit, more] = auditEntries(entries).compactions;
  assert.equal(more, undefined);
  // Before it: the two requests, the two calls with their results and the retried answer (the two failed
  // attempts are not there); after it: the checkpoint and what pi kept.
  assert.equal(audit!.messages_before, 7);
  assert.equal(audit!.messages_after, 5);
  // pi kept from the retried answer on, so the older of the round's two exchanges is what it lost (the
  // contract protects both), and nothing of the omitted attempts is counted as lost.
  assert.equal(audit!.kept, false);
  assert.deepEqual(audit!.losses.tool_calls.length, 1);
  assert.match(audit!.losses.tool_calls[0]!, /toolu_01/);
  assert.deepEqual(audit!.losses.assistant_texts, []);
  assert.deepEqual(audit!.losses.user_texts, []);
});

test("pi 1.x context edits: a fork of the compacted session brings back no omitted message and keeps every edit", async () => {
  // The fixture, then four more rounds with long outputs: enough for compact-safe to compact.
  const rounds: Record<string, unknown>[] = [];
  let parent = "0a00000d";
  for (let i = 1; i <= 4; i++) {
    const call = `toolu_x${i}`;
    rounds.push(
      user(`r${i}u`, parent, `Round ${i}: look at module ${i}.`),
      {
        ...reply(`r${i}a`, `r${i}u`, "", "toolUse"),
        message: {
          ...reply("", "", "").message,
          stopReason: "toolUse",
          content: [{ type: "toolCall", id: call, name: "bash", arguments: { command: `cat m${i}.ts` } }],
        },
      },
      {
        type: "message",
        id: `r${i}r`,
        parentId: `r${i}a`,
        message: {
          role: "toolResult",
          toolCallId: call,
          toolName: "bash",
          content: [{ type: "text", text: `line of module ${i}\n`.repeat(120) }],
          isError: false,
          timestamp: 1,
        },
      },
      reply(`r${i}b`, `r${i}r`, `Module ${i} is fine.`),
    );
    parent = `r${i}b`;
  }
  const text =
    readFileSync(FIXTURE, "utf8") +
    rounds.map((r) => JSON.stringify({ timestamp: "2026-12-02T12:00:00.000Z", ...r })).join("\n") +
    "\n";
  const { entries } = importText(text, "pi-1.6-context-edit.jsonl");
  const outcome = await compactEntries(entries, { target: 600 });
  assert.equal(outcome.kind, "compacted");
  if (outcome.kind !== "compacted") return;
  const fork = toPiFork(outcome.result.replacement, piOrigin(text), {
    tokensBefore: outcome.result.tokens_before,
  });
  for (const gone of ["529 overloaded", "I will now run", "build log trimmed", '"Fix it."'])
    assert.ok(!fork.text.includes(gone), `the fork holds ${gone}`);
  assert.ok(fork.text.includes("Fix the type error in src/x.ts."));
  // Read back, the fork's context is the edited one (pi's framing of the checkpoint first).
  const back = importText(fork.text, "fork.jsonl", { format: "pi" });
  const backShown = shown(liveContext(back.entries));
  assert.ok(backShown.includes("user: Fix the type error in src/x.ts."), backShown.join("\n"));
  assert.ok(!backShown.includes("user: Fix it."));
  assert.equal(backShown.at(-1), "assistant: Module 4 is fine.");
});

/** A small tree session: records built from [id, parent, role, text] and extra lines. */
function session(lines: Record<string, unknown>[]): string {
  const at = "2026-12-02T00:00:00.000Z";
  const all = [{ type: "session", version: 3, id: "s", timestamp: at, cwd: "/w" }, ...lines];
  return all.map((l) => JSON.stringify({ timestamp: at, ...l })).join("\n") + "\n";
}
const user = (id: string, parentId: string | null, text: string) => ({
  type: "message",
  id,
  parentId,
  message: { role: "user", content: text, timestamp: 1 },
});
const reply = (id: string, parentId: string, text: string, stopReason = "stop") => ({
  type: "message",
  id,
  parentId,
  message: {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "m",
    stopReason,
    timestamp: 1,
  },
});
const edit = (id: string, parentId: string, targetId: string, replacement: unknown) => ({
  type: "context_edit",
  id,
  parentId,
  targetId,
  replacement,
});

test("pi 1.x context edits: an edit on another branch is not applied; one shared with a branch that left before it is noted", () => {
  const text = session([
    user("u1", null, "first"),
    reply("a1", "u1", "answer one"),
    // A branch that leaves after a1 (before the edit of a1 below): pi shows a1 there unedited.
    user("x1", "a1", "side question"),
    edit("xe", "x1", "u1", null),
    // The active branch: back on a1.
    edit("e1", "a1", "a1", { content: "answer one, shortened" }),
    user("u2", "e1", "second"),
  ]);
  const { entries, report } = importText(text, "s.jsonl", { format: "pi" });
  assert.deepEqual(shown(liveContext(entries)), [
    "user: first",
    "assistant: answer one, shortened",
    "user: second",
  ]);
  assert.equal(report.notes.length, 2, report.notes.join("\n"));
  assert.match(report.notes[0]!, /^line 5: context edit of "u1" not applied: on another branch/);
  assert.match(
    report.notes[1]!,
    /^line 6: the context edit of "a1" is applied to the entry itself; a branch/,
  );
});

test("pi 1.x context edits: null omits a custom message and a branch summary; a replacement of a user message's content keeps its role", () => {
  const text = session([
    user("u1", null, "first"),
    {
      type: "custom_message",
      id: "m1",
      parentId: "u1",
      customType: "ext",
      content: "injected",
      display: true,
    },
    { type: "branch_summary", id: "b1", parentId: "m1", fromId: "zz", summary: "tried elsewhere" },
    edit("e1", "b1", "m1", null),
    edit("e2", "e1", "b1", null),
    edit("e3", "e2", "u1", { content: [{ type: "text", text: "first, restated" }] }),
    // A target that is not before the edit on the path, and a malformed replacement: not applied, noted.
    edit("e4", "e3", "nope", null),
    edit("e5", "e4", "u1", { text: "no content field" }),
    reply("a1", "e5", "ok"),
  ]);
  const { entries, report } = importText(text, "s.jsonl", { format: "pi" });
  assert.deepEqual(shown(liveContext(entries)), ["user: first, restated", "assistant: ok"]);
  assert.deepEqual(
    report.notes.map((n) => n.replace(/:.*/, "")),
    ["line 8", "line 9"],
  );
});

test("pi 1.x context edits: a compaction keeping from an omitted message keeps from the next one (not its parent)", () => {
  const text = session([
    user("u1", null, "old request"),
    reply("a1", "u1", "old answer"),
    reply("a2", "a1", "", "error"),
    edit("e1", "a2", "a2", null),
    reply("a3", "e1", "retried answer"),
    { type: "compaction", id: "c1", parentId: "a3", summary: "S", firstKeptEntryId: "a2", tokensBefore: 9 },
    user("u2", "c1", "next"),
  ]);
  const { entries } = importText(text, "s.jsonl", { format: "pi" });
  assert.deepEqual(shown(liveContext(entries)), [
    `user: ${PI_COMPACTION_PREFIX}S${PI_COMPACTION_SUFFIX}`,
    "assistant: retried answer",
    "user: next",
  ]);
});
