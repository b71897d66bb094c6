/** Unit tests of the importers' rules, the repair and the shape check, on small hand-made inputs. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { activePath, liveContext } from "../journal/tree.js";
import type { Message } from "../model/index.js";
import { ABANDONED_RESULT_TEXT, closeAbandonedCalls } from "./common/abandoned.js";
import { isCheckpoint as isCheckpointMessage } from "../contract/classify.js";
import { checkProviderShape } from "./export/check-shape.js";
import { detectFormat, importFile, importText } from "./detect.js";
import { toAnthropicRequest } from "./export/anthropic.js";
import { toOpenAIRequest } from "./export/openai.js";
import { FormatError } from "./common/types.js";
import { FORMAT_NAMES } from "./registry.js";
import { FORMAT_NAME_LIST } from "./common/format-names.js";

const jsonl = (...objs: unknown[]) => objs.map((o) => JSON.stringify(o)).join("\n") + "\n";
const call = (id: string): Message => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "bash", input: { command: "ls" } }],
});
const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });

test("an abandoned call is closed synthetically right after its message; an in-flight call stays open", () => {
  const r = closeAbandonedCalls([user("go"), call("a"), user("stop, do something else"), call("b")]);
  assert.equal(r.closed, 1);
  assert.equal(r.inFlight, 1);
  assert.deepEqual(r.value[2]!.content, [
    {
      type: "tool_result",
      tool_use_id: "a",
      content: ABANDONED_RESULT_TEXT,
      is_error: true,
      synthetic: true,
    },
  ]);
  assert.equal(r.value[3]!.content[0]!.type, "text");
  assert.equal(r.value.length, 5);
  assert.equal(r.value[4]!.content[0]!.type, "tool_use");
});

test("importers close abandoned calls in the journal tree (OpenAI array)", () => {
  const text = JSON.stringify([
    { role: "user", content: "list files" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } }],
    },
    { role: "user", content: "never mind" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c2", type: "function", function: { name: "bash", arguments: "not json" } }],
    },
  ]);
  const r = importText(text, "x.json");
  assert.equal(r.report.format, "openai");
  assert.equal(r.report.synthetic_results, 1);
  assert.equal(r.report.in_flight_calls, 1);
  const live = liveContext(r.entries);
  assert.deepEqual(
    live.map((m) => m.content[0]!.type),
    ["text", "tool_use", "tool_result", "text", "tool_use"],
  );
  assert.equal(
    (live[4]!.content[0] as { input: unknown }).input,
    "not json",
    "unparsable arguments are kept raw",
  );
  // The in-flight call is left out of the request; the abandoned one keeps its synthetic result.
  const a = toAnthropicRequest(live);
  assert.deepEqual(checkProviderShape(a, "anthropic"), { ok: true });
  assert.equal(a.messages.length, 4, "the synthetic result and the user's next words stay two messages");
});

test("checkProviderShape rejects bad bodies and names the message", () => {
  const noResult = {
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "x", input: {} }] },
      { role: "user", content: "next" },
    ],
  };
  const r1 = checkProviderShape(noResult, "anthropic");
  assert.equal(r1.ok, false);
  assert.match((r1 as { reason: string }).reason, /messages\[2\]/);
  const twoUsers = {
    messages: [
      { role: "user", content: "a" },
      { role: "user", content: "b" },
    ],
  };
  // The Messages API combines consecutive same-role messages into one turn (the SDK's own doc says so).
  assert.deepEqual(checkProviderShape(twoUsers, "anthropic"), { ok: true });
  const firstAssistant = {
    messages: [
      { role: "assistant", content: "hello" },
      { role: "user", content: "b" },
    ],
  };
  assert.match(
    (checkProviderShape(firstAssistant, "anthropic") as { reason: string }).reason,
    /messages\[0\]: the first message must be from the user/,
  );
  assert.match((checkProviderShape(firstAssistant, "openai") as { reason: string }).reason, /messages\[0\]/);
  const openaiNoResult = {
    messages: [
      { role: "user", content: "a" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }],
      },
      { role: "user", content: "b" },
    ],
  };
  assert.match(
    (checkProviderShape(openaiNoResult, "openai") as { reason: string }).reason,
    /messages\[2\]: tool call "c"/,
  );
  const withMeta = { messages: [{ role: "user", content: "a", meta: {} }] };
  assert.equal(checkProviderShape(withMeta, "openai").ok, false);
  const unsigned = {
    messages: [
      { role: "user", content: "a" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "hm" },
          { type: "text", text: "x" },
        ],
      },
    ],
  };
  assert.match(
    (checkProviderShape(unsigned, "anthropic") as { reason: string }).reason,
    /messages\[1\]\.content\[0\]: thinking block without a signature/,
  );
});

test("exporters: Anthropic keeps message boundaries (the API combines same-role turns) and signed thinking byte for byte; OpenAI drops thinking", () => {
  const msgs: Message[] = [
    { role: "system", content: [{ type: "text", text: "be brief" }] },
    { role: "assistant", content: [{ type: "text", text: "resuming" }] },
    {
      role: "assistant_interrupted",
      content: [
        { type: "thinking", thinking: "t", signature: "SIG==\u00e9" },
        { type: "redacted_thinking", data: "opaque" },
        { type: "tool_use", id: "t1", name: "read", input: { path: "a" } },
      ],
      meta: { x: 1 },
      usage: { input_tokens: 5 },
    },
    { role: "user", content: [{ type: "text", text: "also this" }] },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "t1",
          content: "file",
          content_blocks: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }],
        },
      ],
    },
  ];
  const a = toAnthropicRequest(msgs);
  assert.deepEqual(checkProviderShape(a, "anthropic"), { ok: true });
  assert.deepEqual(a.system, [{ type: "text", text: "be brief" }]);
  assert.deepEqual(
    a.messages.map((m) => m.role),
    ["user", "assistant", "assistant", "user", "user"],
  );
  assert.deepEqual(a.messages[2]!.content[0], { type: "thinking", thinking: "t", signature: "SIG==\u00e9" });
  assert.deepEqual(a.messages[2]!.content[1], { type: "redacted_thinking", data: "opaque" });
  assert.equal(a.messages[3]!.content[0]!.type, "tool_result", "the results right after their calls");
  assert.deepEqual(a.messages[4]!.content, [{ type: "text", text: "also this" }]);
  assert.deepEqual((a.messages[3]!.content[0] as { content: unknown }).content, [
    { type: "text", text: "file" },
    { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
  ]);
  const o = toOpenAIRequest(msgs);
  assert.deepEqual(checkProviderShape(o, "openai"), { ok: true });
  assert.deepEqual(
    o.messages.map((m) => m.role),
    ["system", "user", "assistant", "assistant", "tool", "user"],
  );
  assert.ok(!JSON.stringify(o).includes("thinking"));
});

test("a truncated last line is reported with its number; earlier lines are read", () => {
  const good = {
    type: "response_item",
    timestamp: "2025-01-01T00:00:00Z",
    payload: { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
  };
  const text =
    JSON.stringify({
      type: "session_meta",
      payload: { id: "s", timestamp: "2025-01-01T00:00:00Z", cwd: "/w" },
    }) +
    "\n" +
    JSON.stringify(good) +
    "\n" +
    JSON.stringify(good).slice(0, 40);
  const r = importText(text, "rollout.jsonl");
  assert.equal(r.report.format, "codex");
  assert.deepEqual(
    r.report.skipped.map((s) => [s.line, s.by_design]),
    [[3, false]],
  );
  assert.match(r.report.skipped[0]!.reason, /truncated last line/);
  assert.equal(liveContext(r.entries).length, 1);
});

test("Claude Code: split assistant lines join into one entry, interleaved results into one, children follow the join", () => {
  const base = { sessionId: "S", cwd: "/w", timestamp: "2026-01-01T00:00:00Z", isSidechain: false };
  const text = jsonl(
    { ...base, type: "progress", uuid: "p0", parentUuid: null },
    { ...base, type: "user", uuid: "u1", parentUuid: "p0", message: { role: "user", content: "check it" } },
    {
      ...base,
      type: "assistant",
      uuid: "a1",
      parentUuid: "u1",
      message: {
        id: "msg1",
        role: "assistant",
        model: "m",
        content: [{ type: "thinking", thinking: "x", signature: "s1" }],
        usage: { input_tokens: 3, output_tokens: 1 },
      },
    },
    {
      ...base,
      type: "assistant",
      uuid: "a2",
      parentUuid: "a1",
      message: {
        id: "msg1",
        role: "assistant",
        model: "m",
        content: [{ type: "tool_use", id: "t1", name: "Bash", input: {} }],
      },
    },
    {
      ...base,
      type: "user",
      uuid: "r1",
      parentUuid: "a2",
      message: {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "t1",
            content: [
              { type: "text", text: "one" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: "QQ==" } },
            ],
          },
        ],
      },
    },
    {
      ...base,
      type: "assistant",
      uuid: "a3",
      parentUuid: "r1",
      message: {
        id: "msg1",
        role: "assistant",
        model: "m",
        content: [{ type: "tool_use", id: "t2", name: "Bash", input: {} }],
        usage: { input_tokens: 3, output_tokens: 9 },
      },
    },
    {
      ...base,
      type: "user",
      uuid: "r2",
      parentUuid: "a3",
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: "two" }] },
    },
    {
      ...base,
      type: "user",
      uuid: "s1",
      parentUuid: null,
      isSidechain: true,
      message: { role: "user", content: "sub-agent task" },
    },
    {
      ...base,
      type: "assistant",
      uuid: "a4",
      parentUuid: "r2",
      message: { id: "msg2", role: "assistant", model: "m", content: [{ type: "text", text: "done" }] },
    },
    {
      ...base,
      type: "system",
      subtype: "compact_boundary",
      uuid: "cb",
      parentUuid: null,
      logicalParentUuid: "a4",
      compactMetadata: { trigger: "manual", preTokens: 1000 },
    },
    {
      ...base,
      type: "user",
      uuid: "cs",
      parentUuid: "cb",
      isCompactSummary: true,
      message: {
        role: "user",
        content:
          "This session is being continued from a previous conversation that ran out of context. Summary: ...",
      },
    },
    { ...base, type: "user", uuid: "u2", parentUuid: "cs", message: { role: "user", content: "go on" } },
  );
  const r = importText(text, "s.jsonl");
  assert.equal(r.report.format, "claude-code");
  assert.equal(r.report.total, 12);
  assert.deepEqual(
    r.report.skipped.map((s) => s.line),
    [1],
  );
  const path = activePath(r.entries);
  assert.deepEqual(
    path.map((e) => e.id),
    ["header", "u1", "a1", "r1", "a4", "cb", "u2"],
  );
  const a1 = path[2]!.payload as Message;
  assert.deepEqual(
    a1.content.map((b) => b.type),
    ["thinking", "tool_use", "tool_use"],
  );
  assert.equal(a1.usage?.output_tokens, 9);
  assert.equal(a1.usage?.scope, "parent");
  const r1 = path[3]!.payload as Message;
  assert.deepEqual(
    r1.content.map((b) => (b as { tool_use_id: string }).tool_use_id),
    ["t1", "t2"],
  );
  assert.deepEqual((r1.content[0] as { content_blocks: unknown }).content_blocks, [
    { type: "image_url", image_url: { url: "data:image/png;base64,QQ==" } },
  ]);
  const sidechain = r.entries.find((e) => e.id === "s1")!;
  assert.equal(sidechain.parent_id, "header");
  const compaction = path[5]!;
  assert.equal(compaction.kind, "compaction");
  if (compaction.kind === "compaction") {
    assert.equal(compaction.payload.trigger, "manual");
    assert.equal(compaction.payload.tokens_before, 1000);
    assert.equal(compaction.payload.source_agent, "claude-code");
  }
  const live = liveContext(r.entries);
  assert.equal(live.length, 2);
  assert.ok(isCheckpointMessage(live[0]!));
});

test("Codex: encrypted reasoning kept byte for byte; pi: compaction checkpoint carries pi's marker", () => {
  const blob = "gAAAAB+/=sk-notakey\u00e9";
  const codex = jsonl(
    { type: "session_meta", timestamp: "t", payload: { id: "s", timestamp: "t", cwd: "/w" } },
    {
      type: "response_item",
      timestamp: "t",
      payload: { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
    },
    {
      type: "response_item",
      timestamp: "t",
      payload: {
        type: "reasoning",
        summary: [{ type: "summary_text", text: "**Plan**" }],
        encrypted_content: blob,
      },
    },
    {
      type: "response_item",
      timestamp: "t",
      payload: { type: "message", role: "assistant", content: [{ type: "output_text", text: "hello" }] },
    },
    { type: "compacted", timestamp: "t", payload: { message: "summary text" } },
  );
  const c = importText(codex, "rollout.jsonl");
  const asst = c.entries.find((e) => e.kind === "assistant")!.payload as Message;
  assert.deepEqual(
    asst.content.map((b) => b.type),
    ["thinking", "redacted_thinking", "text"],
  );
  assert.equal((asst.content[1] as { data: string }).data, blob);
  const live = liveContext(c.entries);
  assert.deepEqual(
    live.map((m) => (m.content[0] as { text: string }).text.slice(0, 20)),
    ["hi", "Another language mod"],
  );
  assert.ok(isCheckpointMessage(live[1]!));

  const pi = jsonl(
    { type: "session", id: "p", timestamp: "t", cwd: "/w" },
    { type: "message", timestamp: "t", message: { role: "user", content: [{ type: "text", text: "a" }] } },
    {
      type: "message",
      timestamp: "t",
      message: {
        role: "assistant",
        content: [{ type: "text", text: "b" }],
        usage: { input: 1, output: 2, cacheRead: 3, cacheWrite: 4 },
      },
    },
    { type: "thinking_level_change", timestamp: "t", thinkingLevel: "high" },
    { type: "message", timestamp: "t", message: { role: "user", content: [{ type: "text", text: "c" }] } },
    { type: "compaction", timestamp: "t", summary: "S", firstKeptEntryIndex: 4, tokensBefore: 10 },
    {
      type: "message",
      timestamp: "t",
      message: {
        role: "bashExecution",
        command: "ls",
        output: "x",
        exitCode: 1,
        cancelled: false,
        truncated: false,
      },
    },
  );
  const p = importText(pi, "session.jsonl");
  assert.equal(p.report.format, "pi");
  const pl = liveContext(p.entries);
  assert.ok(isCheckpointMessage(pl[0]!));
  assert.equal(
    (pl[0]!.content[0] as { text: string }).text,
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\nS\n</summary>",
  );
  assert.deepEqual(
    pl.slice(1).map((m) => (m.content[0] as { text: string }).text),
    ["c", "Ran `ls`\n```\nx\n```\n\nCommand exited with code 1"],
  );
  assert.deepEqual(
    p.report.skipped.map((s) => [s.line, s.by_design]),
    [[4, true]],
  );
});

test("detection errors list the formats tried; a missing file gets a one-line error naming it", async () => {
  assert.throws(
    () => detectFormat("hello world\n", "notes.txt"),
    (e: unknown) =>
      e instanceof FormatError &&
      e.message === `notes.txt: not a known session format (tried: ${FORMAT_NAMES.join(", ")})`,
  );
  await assert.rejects(
    importFile("/nonexistent/dir/s.jsonl"),
    (e: unknown) => e instanceof FormatError && e.message === "/nonexistent/dir/s.jsonl: no such file",
  );
  assert.equal(
    detectFormat(JSON.stringify({ system: "s", messages: [{ role: "user", content: "x" }] }), "b.json"),
    "anthropic",
  );
  assert.equal(
    detectFormat(
      JSON.stringify([
        { role: "user", content: "x" },
        { role: "assistant", content: [{ type: "tool_use", id: "a", name: "n", input: {} }] },
      ]),
      "b.json",
    ),
    "anthropic",
  );
});

test("importing an Anthropic body splits a checkpoint merged behind other user text back into its own message", async () => {
  const { importText } = await import("./detect.js");
  const { liveContext } = await import("../journal/tree.js");
  const { isCheckpoint: isCp } = await import("../contract/classify.js");
  const body = {
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "older request" },
          {
            type: "text",
            text: "[compact-safe checkpoint]\nsummary\n\n## Coverage\nsummary; last round kept: 0 messages (0 tool results, 0 assistant); anchors 0 chars",
          },
          { type: "text", text: "latest request" },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "ok" }] },
    ],
  };
  const live = liveContext(importText(JSON.stringify(body), "b.json", { format: "anthropic" }).entries);
  assert.deepEqual(
    live.map((m) => m.content.map((b) => (b as { text: string }).text)),
    [
      ["older request"],
      [
        "[compact-safe checkpoint]\nsummary\n\n## Coverage\nsummary; last round kept: 0 messages (0 tool results, 0 assistant); anchors 0 chars",
      ],
      ["latest request"],
      ["ok"],
    ],
  );
  assert.equal(live.filter(isCp).length, 1);
});

test("Codex: a shell output that exited non-zero becomes an error result", async () => {
  const { codexExitCode } = await import("../wire/responses.js");
  assert.equal(codexExitCode('{"output":"boom\\n","metadata":{"exit_code":2,"duration_seconds":0.1}}'), 2);
  assert.equal(codexExitCode('{"output":"fine","metadata":{"exit_code":0}}'), 0);
  assert.equal(codexExitCode("Exit code: 127\nWall time: 0.1 seconds\nOutput:\nnot found"), 127);
  assert.equal(codexExitCode("plain text"), undefined);
  const { importText } = await import("./detect.js");
  const lines = [
    {
      type: "session_meta",
      timestamp: "2025-01-01T00:00:00Z",
      payload: { id: "s", timestamp: "2025-01-01T00:00:00Z", cwd: "/w" },
    },
    {
      type: "response_item",
      payload: { type: "message", role: "user", content: [{ type: "input_text", text: "run it" }] },
    },
    {
      type: "response_item",
      payload: { type: "function_call", name: "shell", arguments: '{"command":["false"]}', call_id: "c1" },
    },
    {
      type: "response_item",
      payload: {
        type: "function_call_output",
        call_id: "c1",
        output: '{"output":"","metadata":{"exit_code":1}}',
      },
    },
    {
      type: "response_item",
      payload: { type: "function_call", name: "shell", arguments: '{"command":["true"]}', call_id: "c2" },
    },
    {
      type: "response_item",
      payload: {
        type: "function_call_output",
        call_id: "c2",
        output: '{"output":"","metadata":{"exit_code":0}}',
      },
    },
  ];
  const { entries } = importText(lines.map((l) => JSON.stringify(l)).join("\n") + "\n", "r.jsonl", {
    format: "codex",
  });
  const results = entries.flatMap((e) =>
    e.kind === "header" || e.kind === "compaction" || e.kind === "branch_summary"
      ? []
      : (e.payload as Message).content.filter((b) => b.type === "tool_result"),
  ) as { tool_use_id: string; is_error?: boolean }[];
  assert.deepEqual(
    results.map((r) => [r.tool_use_id, r.is_error === true]),
    [
      ["c1", true],
      ["c2", false],
    ],
  );
});

test("importFile refuses a FIFO, a device or a folder at once, naming it", { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "cs-formats-"));
  try {
    const fifo = join(dir, "s.fifo");
    execFileSync("mkfifo", [fifo]);
    for (const [path, why] of [
      [fifo, "is a named pipe (FIFO), not a regular file"],
      ["/dev/null", "is a character device, not a regular file"],
      [dir, "is a folder, not a file"],
    ] as const) {
      await assert.rejects(
        importFile(path),
        (e: unknown) => e instanceof FormatError && e.message === `${path}: ${why}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("hostile nesting: a JSONL line over the limit is a broken line with its number; a JSON document an error naming file and line", () => {
  const deep = "[".repeat(20_000) + "1" + "]".repeat(20_000);
  const base = { sessionId: "s", cwd: "/x", timestamp: "2025-01-01T00:00:00Z" };
  const cc =
    jsonl({ ...base, type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "hi" } }) +
    JSON.stringify({
      ...base,
      type: "assistant",
      uuid: "u2",
      parentUuid: "u1",
      message: { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "X", input: "@" }] },
    }).replace('"@"', deep) +
    "\n" +
    jsonl({
      ...base,
      type: "user",
      uuid: "u3",
      parentUuid: "u1",
      message: { role: "user", content: "again" },
    });
  const r = importText(cc, "cc.jsonl", { format: "claude-code" });
  const broken = r.report.skipped.filter((s) => !s.by_design);
  assert.deepEqual(
    broken.map((s) => s.line),
    [2],
  );
  assert.match(broken[0]!.reason, /^JSON nested deeper than 512 levels \(the limit\), at column \d+$/);
  assert.doesNotThrow(() => JSON.stringify(r.entries));

  const body = JSON.stringify(
    { messages: [{ role: "user", content: [{ type: "text", text: "@" }] }] },
    null,
    1,
  );
  assert.throws(
    () => importText(body.replace('"@"', deep), "deep.json", { format: "anthropic" }),
    (e: unknown) =>
      e instanceof FormatError &&
      /^deep\.json:8: JSON nested deeper than 512 levels \(the limit\)$/.test(e.message),
  );
  // Detected (not forced): the same error rather than "not a known session format".
  assert.throws(
    () => importText(body.replace('"@"', deep), "deep.json"),
    (e: unknown) => e instanceof FormatError && /^deep\.json:8: JSON nested deeper than 512/.test(e.message),
  );
});

test("hostile nesting: tool arguments nested too deep stay the string they are (OpenAI and Codex importers)", () => {
  const args = "[".repeat(20_000) + "]".repeat(20_000);
  const doc = JSON.stringify([
    { role: "user", content: "hi" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "x", arguments: args } }],
    },
    { role: "tool", tool_call_id: "c1", content: "ok" },
    { role: "assistant", content: "done" },
  ]);
  const r = importText(doc, "o.json", { format: "openai" });
  const live = liveContext(r.entries);
  const use = live.flatMap((m) => m.content).find((b) => b.type === "tool_use") as { input: unknown };
  assert.equal(use.input, args);
  assert.doesNotThrow(() => JSON.stringify(r.entries));
});

test("a text block without text is refused at import with the path named, whatever the format", () => {
  const doc = JSON.stringify({
    messages: [
      { role: "user", content: [{ type: "text", text: "hi" }] },
      { role: "assistant", content: [{ type: "text" }] },
    ],
  });
  assert.throws(
    () => importText(doc, "a.json", { format: "anthropic" }),
    (e: unknown) =>
      e instanceof FormatError && e.message === 'a.json: message 2: content[0] (text): missing "text"',
  );
});

test("the exporters validate their messages: a block without its text, or content_blocks nested past the limit, is a ModelError naming the path", () => {
  const bad: Message[] = [user("hi"), { role: "assistant", content: [{ type: "text" } as never] }];
  for (const exporter of [toAnthropicRequest, toOpenAIRequest])
    assert.throws(
      () => exporter(bad),
      (e: unknown) => e instanceof Error && e.message === 'messages[1].content[0] (text): missing "text"',
    );
  let block: Record<string, unknown> = { type: "text", text: "x" };
  for (let i = 0; i < 20_000; i++)
    block = { type: "tool_result", tool_use_id: "t", content: "", content_blocks: [block] };
  const deep: Message[] = [
    user("hi"),
    { role: "assistant", content: [{ type: "tool_use", id: "t", name: "X", input: {} }] },
    { role: "user", content: [block as never] },
  ];
  assert.throws(
    () => toAnthropicRequest(deep),
    (e: unknown) =>
      e instanceof Error && e.name === "ModelError" && e.message.startsWith("messages[2].content[0]"),
  );
});

test("Codex 0.169's world_state and token_usage_record lines are runtime records, skipped by design", () => {
  const r = importText(
    jsonl(
      { type: "session_meta", timestamp: "t", payload: { id: "s", timestamp: "t", cwd: "/w" } },
      {
        type: "response_item",
        timestamp: "t",
        payload: { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
      },
      { type: "world_state", timestamp: "t", payload: { full: true, state: { agents_md: {} } } },
      {
        type: "token_usage_record",
        timestamp: "t",
        payload: { thread_id: "s", response_id: "r", usage: { input_tokens: 1, output_tokens: 1 } },
      },
    ),
    "rollout.jsonl",
  );
  assert.equal(r.report.format, "codex");
  assert.deepEqual(
    r.report.skipped.map((s) => [s.line, s.by_design]),
    [
      [3, true],
      [4, true],
    ],
  );
});

test("Codex 0.169: the answer to Codex's own compaction request (recorded before the compacted item) is not conversation", () => {
  const at = "2026-01-01T00:00:00.000Z";
  let ordinal: number | undefined;
  // Legacy lines, and the paginated lines of a rollout Codex 0.169 started (an ordinal after the timestamp).
  const line = (type: string, payload: unknown) =>
    ordinal === undefined
      ? { timestamp: at, type, payload }
      : { timestamp: at, ordinal: ordinal++, type, payload };
  const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
  const said = (text: string) => ({
    type: "message",
    role: "assistant",
    content: [{ type: "output_text", text }],
  });
  const local = said("SUMMARY OF THE FAKE");
  const remote = { type: "compaction", encrypted_content: "ENCRYPTED SUMMARY OF THE FAKE" };
  for (const [answer, first] of [
    [local, undefined],
    [remote, undefined],
    [local, 0],
  ] as const) {
    ordinal = first;
    const r = importText(
      jsonl(
        line("session_meta", { id: "s", timestamp: at, cwd: "/w" }),
        line("response_item", user("do X")),
        line("response_item", { type: "reasoning", summary: [], encrypted_content: "E1" }),
        line("response_item", said("did X")),
        line("token_usage_record", { response_id: "resp_turn", usage: {} }),
        line("event_msg", { type: "task_started" }),
        line("response_item", answer),
        line("token_usage_record", { response_id: "resp_cmp", usage: {} }),
        line("compacted", {
          message: "Another language model started to solve this problem ... SUMMARY OF THE FAKE",
          replacement_history: [user("do X"), user("Another language model ... SUMMARY OF THE FAKE")],
          compaction_response_id: "resp_cmp",
        }),
        line("response_item", user("continue")),
        line("response_item", said("ok")),
        line("token_usage_record", { response_id: "resp_2", usage: {} }),
      ),
      "rollout.jsonl",
    );
    const answerLine = r.report.skipped.find((s) => s.line === 7);
    assert.equal(answerLine?.by_design, true, String(answer.type));
    assert.match(answerLine!.reason, /answer to Codex's compaction request/);
    const before = JSON.stringify(r.entries.filter((e) => e.kind !== "compaction"));
    assert.ok(!before.includes("OF THE FAKE"), String(answer.type));
    assert.ok(before.includes("did X") && before.includes('"ok"'));
  }
});

test("the format table's names are common/format-names.ts's list, in its order", () => {
  assert.deepEqual([...FORMAT_NAMES], [...FORMAT_NAME_LIST]);
});
