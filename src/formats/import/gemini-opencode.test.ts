/** The Gemini CLI and opencode importers, on small hand-made sessions of the shapes those agents save. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { validateSurvivalContract } from "../../contract/validate.js";
import { liveContext } from "../../journal/tree.js";
import type { JournalEntry, Message } from "../../model/index.js";
import { compactEntries } from "../../route/compact-journal.js";
import { detectFormat, importText } from "../detect.js";
import type { ImportResult } from "../common/types.js";
import { FormatError } from "../common/types.js";

const T = (s: number) => new Date(Date.UTC(2026, 10, 30, 10, 0, s)).toISOString();
/** A long tool output, so that a compaction has something to prune. */
const big = (k: number) => `line ${k}: ` + "lorem ipsum dolor sit amet ".repeat(400);

function geminiCall(id: string, name: string, args: unknown, output: string, error = false) {
  return {
    id,
    name,
    args,
    status: error ? "error" : "success",
    timestamp: T(3),
    result: [
      {
        functionResponse: { id, name, response: error ? { error: output } : { output } },
      },
    ],
    displayName: name,
    resultDisplay: output.slice(0, 20),
  };
}

/** A Gemini CLI saved session: 6 turns of read + answer, with an info and an error notice. */
function geminiSession(): Record<string, unknown> {
  const messages: unknown[] = [];
  for (let k = 1; k <= 6; k++) {
    messages.push({ id: `u${k}`, timestamp: T(k * 5), type: "user", content: `Read part ${k} of the file.` });
    messages.push({
      id: `g${k}`,
      timestamp: T(k * 5 + 1),
      type: "gemini",
      content: `Part ${k} read.`,
      model: "gemini-2.5-pro",
      thoughts: [{ subject: "Reading", description: `Part ${k} next.`, timestamp: T(k * 5) }],
      tokens: { input: 1000 * k, output: 50, cached: 400, thoughts: 20, tool: 0, total: 1000 * k + 70 },
      toolCalls: [geminiCall(`read-${k}`, "read_file", { path: `/p/part${k}.txt` }, big(k))],
    });
  }
  messages.splice(3, 0, { id: "i1", timestamp: T(8), type: "info", content: "Request cancelled." });
  messages.push({ id: "e1", timestamp: T(40), type: "error", content: "Quota exceeded." });
  messages.push({
    id: "g7",
    timestamp: T(41),
    type: "gemini",
    content: "The tests fail.",
    toolCalls: [geminiCall("sh-1", "run_shell_command", { command: "npm test" }, "exit code 1", true)],
  });
  messages.push({ id: "u8", timestamp: T(42), type: "user", content: "Fix them." });
  return { sessionId: "sess-1", projectHash: "ph", startTime: T(0), lastUpdated: T(42), messages };
}

function assertAccounted(r: ImportResult): void {
  const { imported, skipped, total } = r.report;
  assert.equal(imported + skipped.length, total);
}

/** A compaction of the imported session that is made and keeps what the contract protects. */
async function assertCompacts(entries: readonly JournalEntry[]): Promise<void> {
  const original = liveContext(entries);
  const outcome = await compactEntries(entries, { target: 2000 });
  assert.equal(outcome.kind, "compacted", outcome.kind);
  if (outcome.kind !== "compacted") return;
  const verdict = validateSurvivalContract(original, outcome.result.replacement, {
    path: outcome.result.path,
  });
  assert.ok(verdict.valid, verdict.reason ?? undefined);
}

test("Gemini CLI JSON session: detected; every message accounted for; turns, thoughts, tool calls, results and usage mapped", async () => {
  const text = JSON.stringify(geminiSession(), null, 2);
  assert.equal(detectFormat(text, "session-1.json"), "gemini-cli");
  const r = importText(text, "session-1.json");
  assertAccounted(r);
  assert.equal(r.report.format, "gemini-cli");
  assert.equal(r.report.unit, "message");
  assert.equal(r.report.total, 16);
  assert.equal(r.report.imported, 14);
  assert.deepEqual(
    r.report.skipped.map((s) => [s.line, s.by_design, s.reason.replace(/ \(.*/, "")]),
    [
      [4, true, "messages[3]: info record"],
      [14, true, "messages[13]: error record"],
    ],
  );
  assert.equal(r.report.in_flight_calls, 0);
  const header = r.entries[0]!.payload as Record<string, unknown>;
  assert.equal(header.session_id, "sess-1");
  assert.equal(header.created_at, T(0));
  const live = liveContext(r.entries);
  // 6 turns of user / assistant / tool result, the failing call and its result, the last user message.
  assert.equal(live.length, 6 * 3 + 3);
  const strip = (m: Message) => ({ role: m.role, content: m.content });
  assert.deepEqual(strip(live[1]!), {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "**Reading**\nPart 1 next." },
      { type: "text", text: "Part 1 read." },
      { type: "tool_use", id: "read-1", name: "read_file", input: { path: "/p/part1.txt" } },
    ],
  });
  assert.deepEqual(live[1]!.usage, {
    input_tokens: 600,
    output_tokens: 70,
    cache_read_input_tokens: 400,
    scope: "parent",
  });
  assert.deepEqual(strip(live[2]!), {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "read-1", content: big(1) }],
  });
  assert.deepEqual(strip(live[19]!), {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "sh-1", content: "exit code 1", is_error: true }],
  });
  assert.deepEqual(strip(live[20]!), { role: "user", content: [{ type: "text", text: "Fix them." }] });
  await assertCompacts(r.entries);
});

test("Gemini CLI JSONL: the metadata line goes to the header, the last state of a repeated message is imported where it first stood, a call without a result is closed or in flight", async () => {
  const lines = [
    { sessionId: "sess-2", projectHash: "ph", startTime: T(0) },
    { id: "u1", timestamp: T(1), type: "user", content: "List the files." },
    {
      id: "g1",
      timestamp: T(2),
      type: "gemini",
      content: "",
      toolCalls: [{ id: "ls-1", name: "list_directory", args: { path: "/p" }, status: "executing" }],
    },
    { id: "i1", timestamp: T(3), type: "info", content: "Tool approved." },
    {
      id: "g1",
      timestamp: T(2),
      type: "gemini",
      content: "",
      toolCalls: [geminiCall("ls-1", "list_directory", { path: "/p" }, "a.ts\nb.ts")],
    },
    {
      id: "g2",
      timestamp: T(4),
      type: "gemini",
      content: "Checking git.",
      toolCalls: [
        { id: "git-1", name: "run_shell_command", args: { command: "git status" }, status: "cancelled" },
      ],
    },
    { id: "u2", timestamp: T(5), type: "user", content: [{ text: "Stop; run the tests." }] },
    {
      id: "g3",
      timestamp: T(6),
      type: "gemini",
      content: "Running them.",
      toolCalls: [
        { id: "t-1", name: "run_shell_command", args: { command: "npm test" }, status: "executing" },
      ],
    },
  ];
  const text = lines.map((l) => JSON.stringify(l)).join("\n") + "\n\n{broken\n";
  assert.equal(detectFormat(text, "chat.jsonl"), "gemini-cli");
  const r = importText(text, "chat.jsonl");
  assertAccounted(r);
  assert.equal(r.report.unit, "line");
  assert.equal(r.report.total, 10);
  assert.deepEqual(
    r.report.skipped.map((s) => [s.line, s.by_design]),
    [
      [1, true],
      [3, true],
      [4, true],
      [9, true],
      [10, false],
    ],
  );
  assert.match(
    r.report.skipped[1]!.reason,
    /earlier state of message "g1" \(its state at line 5 is imported/,
  );
  assert.equal((r.entries[0]!.payload as Record<string, unknown>).session_id, "sess-2");
  const live = liveContext(r.entries);
  assert.deepEqual(
    live.map((m) => [m.role, m.content.map((b) => b.type).join(",")]),
    [
      ["user", "text"],
      ["assistant", "tool_use"],
      ["user", "tool_result"],
      ["assistant", "text,tool_use"],
      ["user", "tool_result"], // the cancelled call, closed as abandoned
      ["user", "text"],
      ["assistant", "text,tool_use"],
    ],
  );
  assert.equal(r.report.synthetic_results, 1);
  assert.equal(r.report.in_flight_calls, 1);
  assert.equal((live[2]!.content[0] as { content: string }).content, "a.ts\nb.ts");
  // The entry of g1 is read from its last state (line 5): the source line of its blocks.
  assert.ok(r.entries.some((e) => e.id === "m5"));
});

/** An opencode export: a user turn, a two-step assistant turn, a bookkeeping-only message, several more turns. */
function opencodeExport(): Record<string, unknown> {
  const ms = (s: number) => Date.UTC(2026, 10, 30, 10, 0, s);
  const messages: unknown[] = [
    {
      info: { id: "msg_1", sessionID: "ses_1", role: "user", time: { created: ms(1) } },
      parts: [
        { id: "p1", type: "text", text: "Rename loadConfig to readConfig." },
        { id: "p2", type: "file", mime: "text/plain", url: "file:///p/src/config.ts", filename: "config.ts" },
      ],
    },
    {
      info: {
        id: "msg_2",
        sessionID: "ses_1",
        role: "assistant",
        modelID: "claude-sonnet-4",
        providerID: "anthropic",
        time: { created: ms(2) },
        tokens: { input: 900, output: 60, reasoning: 10, cache: { read: 500, write: 100 } },
      },
      parts: [
        { type: "step-start" },
        { type: "reasoning", text: "Read the file first." },
        { type: "text", text: "Reading the file." },
        {
          type: "tool",
          callID: "call_a",
          tool: "read",
          state: { status: "completed", input: { filePath: "/p/src/config.ts" }, output: big(0) },
        },
        {
          type: "tool",
          callID: "call_b",
          tool: "bash",
          state: { status: "error", input: { command: "npm test" }, error: "exit 1" },
        },
        {
          type: "step-finish",
          tokens: { input: 400, output: 30, reasoning: 10, cache: { read: 200, write: 50 } },
        },
        { type: "step-start" },
        { type: "text", text: "Renaming now." },
        {
          type: "tool",
          callID: "call_c",
          tool: "edit",
          state: { status: "completed", input: { filePath: "/p/src/config.ts" }, output: "ok" },
        },
        {
          type: "step-finish",
          tokens: { input: 500, output: 30, reasoning: 0, cache: { read: 300, write: 50 } },
        },
        { type: "patch", hash: "abc", files: ["/p/src/config.ts"] },
      ],
    },
    {
      info: { id: "msg_3", sessionID: "ses_1", role: "assistant", time: { created: ms(3) } },
      parts: [{ type: "step-start" }, { type: "snapshot", snapshot: "x" }],
    },
  ];
  for (let k = 1; k <= 5; k++) {
    messages.push({
      info: { id: `msg_u${k}`, sessionID: "ses_1", role: "user", time: { created: ms(10 + k) } },
      parts: [{ type: "text", text: `Read part ${k}.` }],
    });
    messages.push({
      info: { id: `msg_a${k}`, sessionID: "ses_1", role: "assistant", time: { created: ms(10 + k) } },
      parts: [
        { type: "step-start" },
        {
          type: "tool",
          callID: `r${k}`,
          tool: "read",
          state: { status: "completed", input: { filePath: `/p/part${k}` }, output: big(k) },
        },
        { type: "step-finish" },
        { type: "step-start" },
        { type: "text", text: `Part ${k} read.` },
        { type: "step-finish" },
      ],
    });
  }
  messages.push({
    info: { id: "msg_last", sessionID: "ses_1", role: "assistant", time: { created: ms(30) } },
    parts: [
      { type: "text", text: "Running the tests." },
      {
        type: "tool",
        callID: "call_z",
        tool: "bash",
        state: { status: "running", input: { command: "npm test" } },
      },
    ],
  });
  return {
    info: { id: "ses_1", title: "Rename", directory: "/p", time: { created: ms(0), updated: ms(30) } },
    messages,
  };
}

test("opencode export: detected; every message accounted for; steps split in the order the model saw them, tool errors and in-flight calls kept", async () => {
  const text = JSON.stringify(opencodeExport(), null, 2);
  assert.equal(detectFormat(text, "ses_1.json"), "opencode");
  const r = importText(text, "ses_1.json");
  assertAccounted(r);
  assert.equal(r.report.format, "opencode");
  assert.equal(r.report.total, 14);
  assert.equal(r.report.imported, 13);
  assert.deepEqual(
    r.report.skipped.map((s) => [s.line, s.by_design]),
    [[3, true]],
  );
  assert.deepEqual(r.report.notes, [
    "parts not imported (bookkeeping, attachments; not conversation text): 1 file, 13 step-start, 12 step-finish, 1 patch, 1 snapshot",
  ]);
  assert.equal(r.report.in_flight_calls, 1);
  assert.equal(r.report.synthetic_results, 0);
  assert.equal((r.entries[0]!.payload as Record<string, unknown>).session_id, "ses_1");
  const live = liveContext(r.entries);
  const strip = (m: Message) => ({ role: m.role, content: m.content });
  assert.deepEqual(live.slice(0, 5).map(strip), [
    { role: "user", content: [{ type: "text", text: "Rename loadConfig to readConfig." }] },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Read the file first." },
        { type: "text", text: "Reading the file." },
        { type: "tool_use", id: "call_a", name: "read", input: { filePath: "/p/src/config.ts" } },
        { type: "tool_use", id: "call_b", name: "bash", input: { command: "npm test" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "call_a", content: big(0) },
        { type: "tool_result", tool_use_id: "call_b", content: "exit 1", is_error: true },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Renaming now." },
        { type: "tool_use", id: "call_c", name: "edit", input: { filePath: "/p/src/config.ts" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "call_c", content: "ok" }] },
  ]);
  // Each step's request has its own usage.
  assert.deepEqual(live[1]!.usage, {
    input_tokens: 400,
    output_tokens: 40,
    cache_read_input_tokens: 200,
    cache_creation_input_tokens: 50,
    scope: "parent",
  });
  assert.equal(live[3]!.usage?.input_tokens, 500);
  assert.deepEqual(
    live[live.length - 1]!.content.map((b) => b.type),
    ["text", "tool_use"],
  );
  await assertCompacts(r.entries);
});

test("Gemini CLI JSONL: a $set message list replaces the messages before it; later records add to it or update it by id; every line accounted for", () => {
  const lines = [
    { sessionId: "sess-3", projectHash: "ph", startTime: T(0), kind: "main" },
    { id: "u0", timestamp: T(1), type: "user", content: "A question that was rewound." },
    { id: "g0", timestamp: T(2), type: "gemini", content: "An answer that was rewound." },
    {
      $set: {
        messages: [
          {
            id: "u1",
            timestamp: T(3),
            type: "user",
            content: [{ text: "<session_context>tree</session_context>" }],
          },
          { id: "g1", timestamp: T(4), type: "gemini", content: "Ready.", tokens: { input: 10, output: 2 } },
        ],
      },
    },
    { $set: { lastUpdated: T(5) } },
    { id: "u2", timestamp: T(6), type: "user", content: "Go on." },
    { id: "g1", timestamp: T(4), type: "gemini", content: "Ready!", tokens: { input: 10, output: 3 } },
    { id: "g2", timestamp: T(7), type: "gemini", content: "Going on." },
  ];
  const text = lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
  assert.equal(detectFormat(text, "session.jsonl"), "gemini-cli");
  const r = importText(text, "session.jsonl");
  assertAccounted(r);
  assert.equal(r.report.total, 8);
  assert.deepEqual(
    r.report.skipped.map((s) => [s.line, s.by_design, s.reason]),
    [
      [1, true, "session metadata (recorded in the header)"],
      [2, true, "replaced by the message list of line 4"],
      [3, true, "replaced by the message list of line 4"],
      [5, true, "session metadata update (recorded in the header)"],
    ],
  );
  assert.equal((r.entries[0]!.payload as Record<string, unknown>).lastUpdated, T(5));
  const live = liveContext(r.entries);
  assert.deepEqual(
    live.map((m) => [m.role, (m.content[0] as { text: string }).text]),
    [
      ["user", "<session_context>tree</session_context>"],
      ["assistant", "Ready!"],
      ["user", "Go on."],
      ["assistant", "Going on."],
    ],
  );
  assert.equal(live[1]!.usage?.output_tokens, 3);
  // u1 is read from the snapshot (line 4), g1 from its later state (line 7), where it stood.
  assert.deepEqual(
    r.entries.map((e) => e.id),
    ["header", "m4", "m7", "m6", "m8"],
  );
});

test("an opencode export saved with the status line some versions print first is still detected and read", () => {
  const text = "Exporting session: ses_1" + JSON.stringify(opencodeExport(), null, 2);
  assert.equal(detectFormat(text, "ses_1.json"), "opencode");
  const r = importText(text, "ses_1.json");
  assertAccounted(r);
  assert.equal(r.report.imported, 13);
  assert.match(r.report.notes.join("\n"), /status line opencode printed/);
});

test("forcing gemini-cli or opencode on another agent's file is a one-line error naming the format it looks like", () => {
  const openai = JSON.stringify([
    { role: "user", content: "hi" },
    { role: "assistant", content: "hello" },
  ]);
  for (const format of ["gemini-cli", "opencode"] as const)
    assert.throws(
      () => importText(openai, "o.json", { format }),
      (e: unknown) =>
        e instanceof FormatError &&
        new RegExp(`^o\\.json: .*it looks like an openai session \\(give --format openai`).test(e.message) &&
        !e.message.includes("\n"),
    );
  // And the other way round: an opencode export forced to anthropic names opencode.
  assert.throws(
    () => importText(JSON.stringify(opencodeExport()), "ses.json", { format: "anthropic" }),
    (e: unknown) => e instanceof FormatError && /it looks like an opencode session/.test(e.message),
  );
});
