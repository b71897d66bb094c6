/**
 * Sessions never mix (issue 43, item 2): a request is repaired only with
 * what the session it provably continues held. pi sessions without a session
 * id, interleaved or one at a time across restarts, each compacting; a
 * summary relayed through the proxy proving its session; two clients on one
 * Claude Code session id; a compaction that proves nothing; and the reading
 * of relayed answers.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { gzipSync } from "node:zlib";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { createGuardCore } from "../core.js";
import { startGuard } from "../server/server.js";
import { answerOn } from "../judging/answer.js";
import { answerText, fingerprintOf, foundIn } from "../reading/relayed.js";
import type { GuardCore, GuardOutcome, GuardWire, WireRequest } from "../types.js";

// ---------------------------------------------------------------- pi-shaped sessions (Chat, no session id)

const PI_SYSTEM = {
  role: "system",
  content: "You are an expert coding assistant operating inside pi, a coding agent harness.",
};
const PI_SUMMARY_OPENER =
  "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";

/** A marker no other session's text holds. */
const mark = (k: number | string): string => `[[s${k}]]`;

function chat(messages: unknown[]): WireRequest {
  return {
    method: "POST",
    url: "/v1/chat/completions",
    headers: { "user-agent": "pi-coding-agent" },
    body: Buffer.from(
      JSON.stringify({
        model: "m",
        messages,
        tools: [{ type: "function", function: { name: "bash" } }],
        stream: true,
      }),
    ),
  };
}

/** Session k's history before its compaction: a task, two calls, the answer. */
function piHistory(k: number): unknown[] {
  const call = (n: number) => ({
    role: "assistant",
    content: null,
    tool_calls: [
      {
        id: `call_${k}_${n}`,
        type: "function",
        function: { name: "bash", arguments: JSON.stringify({ command: `make ${mark(k)} step ${n}` }) },
      },
    ],
  });
  const result = (n: number) => ({
    role: "tool",
    tool_call_id: `call_${k}_${n}`,
    content: `${mark(k)} ok ${n}`,
  });
  return [
    PI_SYSTEM,
    { role: "user", content: `${mark(k)} fix module ${k}` },
    call(1),
    result(1),
    call(2),
    result(2),
    { role: "assistant", content: `${mark(k)} module ${k} is fixed` },
  ];
}

/** pi's summarization request of session k: its conversation serialized as text. */
const piSummarize = (k: number): WireRequest =>
  chat([
    { role: "system", content: "You are a context summarization assistant." },
    {
      role: "user",
      content:
        `<conversation>\n[User]: ${mark(k)} fix module ${k}\n\n[Assistant tool calls]: bash(command="make")\n\n` +
        `[Tool result]: ok\n\n[Assistant]: ${mark(k)} module ${k} is fixed\n</conversation>\n\n` +
        "The messages above are a conversation to summarize. Create a structured context checkpoint summary",
    },
  ]);

/** The summary session k's model answers (its last round is not in it). */
const piSummaryText = (k: number): string =>
  `## Goal\n${mark(k)} fix module ${k}\n\n## Progress\nwork started`;

/** Session k after its compaction: pi's summary message, then `turns` more messages. */
const piAfter = (k: number, ...turns: unknown[]): unknown[] => [
  PI_SYSTEM,
  { role: "user", content: `${PI_SUMMARY_OPENER}${piSummaryText(k)}\n</summary>` },
  { role: "user", content: `${mark(k)} now test module ${k}` },
  ...turns,
];

/** An answer on `wire` as the upstream streams it, whole. */
function streamed(wire: GuardWire, text: string): Buffer {
  return Buffer.concat(answerOn(wire, { stream: true }, text, 0, 0).body as Buffer[]);
}

/** Every marker but session k's found in a body sent upstream. */
function foreign(body: Buffer, k: number, all: readonly number[]): string[] {
  const text = body.toString("utf8");
  return all.filter((j) => j !== k && text.includes(mark(j))).map(mark);
}

describe("pi sessions without a session id never mix", () => {
  test("six interleaved sessions, same system prompt, each compacting: every request carries its own session's texts only, each repaired with its own round", async () => {
    const core = createGuardCore();
    const ks = [1, 2, 3, 4, 5, 6];
    const sent: [number, GuardOutcome][] = [];
    const send = async (k: number, r: WireRequest): Promise<GuardOutcome> => {
      const o = await core.handle(r);
      sent.push([k, o]);
      return o;
    };
    for (const k of ks) await send(k, chat(piHistory(k).slice(0, 4)));
    for (const k of ks) await send(k, chat(piHistory(k)));
    const summaries = await Promise.all(ks.map((k) => send(k, piSummarize(k))));
    // The answers come back in another order than the requests went.
    for (const k of [...ks].reverse()) summaries[k - 1]!.relayed!(streamed("openai-chat", piSummaryText(k)));
    for (const k of ks) {
      const o = await send(k, chat(piAfter(k)));
      assert.equal(o.verdict?.kept, false, `session ${k}: the round was lost`);
      assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? o.note ?? "");
      assert.ok(o.body.includes(`call_${k}_2`), `session ${k} gets its own round back`);
    }
    for (const k of ks) {
      const o = await send(
        k,
        chat(
          piAfter(
            k,
            { role: "assistant", content: "ok" },
            { role: "user", content: `${mark(k)} and commit` },
          ),
        ),
      );
      assert.equal(o.verdict, undefined);
      assert.equal(o.changed, true, `session ${k}: its splice in every later request`);
      assert.ok(o.body.includes(`call_${k}_1`));
    }
    for (const [k, o] of sent) assert.deepEqual(foreign(o.body, k, ks), [], `a request of session ${k}`);
    await core.close();
  });

  test("one session at a time on one state folder, restarted between them: a session resumed after another's compaction is still itself", async () => {
    const dir = mkdtempSync(join(tmpdir(), "guard-sessions-"));
    const ks = [1, 2, 3];
    const sent: [number, GuardOutcome][] = [];
    let core: GuardCore = createGuardCore({ stateDir: dir });
    const restart = async () => {
      await core.close();
      core = createGuardCore({ stateDir: dir });
    };
    const send = async (k: number, r: WireRequest): Promise<GuardOutcome> => {
      const o = await core.handle(r);
      sent.push([k, o]);
      return o;
    };
    try {
      for (const k of ks) {
        await send(k, chat(piHistory(k)));
        const s = await send(k, piSummarize(k));
        s.relayed!(streamed("openai-chat", piSummaryText(k)));
        // Session 2's compaction comes after a restart: the relayed summary is read back from the state folder.
        if (k === 2) await restart();
        const o = await send(k, chat(piAfter(k)));
        assert.equal(
          o.verdict?.repaired,
          true,
          `session ${k}: ${o.verdict?.repair_refused ?? o.note ?? "no verdict"}`,
        );
        await restart();
      }
      // Session 1 goes on after the others compacted: its request (its summary first) is still session 1's.
      const later = await send(
        1,
        chat(piAfter(1, { role: "assistant", content: "ok" }, { role: "user", content: `${mark(1)} go on` })),
      );
      assert.equal(later.verdict, undefined, later.note ?? "");
      assert.equal(later.changed, true, later.note ?? "");
      assert.ok(later.body.includes("call_1_2"), "session 1's splice, after restarts");
      for (const [k, o] of sent) assert.deepEqual(foreign(o.body, k, ks), [], `a request of session ${k}`);
      await core.close();
      // The index the proofs need is the owner's only.
      const index = readdirSync(dir).find((f) => f === "sessions.index");
      assert.ok(index, "the index is in the state folder");
      if (process.platform !== "win32") assert.equal(statSync(join(dir, index)).mode & 0o077, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the guard's own answer (summarizer extractive) proves the compaction that carries it", async () => {
    const core = createGuardCore({ summarizer: "extractive" });
    for (const k of [1, 2]) await core.handle(chat(piHistory(k)));
    const s = await core.handle(piSummarize(1));
    assert.ok(s.respond, s.note ?? "");
    const note = answerText(Buffer.concat(s.respond.body as Buffer[]));
    const o = await core.handle(
      chat([
        PI_SYSTEM,
        { role: "user", content: `${PI_SUMMARY_OPENER}${note}\n</summary>` },
        { role: "user", content: `${mark(1)} now test module 1` },
      ]),
    );
    assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? o.note ?? "");
    assert.ok(o.body.includes("call_1_2"));
    assert.deepEqual(foreign(o.body, 1, [1, 2]), []);
    await core.close();
  });

  test("a compaction that proves no session is a new one: held, untouched, not judged", async () => {
    const core = createGuardCore();
    await core.handle(chat(piHistory(1)));
    await core.handle(chat(piHistory(2)));
    // A summary nobody relayed, and nothing of any session's history after it.
    const req = chat(piAfter(3));
    const o = await core.handle(req);
    assert.equal(o.verdict, undefined);
    assert.equal(o.changed, false);
    assert.equal(o.body, req.body);
    const next = await core.handle(
      chat(piAfter(3, { role: "assistant", content: "ok" }, { role: "user", content: "more" })),
    );
    assert.equal(next.session, o.session, "held as a session of its own");
    assert.equal(next.changed, false);
    await core.close();
  });

  test("a compaction proven by what it kept: a run of the session's last history (its tool calls) after the summary", async () => {
    const core = createGuardCore();
    for (const k of [1, 2]) await core.handle(chat(piHistory(k)));
    // Session 2 keeps its last exchange and answer after the summary (pi's keepRecentTokens); no summary relayed.
    const kept = piHistory(2).slice(4);
    const req = chat([
      PI_SYSTEM,
      { role: "user", content: `${PI_SUMMARY_OPENER}${piSummaryText(2)}\n</summary>` },
      ...kept,
      { role: "user", content: `${mark(2)} go on` },
    ]);
    const o = await core.handle(req);
    assert.ok(o.verdict, o.note ?? "");
    assert.deepEqual(foreign(o.body, 2, [1, 2]), []);
    assert.ok(o.body.includes("call_2_1"), "repaired with session 2's round");
    await core.close();
  });
});

// ---------------------------------------------------------------- the summary relayed by the proxy

/** A fake model on 127.0.0.1: streams a summary of the session whose marker the summarization request holds. */
async function fakeModel(padBytes = 0): Promise<{
  url: string;
  bodies: Buffer[];
  answers: Buffer[];
  close(): Promise<void>;
}> {
  const bodies: Buffer[] = [];
  const answers: Buffer[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    bodies.push(body);
    const doc = JSON.parse(body.toString("utf8")) as { messages: { content: unknown }[] };
    const last = String(doc.messages.at(-1)!.content);
    const k = /\[\[s(\d+)\]\]/.exec(last)?.[1];
    const text = last.startsWith("<conversation>") ? piSummaryText(Number(k)) : "ok";
    // Padding: keep-alive comments before the answer (its text unchanged, its bytes more).
    const pad = Buffer.from(": keep-alive\n\n".repeat(Math.ceil(padBytes / 14)));
    const answer = Buffer.concat([text === "ok" ? Buffer.alloc(0) : pad, streamed("openai-chat", text)]);
    answers.push(answer);
    res.writeHead(200, { "content-type": "text/event-stream" });
    // Written in pieces, as a model streams.
    const piece = answer.length > 100_000 ? 64 * 1024 : 40;
    for (let at = 0; at < answer.length; at += piece) {
      res.write(answer.subarray(at, at + piece));
      await new Promise((r) => setImmediate(r));
    }
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    answers,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function post(base: string, r: WireRequest): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(r.url, base),
      {
        method: "POST",
        headers: { "content-type": "application/json", ...(r.headers as Record<string, string>) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(Buffer.concat(chunks)));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(r.body);
  });
}

describe("the summary relayed through the proxy", { timeout: 30_000 }, () => {
  test("the upstream's streamed answer to a session's summarization request proves that session's compaction; the agent gets it byte for byte", async () => {
    const model = await fakeModel();
    const guard = await startGuard({ upstream: model.url, log: () => {} });
    try {
      for (const k of [1, 2]) await post(guard.url, chat(piHistory(k)));
      const got = await post(guard.url, piSummarize(1));
      assert.ok(got.equals(model.answers.at(-1)!), "the answer reaches the agent unchanged");
      await post(guard.url, chat(piHistory(2).concat([{ role: "user", content: `${mark(2)} more` }])));
      await post(guard.url, chat(piAfter(1)));
      const up = model.bodies.at(-1)!;
      assert.ok(up.includes("call_1_2"), "session 1's compaction went up repaired with its round");
      assert.deepEqual(foreign(up, 1, [1, 2]), []);
    } finally {
      await guard.close();
      await model.close();
    }
  });

  test("an answer over 1 MiB is relayed to the agent whole but not read: it proves nothing", async () => {
    const model = await fakeModel(1024 * 1024);
    const guard = await startGuard({ upstream: model.url, log: () => {} });
    try {
      await post(guard.url, chat(piHistory(1)));
      const got = await post(guard.url, piSummarize(1));
      assert.ok(got.length > 1024 * 1024);
      assert.ok(got.equals(model.answers.at(-1)!), "the agent gets it byte for byte");
      const after = chat(piAfter(1));
      await post(guard.url, after);
      assert.ok(model.bodies.at(-1)!.equals(after.body), "the compaction went up untouched");
    } finally {
      await guard.close();
      await model.close();
    }
  });
});

// ---------------------------------------------------------------- two clients on one Claude Code session id

const TOOLS = [{ name: "Bash", description: "run", input_schema: { type: "object" } }];
const u = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const say = (text: string) => ({ role: "assistant", content: [{ type: "text", text }] });
const use = (id: string) => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "Bash", input: { command: id } }],
});
const res = (id: string) => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content: `out ${id}` }],
});
const CC_SUMMARY = (who: string) =>
  `This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n${who} worked on the parser and ran its tests`;

function claude(messages: unknown[]): WireRequest {
  return {
    method: "POST",
    url: "/v1/messages?beta=true",
    headers: { "x-claude-code-session-id": "shared-1", "user-agent": "claude-cli/2.1.328" },
    body: Buffer.from(JSON.stringify({ model: "claude-x", max_tokens: 100, tools: TOOLS, messages })),
  };
}

describe("two clients on one Claude Code session id", () => {
  test("each compaction is repaired with its own client's turns only", async () => {
    const core = createGuardCore();
    const base = [u("resume the parser work"), say("resumed")];
    const turns = (who: string, n: number) =>
      Array.from({ length: n }, (_, i) => [
        u(`${who} step ${i}`),
        use(`${who}_t${i}`),
        res(`${who}_t${i}`),
        say(`${who} did ${i}`),
      ]).flat();
    const a = (n: number) => [...base, ...turns("[[A]]", n)];
    const b = (n: number) => [...base, ...turns("[[B]]", n)];
    // Both clients go on, turn by turn, one after the other.
    for (const n of [1, 2]) {
      await core.handle(claude(a(n)));
      await core.handle(claude(b(n)));
    }
    const summarize = (h: unknown[]) => claude([...h, u("CRITICAL: Respond with TEXT ONLY. Summarize.")]);
    const sa = await core.handle(summarize(a(2)));
    // Client B's turn between A's summarization request and its answer.
    await core.handle(claude(b(3)));
    sa.relayed!(
      streamed(
        "anthropic-messages",
        `<analysis>x</analysis>\n<summary>\n[[A]] worked on the parser and ran its tests\n</summary>`,
      ),
    );
    const oa = await core.handle(claude([u(CC_SUMMARY("[[A]]")), u("[[A]] next")]));
    assert.equal(oa.verdict?.repaired, true, oa.verdict?.repair_refused ?? oa.note ?? "");
    const bodyA = oa.body.toString("utf8");
    assert.ok(bodyA.includes("[[A]]_t1"), "client A's round");
    assert.ok(!bodyA.includes("[[B]]"), "nothing of client B");

    const sb = await core.handle(summarize(b(3)));
    sb.relayed!(
      streamed("anthropic-messages", `<summary>[[B]] worked on the parser and ran its tests</summary>`),
    );
    const ob = await core.handle(claude([u(CC_SUMMARY("[[B]]")), u("[[B]] next")]));
    assert.equal(ob.verdict?.repaired, true, ob.verdict?.repair_refused ?? ob.note ?? "");
    assert.ok(ob.body.includes("[[B]]_t2"), "client B's round");
    assert.ok(!ob.body.toString("utf8").includes("[[A]]"), "nothing of client A");
    // A's next turn still carries A's splice, and only it.
    const oa2 = await core.handle(
      claude([u(CC_SUMMARY("[[A]]")), u("[[A]] next"), say("ok"), u("[[A]] more")]),
    );
    assert.equal(oa2.changed, true, oa2.note ?? "");
    assert.ok(!oa2.body.toString("utf8").includes("[[B]]"));
    await core.close();
  });

  test("a rewind after a repaired compaction stays what it was: the session's splice goes on in it", async () => {
    const core = createGuardCore();
    const history = [u("fix it"), use("t1"), res("t1"), use("t2"), res("t2"), say("fixed")];
    await core.handle(claude(history));
    const s = await core.handle(claude([...history, u("CRITICAL: Respond with TEXT ONLY. Summarize.")]));
    s.relayed!(
      streamed("anthropic-messages", "<summary>[[R]] worked on the parser and ran its tests</summary>"),
    );
    const o = await core.handle(claude([u(CC_SUMMARY("[[R]]")), u("next"), say("ok"), u("more")]));
    assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? o.note ?? "");
    // The user rewinds to before "more" and types something else.
    const r = await core.handle(claude([u(CC_SUMMARY("[[R]]")), u("next"), say("ok"), u("something else")]));
    assert.equal(r.verdict, undefined);
    assert.equal(r.changed, true, r.note ?? "");
    assert.match(r.note ?? "", /history rewritten by the agent/);
    assert.ok(r.body.includes('"t2"'), "the splice goes on in the rewound history");
    await core.close();
  });

  test("across a restart, a summary relayed to one client proves nothing for the other's history", async () => {
    const dir = mkdtempSync(join(tmpdir(), "guard-two-clients-"));
    try {
      let core = createGuardCore({ stateDir: dir });
      const base = [u("resume the parser work"), say("resumed")];
      const a = [...base, u("[[A]] task"), use("A_t1"), res("A_t1"), say("[[A]] done")];
      const b = [...base, u("[[B]] task"), use("B_t1"), res("B_t1"), say("[[B]] done")];
      await core.handle(claude(a));
      const sa = await core.handle(claude([...a, u("CRITICAL: Respond with TEXT ONLY. Summarize.")]));
      sa.relayed!(
        streamed("anthropic-messages", "<summary>[[A]] worked on the parser and ran its tests</summary>"),
      );
      // Client B on the same id, last before the restart: the journal's branch read back is B's.
      await core.handle(claude(b));
      await core.close();
      core = createGuardCore({ stateDir: dir });
      const req = claude([u(CC_SUMMARY("[[A]]")), u("[[A]] next")]);
      const o = await core.handle(req);
      assert.equal(o.verdict, undefined, "not judged against client B's history");
      assert.equal(o.body, req.body);
      assert.ok(!o.body.toString("utf8").includes("[[B]]"));
      await core.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a compaction whose summary was never relayed proves nothing: a new branch, untouched; a session id alone is no proof", async () => {
    const core = createGuardCore();
    await core.handle(claude([u("fix it"), use("t1"), res("t1"), say("fixed")]));
    const req = claude([u(CC_SUMMARY("[[C]]")), u("next")]);
    const o = await core.handle(req);
    assert.equal(o.verdict, undefined);
    assert.equal(o.body, req.body);
    assert.match(o.note ?? "", /proves no history of the session/);
    const next = await core.handle(claude([u(CC_SUMMARY("[[C]]")), u("next"), say("ok"), u("more")]));
    assert.equal(next.changed, false, "the new branch goes on untouched");
    await core.close();
  });
});

// ---------------------------------------------------------------- relayed answers read back

describe("relayed answers", () => {
  const text = "<analysis>a</analysis>\n<summary>\nthe parser\n\nwas fixed, tests pass\n</summary>";
  test("the text of an answer on each wire, streamed or not, compressed or not", () => {
    for (const wire of ["anthropic-messages", "openai-responses", "openai-chat"] as const) {
      assert.equal(answerText(streamed(wire, text)), text, `${wire}, streamed`);
      const whole = answerOn(wire, {}, text, 0, 0).body as Buffer;
      assert.equal(answerText(whole), text, `${wire}, one object`);
      assert.equal(answerText(gzipSync(whole), "gzip"), text, `${wire}, gzip`);
    }
    assert.equal(answerText(Buffer.from("not an answer")), "");
  });

  test("a summary is found re-flowed inside the agent's summary message, and not in another text", () => {
    const fp = fingerprintOf(text)!;
    const kept =
      "This session is being continued...\n\nSummary:\nthe parser\nwas fixed, tests pass\n\nPlease continue.";
    assert.equal(foundIn(kept, [fp]).size, 1);
    assert.equal(foundIn("Summary:\nthe parser was fixed, tests fail", [fp]).size, 0);
    assert.equal(fingerprintOf("<summary>ok</summary>"), undefined, "too short to prove anything");
  });
});
