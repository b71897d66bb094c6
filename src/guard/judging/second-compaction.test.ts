/**
 * One checkpoint, also at the second compaction: the guard's restatement is
 * further content of the agent's summary message (never a message of its own,
 * never a user instruction), and what the guard inserted after the first
 * compaction is recognised as its own at the second one and replaced, not
 * stacked. After an opaque provider summary (a Responses `compaction` item),
 * which cannot take content, the restatement is the message right after it.
 */
import { test } from "node:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { CODEX_SUMMARY_PREFIX } from "../../formats/import/codex.js";
import { validateSurvivalContract } from "../../contract/validate.js";
import { isCheckpoint, isPlainUser } from "../../contract/classify.js";
import { createGuardCore } from "../core.js";
import { readWire } from "../reading/wires.js";
import { messagesOf } from "../reading/history.js";
import { ANCHORS_HEADING, insertAfter, summaryTakesContent, userTextElement } from "./splice.js";
import type { GuardOutcome, WireRequest } from "../types.js";

const inputOf = (o: GuardOutcome | WireRequest): Record<string, unknown>[] =>
  (JSON.parse(o.body.toString("utf8")) as { input: Record<string, unknown>[] }).input;

function codex(input: unknown[]): WireRequest {
  return {
    method: "POST",
    url: "/v1/responses",
    headers: { session_id: "conv-2nd", originator: "codex_cli_rs" },
    body: Buffer.from(
      JSON.stringify({
        model: "gpt-x",
        instructions: "You are Codex.",
        input,
        tools: [{ type: "function" }],
      }),
    ),
  };
}
const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
const call = (id: string) => ({
  type: "function_call",
  call_id: id,
  name: "shell",
  arguments: `{"cmd":"${id}"}`,
});
const out = (id: string) => ({ type: "function_call_output", call_id: id, output: `out ${id}` });
const say = (text: string) => ({
  type: "message",
  role: "assistant",
  content: [{ type: "output_text", text }],
});
const PROMPT = user("You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary");

/** The messages of a request body as the contract reads them. */
const messages = (o: GuardOutcome) =>
  messagesOf(readWire("openai-responses", JSON.parse(o.body.toString("utf8"))).items);

test("a second compaction: the guard's restatement is never an instruction nor a second checkpoint, and is replaced", async () => {
  const core = createGuardCore({ anchors: "never push to main" });
  const first = [user("fix the parser"), call("a1"), out("a1"), call("a2"), out("a2"), say("parser fixed")];
  await core.handle(codex(first));
  await core.handle(codex([...first, PROMPT]));
  const after1 = [
    user("fix the parser"),
    user(`${CODEX_SUMMARY_PREFIX}\nthe parser was fixed`),
    user("add a test"),
  ];
  const o1 = await core.handle(codex(after1));
  assert.equal(o1.verdict?.repaired, true, o1.verdict?.repair_refused ?? "");
  // One checkpoint, carrying the anchors; the restatement is not a user message of its own.
  const m1 = messages(o1);
  assert.equal(m1.filter(isCheckpoint).length, 1);
  assert.ok(
    m1.filter(isCheckpoint)[0]!.content.some((b) => JSON.stringify(b).includes(ANCHORS_HEADING)),
    "the anchors are on the checkpoint message",
  );
  assert.ok(!m1.some((m) => isPlainUser(m) && JSON.stringify(m).includes(ANCHORS_HEADING)));

  // The session goes on (each request carries the repair), then compacts again.
  const later = [...after1, call("b1"), out("b1"), call("b2"), out("b2"), say("test added")];
  const o2 = await core.handle(codex(later));
  assert.equal(o2.changed, true);
  await core.handle(codex([...later, PROMPT]));
  const after2 = [
    user("fix the parser"),
    user("add a test"),
    user(`${CODEX_SUMMARY_PREFIX}\nparser fixed, test added`),
    user("now the docs"),
  ];
  const o3 = await core.handle(codex(after2));
  assert.ok(o3.verdict, "the second compaction is judged");
  assert.equal(o3.verdict.kept, false);
  // What was lost is the round (b1, b2), never the guard's own restatement.
  assert.ok(!o3.verdict.losses.user_texts.some((t) => t.includes("[compact-safe guard]")));
  assert.equal(o3.verdict.repaired, true, o3.verdict.repair_refused ?? "");
  const sent = inputOf(o3);
  const text = JSON.stringify(sent);
  // The first summary and its restatement are gone; the new summary carries the anchors once.
  assert.ok(!text.includes("the parser was fixed"), "the earlier summary is not spliced back");
  assert.equal(text.split(ANCHORS_HEADING).length - 1, 1, "one restatement, not stacked");
  const m3 = messages(o3);
  assert.equal(m3.filter(isCheckpoint).length, 1);
  assert.ok(sent.some((i) => i.call_id === "b2"));
  // The spliced request keeps the contract against the history the session last sent (repair included).
  const before = messagesOf(readWire("openai-responses", JSON.parse(o2.body.toString("utf8"))).items);
  const judged = m3.slice(0, -1);
  const v = validateSurvivalContract(
    [...before, ...messagesOf(readWire("openai-responses", { input: later.slice(after1.length) }).items)],
    judged,
  );
  assert.equal(v.valid, true, v.reason ?? "");
  await core.close();
});

test("after an opaque provider summary (a Responses compaction item) the restatement is the message right after it", () => {
  const compactionItem = { type: "compaction", id: "cmp_1", encrypted_content: "OPAQUE" };
  const h = readWire("openai-responses", {
    input: [user("fix the parser"), compactionItem, user("add a test")],
  });
  const at = h.items.findIndex((it) => JSON.stringify(it.raw).includes("OPAQUE"));
  assert.equal(summaryTakesContent(h, at), false, "an opaque item cannot take content");
  const restatement = userTextElement(h.wire, `${ANCHORS_HEADING}\nnever push to main`);
  const { doc, start } = insertAfter(h, at, { raw: [restatement] });
  const sent = doc.input as unknown[];
  assert.deepEqual(sent[1], compactionItem, "the provider's item is untouched");
  assert.equal(start, 2);
  assert.deepEqual(sent[2], restatement, "the restatement right after it");
  // It is compact-safe's text: not the user's instruction.
  const m = messagesOf(readWire("openai-responses", doc).items);
  assert.ok(!m.some((x) => isPlainUser(x) && JSON.stringify(x).includes(ANCHORS_HEADING)));
  // A summary message takes it as further content instead.
  const h2 = readWire("openai-responses", { input: [user(`${CODEX_SUMMARY_PREFIX}\nwork`)] });
  assert.equal(summaryTakesContent(h2, 0), true);
});

test("the history before a compaction is the one the agent's compaction request carries (the last answer, the newest call)", async () => {
  const core = createGuardCore();
  // The last ordinary request ends with a result: the model's answer to it never comes back in a request
  // before the compaction; the agent's compaction request carries it, then the newest call and its result.
  const ordinary = [user("fix the parser"), call("a1"), out("a1")];
  await core.handle(codex(ordinary));
  const whole = [...ordinary, say("the parser is fixed"), call("a2"), out("a2")];
  const summ = await core.handle(codex([...whole, PROMPT]));
  assert.match(summ.note ?? "", /summarization request/);
  assert.equal(summ.changed, false);
  const o = await core.handle(
    codex([user("fix the parser"), user(`${CODEX_SUMMARY_PREFIX}\nfixed`), user("next task")]),
  );
  assert.ok(o.verdict);
  const wholeItems = readWire("openai-responses", JSON.parse(codex(whole).body.toString("utf8"))).items;
  assert.equal(
    o.verdict.messages_before,
    wholeItems.length,
    "judged against the compaction request's history",
  );
  assert.ok(o.verdict.losses.tool_calls.length > 0);
  assert.equal(o.verdict.repaired, true, o.verdict.repair_refused ?? "");
  const sent = JSON.stringify(inputOf(o));
  assert.ok(sent.includes("the parser is fixed"), "the model's answer to the last turn is back");
  assert.ok(sent.includes('"call_id":"a2"'), "the newest call and its result are back");
  await core.close();
});

test("Codex's remote compaction request (/responses/compact) is passed through and its history is the one judged", async () => {
  const core = createGuardCore();
  const ordinary = [user("fix the parser"), call("a1"), out("a1")];
  await core.handle(codex(ordinary));
  const whole = [...ordinary, say("the parser is fixed")];
  const req = { ...codex(whole), url: "/v1/responses/compact" };
  const c = await core.handle(req);
  assert.equal(c.body, req.body);
  assert.equal(c.changed, false);
  assert.match(c.note ?? "", /provider.s own compaction \(\/responses\/compact\)/);
  const o = await core.handle(
    codex([user("fix the parser"), { type: "compaction", id: "cmp", encrypted_content: "E" }, user("next")]),
  );
  assert.ok(o.verdict);
  const wholeItems = readWire("openai-responses", JSON.parse(codex(whole).body.toString("utf8"))).items;
  assert.equal(o.verdict.messages_before, wholeItems.length);
  assert.ok(o.verdict.losses.assistant_texts.some((t) => t.includes("the parser is fixed")));
  await core.close();
});

test("the repair is on disk when the spliced request goes out: a guard killed then and restarted sends the same splice", async () => {
  const state = mkdtempSync(join(tmpdir(), "guard-durable-"));
  try {
    const core = createGuardCore({ stateDir: state, anchors: "never push to main" });
    const first = [user("fix the parser"), call("a1"), out("a1"), call("a2"), out("a2"), say("parser fixed")];
    await core.handle(codex(first));
    const o = await core.handle(
      codex([
        user("fix the parser"),
        user(`${CODEX_SUMMARY_PREFIX}\nthe parser was fixed`),
        user("add a test"),
      ]),
    );
    assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? "");
    // Read at once, as a guard started after a SIGKILL here would: the repair's entry is there.
    const journals = readdirSync(state).filter((f) => f.endsWith(".jsonl"));
    const text = journals.map((f) => readFileSync(join(state, f), "utf8")).join("");
    assert.match(text, /"source_agent":"compact-safe-guard"/);
    const restarted = createGuardCore({ stateDir: state, anchors: "never push to main" });
    const next = await restarted.handle(
      codex([
        user("fix the parser"),
        user(`${CODEX_SUMMARY_PREFIX}\nthe parser was fixed`),
        user("add a test"),
        say("on it"),
        user("go"),
      ]),
    );
    assert.equal(next.changed, true, next.note ?? "");
    assert.equal(
      JSON.stringify(inputOf(next).slice(0, inputOf(o).length - 1)),
      JSON.stringify(inputOf(o).slice(0, -1)),
      "the same splice after the restart",
    );
    await restarted.close();
    await core.close();
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
});
