/**
 * The guard's core on a Claude Code session of the corpus, rendered as the
 * Anthropic request before its compaction, then the request after it (the
 * agent's own summary and a new prompt, the last round lost): judged not
 * kept, repaired, the repair checked by the contract, spliced the same into
 * later requests and after a restart; a compaction that kept the round; the
 * fast path on the same session.
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
import { toAnthropicRequest } from "../formats/export/anthropic.js";
import { validateSurvivalContract } from "../contract/validate.js";
import { protectedRound } from "../contract/rounds.js";
import { auditEntries } from "../route/audit.js";
import type { CompactionEntry, Message } from "../model/index.js";
import { allText, isCheckpoint } from "../contract/classify.js";
import { createGuardCore } from "./core.js";
import { readWire } from "./reading/wires.js";
import { messagesOf } from "./reading/history.js";
import { anthropicAdjacency } from "./judging/splice.js";
import { answerOn } from "./judging/answer.js";
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

/**
 * The agent's summarization request of `history`, and the upstream's answer
 * to it relayed: the summary the replacement carries (what proves the
 * compaction that follows, see proofs.ts).
 */
async function summarized(
  core: ReturnType<typeof createGuardCore>,
  history: readonly Message[],
  replacement: readonly Message[],
): Promise<GuardOutcome> {
  const os = await core.handle(
    claudeRequest([...history, u("CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\nsummarize")]),
  );
  const summary = allText(replacement.find(isCheckpoint)!);
  const answer = answerOn("anthropic-messages", { stream: true }, `<summary>${summary}</summary>`, 0, 0);
  os.relayed!(Buffer.concat(answer.body as Buffer[]));
  return os;
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
      // The upstream's answer, relayed: the summary the agent then keeps proves its compaction.
      const summary = allText(replacement.find(isCheckpoint)!);
      const answer = answerOn("anthropic-messages", { stream: true }, `<summary>${summary}</summary>`, 0, 0);
      os.relayed!(Buffer.concat(answer.body as Buffer[]));

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
    await summarized(core, before, replacement);
    const req = claudeRequest([...replacement, u("now run the tests please")]);
    const o = await core.handle(req);
    assert.equal(o.verdict?.kept, false);
    assert.equal(o.verdict?.repaired, false);
    assert.equal(o.body, req.body);
  });
});

corpusSuite("guard core's fast path (requests that extend the session, by their bytes)", () => {
  test("a turn let through on its bytes is judged only once its answer has gone out (WireRequest.answered)", async () => {
    const { before } = await claudeCompaction();
    const core = createGuardCore();
    await core.handle(claudeRequest(before.slice(0, before.length - 2)));
    await core.idle();
    let answeredNow!: () => void;
    const req = { ...claudeRequest(before), answered: new Promise<void>((r) => (answeredNow = r)) };
    const o = await core.handle(req);
    assert.equal(o.deferred, true);
    let idle = false;
    const idled = core.idle().then(() => (idle = true));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.equal(idle, false, "the judging waits for the answer");
    answeredNow();
    await idled;
    assert.equal(idle, true);
    await core.close();
  });

  test("turns sent back to back are answered untouched at once, judged in order; the compaction after them is still repaired", async () => {
    const { before, replacement } = await claudeCompaction();
    const lates: GuardOutcome[] = [];
    const core = createGuardCore({ onLate: (o) => lates.push(o) });
    // The growing session: three requests, each a turn more, sent without waiting for each other.
    const cuts = [before.length - 6, before.length - 4, before.length - 2, before.length];
    const first = await core.handle(claudeRequest(before.slice(0, cuts[0])));
    // A session its header names and the guard never held: nothing to repair yet, it goes out at once, read after.
    assert.equal(first.deferred, true, "a new session's first request goes out at once");
    assert.equal(first.changed, false);
    await core.idle();
    const reqs = cuts.slice(1).map((n) => claudeRequest(before.slice(0, n)));
    const outs = await Promise.all(reqs.map((r) => core.handle(r)));
    outs.forEach((o, i) => {
      assert.equal(o.body, reqs[i]!.body, "the very same Buffer");
      assert.equal(o.changed, false);
    });
    assert.equal(outs[0]!.deferred, true, "the next turn takes the fast path");
    await summarized(core, before, replacement);
    // The compaction after them: judged against the last of them (their history was kept in order).
    const o = await core.handle(claudeRequest([...replacement, u("now run the tests please")]));
    assert.equal(o.deferred, undefined);
    assert.equal(o.verdict?.kept, false);
    assert.equal(
      o.verdict?.messages_before,
      readWire("anthropic-messages", docOf(reqs.at(-1)!)).items.length,
    );
    assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? "");
    assert.equal(o.changed, true);
    await core.close();
    assert.deepEqual(lates, [], "nothing to tell about extensions");
  });

  test("moving cache markers do not stop the fast path; a changed earlier element does", async () => {
    const { before } = await claudeCompaction();
    const core = createGuardCore();
    const mark = (messages: Message[]): Record<string, unknown> => {
      const body = toAnthropicRequest(messages);
      const last = body.messages.at(-1)!;
      last.content = [
        ...last.content.slice(0, -1),
        { ...last.content.at(-1)!, cache_control: { type: "ephemeral" } },
      ];
      return { messages: body.messages, system: body.system };
    };
    const n = before.length - 4;
    await core.handle(claudeRequest(before.slice(0, n), mark(before.slice(0, n))));
    const o2 = await core.handle(claudeRequest(before.slice(0, n + 2), mark(before.slice(0, n + 2))));
    assert.equal(o2.deferred, true);
    // An edit of the first message: not an extension by bytes, so judged now (a rewrite).
    const edited = [u("a different first prompt"), ...before.slice(1, n + 4)];
    const o3 = await core.handle(claudeRequest(edited, mark(edited)));
    assert.equal(o3.deferred, undefined);
    assert.match(o3.note ?? "", /rewritten|not the session's history/);
    await core.close();
  });

  test("the agent's summarization request is never on the fast path; a note found after the answer reaches onLate", async () => {
    const { before } = await claudeCompaction();
    const lates: GuardOutcome[] = [];
    const dir = mkdtempSync(join(tmpdir(), "guard-late-"));
    try {
      const core = createGuardCore({ stateDir: dir, onLate: (o) => lates.push(o) });
      await core.handle(claudeRequest(before.slice(0, -2)));
      await core.idle();
      const summarize = await core.handle(
        claudeRequest([
          ...before.slice(0, -2),
          u("CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\nsummarize"),
        ]),
      );
      assert.equal(summarize.deferred, undefined);
      assert.match(summarize.note ?? "", /summarization request/);
      // The state folder goes away: the next (fast) request's journal write fails after its answer.
      rmSync(dir, { recursive: true, force: true });
      const o = await core.handle(claudeRequest(before));
      assert.equal(o.deferred, true);
      assert.equal(o.note, undefined);
      await core.idle();
      const o2 = await core.handle(claudeRequest([...before, u("and more")]));
      await core.idle();
      await core.close();
      const told = lates.map((l) => l.note ?? "").join("\n") + (o2.note ?? "");
      assert.match(told, /state not written/);
      assert.ok(lates.every((l) => l.deferred === true && l.session === `claude-code:${SESSION}`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
