/**
 * The guard's core on realistic request pairs: a Claude Code session from
 * the corpus rendered as the Anthropic request before its compaction, then
 * the request after it (the agent's own summary and a new prompt, the last
 * round lost): judged not kept, repaired, the repair checked by the
 * contract, spliced the same into later requests and after a restart. Also
 * Codex (Responses) and pi (Chat) compactions, a compaction that kept the
 * round, the agents' summarization requests, and what is passed untouched.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { corpusDir, corpusSuite } from "../../test/support.js";
import { importFile } from "../formats/detect.js";
import { liveContext } from "../journal/tree.js";
import { readJournal } from "../journal/read.js";
import { toAnthropicRequest } from "../formats/export-anthropic.js";
import { CODEX_SUMMARY_PREFIX } from "../formats/codex.js";
import { validateSurvivalContract } from "../contract/validate.js";
import { protectedRound } from "../contract/rounds.js";
import { auditEntries } from "../route/audit.js";
import type { CompactionEntry, Message } from "../model/index.js";
import { createGuardCore } from "./core.js";
import { readWire } from "./wires.js";
import { messagesOf } from "./history.js";
import { anthropicAdjacency, ANCHORS_HEADING } from "./splice.js";
import type { GuardOutcome, WireRequest } from "./types.js";

const u = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const TOOLS = [{ name: "Bash", description: "run", input_schema: { type: "object" } }];
const SESSION = "0b5f2c9e-1111-4222-8333-944445555666";

function claudeRequest(messages: readonly Message[], extra: Record<string, unknown> = {}): WireRequest {
  const body = {
    model: "claude-x",
    max_tokens: 1000,
    stream: true,
    tools: TOOLS,
    ...toAnthropicRequest(messages),
    ...extra,
  };
  return {
    method: "POST",
    url: "/v1/messages?beta=true",
    headers: {
      "x-claude-code-session-id": SESSION,
      "x-api-key": "sk-ant-secret-never-written",
      "user-agent": "claude-cli/2.1.328",
    },
    body: Buffer.from(JSON.stringify(body)),
  };
}

const docOf = (o: GuardOutcome | WireRequest): Record<string, unknown> => JSON.parse(o.body.toString("utf8"));

/** The Claude Code compaction of the corpus session: the history before it, and the agent's replacement. */
async function claudeCompaction(): Promise<{ before: Message[]; replacement: Message[] }> {
  const r = await importFile(join(corpusDir, "claude-code", "entire-98-78b713483d-0.jsonl"));
  const c = r.entries.find((e): e is CompactionEntry => e.kind === "compaction")!;
  return { before: liveContext(r.entries, c.parent_id!), replacement: c.payload.replacement };
}

corpusSuite("guard core on a Claude Code compaction (entire-98)", () => {
  test("not kept → spliced; the spliced request keeps the contract; same bytes later and after a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "guard-core-"));
    try {
      const { before, replacement } = await claudeCompaction();
      const core = createGuardCore({ stateDir: dir });
      const req1 = claudeRequest(before);
      const o1 = await core.handle(req1);
      assert.equal(o1.changed, false);
      assert.equal(o1.body, req1.body, "an unchanged request is the very same Buffer");
      assert.equal(o1.session, `claude-code:${SESSION}`);

      // The agent's own summarization request: recognised, passed through, not taken as the history.
      const summarize = claudeRequest([
        ...before,
        u("CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\nsummarize"),
      ]);
      const os = await core.handle(summarize);
      assert.equal(os.body, summarize.body);
      assert.match(os.note ?? "", /summarization request \(claude-code\)/);
      assert.equal(os.verdict, undefined);

      // After the compaction: the agent's summary, then the new prompt; the last round is gone.
      const req2 = claudeRequest([...replacement, u("now run the tests please")]);
      const o2 = await core.handle(req2);
      assert.ok(o2.verdict, "the compaction is seen");
      assert.equal(o2.verdict.kept, false);
      assert.equal(o2.verdict.agent, "claude-code");
      assert.ok(o2.verdict.losses.tool_calls.length > 0);
      assert.equal(o2.verdict.repaired, true, o2.verdict.repair_refused ?? "");
      assert.equal(o2.changed, true);

      // The spliced request, read as the wire: the contract holds against the history before.
      const beforeWire = messagesOf(readWire("anthropic-messages", docOf(req1)).items);
      const spliced = readWire("anthropic-messages", docOf(o2));
      const judged = messagesOf(spliced.items).slice(0, -1);
      const v = validateSurvivalContract(beforeWire, judged, { path: "summary" });
      assert.deepEqual(v, { valid: true, reason: null });
      assert.equal(anthropicAdjacency(spliced.list), undefined);
      // The spliced elements are the raw elements sent before, byte for byte (thinking and signatures too).
      const sentBefore = new Set((docOf(req1).messages as unknown[]).map((m) => JSON.stringify(m)));
      const list2 = docOf(o2).messages as unknown[];
      const list2Agent = docOf(req2).messages as unknown[];
      const inserted = list2.slice(1, 1 + list2.length - list2Agent.length);
      assert.ok(inserted.length > 0);
      for (const el of inserted)
        assert.ok(
          sentBefore.has(JSON.stringify(el)),
          `not a raw element sent before: ${JSON.stringify(el).slice(0, 80)}`,
        );
      assert.equal(JSON.stringify(list2[0]), JSON.stringify(list2Agent[0]), "the summary first");
      assert.equal(JSON.stringify(list2.at(-1)), JSON.stringify(list2Agent.at(-1)), "the new prompt last");

      // A later request of the session: the same splice at the same place.
      const req3 = claudeRequest([
        ...replacement,
        u("now run the tests please"),
        { role: "assistant", content: [{ type: "text", text: "ran them" }] },
        u("thanks, commit"),
      ]);
      const o3 = await core.handle(req3);
      assert.equal(o3.changed, true);
      assert.equal(o3.verdict, undefined, "no new compaction");
      const list3 = docOf(o3).messages as unknown[];
      assert.equal(
        JSON.stringify(list3.slice(0, 1 + inserted.length)),
        JSON.stringify(list2.slice(0, 1 + inserted.length)),
      );
      await core.close();

      // The journal: the agent's compaction (not kept) and the guard's repair (kept), as `audit` judges them.
      const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
      assert.equal(files.length, 1);
      assert.doesNotMatch(files[0]!, /[^A-Za-z0-9._-]/);
      const { entries } = await readJournal(join(dir, files[0]!));
      const audit = auditEntries(entries).compactions;
      assert.deepEqual(
        audit.map((a) => [a.source, a.kept]),
        [
          ["claude-code", false],
          ["compact-safe-guard", true],
        ],
      );
      const text = JSON.stringify(entries);
      assert.ok(!text.includes("sk-ant-secret-never-written"), "no header is written");

      // A guard restarted on the same state goes on: the same splice in the next request.
      const again = createGuardCore({ stateDir: dir });
      const req4 = claudeRequest([
        ...replacement,
        u("now run the tests please"),
        { role: "assistant", content: [{ type: "text", text: "ran them" }] },
        u("thanks, commit"),
        { role: "assistant", content: [{ type: "text", text: "committed" }] },
        u("push"),
      ]);
      const o4 = await again.handle(req4);
      assert.equal(o4.changed, true, o4.note ?? "");
      assert.equal(o4.verdict, undefined);
      const list4 = docOf(o4).messages as unknown[];
      assert.equal(
        JSON.stringify(list4.slice(0, 1 + inserted.length)),
        JSON.stringify(list2.slice(0, 1 + inserted.length)),
      );
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a compaction that kept the protected round: kept, no splice, the very same Buffer", async () => {
    const { before, replacement } = await claudeCompaction();
    const core = createGuardCore();
    await core.handle(claudeRequest(before));
    const round = protectedRound(before);
    const instructions = round.instructionIndices.filter((i) => i < round.regionStart).map((i) => before[i]!);
    const req = claudeRequest([
      ...replacement,
      ...instructions,
      ...before.slice(round.regionStart),
      u("go on"),
    ]);
    const o = await core.handle(req);
    assert.ok(o.verdict);
    assert.equal(o.verdict.kept, true, o.verdict.reason ?? "");
    assert.equal(o.verdict.repaired, false);
    assert.equal(o.changed, false);
    assert.equal(o.body, req.body);
  });

  test("mode audit judges and records but never changes the request", async () => {
    const { before, replacement } = await claudeCompaction();
    const core = createGuardCore({ mode: "audit" });
    await core.handle(claudeRequest(before));
    const req = claudeRequest([...replacement, u("now run the tests please")]);
    const o = await core.handle(req);
    assert.equal(o.verdict?.kept, false);
    assert.equal(o.verdict?.repaired, false);
    assert.equal(o.body, req.body);
  });
});

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
  assert.equal(JSON.stringify(input.slice(0, 3)), JSON.stringify(after.slice(0, 3)));
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

test("pi (Chat): a session keyed by its first messages is followed across its compaction and repaired", async () => {
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
  const after = [
    PI_SYSTEM,
    {
      role: "user",
      content:
        "The conversation history before this point was compacted into the following summary:\n\n## Goal\nrefactor",
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
  const core = createGuardCore();
  const cases: WireRequest[] = [
    { method: "POST", url: "/v1/messages", headers: {}, body: Buffer.from("{not json") },
    { method: "POST", url: "/v1/messages", headers: {}, body: Buffer.from('{"messages": 5}') },
    {
      method: "POST",
      url: "/v1/messages",
      headers: {},
      body: Buffer.from('{"messages": [{"role": "tool"}]}'),
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
