/**
 * `audit` of the guard's state journal: the guard's repair after an agent's compaction is read as a repair
 * of it (judged against the context before that compaction), not as a compaction of its own; Claude
 * Code's `<system-reminder>` blocks are not the user's words, never counted as lost.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CompactionEntry, JournalEntry, Message } from "../model/index.js";
import { createGuardCore } from "../guard/core.js";
import { answerOn } from "../guard/judging/answer.js";
import type { WireRequest } from "../guard/types.js";
import { readJournal } from "../journal/read.js";
import { auditEntries, isSystemReminder, protectedLosses } from "./audit.js";
import { auditLines } from "../cli/commands/audit.js";
import { linearJournal } from "../../test/support.js";
import { run } from "../../test/e2e/helpers.js";

const TOOLS = [{ name: "Bash", description: "run", input_schema: { type: "object" } }];
const SUMMARY =
  "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nThe parser was fixed.";
/** What Claude Code puts before the user's first words, and later alone in a user turn. */
const CLAUDE_MD =
  "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# claudeMd\nbe terse\n</system-reminder>";
const DATE_CHANGED =
  "<system-reminder>\nThe date has changed. Today's date is now 2026-12-05.\n</system-reminder>";

function claude(messages: unknown[]): WireRequest {
  return {
    method: "POST",
    url: "/v1/messages?beta=true",
    headers: { "x-claude-code-session-id": "audit-guard-1", "user-agent": "claude-cli/2.1.328" },
    body: Buffer.from(JSON.stringify({ model: "claude-x", max_tokens: 100, tools: TOOLS, messages })),
  };
}
const user = (...texts: string[]) => ({
  role: "user",
  content: texts.map((text) => ({ type: "text", text })),
});
const call = (id: string) => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "Bash", input: { command: id } }],
});
const result = (id: string) => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content: `out ${id}` }],
});
const said = (text: string) => ({ role: "assistant", content: [{ type: "text", text }] });

/** A Claude Code session whose compaction loses its last round, through the guard with a state folder. */
async function guardJournal(dir: string): Promise<string> {
  const core = createGuardCore({ stateDir: dir });
  const history = [
    user(CLAUDE_MD, "fix the parser"),
    call("t1"),
    result("t1"),
    call("t2"),
    result("t2"),
    user(DATE_CHANGED),
    said("fixed"),
  ];
  await core.handle(claude(history));
  // The summarization request, and the upstream's answer relayed: what proves the compaction.
  const summ = await core.handle(claude([...history, user("CRITICAL: Respond with TEXT ONLY. Summarize.")]));
  summ.relayed!(
    answerOn(
      "anthropic-messages",
      {},
      "<summary>The summary below covers the earlier portion of the conversation.\n\nThe parser was fixed.</summary>",
      0,
      0,
    ).body as Buffer,
  );
  const o = await core.handle(claude([user(CLAUDE_MD, SUMMARY), user("now add a test")]));
  assert.equal(o.verdict?.kept, false);
  assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? "");
  await core.close();
  const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl") && f !== "followed-sessions.jsonl");
  assert.equal(files.length, 1);
  return join(dir, files[0]!);
}

test("audit of a guard journal: the agent's compaction a violation repaired by the guard, the repair judged against the context before it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "audit-guard-"));
  try {
    const file = await guardJournal(dir);
    const { entries } = await readJournal(file);
    const audit = auditEntries(entries);
    const [agent, repair] = audit.compactions;
    assert.equal(audit.compactions.length, 2);
    assert.equal(agent!.source, "claude-code");
    assert.equal(agent!.kept, false);
    assert.equal(agent!.repair_of, null);
    assert.equal(agent!.repaired_by, repair!.id);
    // The reminders (the CLAUDE.md one and the date one alone in its turn) are not lost user texts.
    assert.deepEqual(agent!.losses, {
      user_texts: ["fix the parser"],
      tool_calls: ["t1", "t2"],
      tool_results: ["t1", "t2"],
      assistant_texts: ["fixed"],
    });
    assert.equal(repair!.source, "compact-safe-guard");
    assert.equal(repair!.repair_of, agent!.id);
    assert.equal(repair!.repaired_by, null);
    assert.equal(repair!.kept, true, repair!.reason ?? "");
    // Judged against the context before the agent's compaction (7 messages), not its 2-message replacement.
    assert.equal(repair!.messages_before, 7);
    assert.equal(repair!.messages_before, agent!.messages_before);
    assert.deepEqual([audit.kept, audit.repaired, audit.unrepaired], [1, 1, 0]);

    const lines = auditLines(audit);
    assert.match(
      lines[0]!,
      /\(claude-code, summary, 7 → 2 messages\): VIOLATION: .*; repaired by the guard \(/,
    );
    assert.ok(lines[0]!.endsWith(`repaired by the guard (${repair!.id})`), lines[0]);
    assert.equal(
      lines[1],
      `${repair!.id} (compact-safe-guard, summary, 7 → ${repair!.messages_after} messages): the guard's repair of ${agent!.id}: kept the contract against the context before it`,
    );
    assert.equal(lines[2], "0 of 1 compaction kept the survival contract; 1 violation repaired by the guard");

    // The command: exit 0 (the violation was repaired), the same lines; --json adds fields, renames none.
    const r = await run(["audit", file], { env: { NO_COLOR: "1" }, timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trimEnd().split("\n"), lines);
    const j = await run(["audit", "--json", file], { timeoutMs: 30_000 });
    assert.equal(j.code, 0, j.stderr);
    const parsed = JSON.parse(j.stdout) as Record<string, unknown> & {
      compactions: Record<string, unknown>[];
    };
    assert.deepEqual(Object.keys(parsed), ["compactions", "kept", "not_judgeable", "repaired", "unrepaired"]);
    assert.deepEqual(Object.keys(parsed.compactions[0]!), [
      "id",
      "source",
      "path",
      "messages_before",
      "messages_after",
      "judgeable",
      "kept",
      "reason",
      "losses",
      "placeholder",
      "stacked_checkpoints",
      "provider_compaction",
      "repair_of",
      "repaired_by",
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ------------------------------------------------------------------------ synthetic journals

const u = (...texts: string[]): Message => ({
  role: "user",
  content: texts.map((text) => ({ type: "text", text })),
});
const mCall = (id: string): Message => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "Bash", input: { command: id } }],
});
const mResult = (id: string): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content: `output of ${id}` }],
});
const a = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });
const checkpoint = (summary: string) =>
  u(
    `[compact-safe checkpoint]\n${summary}\n\n## Coverage\nsummary; last round kept: 6 messages (2 tool results, 3 assistant); anchors 0 chars`,
  );

const history: Message[] = [
  u("old task"),
  mCall("c1"),
  mResult("c1"),
  a("old task done"),
  u(CLAUDE_MD, "fix the failing test"),
  mCall("c2"),
  mResult("c2"),
  u(DATE_CHANGED),
  mCall("c3"),
  mResult("c3"),
  a("fixed"),
];

function compaction(id: string, parent: string, replacement: Message[], source: string): CompactionEntry {
  return {
    id,
    parent_id: parent,
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
      source_agent: source,
    },
  };
}

test("a compaction that keeps the round but not the harness's system reminders keeps the contract", () => {
  // The replacement carries every word of the user's and the round's calls and results, not the reminders.
  const replacement = [
    checkpoint("The old task was done."),
    u("fix the failing test"),
    ...history.slice(5, 7),
    ...history.slice(8),
  ];
  const entries: JournalEntry[] = [
    ...linearJournal(history),
    compaction("c", `m${history.length - 1}`, replacement, "claude-code"),
  ];
  const audit = auditEntries(entries);
  const [c] = audit.compactions;
  assert.equal(c!.kept, true, c!.reason ?? "");
  assert.deepEqual(c!.losses.user_texts, []);
  assert.deepEqual([audit.kept, audit.repaired, audit.unrepaired], [1, 0, 0]);
  assert.deepEqual(auditLines(audit).at(-1), "1 of 1 compaction kept the survival contract");
});

test("the user's own words next to a reminder in one block are still protected", () => {
  const before = [u("old"), a("ok"), u(`${CLAUDE_MD}\nand fix the test`), a("on it")];
  assert.deepEqual(protectedLosses(before, [checkpoint("x")]).user_texts, [`${CLAUDE_MD}\nand fix the test`]);
  assert.equal(isSystemReminder(CLAUDE_MD), true);
  assert.equal(isSystemReminder(`${CLAUDE_MD}\n${DATE_CHANGED}\n`), true);
  assert.equal(isSystemReminder(`${CLAUDE_MD} fix it`), false);
  assert.equal(isSystemReminder(`${CLAUDE_MD} fix it ${DATE_CHANGED}`), false);
});

test("a guard's repair that does not keep the contract leaves the violation unrepaired (exit 1 material)", () => {
  const lossy = [u("This session is being continued from a previous conversation. Summary: fixing a test.")];
  // A repair that put back only part of the round: c3 is still lost.
  const partial = [...lossy, u("fix the failing test"), mCall("c2"), mResult("c2")];
  const entries: JournalEntry[] = [
    ...linearJournal(history),
    compaction("agent", `m${history.length - 1}`, lossy, "claude-code"),
    compaction("repair", "agent", partial, "compact-safe-guard"),
  ];
  const audit = auditEntries(entries);
  const [agent, repair] = audit.compactions;
  assert.equal(agent!.repaired_by, "repair");
  assert.equal(repair!.repair_of, "agent");
  assert.equal(repair!.kept, false);
  assert.deepEqual(repair!.losses.tool_calls, ["c3"]);
  assert.deepEqual([audit.kept, audit.repaired, audit.unrepaired], [0, 0, 1]);
  const lines = auditLines(audit);
  assert.ok(lines[0]!.endsWith("; the guard's repair (repair) did not keep it either"), lines[0]);
  assert.match(
    lines[1]!,
    /^repair \(compact-safe-guard, summary, 11 → 4 messages\): the guard's repair of agent: VIOLATION: /,
  );
  assert.equal(
    lines[2],
    "0 of 1 compaction kept the survival contract; 0 violations repaired by the guard, 1 not repaired",
  );
});

test("a compaction by compact-safe-guard that follows no compaction is judged as any compaction", () => {
  const entries: JournalEntry[] = [
    ...linearJournal(history),
    compaction("g", `m${history.length - 1}`, [checkpoint("x"), ...history.slice(4)], "compact-safe-guard"),
  ];
  const [g] = auditEntries(entries).compactions;
  assert.equal(g!.repair_of, null);
  assert.equal(g!.kept, true, g!.reason ?? "");
});
