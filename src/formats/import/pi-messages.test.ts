/** The `pi-messages` format: a JSON array of pi's agent messages (what the pi adapter converts), read as pi reads them. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { liveContext } from "../../journal/tree.js";
import { detectFormat, importText } from "../detect.js";

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
/** pi-ai messages as pi's agent keeps them (`AgentMessage[]`): a call, its result, a `!` command. */
const piMessages = [
  { role: "user", content: [{ type: "text", text: "read a" }], timestamp: 1 },
  {
    role: "assistant",
    content: [{ type: "toolCall", id: "c1", name: "read", arguments: { p: "a" } }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude",
    usage,
    stopReason: "toolUse",
    timestamp: 2,
  },
  {
    role: "toolResult",
    toolCallId: "c1",
    toolName: "read",
    content: [{ type: "text", text: "A" }],
    isError: false,
    timestamp: 3,
  },
  {
    role: "bashExecution",
    command: "ls",
    output: "a\n",
    exitCode: 0,
    cancelled: false,
    truncated: false,
    timestamp: 4,
  },
  {
    role: "assistant",
    content: [{ type: "text", text: "done" }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude",
    usage,
    stopReason: "stop",
    timestamp: 5,
  },
];

test("a JSON array of pi agent messages is detected as pi-messages and read with its tool pair", () => {
  const text = JSON.stringify(piMessages);
  assert.equal(detectFormat(text, "agent.json"), "pi-messages");
  const { entries, report } = importText(text, "agent.json");
  assert.equal(report.imported, 5);
  const live = liveContext(entries);
  assert.deepEqual(
    live.map((m) => m.role),
    ["user", "assistant", "user", "user", "assistant"],
  );
  assert.deepEqual(live[1]!.content[0], { type: "tool_use", id: "c1", name: "read", input: { p: "a" } });
  assert.deepEqual(live[2]!.content[0], {
    type: "tool_result",
    tool_use_id: "c1",
    content: "A",
    is_error: false,
  });
  assert.match((live[3]!.content[0] as { text: string }).text, /ls/);
  assert.equal(importText(text, "agent.json", { format: "pi-messages" }).report.format, "pi-messages");
});
