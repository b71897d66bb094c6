/**
 * The guard on what Codex 0.169.0 really sent around its remote compaction
 * (test/fixtures/codex, recorded by `npm run test:clients -- --only guard
 * --guard-only remote`; see its README): three turns of a session with two
 * `exec_command` calls, the compaction request (an ordinary Responses request
 * ending with `{"type":"compaction_trigger"}`), and the turn after it (the
 * user's first prompt, the opaque `compaction` item, the new prompt). The
 * five requests, replayed through the core as Codex sent them, give a
 * compaction that is judged and repaired: the protected round after Codex's
 * item, the guard's restatement as the message right after the item, one
 * checkpoint; `audit` reads the guard's journal and the rollout alike.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validateSurvivalContract } from "../../contract/validate.js";
import { checkpointsOf, checkpointText } from "../../contract/classify.js";
import { GUARD_TEXT_PREFIX } from "../../contract/markers.js";
import { itemsToMessages } from "../../wire/responses.js";
import { importText } from "../../formats/detect.js";
import { parseJournal } from "../../journal/index.js";
import { auditEntries } from "../../route/audit.js";
import { createGuardCore } from "../core.js";
import type { GuardCoreOptions, GuardOutcome, WireRequest } from "../types.js";
import { repoRoot } from "../../../test/support.js";

type Item = Record<string, unknown>;
interface Recorded {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Item & { input: Item[] };
}

const DIR = join(repoRoot, "test", "fixtures", "codex");
const ROLLOUT = join(DIR, "codex-0.169.0-remote-compaction.jsonl");
const recorded = readFileSync(join(DIR, "codex-0.169.0-remote-compaction.requests.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as Recorded);
const PROMPT_2 = "Also run the whole suite afterwards.";
const ANCHORS = "Never push to main without review.";

const asRequest = (r: Recorded): WireRequest => ({
  method: r.method,
  url: r.path,
  headers: r.headers,
  body: Buffer.from(JSON.stringify(r.body)),
});
const inputOf = (o: GuardOutcome): Item[] => (JSON.parse(o.body.toString("utf8")) as { input: Item[] }).input;
const textOf = (it: Item | undefined): string =>
  Array.isArray(it?.content) ? (it.content as Item[]).map((c) => String(c.text ?? "")).join("") : "";

/** A message of Codex's own context (developer text, environment), not the conversation. */
const isContext = (it: Item): boolean =>
  it.type === "message" &&
  (it.role === "developer" || (it.role === "user" && textOf(it).startsWith("<environment_context>")));

const compactionAt = recorded.findIndex((r) => r.body.input.at(-1)?.type === "compaction_trigger");
const compactionRequest = recorded[compactionAt]!;
const after = recorded[compactionAt + 1]!;
const item = after.body.input.find((i) => i.type === "compaction")!;
/** The history before the compaction: the compaction request's input, the trigger aside. */
const before = compactionRequest.body.input.slice(0, -1);

/** The upstream's answer to the compaction request, as the fake streamed it: the item Codex then sent. */
function answer(): Buffer {
  const events = [
    { type: "response.created", response: { id: "resp_fake" } },
    { type: "response.output_item.added", output_index: 0, item },
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: { id: "resp_fake" } },
  ];
  return Buffer.from(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""));
}

/** The five requests through a core; the compaction request's answer relayed unless `relay` is false. */
async function replay(
  options: GuardCoreOptions,
  relay = true,
): Promise<{ compaction: GuardOutcome; after: GuardOutcome }> {
  const core = createGuardCore(options);
  const outs: GuardOutcome[] = [];
  for (const [i, r] of recorded.entries()) {
    const o = await core.handle(asRequest(r));
    if (i === compactionAt && relay) o.relayed?.(answer());
    outs.push(o);
    await core.idle();
  }
  await core.close();
  return { compaction: outs[compactionAt]!, after: outs[compactionAt + 1]! };
}

test("the recorded requests: three turns, Codex's remote compaction in the body, the turn after it", () => {
  assert.equal(recorded.length, 5);
  assert.equal(compactionAt, 3);
  assert.equal(compactionRequest.headers["x-codex-beta-features"], "remote_compaction_v2");
  assert.equal(textOf(after.body.input.at(-1)), PROMPT_2);
  assert.ok(typeof item.encrypted_content === "string");
  // Codex kept the user's first prompt before the item, and nothing of the round.
  const kept = after.body.input.filter((i) => !isContext(i));
  assert.deepEqual(
    kept.map((i) => i.type),
    ["message", "compaction", "message"],
  );
});

test("replayed through the guard: the compaction request passes untouched, the turn after it is judged and repaired after Codex's item", async () => {
  const { compaction, after: o } = await replay({ anchors: ANCHORS });
  assert.equal(compaction.changed, false);
  assert.equal(compaction.body.toString("utf8"), JSON.stringify(compactionRequest.body));
  assert.match(compaction.note ?? "", /provider's own compaction \(compaction_trigger\)/);
  assert.ok(o.verdict, o.note ?? "");
  assert.doesNotMatch(o.note ?? "", /not judged/);
  assert.equal(o.verdict.kept, false);
  assert.deepEqual(o.verdict.losses.tool_calls, ["call_read", "call_src"]);
  assert.equal(o.verdict.repaired, true, o.verdict.repair_refused ?? "");
  const sent = inputOf(o);
  const at = after.body.input.indexOf(item);
  // Everything Codex sent up to its item is where Codex put it, byte for byte.
  assert.deepEqual(sent.slice(0, at + 1), after.body.input.slice(0, at + 1));
  // Then the guard's restatement (the anchors), a user message of its own.
  assert.equal(sent[at + 1]!.role, "user");
  assert.ok(textOf(sent[at + 1]).startsWith(GUARD_TEXT_PREFIX));
  assert.ok(textOf(sent[at + 1]).includes(ANCHORS));
  // Then the protected round as Codex sent it before the compaction, then the prompt.
  const round = before.slice(before.findIndex((i) => textOf(i) === "Reading the test first."));
  assert.deepEqual(sent.slice(at + 2, -1), round);
  assert.deepEqual(
    round.filter((i) => i.type === "function_call").map((i) => i.call_id),
    ["call_read", "call_src"],
  );
  assert.deepEqual(sent.at(-1), after.body.input.at(-1));
  assert.ok(!JSON.stringify(sent).includes("compaction_trigger"));
  // Read as the project reads Responses items, Codex's context aside: the contract holds, one checkpoint.
  const conv = (items: Item[]) => itemsToMessages(items.filter((i) => !isContext(i)));
  const replacement = conv(sent.slice(0, -1));
  const v = validateSurvivalContract(conv(before), replacement, { anchors: ANCHORS });
  assert.equal(v.valid, true, v.reason ?? "");
  const cps = checkpointsOf(replacement);
  assert.equal(cps.length, 1);
  assert.ok(checkpointText(replacement, cps[0]!).includes(ANCHORS));
});

test("without a restatement the round follows Codex's item at once; without the relayed answer the kept prompt still proves the compaction", async () => {
  const { after: o } = await replay({}, false);
  assert.ok(o.verdict, o.note ?? "");
  assert.equal(o.verdict.repaired, true, o.verdict.repair_refused ?? "");
  const sent = inputOf(o);
  const at = sent.findIndex((i) => i.type === "compaction");
  assert.equal(textOf(sent[at + 1]), "Reading the test first.");
  assert.deepEqual(
    sent[at + 2],
    before.find((i) => i.call_id === "call_read" && i.type === "function_call"),
  );
});

test("audit reads the guard's journal of the replay and the rollout Codex wrote as the guard judged them", async () => {
  const state = mkdtempSync(join(tmpdir(), "guard-codex-remote-"));
  try {
    await replay({ stateDir: state, anchors: ANCHORS });
    const file = readdirSync(state).find((f) => f.endsWith(".jsonl"))!;
    const a = auditEntries(parseJournal(readFileSync(join(state, file), "utf8"), file).entries);
    assert.equal(a.compactions.length, 2);
    const [codex, repair] = a.compactions as [(typeof a.compactions)[0], (typeof a.compactions)[0]];
    assert.equal(codex.kept, false);
    assert.match(codex.reason ?? "", /^last round: /, "a loss of the round, never a missing checkpoint");
    assert.equal(codex.repaired_by, repair.id);
    assert.equal(repair.kept, true, repair.reason ?? "");
    assert.equal(repair.stacked_checkpoints, false);
    assert.deepEqual(repair.provider_compaction, { provider: "openai", opaque: true, summary_chars: 0 });
    assert.equal(a.unrepaired, 0);
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
  // The rollout: Codex's compaction is judged on what its replacement shows (the calls lost), one checkpoint.
  const { entries } = importText(readFileSync(ROLLOUT, "utf8"), ROLLOUT, { format: "codex" });
  const [c] = auditEntries(entries).compactions;
  assert.ok(c);
  assert.equal(c.source, "codex");
  assert.equal(c.kept, false);
  assert.match(c.reason ?? "", /^last round: /);
  assert.ok(c.losses.tool_calls.includes("call_read") && c.losses.tool_calls.includes("call_src"));
  assert.equal(c.stacked_checkpoints, false);
  assert.equal(c.placeholder, false);
  assert.deepEqual(c.provider_compaction, { provider: "openai", opaque: true, summary_chars: 0 });
});
