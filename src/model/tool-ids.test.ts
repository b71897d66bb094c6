/** Repeated tool ids at import: renamed with a warning naming the line, or refused (a second result). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { compactMessagesSafe } from "../engine/compact.js";
import { parseJournal } from "../journal/read.js";
import { liveContext } from "../journal/tree.js";
import type { Block, JournalEntry, Message } from "./index.js";
import { importText } from "../formats/detect.js";
import { FormatError, type FormatName, type ImportResult } from "../formats/common/types.js";

const jsonl = (...objs: unknown[]) => objs.map((o) => JSON.stringify(o)).join("\n") + "\n";

/** Every tool id of the live context, in order: `call:ID` / `result:ID`. */
function toolIds(messages: readonly Message[]): string[] {
  const out: string[] = [];
  for (const m of messages)
    for (const b of m.content as Block[]) {
      if (b.type === "tool_use") out.push(`call:${(b as { id: string }).id}`);
      if (b.type === "tool_result") out.push(`result:${(b as { tool_use_id: string }).tool_use_id}`);
    }
  return out;
}

function importAs(format: FormatName, text: string, file = "s.jsonl"): ImportResult {
  return importText(text, file, { format });
}

// --- one session per format: `ls` answered, then `ls` again with the same call id, answered ---

const cc = { sessionId: "S", cwd: "/w", timestamp: "2026-01-01T00:00:00Z", isSidechain: false };
const ccAssistant = (uuid: string, parent: string, msgId: string, callId: string, cmd: string) => ({
  ...cc,
  type: "assistant",
  uuid,
  parentUuid: parent,
  message: {
    id: msgId,
    role: "assistant",
    model: "m",
    content: [{ type: "tool_use", id: callId, name: "Bash", input: { command: cmd } }],
  },
});
const ccResult = (uuid: string, parent: string, callId: string, text: string) => ({
  ...cc,
  type: "user",
  uuid,
  parentUuid: parent,
  message: { role: "user", content: [{ type: "tool_result", tool_use_id: callId, content: text }] },
});
const claudeCodeLines = [
  { ...cc, type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "look" } },
  ccAssistant("a1", "u1", "msg1", "t1", "ls"),
  ccResult("r1", "a1", "t1", "a.txt"),
  ccAssistant("a2", "r1", "msg2", "t1", "ls -l"),
  ccResult("r2", "a2", "t1", "-rw a.txt"),
];

const cx = (payload: Record<string, unknown>) => ({ type: "response_item", timestamp: "t", payload });
const codexLines = [
  { type: "session_meta", timestamp: "t", payload: { id: "s", timestamp: "t", cwd: "/w" } },
  cx({ type: "message", role: "user", content: [{ type: "input_text", text: "look" }] }),
  cx({ type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: "c1" }),
  cx({ type: "function_call_output", call_id: "c1", output: "a.txt" }),
  cx({ type: "function_call", name: "shell", arguments: '{"command":["ls","-l"]}', call_id: "c1" }),
  cx({ type: "function_call_output", call_id: "c1", output: "-rw a.txt" }),
];

const piMsg = (id: string, parentId: string | null, message: Record<string, unknown>) => ({
  type: "message",
  id,
  parentId,
  timestamp: "t",
  message,
});
const piLines = [
  { type: "session", id: "s", timestamp: "t", cwd: "/w" },
  piMsg("e1", null, { role: "user", content: [{ type: "text", text: "look" }] }),
  piMsg("e2", "e1", {
    role: "assistant",
    content: [{ type: "toolCall", id: "p1", name: "bash", arguments: { command: "ls" } }],
  }),
  piMsg("e3", "e2", { role: "toolResult", toolCallId: "p1", content: [{ type: "text", text: "a.txt" }] }),
  piMsg("e4", "e3", {
    role: "assistant",
    content: [{ type: "toolCall", id: "p1", name: "bash", arguments: { command: "ls -l" } }],
  }),
  piMsg("e5", "e4", { role: "toolResult", toolCallId: "p1", content: [{ type: "text", text: "-rw a.txt" }] }),
];

const oaCall = (id: string, cmd: string) => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name: "bash", arguments: JSON.stringify({ cmd }) } }],
});
const openaiMessages = [
  { role: "user", content: "look" },
  oaCall("o1", "ls"),
  { role: "tool", tool_call_id: "o1", content: "a.txt" },
  oaCall("o1", "ls -l"),
  { role: "tool", tool_call_id: "o1", content: "-rw a.txt" },
];

const anCall = (id: string, cmd: string) => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "bash", input: { cmd } }],
});
const anResult = (id: string, text: string) => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content: text }],
});
const anthropicMessages = [
  { role: "user", content: "look" },
  anCall("n1", "ls"),
  anResult("n1", "a.txt"),
  anCall("n1", "ls -l"),
  anResult("n1", "-rw a.txt"),
];

const jEntry = (id: string, parent: string, kind: string, payload: Message): JournalEntry =>
  ({ id, parent_id: parent, kind, created_at: "2026-01-01T00:00:00Z", payload }) as JournalEntry;
const jCall = (id: string, cmd: string): Message => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "bash", input: { cmd } }],
});
const jResult = (id: string, text: string): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content: text }],
});
const journalLines: JournalEntry[] = [
  {
    id: "h",
    parent_id: null,
    kind: "header",
    created_at: "2026-01-01T00:00:00Z",
    payload: {
      session_id: "s",
      created_at: "2026-01-01T00:00:00Z",
      schema_version: 2,
      source_format: "compact-safe",
    },
  } as JournalEntry,
  jEntry("e1", "h", "user", { role: "user", content: [{ type: "text", text: "look" }] }),
  jEntry("e2", "e1", "assistant", jCall("j1", "ls")),
  jEntry("e3", "e2", "tool_result", jResult("j1", "a.txt")),
  jEntry("e4", "e3", "assistant", jCall("j1", "ls -l")),
  jEntry("e5", "e4", "tool_result", jResult("j1", "-rw a.txt")),
];

const cases: { format: FormatName; text: string; id: string; line: number; unit: string }[] = [
  { format: "claude-code", text: jsonl(...claudeCodeLines), id: "t1", line: 4, unit: "line" },
  { format: "codex", text: jsonl(...codexLines), id: "c1", line: 5, unit: "line" },
  { format: "pi", text: jsonl(...piLines), id: "p1", line: 5, unit: "line" },
  { format: "openai", text: JSON.stringify(openaiMessages), id: "o1", line: 4, unit: "message" },
  { format: "anthropic", text: JSON.stringify(anthropicMessages), id: "n1", line: 4, unit: "message" },
];

for (const c of cases) {
  test(`${c.format}: a second call with a used id is renamed _dup2 with its result, and the warning names its line`, () => {
    const r = importAs(c.format, c.text);
    const live = liveContext(r.entries);
    assert.deepEqual(toolIds(live), [
      `call:${c.id}`,
      `result:${c.id}`,
      `call:${c.id}_dup2`,
      `result:${c.id}_dup2`,
    ]);
    assert.equal(r.report.warnings.length, 1);
    assert.equal(r.report.warnings[0]!.line, c.line);
    assert.match(
      r.report.warnings[0]!.message,
      new RegExp(
        `^tool call id "${c.id}" already used by the call at ${c.unit} ${c.line - 2}; renamed "${c.id}_dup2"`,
      ),
    );
    // The renamed call keeps its own input and result: nothing is paired with the wrong call.
    const second = live.find((m) => m.content.some((b) => (b as { id?: string }).id === `${c.id}_dup2`))!;
    assert.match(JSON.stringify(second.content), /-l/);
    const answer = live.find((m) =>
      m.content.some((b) => (b as { tool_use_id?: string }).tool_use_id === `${c.id}_dup2`),
    )!;
    assert.match(JSON.stringify(answer.content), /-rw a\.txt/);
    assert.equal(r.report.synthetic_results, 0);
  });
}

test("a journal is never rewritten: its import keeps repeated ids as written, with a warning naming the line", () => {
  const r = importAs("journal", jsonl(...journalLines));
  assert.deepEqual(toolIds(liveContext(r.entries)), ["call:j1", "result:j1", "call:j1", "result:j1"]);
  assert.deepEqual(r.report.warnings, [
    { line: 5, message: 'tool call id "j1" already used by the call at line 3; kept as written' },
  ]);
  // On request, a journal is repaired like any other import.
  const repaired = importText(jsonl(...journalLines), "s.jsonl", { format: "journal", toolIds: "repair" });
  assert.deepEqual(toolIds(liveContext(repaired.entries)), [
    "call:j1",
    "result:j1",
    "call:j1_dup2",
    "result:j1_dup2",
  ]);
});

test("toolIds keep: ids stay as written (two histories compared with each other read alike)", () => {
  const r = importText(JSON.stringify(openaiMessages), "s.json", { format: "openai", toolIds: "keep" });
  assert.deepEqual(toolIds(liveContext(r.entries)), ["call:o1", "result:o1", "call:o1", "result:o1"]);
  assert.match(r.report.warnings[0]!.message, /already used by the call at message 2; kept as written$/);
  // A second result is reported, not refused.
  const twice = [...openaiMessages.slice(0, 3), { role: "tool", tool_call_id: "o1", content: "again" }];
  const r2 = importText(JSON.stringify(twice), "s.json", { format: "openai", toolIds: "keep" });
  assert.match(r2.report.warnings[0]!.message, /^duplicate tool result id "o1"/);
});

test("the suffix never collides with an id the file already uses", () => {
  const msgs = [
    { role: "user", content: "look" },
    oaCall("o1", "ls"),
    { role: "tool", tool_call_id: "o1", content: "a" },
    oaCall("o1_dup2", "pwd"),
    { role: "tool", tool_call_id: "o1_dup2", content: "/w" },
    oaCall("o1", "ls -l"),
    { role: "tool", tool_call_id: "o1", content: "b" },
  ];
  const r = importAs("openai", JSON.stringify(msgs), "s.json");
  assert.deepEqual(toolIds(liveContext(r.entries)), [
    "call:o1",
    "result:o1",
    "call:o1_dup2",
    "result:o1_dup2",
    "call:o1_dup3",
    "result:o1_dup3",
  ]);
});

test("a second result for one call is refused with FILE:LINE (every importer)", () => {
  const openai = [...openaiMessages.slice(0, 3), { role: "tool", tool_call_id: "o1", content: "again" }];
  assert.throws(
    () => importAs("openai", JSON.stringify(openai), "s.json"),
    (e: unknown) =>
      e instanceof FormatError &&
      e.message ===
        's.json: message 4: duplicate tool result id "o1": the call at message 2 already has its result at message 3; remove one of the two results',
  );
  const claude = [...claudeCodeLines.slice(0, 3), ccResult("r1b", "r1", "t1", "again")];
  assert.throws(
    () => importAs("claude-code", jsonl(...claude)),
    /^FormatError: s\.jsonl:4: duplicate tool result id "t1": the call at line 2 already has its result at line 3/,
  );
  const codex = [...codexLines.slice(0, 4), cx({ type: "function_call_output", call_id: "c1", output: "x" })];
  assert.throws(
    () => importAs("codex", jsonl(...codex)),
    /^FormatError: s\.jsonl:5: duplicate tool result id "c1"/,
  );
  // Two results for a call that is not in the history (a transcript cut mid-session) are refused too.
  const orphans = [
    { role: "tool", tool_call_id: "gone", content: "a" },
    { role: "user", content: "hm" },
    { role: "tool", tool_call_id: "gone", content: "b" },
  ];
  assert.throws(
    () => importAs("openai", JSON.stringify(orphans), "s.json"),
    /s\.json: message 3: duplicate tool result id "gone": a result for this id \(whose call is not in the history\) is already at message 1/,
  );
});

test("Claude Code: a line repeated by a resumed session is read once, not as a second call or result", () => {
  const lines = [...claudeCodeLines.slice(0, 3), claudeCodeLines[1], claudeCodeLines[2]];
  const r = importAs("claude-code", jsonl(...lines));
  assert.deepEqual(toolIds(liveContext(r.entries)), ["call:t1", "result:t1"]);
  assert.deepEqual(r.report.warnings, []);
  assert.deepEqual(
    r.report.skipped.map((s) => [s.line, s.by_design, s.reason]),
    [
      [4, true, "repeated line: uuid a1 was read at line 2 (same message)"],
      [5, true, "repeated line: uuid r1 was read at line 3 (same message)"],
    ],
  );
  // The same uuid with another message is a broken line; the first one is kept.
  const changed = { ...claudeCodeLines[2], message: { role: "user", content: "edited" } };
  const r2 = importAs("claude-code", jsonl(...claudeCodeLines.slice(0, 3), changed));
  assert.deepEqual(
    r2.report.skipped.map((s) => [s.line, s.by_design]),
    [[4, false]],
  );
  assert.deepEqual(toolIds(liveContext(r2.entries)), ["call:t1", "result:t1"]);
});

test("pi: an entry written twice (same id) is read once, not as a second call", () => {
  const lines = [...piLines.slice(0, 3), piLines[2], ...piLines.slice(3, 4)];
  const r = importAs("pi", jsonl(...lines));
  assert.deepEqual(toolIds(liveContext(r.entries)), ["call:p1", "result:p1"]);
  assert.deepEqual(r.report.warnings, []);
  assert.deepEqual(
    r.report.skipped.map((s) => [s.line, s.by_design, s.reason]),
    [[4, true, "repeated line: id e2 was read at line 3 (same entry)"]],
  );
  assert.equal(new Set(r.entries.map((e) => e.id)).size, r.entries.length, "entry ids are unique");
});

test("calls of one message with the same id are answered in order; an earlier open call stays unanswered", () => {
  const parallel = [
    { role: "user", content: "look" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "x", type: "function", function: { name: "cat", arguments: '{"f":"a"}' } },
        { id: "x", type: "function", function: { name: "cat", arguments: '{"f":"b"}' } },
      ],
    },
    { role: "tool", tool_call_id: "x", content: "A" },
    { role: "tool", tool_call_id: "x", content: "B" },
  ];
  const r = importAs("openai", JSON.stringify(parallel), "s.json");
  const results = liveContext(r.entries).at(-1)!.content as { tool_use_id: string; content: string }[];
  assert.deepEqual(
    results.map((b) => [b.tool_use_id, b.content]),
    [
      ["x", "A"],
      ["x_dup2", "B"],
    ],
  );
  // An abandoned call, then the same id again: the result after the second call answers the second;
  // the first is closed as abandoned (a plain user message follows it).
  const abandoned = [
    { role: "user", content: "look" },
    oaCall("y", "ls"),
    { role: "user", content: "never mind, list it long" },
    oaCall("y", "ls -l"),
    { role: "tool", tool_call_id: "y", content: "-rw a" },
  ];
  const r2 = importAs("openai", JSON.stringify(abandoned), "s.json");
  assert.deepEqual(toolIds(liveContext(r2.entries)), ["call:y", "result:y", "call:y_dup2", "result:y_dup2"]);
  assert.equal(r2.report.synthetic_results, 1);
});

test("a compaction starts a fresh scope: its replacement repeating earlier calls is not a duplicate", () => {
  const lines = [
    ...codexLines.slice(0, 4),
    {
      type: "compacted",
      timestamp: "t",
      payload: {
        message: "summary",
        replacement_history: [
          { type: "message", role: "user", content: [{ type: "input_text", text: "look" }] },
          { type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: "c1" },
          { type: "function_call_output", call_id: "c1", output: "a.txt" },
        ],
      },
    },
    cx({ type: "function_call", name: "shell", arguments: '{"command":["pwd"]}', call_id: "c2" }),
    cx({ type: "function_call_output", call_id: "c2", output: "/w" }),
  ];
  const r = importAs("codex", jsonl(...lines));
  assert.deepEqual(r.report.warnings, []);
  assert.deepEqual(toolIds(liveContext(r.entries)), ["call:c1", "result:c1", "call:c2", "result:c2"]);
});

test("branches are separate contexts: the same id on two sibling branches is not renamed", () => {
  const lines = [
    { ...cc, type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "look" } },
    ccAssistant("a1", "u1", "msg1", "t1", "ls"),
    ccResult("r1", "a1", "t1", "a.txt"),
    // A retry from u1: another branch that reuses the id.
    ccAssistant("b1", "u1", "msg2", "t1", "ls -a"),
    ccResult("s1", "b1", "t1", ".hidden"),
  ];
  const r = importAs("claude-code", jsonl(...lines));
  assert.deepEqual(r.report.warnings, []);
  assert.deepEqual(toolIds(liveContext(r.entries, "r1")), ["call:t1", "result:t1"]);
  assert.deepEqual(toolIds(liveContext(r.entries, "s1")), ["call:t1", "result:t1"]);
});

test("an imported history whose in-flight call reuses an answered id compacts (it was refused before)", async () => {
  const words = (n: number, seed: number) =>
    Array.from({ length: n }, (_, i) => `w${((i + seed) * 7919) % 10007}`).join(" ");
  const msgs = [
    { role: "user", content: `first task ${words(400, 1)}` },
    oaCall("c1", "ls"),
    { role: "tool", tool_call_id: "c1", content: `out ${words(600, 2)}` },
    ...Array.from({ length: 8 }, (_, k) => [
      oaCall(`e${k}`, `cat ${k}`),
      { role: "tool", tool_call_id: `e${k}`, content: `out ${k} ${words(800, k + 3)}` },
    ]).flat(),
    { role: "assistant", content: "all done" },
    { role: "user", content: "second task" },
    oaCall("c1", "cat a"), // in flight, with the id of the first call
  ];
  const r = importAs("openai", JSON.stringify(msgs), "s.json");
  const live = liveContext(r.entries);
  for (const pruneOnly of [true, false]) {
    const out = await compactMessagesSafe(live, { pruneOnly, target: 300 });
    assert.ok(out.ok, `pruneOnly ${pruneOnly}: ${JSON.stringify(out.ok ? "" : out.error)}`);
    if (out.ok) assert.equal(toolIds(out.replacement).at(-1), "call:c1_dup2");
  }
  assert.equal(r.report.warnings.length, 1);
});

test("the journal reader reports repeated tool ids with their line and keeps the journal as written", () => {
  const text = jsonl(...journalLines, jEntry("e6", "e5", "tool_result", jResult("j1", "again")));
  const { entries, report } = parseJournal(text, "j.jsonl");
  assert.equal(entries.length, 7, JSON.stringify(report.problems));
  assert.deepEqual(toolIds(liveContext(entries)), [
    "call:j1",
    "result:j1",
    "call:j1",
    "result:j1",
    "result:j1",
  ]);
  assert.deepEqual(
    report.problems.map((p) => [p.line, p.reason]),
    [
      [5, 'tool call id "j1" already used by the call at line 3; the journal keeps it as written'],
      [
        7,
        'duplicate tool result id "j1": the call at line 5 already has its result at line 6; the journal keeps it as written',
      ],
    ],
  );
});

test("a repeated line is compared as read: other spacing is the same line, another record is broken (pi, Claude Code)", () => {
  const spaced = (x: unknown) => JSON.stringify(x, null, 1).replace(/\n/g, "");
  const pi = [...piLines.slice(0, 3).map((x) => JSON.stringify(x)), spaced(piLines[2])];
  const r = importAs("pi", pi.join("\n") + "\n");
  assert.deepEqual(
    r.report.skipped.map((s) => [s.line, s.by_design, s.reason]),
    [[4, true, "repeated line: id e2 was read at line 3 (same entry)"]],
  );
  const other = { ...(piLines[2] as Record<string, unknown>), timestamp: "2026-12-01T00:00:09.000Z" };
  const r2 = importAs("pi", jsonl(...piLines.slice(0, 3), other));
  assert.deepEqual(
    r2.report.skipped.map((s) => [s.line, s.by_design, s.reason]),
    [[4, false, "id e2 was read at line 3 with another entry; the first is kept"]],
  );
  const cc = [...claudeCodeLines.slice(0, 3).map((x) => JSON.stringify(x)), spaced(claudeCodeLines[2])];
  const r3 = importAs("claude-code", cc.join("\n") + "\n");
  assert.deepEqual(
    r3.report.skipped.map((s) => [s.line, s.by_design, s.reason]),
    [[4, true, "repeated line: uuid r1 was read at line 3 (same message)"]],
  );
  const changed = {
    ...(claudeCodeLines[2] as Record<string, unknown>),
    message: { role: "user", content: "x" },
  };
  const r4 = importAs("claude-code", jsonl(...claudeCodeLines.slice(0, 3), changed));
  assert.deepEqual(
    r4.report.skipped.map((s) => [s.line, s.reason]),
    [[4, "uuid r1 was read at line 3 with another message; the first is kept"]],
  );
});
