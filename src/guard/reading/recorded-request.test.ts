/**
 * The guard on a request Claude Code really sent: the first `/v1/messages`
 * request of a fresh Claude Code 2.1.328 session on its default model
 * (claude-opus-5-5), as the fake model of `npm run test:clients -- --only
 * guard --guard-only fresh` recorded it (COMPACT_SAFE_SAVE_FRESH_REQUEST=DIR
 * writes it; see `savedRequest` in test/clients/guard.ts for what was
 * scrubbed and cut). Its `messages` are the user's prompt and, after it, a
 * `role: "system"` element (the environment, the deferred tools, the agent
 * types and skills) carrying `output_config`. The reader keeps that element
 * opaque, and a compaction sequence built on the recorded request (two turns
 * with a tool call, Claude Code's summarization request, the request after
 * the compaction with the system element where Claude Code puts it) is
 * judged and repaired, never "not judged". opaque.test.ts is the synthetic
 * version.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createGuardCore } from "../core.js";
import { answerOn } from "../judging/answer.js";
import { readWire } from "./wires.js";
import { anthropicAdjacency } from "../judging/splice.js";
import type { GuardOutcome, WireRequest } from "../types.js";
import { repoRoot } from "../../../test/support.js";

type Element = Record<string, unknown>;

const FIXTURE = join(repoRoot, "test", "fixtures", "claude-code", "claude-code-2.1.328-fresh-request.json");
const recorded = JSON.parse(readFileSync(FIXTURE, "utf8")) as Element & { messages: Element[] };
const SESSION = "00000000-0000-4000-8000-000000000001";
const PROMPT = "list the files in this folder";

const [opening, environment] = recorded.messages as [Element, Element];

const docOf = (o: GuardOutcome | WireRequest): Element => JSON.parse(o.body.toString("utf8")) as Element;

/** The recorded request with `messages` replaced, as Claude Code sends it (its headers, its session id). */
function request(messages: readonly unknown[]): WireRequest {
  return {
    method: "POST",
    url: "/v1/messages?beta=true",
    headers: {
      "x-claude-code-session-id": SESSION,
      "user-agent": "claude-cli/2.1.328 (external, sdk-cli)",
      "anthropic-version": "2023-06-01",
    },
    body: Buffer.from(JSON.stringify({ ...recorded, messages })),
  };
}

const text = (t: string) => ({ type: "text", text: t });
const user = (t: string) => ({ role: "user", content: [text(t)] });
const call = { role: "assistant", content: [text("Listing them."), toolUse("toolu_ls", "ls -la")] };
const result = {
  role: "user",
  content: [{ type: "tool_result", tool_use_id: "toolu_ls", content: "README.md\nsrc\npackage.json" }],
};
const answer = { role: "assistant", content: [text("Three entries: README.md, src and package.json.")] };

function toolUse(id: string, command: string) {
  return { type: "tool_use", id, name: "Bash", input: { command, description: "list files" } };
}

test("the recorded request: Claude Code 2.1.328's default model, a system element inside messages", () => {
  assert.equal(recorded.model, "claude-opus-5-5");
  assert.deepEqual(
    recorded.messages.map((m) => m.role),
    ["user", "system"],
  );
  assert.ok("output_config" in environment, "the system element carries output_config");
  assert.match(JSON.stringify(environment.content), /# Environment/);
  const content = opening.content as Element[];
  assert.equal(content.at(-1)!.text, PROMPT);
});

test("the recorded request is read: the system element is opaque, the prompt is the one conversation item", () => {
  const h = readWire("anthropic-messages", recorded);
  assert.equal(h.list.length, 2);
  // The top-level system prompt, then the user's message (element 0); element 1 is no item.
  assert.deepEqual(
    h.items.map((i) => i.message.role),
    ["system", "user"],
  );
  assert.deepEqual(
    h.items.slice(1).map((i) => i.parts[0]!.element),
    [0],
  );
  assert.ok(JSON.stringify(h.items[1]!.message.content).includes(PROMPT));
});

test("a compaction built on the recorded request is judged and repaired, the system element kept in place", async () => {
  const core = createGuardCore();
  const seen: GuardOutcome[] = [];
  const handle = async (messages: readonly unknown[]) => {
    const o = await core.handle(request(messages));
    seen.push(o);
    assert.doesNotMatch(o.note ?? "", /not judged/);
    return o;
  };
  try {
    // The session's first request, as recorded; then the turn with the call, its result and the answer.
    const first = await handle(recorded.messages);
    assert.equal(first.verdict, undefined);
    const turn = [opening, environment, call, result];
    await handle(turn);
    const history = [...turn, answer];
    // Claude Code's /compact: its summarization request goes through untouched.
    const summarize = await handle([
      ...history,
      user(
        "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\nYour task is to create a detailed summary.",
      ),
    ]);
    assert.equal(summarize.changed, false);
    assert.equal(summarize.verdict, undefined);
    // The upstream's answer, relayed to the session: what proves the compaction that follows.
    summarize.relayed!(
      answerOn(
        "anthropic-messages",
        {},
        "<summary>1. Primary Request and Intent: list the files.</summary>",
        0,
        0,
      ).body as Buffer,
    );
    // After /compact: the summary, the next prompt, and the system element at the end (where 2.1.328 puts it).
    const summary = user(
      "This session is being continued from a previous conversation that ran out of context. " +
        "The summary below covers the earlier portion of the conversation.\n\nSummary:\n1. Primary Request and Intent: list the files.",
    );
    const next = user("go on with the next step");
    const o = await handle([summary, next, environment]);
    assert.ok(o.verdict, "the compaction is judged");
    assert.equal(o.verdict.kept, false);
    assert.equal(o.verdict.repaired, true, o.verdict.repair_refused ?? "");
    const sent = docOf(o).messages as Element[];
    // The system element is where Claude Code put it, byte for byte; the prompt is just before it.
    assert.deepEqual(sent.at(-1), environment);
    assert.deepEqual(sent.at(-2), next);
    assert.deepEqual(sent[0], summary);
    const body = JSON.stringify(sent);
    assert.ok(body.includes(PROMPT), "the protected round's prompt is back");
    assert.ok(body.includes('"tool_use_id":"toolu_ls"'), "the protected round's result is back");
    assert.equal(anthropicAdjacency(sent), undefined);
    // The rest of the recorded body goes out as it came.
    const { messages: _sentMessages, ...rest } = docOf(o);
    const { messages: _recordedMessages, ...recordedRest } = recorded;
    assert.deepEqual(rest, recordedRest);
    // The next turn extends the repaired history: it carries the repair again and is not a compaction.
    const later = await handle([summary, next, { role: "assistant", content: [text("ok")] }, user("go")]);
    assert.equal(later.verdict, undefined);
    assert.equal(later.changed, true);
    assert.equal(seen.filter((x) => x.verdict !== undefined).length, 1);
  } finally {
    await core.close();
  }
});
