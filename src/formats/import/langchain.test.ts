/** LangChain message dumps: detected from content, every stored message accounted for, parts joined, broken ones named. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { liveContext } from "../../journal/tree.js";
import type { Message } from "../../model/index.js";
import { detectFormat, importText } from "../detect.js";
import { messagesToLangChainStored } from "../../wire/langchain.js";

const history: Message[] = [
  { role: "user", content: [{ type: "text", text: "read a and b" }] },
  {
    role: "assistant",
    content: [
      { type: "tool_use", id: "c1", name: "read", input: { p: "a" } },
      { type: "tool_use", id: "c2", name: "read", input: { p: "b" } },
    ],
  },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "c1", content: "A" },
      { type: "tool_result", tool_use_id: "c2", content: "B", is_error: true },
    ],
  },
  { role: "assistant", content: [{ type: "text", text: "done" }] },
];

test("a dump (array or { messages }) is detected as langchain and read back to the same history", () => {
  const dump = messagesToLangChainStored(history);
  assert.equal(dump.length, 5); // the two results are two tool messages
  for (const text of [JSON.stringify(dump), JSON.stringify({ messages: dump })]) {
    assert.equal(detectFormat(text, "dump.json"), "langchain");
    const { entries, report } = importText(text, "dump.json");
    assert.equal(report.format, "langchain");
    assert.equal(report.total, 5);
    assert.equal(report.imported, 5);
    assert.deepEqual(report.by_source_kind, { human: 1, ai: 2, tool: 2 });
    assert.deepEqual(report.notes, ["messages 3–4 are the parts of one message, joined"]);
    assert.deepEqual(liveContext(entries), history);
  }
});

test("an OpenAI or Anthropic message array is not taken for a LangChain dump", () => {
  assert.equal(detectFormat(JSON.stringify([{ role: "user", content: "hi" }]), "x.json"), "openai");
  assert.equal(
    detectFormat(
      JSON.stringify([{ role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: "x" }] }]),
      "x.json",
    ),
    "anthropic",
  );
});

test("broken messages are skipped with the input's own path and counted; a call without its result is closed", () => {
  const dump = [
    ...messagesToLangChainStored(history.slice(0, 2)),
    { type: "tool", data: { content: "A" } },
    { type: "human", data: { content: 42 } },
    ...messagesToLangChainStored([{ role: "user", content: [{ type: "text", text: "next" }] }]),
  ];
  const { entries, report } = importText(JSON.stringify({ messages: dump }), "d.json", {
    format: "langchain",
  });
  assert.equal(report.total, 5);
  assert.equal(report.imported, 3);
  assert.deepEqual(
    report.skipped.map((s) => [s.line, s.reason, s.by_design]),
    [
      [3, "messages[2].data.tool_call_id: a tool message needs its tool_call_id (a string)", false],
      [4, "messages[3].data.content: must be a string or an array of content parts", false],
    ],
  );
  assert.equal(report.synthetic_results, 2);
  assert.equal(liveContext(entries).length, 4);
});

test("not JSON, and a JSON that is no dump, under --format langchain: one line naming the file", () => {
  assert.throws(
    () => importText("[", "d.json", { format: "langchain" }),
    /^FormatError: d\.json:1: truncated JSON/,
  );
  assert.throws(
    () => importText(JSON.stringify({ a: 1 }), "d.json", { format: "langchain" }),
    /d\.json: expected a LangChain message dump/,
  );
});

test("messages as JSON.stringify writes LangChain's own BaseMessages are detected and read as langchain", async () => {
  const { AIMessage, HumanMessage, SystemMessage, ToolMessage } = await import("@langchain/core/messages");
  const messages = [
    new SystemMessage("Be brief."),
    new HumanMessage("read a"),
    new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "read", args: { p: "a" } }] }),
    new ToolMessage({ content: "A", tool_call_id: "c1" }),
    new AIMessage("done"),
  ];
  const text = JSON.stringify(messages);
  assert.equal((JSON.parse(text) as { lc?: unknown }[])[0]!.lc, 1); // the serialized form, not the stored one
  assert.equal(detectFormat(text, "dump.json"), "langchain");
  for (const format of [undefined, "langchain" as const]) {
    const { entries, report } = importText(text, "dump.json", { format });
    assert.equal(report.format, "langchain");
    assert.equal(report.imported, 5);
    const live = liveContext(entries);
    assert.deepEqual(
      live.map((m) => m.role),
      ["system", "user", "assistant", "user", "assistant"],
    );
    assert.deepEqual(
      live[2]!.content.find((b) => b.type === "tool_use"),
      {
        type: "tool_use",
        id: "c1",
        name: "read",
        input: { p: "a" },
      },
    );
    assert.equal((live[3]!.content[0] as { tool_use_id: string }).tool_use_id, "c1");
  }
});
