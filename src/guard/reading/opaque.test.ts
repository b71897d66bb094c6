/**
 * Elements the wire readers do not model are kept in place and the history
 * around them is judged: Claude Code with its default model (claude-opus-5-5)
 * puts `role: "system"` elements inside `messages` (the environment, the
 * deferred-tools list, an empty one carrying `output_config`), and a Chat
 * request may carry a role the reader does not know. Such a request is read,
 * its compaction judged and repaired, never "not judged".
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createGuardCore } from "../core.js";
import { readWire } from "./wires.js";
import { anthropicAdjacency } from "../judging/splice.js";
import { answerOn } from "../judging/answer.js";
import type { GuardOutcome, WireRequest } from "../types.js";

const docOf = (o: GuardOutcome | WireRequest): Record<string, unknown> => JSON.parse(o.body.toString("utf8"));

const ENV = {
  role: "system",
  content: "# Environment\nWorking directory: /home/u/proj\nPlatform: linux",
};
const DEFERRED = {
  role: "system",
  content: [{ type: "text", text: "Deferred tools available through ToolSearch: WebFetch, NotebookEdit" }],
};
const EFFORT = { role: "system", content: [], output_config: { effort: "medium" } };

/** A Messages request as Claude Code sends it with claude-opus-5-5: system elements inside `messages`. */
function claudeRequest(conversation: unknown[]): WireRequest {
  const [first, ...rest] = conversation;
  const body = {
    model: "claude-opus-5-5",
    system: [{ type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude." }],
    messages: [first, ENV, DEFERRED, ...rest, EFFORT],
    tools: [{ name: "Bash", description: "run", input_schema: { type: "object" } }],
    metadata: { user_id: JSON.stringify({ device_id: "d", session_id: "s-opus" }) },
    context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
    stream: true,
  };
  return {
    method: "POST",
    url: "/v1/messages?beta=true",
    headers: { "x-claude-code-session-id": "s-opus", "user-agent": "claude-cli/2.1.332 (external, cli)" },
    body: Buffer.from(JSON.stringify(body)),
  };
}

const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const call = (id: string) => ({
  role: "assistant",
  content: [
    { type: "text", text: `running ${id}` },
    { type: "tool_use", id, name: "Bash", input: { command: id } },
  ],
});
const result = (id: string) => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content: `output of ${id}` }],
});

test("Anthropic: system elements inside messages are opaque, the user / assistant sequence is read", () => {
  const req = claudeRequest([user("fix the parser"), call("t1"), result("t1")]);
  const h = readWire("anthropic-messages", docOf(req));
  // The top-level system prompt, then the three conversation messages; the system elements are not items.
  assert.deepEqual(
    h.items.map((i) => i.message.role),
    ["system", "user", "assistant", "user"],
  );
  assert.deepEqual(
    h.items.slice(1).map((i) => i.parts[0]!.element),
    [0, 3, 4],
  );
  // An element without a role cannot be read: that is still an error.
  assert.throws(
    () => readWire("anthropic-messages", { messages: [user("x"), "oops"] }),
    /messages\[1\] is not a message with a role/,
  );
});

test("Anthropic: a content block type the reader does not know is kept as it is", () => {
  const odd = { type: "server_tool_future_block", payload: { x: 1 } };
  const h = readWire("anthropic-messages", {
    messages: [{ role: "assistant", content: [{ type: "text", text: "hi" }, odd] }],
  });
  assert.deepEqual(h.items[0]!.raw[0], { role: "assistant", content: [{ type: "text", text: "hi" }, odd] });
  assert.ok(h.items[0]!.message.content.some((b) => (b as { type: string }).type === odd.type));
});

test("Claude Code on claude-opus-5-5: its compaction is judged and repaired, the system elements kept in place", async () => {
  const core = createGuardCore();
  const history = [user("fix the parser"), call("t1"), result("t1"), call("t2"), result("t2")];
  const o1 = await core.handle(claudeRequest(history));
  assert.doesNotMatch(o1.note ?? "", /not judged/);
  // Claude Code's summarization request, and the upstream's answer relayed: what proves the compaction.
  const summ = await core.handle(
    claudeRequest([...history, user("CRITICAL: Respond with TEXT ONLY. Summarize.")]),
  );
  summ.relayed!(
    answerOn("anthropic-messages", {}, "<summary>Summary: the parser work is under way.</summary>", 0, 0)
      .body as Buffer,
  );
  const summary = user(
    "This session is being continued from a previous conversation that ran out of context. Summary: the parser work is under way.",
  );
  const o = await core.handle(claudeRequest([summary, user("now add a test")]));
  assert.doesNotMatch(o.note ?? "", /not judged/);
  assert.ok(o.verdict, "the compaction is judged");
  assert.equal(o.verdict.kept, false);
  assert.equal(o.verdict.repaired, true, o.verdict.repair_refused ?? "");
  const sent = docOf(o).messages as Record<string, unknown>[];
  // The system elements are where Claude Code put them, byte for byte; the round follows the summary.
  assert.deepEqual(sent.slice(0, 3), [summary, ENV, DEFERRED]);
  assert.deepEqual(sent.at(-1), EFFORT);
  assert.deepEqual(sent.at(-2), user("now add a test"));
  const ids = sent.flatMap((m) =>
    Array.isArray(m.content) ? (m.content as { tool_use_id?: string }[]).map((b) => b.tool_use_id) : [],
  );
  assert.ok(ids.includes("t1") && ids.includes("t2"), "the protected round's results are back");
  assert.equal(anthropicAdjacency(sent), undefined);
  // The next turn extends the repaired history: it carries the repair again, and is not judged as a compaction.
  const next = await core.handle(
    claudeRequest([summary, user("now add a test"), { role: "assistant", content: "ok" }, user("go")]),
  );
  assert.equal(next.verdict, undefined);
  assert.equal(next.changed, true);
  await core.close();
});

test("Anthropic adjacency: an opaque element between a call and its result is not a turn", () => {
  assert.equal(anthropicAdjacency([user("a"), call("t1"), ENV, result("t1")]), undefined);
  assert.match(anthropicAdjacency([user("a"), call("t1"), user("b")]) ?? "", /t1/);
});

test("Chat: a role the reader does not model is kept in place, not a reason to skip the request", async () => {
  const core = createGuardCore();
  const req = (messages: unknown[]): WireRequest => ({
    method: "POST",
    url: "/v1/chat/completions",
    headers: { session_id: "chat-1" },
    body: Buffer.from(
      JSON.stringify({ model: "m", messages, tools: [{ type: "function", function: { name: "bash" } }] }),
    ),
  });
  const odd = { role: "environment", content: "cwd=/p" };
  const o = await core.handle(
    req([{ role: "system", content: "sys" }, odd, { role: "user", content: "hi" }]),
  );
  assert.doesNotMatch(o.note ?? "", /not judged/);
  const h = readWire("openai-chat", docOf(req([odd, { role: "user", content: "hi" }])));
  assert.deepEqual(
    h.items.map((i) => i.parts[0]!.element),
    [1],
  );
  await core.close();
});

test("a request that truly cannot be read: forwarded untouched, said once per session, every one counted", async () => {
  const lates: GuardOutcome[] = [];
  const core = createGuardCore({ onLate: (o) => lates.push(o) });
  const bad = (session: string): WireRequest => ({
    method: "POST",
    url: "/v1/messages",
    headers: { "x-claude-code-session-id": session },
    body: Buffer.from('{"messages": ["not a message"]}'),
  });
  const reqs = [bad("a"), bad("a"), bad("b")];
  const outs: GuardOutcome[] = [];
  for (const r of reqs) outs.push(await core.handle(r));
  await core.idle();
  outs.forEach((o, i) => {
    assert.equal(o.body, reqs[i]!.body, `request ${i} untouched`);
    assert.equal(o.changed, false);
  });
  // A new session's first request goes out at once and is read after: its note then reaches onLate.
  const notes = [...outs, ...lates].map((o) => o.note).filter((n): n is string => n !== undefined);
  assert.equal(notes.length, 2, notes.join(" | "));
  for (const n of notes) assert.match(n, /not judged: messages\[0\] is not a message with a role.*said once/);
  assert.deepEqual(core.counts?.(), { requests: 3, notJudged: 3 });
  await core.close();
});
