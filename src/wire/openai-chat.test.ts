/**
 * One Chat reader: the `openai` importer and the guard's Chat wire read a
 * message alike (they used to differ: the guard left out a `refusal` field and
 * a text part's `cache_control`, the importer a `reasoning` field); only
 * legacy function calling is the importer's alone (the guard keeps those
 * elements opaque).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "../model/index.js";
import { importOpenAI } from "../formats/import/messages-json.js";
import { chatItems } from "../guard/reading/wire-chat.js";
import { chatChoiceCallsTools, fromChatMessage, toChatMessages } from "./openai-chat.js";

const imported = (list: unknown[]): Message[] =>
  importOpenAI(JSON.stringify(list), "chat.json")
    .entries.filter((e) => e.kind !== "header")
    .map((e) => {
      const { meta: _meta, ...m } = e.payload as Message;
      return m;
    });

const guarded = (list: unknown[]): Message[] => chatItems(list, 0).map((i) => i.message);

test("openai-chat: the importer and the guard read the same messages, every field of them", () => {
  const list = [
    { role: "system", content: [{ type: "text", text: "be brief", cache_control: { type: "ephemeral" } }] },
    { role: "user", content: "hi" },
    {
      role: "assistant",
      reasoning: "think first",
      content: "",
      refusal: "I cannot do that part.",
      tool_calls: [{ id: "c1", type: "function", function: { name: "ls", arguments: '{"path":"."}' } }],
    },
    { role: "tool", tool_call_id: "c1", content: "a\nb" },
  ];
  const want: Message[] = [
    { role: "system", content: [{ type: "text", text: "be brief", cache_control: { type: "ephemeral" } }] },
    { role: "user", content: [{ type: "text", text: "hi" }] },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "think first" },
        { type: "text", text: "I cannot do that part." },
        { type: "tool_use", id: "c1", name: "ls", input: { path: "." } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "a\nb" }] },
  ];
  assert.deepEqual(guarded(list), want);
  assert.deepEqual(imported(list), want);
});

test("openai-chat: legacy function calling is read by the importer and left opaque by the guard", () => {
  const list = [
    { role: "user", content: "go" },
    { role: "assistant", content: null, function_call: { name: "ls", arguments: "{}" } },
    { role: "function", name: "ls", content: "a" },
  ];
  assert.deepEqual(imported(list).slice(1), [
    { role: "assistant", content: [{ type: "tool_use", id: "fc_2", name: "ls", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "fc_2", content: "a" }] },
  ]);
  assert.deepEqual(guarded(list).slice(1), [{ role: "assistant", content: [] }]);
  assert.equal(fromChatMessage({ role: "function", content: "a" }), undefined);
});

test("openai-chat: written and read back; a choice asks for tools by its calls or its finish reason", () => {
  const messages: Message[] = [
    { role: "user", content: [{ type: "text", text: "hi" }] },
    { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "ls", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "x" }] },
  ];
  const back = toChatMessages(messages).map((m) => fromChatMessage(m as unknown as Record<string, unknown>));
  assert.deepEqual(back, messages);
  assert.equal(chatChoiceCallsTools({ finish_reason: "stop", message: { content: "x" } }), false);
  assert.equal(chatChoiceCallsTools({ finish_reason: "tool_calls", message: {} }), true);
  assert.equal(chatChoiceCallsTools({ message: { tool_calls: [{ id: "c" }] } }), true);
  assert.equal(chatChoiceCallsTools({ message: { function_call: { name: "f" } } }), true);
  assert.equal(chatChoiceCallsTools(undefined), false);
});
