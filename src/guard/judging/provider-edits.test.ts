/**
 * The provider's own context management in the verdict: Anthropic context
 * edits that can clear the protected round's tool results or thinking are
 * named (`provider_edits`); those that cannot (Claude Code's
 * `clear_thinking_20251015` with `keep: "all"`, a `keep` that covers the
 * round) give null. The edits themselves go upstream unchanged.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../../model/types.js";
import { createGuardCore } from "../core.js";
import { providerEdits } from "./provider-edits.js";
import { answerOn } from "./answer.js";
import type { GuardCore, WireRequest } from "../types.js";

const u = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const call = (id: string, name = "Bash", thinking = false): Message => ({
  role: "assistant",
  content: [
    ...(thinking ? [{ type: "thinking" as const, thinking: `think ${id}`, signature: `sig-${id}` }] : []),
    { type: "tool_use", id, name, input: { command: id } },
  ],
});
const res = (id: string): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content: `out ${id}` }],
});
const say = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });

/** A round of two exchanges (older tool uses before it), no thinking. */
const BEFORE: Message[] = [
  u("old"),
  call("o1"),
  res("o1"),
  say("ok"),
  u("fix it"),
  call("t1"),
  res("t1"),
  call("t2"),
  res("t2"),
  say("fixed"),
];
/** The same with thinking in both of the round's calls. */
const THINKING: Message[] = [
  u("fix it"),
  call("t1", "Bash", true),
  res("t1"),
  call("t2", "Bash", true),
  res("t2"),
  say("fixed"),
];
const edits = (...e: unknown[]) => ({ context_management: { edits: e } });

test("clear_tool_uses_20250919: named when keep does not cover the round's exchanges; null when it does", () => {
  const keep = (value: number) => ({ type: "clear_tool_uses_20250919", keep: { type: "tool_uses", value } });
  assert.equal(
    providerEdits(edits(keep(1)), BEFORE, [u("next")]),
    "the request asks the provider to clear tool results (clear_tool_uses_20250919, keep 1 tool use): the protected round's 2 exchanges may not reach the model",
  );
  assert.equal(providerEdits(edits(keep(2)), BEFORE, [u("next")]), null);
  // The documented default keeps 3 tool uses.
  assert.equal(providerEdits(edits({ type: "clear_tool_uses_20250919" }), BEFORE, [u("next")]), null);
  // Tool uses after the compaction are more recent: they take keep's places first.
  assert.match(
    providerEdits(edits(keep(3)), BEFORE, [u("next"), call("n1"), res("n1"), call("n2"), res("n2")]) ?? "",
    /keep 3 tool uses\): the protected round's 2 exchanges may not reach the model \(4 tool uses from its first one on\)/,
  );
  // Calls' inputs cleared too.
  assert.match(
    providerEdits(edits({ ...keep(0), clear_tool_inputs: true }), BEFORE, []) ?? "",
    /clear tool results and their calls' inputs \(clear_tool_uses_20250919, keep 0 tool uses\)/,
  );
  // A tool excluded from clearing is never cleared.
  assert.equal(providerEdits(edits({ ...keep(0), exclude_tools: ["Bash"] }), BEFORE, []), null);
  // Nothing to clear: a round without tool exchanges.
  assert.equal(providerEdits(edits(keep(0)), [u("hello"), say("hi")], []), null);
});

test('clear_thinking_20251015: keep "all" is harmless (null); a turn count under the round\'s thinking is named', () => {
  assert.equal(
    providerEdits(edits({ type: "clear_thinking_20251015", keep: "all" }), THINKING, [u("next")]),
    null,
  );
  assert.equal(
    providerEdits(
      edits({ type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 1 } }),
      THINKING,
      [u("next")],
    ),
    "the request asks the provider to clear thinking (clear_thinking_20251015, keep 1 thinking turn): the protected round's thinking (2 assistant messages) may not reach the model",
  );
  // The default keeps the last turn's thinking only.
  assert.match(
    providerEdits(edits({ type: "clear_thinking_20251015" }), THINKING, []) ?? "",
    /keep 1 thinking turn/,
  );
  assert.equal(
    providerEdits(
      edits({ type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 2 } }),
      THINKING,
      [],
    ),
    null,
  );
  // No thinking in the round: nothing to clear.
  assert.equal(providerEdits(edits({ type: "clear_thinking_20251015" }), BEFORE, []), null);
});

test("an edit the guard does not know is named, not judged; no edits is null", () => {
  assert.match(
    providerEdits(edits({ type: "compact_20990101" }), BEFORE, []) ?? "",
    /does not know \("compact_20990101"\)/,
  );
  assert.equal(providerEdits({}, BEFORE, []), null);
  assert.equal(providerEdits({ context_management: { edits: [] } }, BEFORE, []), null);
  // Two findings, one sentence each.
  const both = providerEdits(
    edits(
      { type: "clear_tool_uses_20250919", keep: { type: "tool_uses", value: 1 } },
      { type: "clear_thinking_20251015" },
    ),
    THINKING,
    [],
  );
  assert.match(both ?? "", /clear tool results .*; the request asks the provider to clear thinking/);
});

// ---------------------------------------------------------------- through the core, as Claude Code sends it

const TOOLS = [{ name: "Bash", description: "run", input_schema: { type: "object" } }];
const wireMsg = (m: Message) => ({ role: m.role, content: m.content });
function claude(messages: Message[], cm: unknown): WireRequest {
  return {
    method: "POST",
    url: "/v1/messages?beta=true",
    headers: {
      "x-claude-code-session-id": "edits-1",
      "anthropic-beta": "claude-code-20250219,context-management-2025-06-27",
    },
    body: Buffer.from(
      JSON.stringify({
        model: "claude-x",
        max_tokens: 100,
        tools: TOOLS,
        messages: messages.map(wireMsg),
        context_management: cm,
      }),
    ),
  };
}
const SUMMARY = u(
  "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nwork on the parser: both commands ran",
);

/** The agent's summarization request of `history`, and its answer (the summary above) relayed: what proves the compaction. */
async function summarized(core: GuardCore, history: Message[], cm: unknown): Promise<void> {
  const o = await core.handle(claude([...history, u("CRITICAL: Respond with TEXT ONLY. Summarize.")], cm));
  const answer = answerOn(
    "anthropic-messages",
    {},
    "<summary>work on the parser: both commands ran</summary>",
    0,
    0,
  );
  o.relayed!(answer.body as Buffer);
}

test("the verdict: Claude Code's keep-all thinking edit gives null, a tool-use clear that reaches the round is named; the edits go upstream unchanged", async () => {
  const claudeCode = { edits: [{ type: "clear_thinking_20251015", keep: "all" }] };
  const core = createGuardCore();
  await core.handle(claude(THINKING, claudeCode));
  await summarized(core, THINKING, claudeCode);
  const o = await core.handle(claude([SUMMARY, u("next")], claudeCode));
  assert.equal(o.verdict?.kept, false);
  assert.equal(o.verdict?.provider_edits, null);
  assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? "");
  assert.deepEqual(JSON.parse(o.body.toString("utf8")).context_management, claudeCode);

  const clearing = {
    edits: [
      { type: "clear_thinking_20251015", keep: "all" },
      {
        type: "clear_tool_uses_20250919",
        trigger: { type: "input_tokens", value: 30000 },
        keep: { type: "tool_uses", value: 1 },
      },
    ],
  };
  const core2 = createGuardCore();
  await core2.handle(claude(THINKING, clearing));
  await summarized(core2, THINKING, clearing);
  const o2 = await core2.handle(claude([SUMMARY, u("next")], clearing));
  assert.equal(
    o2.verdict?.provider_edits,
    "the request asks the provider to clear tool results (clear_tool_uses_20250919, keep 1 tool use): the protected round's 2 exchanges may not reach the model",
  );
  assert.deepEqual(JSON.parse(o2.body.toString("utf8")).context_management, clearing);
  // A compaction that kept the round is still told: the provider may clear it all the same.
  const core3 = createGuardCore();
  await core3.handle(claude(THINKING, clearing));
  const o3 = await core3.handle(claude([SUMMARY, ...THINKING, u("next")], clearing));
  assert.equal(o3.verdict?.kept, true, o3.verdict?.reason ?? "");
  assert.match(o3.verdict?.provider_edits ?? "", /clear_tool_uses_20250919, keep 1 tool use/);
  // Thinking read off the wire: the default thinking edit reaches the round's signed thinking blocks.
  const thinking = { edits: [{ type: "clear_thinking_20251015" }] };
  const core4 = createGuardCore();
  await core4.handle(claude(THINKING, thinking));
  await summarized(core4, THINKING, thinking);
  const o4 = await core4.handle(claude([SUMMARY, u("next")], thinking));
  assert.match(
    o4.verdict?.provider_edits ?? "",
    /clear thinking \(clear_thinking_20251015, keep 1 thinking turn\)/,
  );
  await Promise.all([core.close(), core2.close(), core3.close(), core4.close()]);
});
