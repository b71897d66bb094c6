/** The wire readers: request → canonical messages → the raw elements they came from, for each wire. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readWire, routeOf } from "./wires.js";
import { partRaw } from "./history.js";
import { conversation } from "./detect.js";
import { leakedFragments, SECRET_SAMPLES } from "../../../test/secret-samples.js";

test("routes: the three wires, count_tokens and other requests passed through", () => {
  assert.deepEqual(routeOf("POST", "/v1/messages?beta=true"), { wire: "anthropic-messages" });
  assert.deepEqual(routeOf("POST", "/anthropic/v1/messages"), { wire: "anthropic-messages" });
  assert.deepEqual(routeOf("POST", "/v1/responses"), { wire: "openai-responses" });
  assert.deepEqual(routeOf("POST", "/v1/chat/completions"), { wire: "openai-chat" });
  assert.ok("passthrough" in routeOf("POST", "/v1/messages/count_tokens?beta=true"));
  assert.ok("passthrough" in routeOf("GET", "/v1/models"));
  assert.deepEqual(routeOf("POST", "/v1/responses/compact"), {
    wire: "openai-responses",
    compactRequest: true,
  });
});

const anthropicDoc = () => ({
  model: "m",
  system: [{ type: "text", text: "you are an agent", cache_control: { type: "ephemeral" } }],
  messages: [
    { role: "user", content: "fix the bug" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "let me look", signature: "sig==" },
        { type: "tool_use", id: "t1", name: "Read", input: { path: "a.ts" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "code" }] },
    {
      role: "user",
      content: [
        { type: "text", text: "This session is being continued from a previous conversation. Summary: x" },
        { type: "text", text: "and now do y", cache_control: { type: "ephemeral" } },
      ],
    },
  ],
});

test("an unknown endpoint's note: its path redacted, then cut at 80 characters (no part of a secret the cut falls in)", () => {
  for (const sample of SECRET_SAMPLES) {
    const secret = encodeURIComponent(sample.text);
    // The cut at 80 falls inside the secret, at several places.
    for (const lead of [40, 60, 75]) {
      const path = `/${"p".repeat(lead - 2)}/${secret}`;
      const r = routeOf("POST", path);
      assert.ok("passthrough" in r);
      assert.deepEqual(
        leakedFragments(r.passthrough, sample),
        [],
        `${sample.kind} at ${lead}: ${r.passthrough}`,
      );
      assert.ok(r.passthrough.length < 130, "still cut");
    }
  }
});

test("anthropic: every canonical message maps back to its raw element (a split message to its block range)", () => {
  const doc = anthropicDoc();
  const h = readWire("anthropic-messages", doc);
  assert.equal(h.items[0]!.message.role, "system");
  assert.deepEqual(h.items[0]!.parts, []);
  const conv = conversation(h.items);
  assert.equal(
    conv.length,
    5,
    "the message opening with a checkpoint marker after … is split: 4 raw, 5 canonical",
  );
  assert.deepEqual(conv[1]!.raw, [doc.messages[1]], "whole elements map to the very same value");
  assert.equal(conv[1]!.raw[0], doc.messages[1]);
  assert.equal(conv[1]!.message.content[0]!.type, "thinking");
  // The last raw message is split into a checkpoint and the prompt; both map back to block ranges of it.
  assert.deepEqual(conv[3]!.parts, [{ element: 3, from: 0, to: 1 }]);
  assert.deepEqual(conv[4]!.parts, [{ element: 3, from: 1, to: 2 }]);
  const joined = [
    ...(partRaw(h.list, conv[3]!.parts[0]!) as { content: unknown[] }).content,
    ...(partRaw(h.list, conv[4]!.parts[0]!) as { content: unknown[] }).content,
  ];
  assert.deepEqual(joined, doc.messages[3]!.content);
});

test("anthropic: keys ignore cache_control moving between requests, and see any other change", () => {
  const a = readWire("anthropic-messages", anthropicDoc());
  const moved = anthropicDoc();
  (moved.messages[3]!.content as Record<string, unknown>[])[1]!.cache_control = undefined;
  (moved.messages[2]!.content as Record<string, unknown>[])[0]!.cache_control = { type: "ephemeral" };
  const b = readWire("anthropic-messages", JSON.parse(JSON.stringify(moved)));
  assert.deepEqual(
    conversation(a.items).map((i) => i.key),
    conversation(b.items).map((i) => i.key),
  );
  const edited = anthropicDoc();
  (edited.messages[2]!.content as Record<string, unknown>[])[0]!.content = "other";
  const c = readWire("anthropic-messages", edited);
  assert.notEqual(conversation(a.items)[2]!.key, conversation(c.items)[2]!.key);
});

test("responses: items are finer than messages; each message remembers all its items", () => {
  const doc = {
    instructions: "be brief",
    input: [
      { type: "message", role: "user", content: [{ type: "input_text", text: "list files" }] },
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAA" },
      { type: "function_call", id: "fc_1", call_id: "c1", name: "shell", arguments: '{"cmd":"ls"}' },
      { type: "function_call_output", call_id: "c1", output: "a.ts" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "one file" }] },
    ],
  };
  const h = readWire("openai-responses", doc);
  assert.equal(h.items[0]!.message.role, "system");
  const conv = conversation(h.items);
  assert.deepEqual(
    conv.map((i) => i.parts.map((p) => p.element)),
    [[0], [1, 2], [3], [4]],
  );
  assert.deepEqual(conv[1]!.raw, [doc.input[1], doc.input[2]]);
  assert.equal(conv[1]!.message.content[1]!.type, "tool_use");
  assert.equal(conv[2]!.message.content[0]!.type, "tool_result");
});

test("chat: consecutive tool messages become one message of results, remembering each raw message", () => {
  const doc = {
    messages: [
      { role: "system", content: "sys" },
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "a", type: "function", function: { name: "read", arguments: '{"p":1}' } },
          { id: "b", type: "function", function: { name: "read", arguments: '{"p":2}' } },
        ],
      },
      { role: "tool", tool_call_id: "a", content: "1" },
      { role: "tool", tool_call_id: "b", content: "2" },
      { role: "assistant", content: "done" },
    ],
  };
  const h = readWire("openai-chat", doc);
  assert.deepEqual(
    h.items.map((i) => i.parts.map((p) => p.element)),
    [[0], [1], [2], [3, 4], [5]],
  );
  assert.deepEqual(h.items[3]!.raw, [doc.messages[3], doc.messages[4]]);
  assert.deepEqual(
    h.items[3]!.message.content.map((b) => (b as { tool_use_id: string }).tool_use_id),
    ["a", "b"],
  );
  assert.deepEqual((h.items[2]!.message.content[0] as { input: unknown }).input, { p: 1 });
});

test("a body that is not the wire's request is refused with a one-line reason", () => {
  assert.throws(() => readWire("anthropic-messages", { prompt: "x" }), /no messages array/);
  assert.throws(() => readWire("openai-chat", { messages: [1] }), /not a message/);
  assert.throws(() => readWire("openai-responses", { input: 3 }), /no input items/);
});
