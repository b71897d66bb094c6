/** OpenHands trajectories: events mapped to messages, every event accounted for. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { liveContext } from "../../journal/tree.js";
import type { Message, ToolResultBlock, ToolUseBlock } from "../../model/index.js";
import { compactEntries } from "../../route/compact-journal.js";
import { validateSurvivalContract } from "../../contract/validate.js";
import { detectFormat, importText } from "../detect.js";

let nextId = 0;
/** tool_call_metadata as OpenHands writes it: the raw chat completion that made the call. */
function meta(
  fn: string,
  callId: string,
  responseId: string,
  text: string,
  calls: [string, string, unknown][],
) {
  return {
    function_name: fn,
    tool_call_id: callId,
    model_response: {
      id: responseId,
      choices: [
        {
          message: {
            role: "assistant",
            content: text,
            tool_calls: calls.map(([id, name, args]) => ({
              id,
              type: "function",
              function: { name, arguments: JSON.stringify(args) },
            })),
          },
        },
      ],
      usage: { prompt_tokens: 100, completion_tokens: 20 },
    },
    total_calls_in_response: calls.length,
  };
}
const ev = (o: Record<string, unknown>) => ({ id: nextId++, timestamp: "2025-06-01T10:00:00.000000", ...o });

function trajectory(): unknown[] {
  nextId = 0;
  const both: [string, string, unknown][] = [
    ["toolu_a", "execute_bash", { command: "pytest -q" }],
    ["toolu_b", "str_replace_editor", { command: "view", path: "/w/calc.py" }],
  ];
  return [
    ev({
      source: "environment",
      observation: "agent_state_changed",
      content: "",
      extras: { agent_state: "loading" },
    }),
    ev({ source: "agent", action: "system", args: { content: "You are OpenHands agent.", tools: [] } }),
    ev({
      source: "user",
      action: "message",
      message: "Fix calc.py",
      args: { content: "Fix calc.py", image_urls: null },
    }),
    ev({
      source: "user",
      action: "recall",
      args: { query: "Fix calc.py", recall_type: "workspace_context" },
    }),
    ev({
      source: "environment",
      observation: "recall",
      cause: 3,
      content: "Added workspace context",
      extras: {},
    }),
    ev({
      source: "agent",
      action: "run",
      message: "Running command: pytest -q",
      args: { command: "pytest -q", thought: "Let me look." },
      tool_call_metadata: meta("execute_bash", "toolu_a", "resp-1", "Let me look.", both),
    }),
    ev({
      source: "agent",
      action: "read",
      args: { path: "/w/calc.py", thought: "" },
      tool_call_metadata: meta("str_replace_editor", "toolu_b", "resp-1", "Let me look.", both),
    }),
    ev({
      source: "agent",
      observation: "run",
      cause: 5,
      content: "1 failed",
      extras: { command: "pytest -q", metadata: { exit_code: 1 } },
    }),
    ev({
      source: "agent",
      observation: "read",
      cause: 6,
      content: "def add(a, b):\n    return a - b",
      extras: { path: "/w/calc.py" },
      tool_call_metadata: meta("str_replace_editor", "toolu_b", "resp-1", "Let me look.", both),
    }),
    ev({
      source: "agent",
      action: "edit",
      args: { path: "/w/calc.py", command: "str_replace", old_str: "a - c", new_str: "a + b" },
      tool_call_metadata: meta("str_replace_editor", "toolu_c", "resp-2", "", [
        [
          "toolu_c",
          "str_replace_editor",
          { command: "str_replace", path: "/w/calc.py", old_str: "a - c", new_str: "a + b" },
        ],
      ]),
    }),
    ev({
      source: "agent",
      observation: "error",
      cause: 9,
      content: "No replacement was performed",
      extras: {},
    }),
    ev({
      source: "agent",
      action: "think",
      args: { thought: "The old string was wrong." },
      tool_call_metadata: meta("think", "toolu_d", "resp-3", "", [
        ["toolu_d", "think", { thought: "The old string was wrong." }],
      ]),
    }),
    ev({ source: "agent", observation: "think", cause: 11, content: "Your thought has been logged." }),
    ev({
      source: "agent",
      action: "message",
      args: { content: "Fixed: add now adds.", wait_for_response: true },
    }),
    ev({
      source: "agent",
      action: "finish",
      args: { final_thought: "Done.", outputs: {} },
      tool_call_metadata: meta("finish", "toolu_e", "resp-4", "", [
        ["toolu_e", "finish", { message: "Done." }],
      ]),
    }),
    ev({
      source: "environment",
      observation: "agent_state_changed",
      content: "",
      extras: { agent_state: "finished" },
    }),
    42,
  ];
}

const uses = (ms: Message[]) =>
  ms.flatMap((m) => m.content.filter((b): b is ToolUseBlock => b.type === "tool_use"));
const results = (ms: Message[]) =>
  ms.flatMap((m) => m.content.filter((b): b is ToolResultBlock => b.type === "tool_result"));

test("OpenHands trajectory: detected, every event accounted for, actions and observations mapped", () => {
  const doc = JSON.stringify(trajectory());
  assert.equal(detectFormat(doc, "trajectory.json"), "openhands");
  assert.equal(detectFormat(JSON.stringify({ trajectory: trajectory() }), "t.json"), "openhands");
  assert.equal(detectFormat(JSON.stringify({ history: trajectory() }), "t.json"), "openhands");
  const { entries, report } = importText(doc, "trajectory.json");
  assert.equal(report.format, "openhands");
  assert.equal(report.total, 17);
  assert.equal(report.imported + report.skipped.length, report.total);
  assert.deepEqual(
    report.skipped.map((s) => [s.line, s.by_design]),
    [
      [1, true],
      [4, true],
      [5, true],
      [16, true],
      [17, false],
    ],
  );
  assert.match(report.skipped[0]!.reason, /agent state change/);
  assert.equal(report.synthetic_results, 0);
  assert.equal(report.in_flight_calls, 0);
  const live = liveContext(entries);
  assert.deepEqual(
    live.map((m) => m.role),
    [
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
      "assistant",
    ],
  );
  // The two calls of one model response share one assistant message, with the response's text first.
  assert.deepEqual(live[2]!.content[0], { type: "text", text: "Let me look." });
  assert.deepEqual(
    uses(live).map((u) => [u.id, u.name, u.input]),
    [
      ["toolu_a", "execute_bash", { command: "pytest -q" }],
      ["toolu_b", "str_replace_editor", { command: "view", path: "/w/calc.py" }],
      [
        "toolu_c",
        "str_replace_editor",
        { command: "str_replace", path: "/w/calc.py", old_str: "a - c", new_str: "a + b" },
      ],
      ["toolu_d", "think", { thought: "The old string was wrong." }],
    ],
  );
  assert.deepEqual(
    results(live).map((r) => [r.tool_use_id, r.content, r.is_error ?? false]),
    [
      ["toolu_a", "1 failed", true],
      ["toolu_b", "def add(a, b):\n    return a - b", false],
      ["toolu_c", "No replacement was performed", true],
      ["toolu_d", "Your thought has been logged.", false],
    ],
  );
  assert.deepEqual(live[8]!.content, [{ type: "text", text: "Fixed: add now adds." }]);
  assert.deepEqual(live[9]!.content, [{ type: "text", text: "Done." }]);
});

test("OpenHands: an action without tool_call_metadata gets the stable id oh-<event id>; its observation answers it", () => {
  const doc = JSON.stringify([
    { id: 1, source: "user", action: "message", args: { content: "list files" } },
    { id: 2, source: "agent", action: "run", args: { command: "ls", thought: "Listing." } },
    { id: 3, source: "agent", observation: "run", cause: 2, content: "a.txt", extras: { exit_code: 0 } },
  ]);
  const { entries, report } = importText(doc, "t.json");
  assert.equal(report.imported, 3);
  const live = liveContext(entries);
  assert.deepEqual(live[1]!.content, [
    { type: "text", text: "Listing." },
    { type: "tool_use", id: "oh-2", name: "run", input: { command: "ls", thought: "Listing." } },
  ]);
  assert.deepEqual(live[2]!.content, [{ type: "tool_result", tool_use_id: "oh-2", content: "a.txt" }]);
});

test("a compaction of an OpenHands trajectory validates against the survival contract", async () => {
  nextId = 0;
  const out = Array.from({ length: 120 }, (_, i) => `line ${i}: some output of the test run`).join("\n");
  const events: unknown[] = [];
  for (let r = 0; r < 6; r++) {
    const user = nextId;
    events.push(ev({ source: "user", action: "message", args: { content: `Round ${r}: run the tests` } }));
    const call = nextId;
    events.push(
      ev({
        source: "agent",
        action: "run",
        args: { command: `pytest -k t${r}` },
        tool_call_metadata: meta("execute_bash", `call_${r}`, `resp-${r}`, "", [
          [`call_${r}`, "execute_bash", { command: `pytest -k t${r}` }],
        ]),
      }),
    );
    events.push(ev({ source: "agent", observation: "run", cause: call, content: `${r}\n${out}` }));
    events.push(
      ev({ source: "agent", action: "message", args: { content: `Round ${r} passes (${user}).` } }),
    );
  }
  const { entries, report } = importText(JSON.stringify(events), "t.json");
  assert.equal(report.imported, report.total);
  const original = liveContext(entries);
  const outcome = await compactEntries(entries, { target: 300 });
  assert.equal(outcome.kind, "compacted", outcome.kind === "nothing" ? outcome.reason : outcome.kind);
  if (outcome.kind !== "compacted") return;
  const verdict = validateSurvivalContract(original, outcome.result.replacement, {
    path: outcome.result.path,
  });
  assert.ok(verdict.valid, verdict.reason ?? "");
});

test("OpenHands: a forced wrong format names the other one, both ways", () => {
  const traj = JSON.stringify(trajectory());
  assert.throws(
    () => importText(traj, "t.json", { format: "openai" }),
    /looks like an openhands session \(give --format openhands/,
  );
  const messages = JSON.stringify([
    { role: "user", content: "hi" },
    { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input: {} }] },
  ]);
  assert.throws(
    () => importText(messages, "m.json", { format: "openhands" }),
    /none of its 2 events reads as openhands; it looks like an anthropic session/,
  );
});
