/**
 * The guard after a provider's own compaction (issue 44, item 5): Codex's
 * remote compaction (`POST …/responses/compact`, or an ordinary Responses
 * request whose last input item is `{"type":"compaction_trigger"}`, answered
 * with an opaque `compaction` item) and Anthropic's on-demand compaction (the
 * `compaction` parameter, answered with a `compaction` block that the next
 * request sends first). The protected round of the history before is put
 * back right after the provider's item or block, the guard's restatement
 * as the message right after it (the item cannot take content), and the
 * validator, `audit` and the guard count the two as one checkpoint.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validateSurvivalContract } from "../../contract/validate.js";
import { checkpointsOf, checkpointText, isPlainUser } from "../../contract/classify.js";
import { GUARD_TEXT_PREFIX } from "../../contract/markers.js";
import { parseJournal } from "../../journal/index.js";
import { auditEntries } from "../../route/audit.js";
import { createGuardCore } from "../core.js";
import { readWire } from "../reading/wires.js";
import { messagesOf } from "../reading/history.js";
import { anthropicAdjacency, ANCHORS_HEADING } from "./splice.js";
import type { GuardOutcome, WireRequest } from "../types.js";

type Item = Record<string, unknown>;
const docOf = (o: GuardOutcome | WireRequest): Item => JSON.parse(o.body.toString("utf8")) as Item;
const inputOf = (o: GuardOutcome | WireRequest): Item[] => docOf(o).input as Item[];

// ---------------------------------------------------------------------------------------------------------
// Codex on its built-in provider.

function codex(input: unknown[], url = "/v1/responses", session = "conv-remote"): WireRequest {
  return {
    method: "POST",
    url,
    headers: { session_id: session, originator: "codex_exec" },
    body: Buffer.from(
      JSON.stringify({
        model: "gpt-5",
        instructions: "You are Codex.",
        input,
        tools: [{ type: "function", name: "exec_command" }],
        stream: true,
      }),
    ),
  };
}
const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
const call = (id: string) => ({
  type: "function_call",
  call_id: id,
  name: "exec_command",
  arguments: `{"cmd":"echo ${id}"}`,
});
const out = (id: string) => ({ type: "function_call_output", call_id: id, output: `${id}\n` });
const say = (text: string) => ({
  type: "message",
  role: "assistant",
  content: [{ type: "output_text", text }],
});
const TRIGGER = { type: "compaction_trigger" };
const ITEM = {
  type: "compaction",
  id: "cmp_1",
  encrypted_content: "gAAAAABpHxRlbW90ZSBjb21wYWN0aW9uIG9mIHRoZSBsb2dpbiB3b3Jr",
};

/** The upstream's answer to a remote compaction request, as the Responses API streams it. */
function compactionAnswer(item: Item): Buffer {
  const events = [
    { type: "response.created", response: { id: "resp_c" } },
    { type: "response.output_item.added", output_index: 0, item },
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: { id: "resp_c", output: [item] } },
  ];
  return Buffer.from(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""));
}

const ROUND = [
  user("Fix the failing login test"),
  say("Reading the test first."),
  call("c1"),
  out("c1"),
  call("c2"),
  out("c2"),
  say("The login test passes now."),
];

test("Codex's remote compaction in the body (compaction_trigger): passed through, its history read without the trigger, the compaction repaired after the item", async () => {
  const core = createGuardCore({ anchors: "Never push to main without review." });
  await core.handle(codex(ROUND.slice(0, 4)));
  const turn = await core.handle(codex(ROUND));
  assert.equal(turn.changed, false);
  const req = codex([...ROUND, TRIGGER]);
  const c = await core.handle(req);
  assert.equal(c.body, req.body, "the compaction request goes out as it came");
  assert.equal(c.changed, false);
  assert.equal(c.verdict, undefined);
  assert.match(c.note ?? "", /provider's own compaction \(compaction_trigger\)/);
  assert.ok(c.relayed, "its answer is relayed, to prove the compaction with");
  c.relayed(compactionAnswer(ITEM));
  // Codex keeps the user's messages, then the item; the next prompt follows.
  const o = await core.handle(codex([ROUND[0], ITEM, user("Also run the whole suite")]));
  assert.ok(o.verdict, o.note ?? "");
  assert.doesNotMatch(o.note ?? "", /not judged/);
  assert.equal(o.verdict.kept, false);
  assert.equal(
    o.verdict.messages_before,
    1 + messagesOf(readWire("openai-responses", { input: ROUND }).items).length,
  );
  assert.equal(o.verdict.repaired, true, o.verdict.repair_refused ?? "");
  const sent = inputOf(o);
  // The item where Codex put it, untouched; the restatement right after it; the round; the prompt last.
  assert.deepEqual(sent[1], ITEM);
  assert.equal(sent[2]!.role, "user");
  const restated = (sent[2]!.content as Item[])[0]!.text as string;
  assert.ok(restated.startsWith(ANCHORS_HEADING), restated);
  assert.deepEqual(sent.slice(3, -1), ROUND.slice(1));
  assert.deepEqual(sent.at(-1), user("Also run the whole suite"));
  assert.ok(!JSON.stringify(sent).includes("compaction_trigger"), "the trigger is never spliced back");
  // One checkpoint: the item and the restatement after it; the restatement is not the user's instruction.
  const m = messagesOf(readWire("openai-responses", docOf(o)).items);
  const cps = checkpointsOf(m);
  assert.equal(cps.length, 1);
  assert.ok(checkpointText(m, cps[0]!).includes("Never push to main without review."));
  assert.ok(!m.some((x) => isPlainUser(x) && JSON.stringify(x).includes(GUARD_TEXT_PREFIX)));
  // The next turn extends the repaired history: the same splice again.
  const next = await core.handle(
    codex([ROUND[0], ITEM, user("Also run the whole suite"), say("Running it."), user("thanks")]),
  );
  assert.equal(next.verdict, undefined);
  assert.equal(next.changed, true);
  assert.deepEqual(inputOf(next).slice(0, sent.length), sent);
  await core.close();
});

test("the provider's item relayed to the compaction request proves the compaction when the request after keeps nothing else of the history", async () => {
  const core = createGuardCore();
  await core.handle(codex(ROUND));
  const c = await core.handle(codex([...ROUND, TRIGGER]));
  c.relayed!(compactionAnswer(ITEM));
  // No user message kept before the item: only the relayed item ties the request to the session.
  const o = await core.handle(codex([ITEM, user("Also run the whole suite")]));
  assert.ok(o.verdict, o.note ?? "");
  assert.equal(o.verdict.repaired, true, o.verdict.repair_refused ?? "");
  // Without a restatement (no anchors, no workspace) the round follows the item at once, and does not merge with it.
  const sent = inputOf(o);
  assert.deepEqual(sent[0], ITEM);
  assert.deepEqual(sent.slice(1, -1), ROUND);
  const m = messagesOf(readWire("openai-responses", docOf(o)).items);
  assert.deepEqual(m[1]!.content, [
    { type: "provider_compaction", provider: "openai", summary: "", opaque: true, native: ITEM },
  ]);
  await core.close();

  // The same item without its relayed answer (another guard saw the request): nothing proves it.
  const other = createGuardCore();
  await other.handle(codex(ROUND));
  const u = await other.handle(codex([ITEM, user("Also run the whole suite")]));
  assert.equal(u.verdict, undefined);
  assert.match(u.note ?? "", /proves no history/);
  await other.close();
});

test("a request for the provider's compaction never takes the fast path, and its trigger is not history", async () => {
  const core = createGuardCore();
  await core.handle(codex(ROUND));
  await core.idle();
  const c = await core.handle(codex([...ROUND, TRIGGER]));
  assert.notEqual(c.deferred, true, "decided before it goes out (its answer must be relayed)");
  assert.ok(c.relayed);
  await core.idle();
  // The history the session holds ends with the model's last answer, not with the trigger.
  const next = await core.handle(codex([...ROUND, user("go on")]));
  assert.equal(next.verdict, undefined);
  assert.equal(next.note, undefined);
  await core.close();
});

test("/responses/compact: the compaction repaired after the item, a second remote compaction replaces the first item and its restatement", async () => {
  const state = mkdtempSync(join(tmpdir(), "guard-provider-"));
  try {
    const core = createGuardCore({ stateDir: state, anchors: "Never push to main without review." });
    await core.handle(codex(ROUND));
    const c = await core.handle(codex(ROUND, "/v1/responses/compact"));
    assert.equal(c.changed, false);
    c.relayed!(Buffer.from(JSON.stringify({ id: "resp_c", output: [ROUND[0], ITEM] })));
    const after1 = [ROUND[0], ITEM, user("Also run the whole suite")];
    const o1 = await core.handle(codex(after1));
    assert.equal(o1.verdict?.repaired, true, o1.verdict?.repair_refused ?? o1.note ?? "");
    const later = [...after1, call("c3"), out("c3"), call("c4"), out("c4"), say("The suite passes.")];
    const o2 = await core.handle(codex(later));
    assert.equal(o2.changed, true);
    const c2 = await core.handle(codex(later, "/v1/responses/compact"));
    const ITEM2 = {
      ...ITEM,
      id: "cmp_2",
      encrypted_content: "gAAAAABpHxRzZWNvbmQgcmVtb3RlIGNvbXBhY3Rpb24gb2YgdGhlIHdvcms=",
    };
    c2.relayed!(Buffer.from(JSON.stringify({ id: "resp_c2", output: [ITEM2] })));
    const after2 = [ROUND[0], user("Also run the whole suite"), ITEM2, user("Now the docs")];
    const o3 = await core.handle(codex(after2));
    assert.ok(o3.verdict, o3.note ?? "");
    assert.equal(o3.verdict.repaired, true, o3.verdict.repair_refused ?? "");
    const text = JSON.stringify(inputOf(o3));
    assert.ok(!text.includes('"cmp_1"'), "the first item is not spliced back");
    assert.equal(text.split(ANCHORS_HEADING).length - 1, 1, "one restatement");
    assert.ok(text.includes('"call_id":"c4"'));
    await core.close();
    // audit reads the guard's journal as the guard does: each repair kept the contract, one checkpoint each.
    const file = readdirSync(state).find((f) => f.endsWith(".jsonl"))!;
    const a = auditEntries(parseJournal(readFileSync(join(state, file), "utf8"), file).entries);
    assert.equal(a.compactions.length, 4);
    const repairs = a.compactions.filter((x) => x.repair_of);
    assert.equal(repairs.length, 2);
    for (const r of repairs) {
      assert.equal(r.kept, true, r.reason ?? "");
      assert.equal(r.stacked_checkpoints, false);
      assert.equal(r.provider_compaction?.provider, "openai");
    }
    assert.equal(a.unrepaired, 0);
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
});

// ---------------------------------------------------------------------------------------------------------
// Anthropic's on-demand compaction.

const SYSTEM = "You are a coding agent.";
function anthropic(messages: unknown[], extra: Item = {}): WireRequest {
  return {
    method: "POST",
    url: "/v1/messages",
    headers: { "anthropic-version": "2023-06-01", "anthropic-beta": "compact-2026-09-04" },
    body: Buffer.from(
      JSON.stringify({
        model: "claude-x",
        max_tokens: 1024,
        system: SYSTEM,
        tools: [{ name: "Bash", input_schema: { type: "object" } }],
        messages,
        ...extra,
      }),
    ),
  };
}
const aUser = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const aCall = (id: string) => ({
  role: "assistant",
  content: [
    { type: "text", text: `running ${id}` },
    { type: "tool_use", id, name: "Bash", input: { command: id } },
  ],
});
const aResult = (id: string) => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content: `output of ${id}` }],
});
const SUMMARY = "The user asked to fix the login test; both commands ran and the test passes.";
const BLOCK = { type: "compaction", content: SUMMARY, signature: "sig-1" };

/** Anthropic's streamed answer to a compaction request: the block alone, its value in a compaction_delta. */
function blockAnswer(): Buffer {
  const events = [
    { type: "message_start", message: { id: "msg_c", role: "assistant", content: [] } },
    { type: "content_block_start", index: 0, content_block: { type: "compaction", content: null } },
    {
      type: "content_block_delta",
      index: 0,
      delta: { type: "compaction_delta", content: SUMMARY, encrypted_content: null },
    },
    { type: "content_block_stop", index: 0 },
    { type: "message_stop" },
  ];
  return Buffer.from(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""));
}

test("Anthropic's on-demand compaction: the block stays first, the restatement right after it, then the round, then the prompt", async () => {
  const core = createGuardCore({ anchors: "Never push to main without review." });
  const history = [
    aUser("Fix the failing login test"),
    aCall("t1"),
    aResult("t1"),
    aCall("t2"),
    aResult("t2"),
  ];
  await core.handle(anthropic(history));
  const req = anthropic(history, { compaction: { type: "summarize" } });
  const c = await core.handle(req);
  assert.equal(c.body, req.body);
  assert.match(c.note ?? "", /provider's own compaction \(the compaction parameter\)/);
  c.relayed!(blockAnswer());
  // The request after it: the block first, in place of the messages it summarizes, then the new prompt.
  const o = await core.handle(
    anthropic([{ role: "assistant", content: [BLOCK] }, aUser("Now run the suite")]),
  );
  assert.ok(o.verdict, o.note ?? "");
  assert.equal(o.verdict.kept, false);
  assert.equal(o.verdict.repaired, true, o.verdict.repair_refused ?? "");
  const sent = docOf(o).messages as Item[];
  assert.deepEqual(sent[0], { role: "assistant", content: [BLOCK] }, "the block is still the first block");
  assert.equal(sent[1]!.role, "user");
  assert.ok(String((sent[1]!.content as Item[])[0]!.text).startsWith(ANCHORS_HEADING));
  assert.deepEqual(sent.slice(2, -1), history);
  assert.deepEqual(sent.at(-1), aUser("Now run the suite"));
  assert.equal(anthropicAdjacency(sent), undefined);
  assert.equal(docOf(o).system, SYSTEM);
  // The spliced history keeps the contract against the history before, one checkpoint.
  const m = messagesOf(readWire("anthropic-messages", docOf(o)).items);
  const before = messagesOf(readWire("anthropic-messages", docOf(anthropic(history))).items);
  const v = validateSurvivalContract(before, m.slice(0, -1), {
    anchors: "Never push to main without review.",
  });
  assert.equal(v.valid, true, v.reason ?? "");
  assert.equal(checkpointsOf(m).length, 1);
  await core.close();
});
