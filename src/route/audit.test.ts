/** The audit of recorded compactions: the contract's verdict, and the losses piece by piece. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { CompactionEntry, JournalEntry, Message } from "../model/index.js";
import { auditEntries } from "./audit.js";
import { linearJournal } from "../../test/support.js";

const u = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const a = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });
const call = (id: string): Message => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "Bash", input: { command: id } }],
});
const result = (id: string): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content: `output of ${id}` }],
});

const history: Message[] = [
  u("old task"),
  call("c1"),
  result("c1"),
  a("old task done"),
  u("fix the failing test"),
  call("c2"),
  result("c2"),
  call("c3"),
  result("c3"),
  a("fixed"),
];

function journal(replacements: Message[][]): JournalEntry[] {
  const entries = linearJournal(history);
  replacements.forEach((replacement, k) => {
    const c: CompactionEntry = {
      id: `c${k}`,
      parent_id: `m${history.length - 1}`,
      kind: "compaction",
      created_at: "2026-12-01T00:00:00Z",
      payload: {
        summary: "s",
        tokens_before: 100,
        tokens_after: 10,
        model: "m",
        path: "summary",
        coverage: null,
        trigger: "auto",
        replacement,
        source_agent: "claude-code",
      },
    };
    entries.push(c);
  });
  return entries;
}

const checkpoint = (summary: string) =>
  u(
    `[compact-safe checkpoint]\n${summary}\n\n## Coverage\nsummary; last round kept: 6 messages (2 tool results, 3 assistant); anchors 0 chars`,
  );

test("a compaction that keeps the protected round is kept; one that summarizes it away lists what it lost", () => {
  const kept = [checkpoint("The old task was done."), ...history.slice(4)];
  const lossy = [u("This session is being continued from a previous conversation. Summary: fixing a test.")];
  const audit = auditEntries(journal([kept, lossy]));
  assert.equal(audit.compactions.length, 2);
  assert.equal(audit.kept, 1);
  const [good, bad] = audit.compactions;
  assert.equal(good!.kept, true);
  assert.equal(good!.reason, null);
  assert.deepEqual(good!.losses, { user_texts: [], tool_calls: [], tool_results: [], assistant_texts: [] });
  assert.equal(good!.messages_before, history.length);
  assert.equal(bad!.kept, false);
  assert.equal(bad!.source, "claude-code");
  assert.deepEqual(bad!.losses, {
    user_texts: ["fix the failing test"],
    tool_calls: ["c2", "c3"],
    tool_results: ["c2", "c3"],
    assistant_texts: ["fixed"],
  });
});

test("a placeholder summary and stacked checkpoints are named", () => {
  const placeholder = [checkpoint("(no summary available)"), ...history.slice(4)];
  const stacked = [checkpoint("one"), checkpoint("two"), ...history.slice(4)];
  const [p, s] = auditEntries(journal([placeholder, stacked])).compactions;
  assert.equal(p!.placeholder, true);
  assert.equal(p!.kept, false);
  assert.equal(s!.stacked_checkpoints, true);
  assert.equal(s!.kept, false);
});
