/**
 * The live state in the repair: with a workspace, the guard's restatement,
 * further content of the agent's summary message (one checkpoint), restates
 * the checkpoint's `## Live state` lines, read
 * at the compaction (the same bytes in every later request and after a
 * restart, though the workspace moved on); without one, no live state.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { gitRepo, hasGit } from "../../../test/git-repo.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validateSurvivalContract } from "../../contract/validate.js";
import { createGuardCore } from "../core.js";
import { readWire } from "../reading/wires.js";
import { messagesOf } from "../reading/history.js";
import { ANCHORS_HEADING, RESTATED_HEADING } from "./splice.js";
import { answerOn } from "./answer.js";
import type { GuardCoreOptions, GuardOutcome, WireRequest } from "../types.js";

/** A git repository on branch feature/x with one commit; `g` runs git in it. */
function repo(): { ws: string; g: (...args: string[]) => string } {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), "guard-ws-")));
  return { ws, g: gitRepo(ws) };
}

const TOOLS = [{ name: "Bash", description: "run", input_schema: { type: "object" } }];
const SUMMARY =
  "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nThe parser was fixed: it handles empty input.";

function claude(messages: unknown[]): WireRequest {
  return {
    method: "POST",
    url: "/v1/messages?beta=true",
    headers: { "x-claude-code-session-id": "live-1", "user-agent": "claude-cli/2.1.328" },
    body: Buffer.from(JSON.stringify({ model: "claude-x", max_tokens: 100, tools: TOOLS, messages })),
  };
}
const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const call = (id: string) => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "Bash", input: { command: id } }],
});
const result = (id: string) => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content: `out ${id}` }],
});
const HISTORY = [
  user("fix the parser"),
  call("t1"),
  result("t1"),
  call("t2"),
  result("t2"),
  { role: "assistant", content: [{ type: "text", text: "fixed" }] },
];
const AFTER = [user(SUMMARY), user("now add a test")];

const listOf = (o: GuardOutcome): Record<string, unknown>[] =>
  (JSON.parse(o.body.toString("utf8")) as { messages: Record<string, unknown>[] }).messages;
/** The guard's restatement in a spliced request: its message and its text block, or undefined. */
function restatedIn(
  list: Record<string, unknown>[],
): { el: Record<string, unknown>; text: string } | undefined {
  for (const el of list) {
    if (el.role !== "user" || !Array.isArray(el.content)) continue;
    for (const b of el.content as { type: string; text?: string }[])
      if (b.type === "text" && b.text?.startsWith("[compact-safe guard]")) return { el, text: b.text };
  }
  return undefined;
}
const restated = (o: GuardOutcome) => restatedIn(listOf(o));

/** The session through its compaction: the outcome of the first request after it. */
async function compacted(options: GuardCoreOptions) {
  const core = createGuardCore(options);
  await core.handle(claude(HISTORY));
  // The agent's summarization request, and its answer relayed: what proves the compaction.
  const summ = await core.handle(claude([...HISTORY, user("CRITICAL: Respond with TEXT ONLY. Summarize.")]));
  const answer = answerOn(
    "anthropic-messages",
    {},
    "<summary>The parser was fixed: it handles empty input.</summary>",
    0,
    0,
  );
  summ.relayed!(answer.body as Buffer);
  const o = await core.handle(claude(AFTER));
  return { core, o };
}

test(
  "with a workspace: the repair restates its live state, read at the compaction, the same bytes later and after a restart",
  { skip: !hasGit() },
  async () => {
    const { ws, g } = repo();
    const state = mkdtempSync(join(tmpdir(), "guard-live-state-"));
    try {
      const head = g("rev-parse", "HEAD");
      const { core, o } = await compacted({ workspace: ws, anchors: "never push to main", stateDir: state });
      assert.equal(o.verdict?.kept, false);
      assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? "");
      const list = listOf(o);
      const el = restatedIn(list);
      assert.ok(el, "the restatement is spliced");
      // On the summary's own message, after the agent's summary (unchanged): one checkpoint.
      assert.equal(list.indexOf(el.el), 0);
      assert.deepEqual((el.el.content as unknown[])[0], AFTER[0]!.content[0]);
      assert.equal((el.el.content as unknown[]).length, 2);
      assert.deepEqual(list.at(-1), AFTER.at(-1));
      assert.equal(
        el.text,
        `${RESTATED_HEADING}\n\n## Anchors\nnever push to main\n\n## Live state\n` +
          `- git branch: feature/x\n- worktree: ${ws}\n- HEAD: ${head}\n- background work: none reported by the host`,
      );
      // The spliced request keeps the contract against the history before.
      const before = messagesOf(readWire("anthropic-messages", { messages: HISTORY }).items);
      const sent = messagesOf(readWire("anthropic-messages", { messages: list }).items).slice(0, -1);
      assert.deepEqual(validateSurvivalContract(before, sent, { path: "summary" }), {
        valid: true,
        reason: null,
      });

      // The workspace moves on: later requests still carry the state at the compaction, byte for byte.
      writeFileSync(join(ws, "b.txt"), "b");
      g("checkout", "-q", "-b", "other");
      g("add", "b.txt");
      g("commit", "-q", "-m", "two");
      const later = [...AFTER, { role: "assistant", content: [{ type: "text", text: "ok" }] }, user("more")];
      const o2 = await core.handle(claude(later));
      assert.equal(o2.changed, true);
      assert.equal(JSON.stringify(restated(o2)), JSON.stringify(el));
      await core.close();

      const restarted = createGuardCore({ workspace: ws, anchors: "never push to main", stateDir: state });
      const o3 = await restarted.handle(
        claude([
          ...later,
          { role: "assistant", content: [{ type: "text", text: "done" }] },
          user("and more"),
        ]),
      );
      assert.equal(o3.changed, true, o3.note ?? "");
      assert.equal(
        JSON.stringify(restated(o3)),
        JSON.stringify(el),
        "a restarted guard splices the same bytes",
      );
      await restarted.close();
    } finally {
      rmSync(ws, { recursive: true, force: true });
      rmSync(state, { recursive: true, force: true });
    }
  },
);

test("with a workspace outside git: the live state says so; without anchors, the live state alone", async () => {
  const ws = mkdtempSync(join(tmpdir(), "guard-nogit-"));
  try {
    const { o } = await compacted({ workspace: ws });
    assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? "");
    const text = restated(o)!.text;
    assert.ok(text.startsWith(`${RESTATED_HEADING}\n\n## Live state\n`), text);
    assert.ok(!text.includes("## Anchors"));
    assert.match(text, /- background work: none reported by the host$/);
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test("without a workspace: no live state (the anchors alone, as before; nothing when there are none)", async () => {
  const { o } = await compacted({ anchors: "never push to main" });
  assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? "");
  assert.equal(restated(o)!.text, `${ANCHORS_HEADING}\nnever push to main`);
  assert.ok(!o.body.toString("utf8").includes("## Live state"));

  const bare = await compacted({});
  assert.equal(bare.o.verdict?.repaired, true, bare.o.verdict?.repair_refused ?? "");
  assert.equal(restated(bare.o), undefined);
  assert.equal(listOf(bare.o).length, AFTER.length + HISTORY.length);
});

test("the restatement on the Chat wire (pi): further text of the summary's own message", async () => {
  const ws = mkdtempSync(join(tmpdir(), "guard-nogit-"));
  try {
    const core = createGuardCore({ workspace: ws, anchors: "keep the API stable" });
    const sys = {
      role: "system",
      content: "You are an expert coding assistant operating inside pi, a coding agent harness.",
    };
    const tc = (id: string) => ({
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: "bash", arguments: "{}" } }],
    });
    const chat = (messages: unknown[]): WireRequest => ({
      method: "POST",
      url: "/v1/chat/completions",
      headers: { session_id: "chat-live" },
      body: Buffer.from(
        JSON.stringify({ model: "m", messages, tools: [{ type: "function", function: { name: "bash" } }] }),
      ),
    });
    const history = [
      sys,
      { role: "user", content: "refactor" },
      tc("a"),
      { role: "tool", tool_call_id: "a", content: "ra" },
      { role: "assistant", content: "done" },
    ];
    await core.handle(chat(history));
    // pi's summarization request, and its answer relayed: what proves the compaction.
    const summ = await core.handle(
      chat([
        sys,
        {
          role: "user",
          content:
            "<conversation>\n[User]: refactor\n\n[Assistant]: done\n</conversation>\n\nCreate a structured context checkpoint summary",
        },
      ]),
    );
    summ.relayed!(answerOn("openai-chat", {}, "work: the refactor is done", 0, 0).body as Buffer);
    const o = await core.handle(
      chat([
        sys,
        {
          role: "user",
          content:
            "The conversation history before this point was compacted into the following summary:\n\nwork: the refactor is done",
        },
        { role: "user", content: "next" },
      ]),
    );
    assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? "");
    const msgs = (JSON.parse(o.body.toString("utf8")) as { messages: { role: string; content: unknown }[] })
      .messages;
    const at = msgs.findIndex((m) => typeof m.content === "string" && m.content.includes(RESTATED_HEADING));
    assert.equal(at, 1, "the summary's own message");
    assert.ok(
      String(msgs[at]!.content).startsWith(
        "The conversation history before this point was compacted into the following summary:\n\nwork: the refactor is done\n\n",
      ),
      "the agent's summary first, unchanged",
    );
    assert.equal(msgs.at(-2)!.content, "done", "the round after it, then the new prompt");
    assert.match(String(msgs[at]!.content), /## Anchors\nkeep the API stable\n\n## Live state\n/);
    await core.close();
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});
