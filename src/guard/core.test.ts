/**
 * The guard's core on small synthetic sessions: Codex (Responses) and pi
 * (Chat) compactions judged and repaired, a splice that would break the wire,
 * the agents' summarization requests, side requests, and what is passed
 * untouched. The Claude Code cases on a corpus session are in corpus.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CODEX_SUMMARY_PREFIX } from "../formats/import/codex.js";
import { validateSurvivalContract } from "../contract/validate.js";
import { createGuardCore } from "./core.js";
import { readWire } from "./reading/wires.js";
import { messagesOf } from "./reading/history.js";
import { ANCHORS_HEADING } from "./judging/splice.js";
import { answerOn } from "./judging/answer.js";
import type { GuardOutcome, WireRequest } from "./types.js";

const TOOLS = [{ name: "Bash", description: "run", input_schema: { type: "object" } }];

const docOf = (o: GuardOutcome | WireRequest): Record<string, unknown> => JSON.parse(o.body.toString("utf8"));

// ---------------------------------------------------------------- small synthetic sessions

function responsesRequest(input: unknown[], headers: Record<string, string> = {}): WireRequest {
  const body = {
    model: "gpt-x",
    instructions: "You are Codex.",
    input,
    tools: [{ type: "function", name: "shell" }],
    stream: true,
  };
  return {
    method: "POST",
    url: "/v1/responses",
    headers: { session_id: "conv-1", originator: "codex_cli_rs", ...headers },
    body: Buffer.from(JSON.stringify(body)),
  };
}
const rUser = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
const rCall = (id: string) => ({
  type: "function_call",
  call_id: id,
  name: "shell",
  arguments: JSON.stringify({ cmd: id }),
});
const rOut = (id: string, output = `out ${id}`) => ({ type: "function_call_output", call_id: id, output });
const rSay = (text: string) => ({
  type: "message",
  role: "assistant",
  content: [{ type: "output_text", text }],
});

test("codex (Responses): its compaction prompt is recognised; the compaction is judged and repaired, bounded", async () => {
  const core = createGuardCore({ anchors: "never push to main" });
  const big = "x".repeat(20_000);
  const history = [
    rUser("old task"),
    rCall("c0"),
    rOut("c0"),
    rSay("old done"),
    rUser("fix the parser"),
    { type: "reasoning", id: "rs1", summary: [], encrypted_content: "ENC" },
    rCall("c1"),
    rOut("c1", big),
    rCall("c2"),
    rOut("c2"),
    rSay("fixed"),
  ];
  assert.equal((await core.handle(responsesRequest(history))).changed, false);
  const summ = await core.handle(
    responsesRequest([
      ...history,
      rUser("You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary"),
    ]),
  );
  assert.match(summ.note ?? "", /codex/);
  const after = [
    rUser("old task"),
    rUser("fix the parser"),
    rUser(`${CODEX_SUMMARY_PREFIX}\nthe parser was fixed`),
    rUser("now add a test"),
  ];
  const o = await core.handle(responsesRequest(after));
  assert.equal(o.verdict?.kept, false);
  assert.equal(o.verdict?.agent, "codex");
  assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? "");
  const input = docOf(o).input as Record<string, unknown>[];
  // The splice: right after the summary, before the new prompt; the reasoning blob kept; the big output bounded.
  assert.equal(JSON.stringify(input.slice(0, 2)), JSON.stringify(after.slice(0, 2)));
  // The anchors on the summary's own message, after the agent's summary (one checkpoint).
  const summaryContent = input[2]!.content as Record<string, unknown>[];
  assert.deepEqual(summaryContent[0], after[2]!.content[0]);
  assert.equal(summaryContent.length, 2);
  assert.equal(summaryContent[1]!.text, `${ANCHORS_HEADING}\nnever push to main`);
  assert.deepEqual(input.at(-1), after.at(-1));
  assert.ok(input.some((i) => i.type === "reasoning" && i.encrypted_content === "ENC"));
  const out1 = input.find((i) => i.type === "function_call_output" && i.call_id === "c1")!;
  assert.ok(Buffer.byteLength(String(out1.output)) < 9000);
  assert.match(String(out1.output), /tool result truncated; original 20000 bytes/);
  assert.ok(
    input.some(
      (i) => JSON.stringify(i).includes(ANCHORS_HEADING) && JSON.stringify(i).includes("never push to main"),
    ),
  );
  const beforeMsgs = messagesOf(readWire("openai-responses", docOf(responsesRequest(history))).items);
  const spliced = messagesOf(readWire("openai-responses", docOf(o)).items).slice(0, -1);
  assert.deepEqual(validateSurvivalContract(beforeMsgs, spliced, { path: "summary" }), {
    valid: true,
    reason: null,
  });
});

function chatRequest(messages: unknown[]): WireRequest {
  const body = {
    model: "fake-model",
    messages,
    tools: [{ type: "function", function: { name: "bash" } }],
    stream: true,
  };
  return {
    method: "POST",
    url: "/v1/chat/completions",
    headers: {},
    body: Buffer.from(JSON.stringify(body)),
  };
}
const PI_SYSTEM = {
  role: "system",
  content: "You are an expert coding assistant operating inside pi, a coding agent harness.",
};
const cCall = (id: string) => ({
  role: "assistant",
  content: null,
  tool_calls: [
    { id, type: "function", function: { name: "bash", arguments: JSON.stringify({ command: id }) } },
  ],
});
const cTool = (id: string) => ({ role: "tool", tool_call_id: id, content: `result ${id}` });

test("pi (Chat): a session keyed by its first messages is followed across its compaction (the summary relayed to it) and repaired", async () => {
  const core = createGuardCore();
  const history = [
    PI_SYSTEM,
    { role: "user", content: "refactor utils" },
    cCall("a"),
    cTool("a"),
    cCall("b"),
    cTool("b"),
    { role: "assistant", content: "refactored" },
  ];
  const o1 = await core.handle(chatRequest(history));
  assert.match(o1.session ?? "", /^pi:h-/);
  const summ = await core.handle(
    chatRequest([
      PI_SYSTEM,
      {
        role: "user",
        content:
          "<conversation>\n[User]: refactor utils\n</conversation>\n\nThe messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use",
      },
    ]),
  );
  assert.match(summ.note ?? "", /\(pi\)/);
  // The upstream's answer, relayed to the session the request's <conversation> belongs to.
  const answer = answerOn("openai-chat", { stream: true }, "## Goal\nrefactor the utils module", 0, 0);
  summ.relayed!(Buffer.concat(answer.body as Buffer[]));
  const after = [
    PI_SYSTEM,
    {
      role: "user",
      content:
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\n## Goal\nrefactor the utils module\n</summary>",
    },
    { role: "user", content: "also update the docs" },
  ];
  const o = await core.handle(chatRequest(after));
  assert.equal(o.session, o1.session, "the same session, though its first user message changed");
  assert.equal(o.verdict?.kept, false);
  assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? "");
  const msgs = docOf(o).messages as unknown[];
  assert.deepEqual(msgs.slice(0, 2), after.slice(0, 2));
  assert.deepEqual(msgs.slice(2, 8), history.slice(1), "the whole short round, as sent");
  assert.deepEqual(msgs.at(-1), after.at(-1));
});

test("a splice that would break the wire is not sent: the untouched body, and why", async () => {
  const core = createGuardCore();
  // The agent keeps the call of the last exchange but not its result: the splice would give the result without its call next to it.
  const history = [
    PI_SYSTEM,
    { role: "user", content: "do it" },
    cCall("a"),
    cTool("a"),
    { role: "assistant", content: "done" },
  ];
  await core.handle(chatRequest(history));
  const after = [
    PI_SYSTEM,
    {
      role: "user",
      content: "The conversation history before this point was compacted into the following summary:\n\nwork",
    },
    cCall("a"),
    { role: "user", content: "next" },
  ];
  const req = chatRequest(after);
  const o = await core.handle(req);
  assert.equal(o.verdict?.kept, false);
  assert.equal(o.verdict?.repaired, false);
  assert.ok(o.verdict?.repair_refused, "the reason is given");
  assert.equal(o.body, req.body);
});

test("garbage, unknown wires, non-POST and count_tokens: unchanged, with a one-line note; handle never throws", async () => {
  const cases: WireRequest[] = [
    { method: "POST", url: "/v1/messages", headers: {}, body: Buffer.from("{not json") },
    { method: "POST", url: "/v1/messages", headers: {}, body: Buffer.from('{"messages": 5}') },
    {
      method: "POST",
      url: "/v1/messages",
      headers: {},
      body: Buffer.from('{"messages": ["not a message"]}'),
    },
    { method: "POST", url: "/v1/embeddings", headers: {}, body: Buffer.from("{}") },
    { method: "GET", url: "/v1/models", headers: {}, body: Buffer.alloc(0) },
    {
      method: "POST",
      url: "/v1/messages/count_tokens?beta=true",
      headers: {},
      body: Buffer.from('{"messages": []}'),
    },
  ];
  for (const req of cases) {
    // A core each: a request that cannot be read is said once per session (opaque.test.ts).
    const core = createGuardCore();
    const o = await core.handle(req);
    assert.equal(o.body, req.body);
    assert.equal(o.changed, false);
    assert.ok(o.note && !o.note.includes("\n"), `a one-line note for ${req.url}`);
  }
});

test("a side request on the same session (no tools, other history) leaves the session as it was", async () => {
  const core = createGuardCore();
  const history = [
    PI_SYSTEM,
    { role: "user", content: "task" },
    cCall("a"),
    cTool("a"),
    { role: "assistant", content: "ok" },
  ];
  const headers = { "x-claude-code-session-id": "s-side" };
  const mk = (messages: unknown[], tools = true): WireRequest => ({
    method: "POST",
    url: "/v1/messages",
    headers,
    body: Buffer.from(
      JSON.stringify({
        messages: messages.filter((m) => (m as { role: string }).role !== "system").map(toAnthropicLike),
        ...(tools ? { tools: TOOLS } : {}),
      }),
    ),
  });
  function toAnthropicLike(m: unknown): unknown {
    const x = m as { role: string; content: unknown; tool_calls?: { id: string }[]; tool_call_id?: string };
    if (x.tool_calls)
      return {
        role: "assistant",
        content: x.tool_calls.map((t) => ({ type: "tool_use", id: t.id, name: "Bash", input: {} })),
      };
    if (x.role === "tool")
      return { role: "user", content: [{ type: "tool_result", tool_use_id: x.tool_call_id, content: "r" }] };
    return { role: x.role, content: x.content };
  }
  await core.handle(mk(history));
  const side = await core.handle(mk([{ role: "user", content: "write a title for this chat" }], false));
  assert.equal(side.verdict, undefined);
  assert.match(side.note ?? "", /not the session's history/);
  const next = await core.handle(mk([...history, { role: "user", content: "more" }]));
  assert.equal(next.verdict, undefined, "still an extension of the session's history");
  assert.equal(next.note, undefined);
});

// ---------------------------------------------------------------- the fast path

test("codex (Responses) with its session header: turns on the fast path, its compaction judged and repaired", async () => {
  const core = createGuardCore();
  const history = [rUser("fix the parser"), rCall("c1"), rOut("c1"), rCall("c2"), rOut("c2"), rSay("fixed")];
  await core.handle(responsesRequest(history.slice(0, 3)));
  await core.idle();
  const o1 = await core.handle(responsesRequest(history));
  assert.equal(o1.deferred, true);
  const after = [
    rUser("fix the parser"),
    rUser(`${CODEX_SUMMARY_PREFIX}\nthe parser was fixed`),
    rUser("now add a test"),
  ];
  const o = await core.handle(responsesRequest(after));
  assert.equal(o.deferred, undefined);
  assert.equal(o.verdict?.kept, false);
  assert.equal(
    o.verdict?.messages_before,
    readWire("openai-responses", docOf(responsesRequest(history))).items.length,
  );
  assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? "");
  await core.close();
});
