import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { detectFormat, importText } from "../detect.js";
import { itemsToMessages, toResponsesRequest } from "../../wire/responses.js";
import { responseItemsToMessages } from "../../wire/responses.js";
import type { Message } from "../../model/index.js";
import { liveContext } from "../../journal/index.js";
import { compactMessagesSafe } from "../../engine/index.js";
import { validateSurvivalContract } from "../../contract/index.js";
import { repoRoot } from "../../../test/support.js";

const fixturePath = join(repoRoot, "test", "fixtures", "responses", "login-fix.json");
const fixture = readFileSync(fixturePath, "utf8");
const doc = JSON.parse(fixture) as { instructions: string; input: Record<string, unknown>[] };

test("detection: item arrays, request bodies and responses are responses; chat arrays stay openai", () => {
  assert.equal(detectFormat(fixture, "body.json"), "responses");
  assert.equal(detectFormat(JSON.stringify(doc.input), "items.json"), "responses");
  assert.equal(
    detectFormat(
      JSON.stringify({ id: "resp_1", object: "response", output: doc.input.slice(3, 6) }),
      "r.json",
    ),
    "responses",
  );
  assert.equal(detectFormat(JSON.stringify({ model: "gpt-5", input: "hello" }), "r.json"), "responses");
  assert.equal(detectFormat(JSON.stringify([{ role: "user", content: "hi" }]), "c.json"), "openai");
  // Anthropic response objects say type "message" too; their text blocks are not Responses parts.
  const anthropicReplies = [
    { role: "user", content: "hi" },
    {
      id: "msg_1",
      type: "message",
      role: "assistant",
      content: [
        { type: "text", text: "reading" },
        { type: "tool_use", id: "toolu_1", name: "Read", input: { path: "a" } },
      ],
    },
  ];
  assert.equal(detectFormat(JSON.stringify(anthropicReplies), "a.json"), "anthropic");
  assert.equal(
    detectFormat(
      JSON.stringify([
        { role: "user", content: "hi" },
        { role: "assistant", content: null, tool_calls: [] },
      ]),
      "c.json",
    ),
    "openai",
  );
});

test("detection and round trip: openai 7's configuration_update item, kept whole", () => {
  const items = [
    { role: "user", content: "hi" },
    { type: "configuration_update", id: "cu_1", reasoning: { effort: "low" } },
  ];
  assert.equal(detectFormat(JSON.stringify(items), "items.json"), "responses");
  const messages = itemsToMessages(items);
  assert.deepEqual(messages[1]?.content, [{ type: "responses_item", item: items[1] }]);
  assert.deepEqual(toResponsesRequest(messages).input, items);
});

test("the fixture imports with every item accounted for; instructions become the system message m0", () => {
  const { entries, report } = importText(fixture, "login-fix.json");
  assert.equal(report.format, "responses");
  assert.equal(report.total, doc.input.length);
  assert.equal(report.imported, doc.input.length);
  assert.deepEqual(report.skipped, []);
  assert.equal(report.by_source_kind.reasoning, 6);
  assert.equal(report.by_source_kind.function_call, 6);
  assert.equal(report.by_source_kind["message:user"], 3);
  assert.match(report.notes.join("\n"), /instructions are imported as a system message/);
  assert.equal(entries[1]!.id, "m0");
  assert.equal(entries[2]!.id, "m1");
  // Every item is in exactly one entry (meta.source_items), in order.
  const seen = entries.flatMap(
    (e) => (e.payload as { meta?: { source_items?: number[] } }).meta?.source_items ?? [],
  );
  assert.deepEqual(
    seen,
    doc.input.map((_, i) => i),
  );
  // And back: the request body has the input items as they were (after the instructions' system message).
  const body = toResponsesRequest(liveContext(entries));
  assert.deepEqual(body.input.slice(1), doc.input);
  assert.deepEqual(body.input[0], {
    type: "message",
    role: "system",
    content: [{ type: "input_text", text: doc.instructions }],
  });
});

test("an invalid item is skipped with its path and why; the rest imports", () => {
  const input = [...doc.input];
  input[3] = { ...input[3], arguments: { command: "ls" } };
  input[7] = "not an item" as never;
  const { report } = importText(JSON.stringify({ input }), "bad.json");
  assert.equal(report.total, input.length);
  assert.equal(report.imported, input.length - 2);
  assert.deepEqual(
    report.skipped.map((s) => [s.line, s.reason, s.by_design]),
    [
      [4, "input[3].arguments: expected a string, got an object", false],
      [8, 'input[7]: expected an item object, got string "not an item"', false],
    ],
  );
  // The call's output stays, its call gone: the import makes it a tool result without its call, as other importers do.
  assert.equal(report.by_source_kind.invalid, 1);
});

test("a forced responses format on another format's file is an error naming what it looks like", () => {
  const chat = JSON.stringify([
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "t", type: "function", function: { name: "x", arguments: "{}" } }],
    },
    { role: "tool", tool_call_id: "t", content: "ok" },
  ]);
  assert.throws(
    () => importText(chat, "c.json", { format: "responses" }),
    /c\.json: none of its 2 items reads as responses; it looks like an openai session/,
  );
  assert.throws(
    () => importText('{"a":1}', "x.json", { format: "responses" }),
    /x\.json: expected an array of Responses input items/,
  );
});

test("a compaction of the fixture validates and keeps the protected reasoning and arguments byte for byte", async () => {
  const { entries } = importText(fixture, "login-fix.json");
  const live = liveContext(entries);
  const r = await compactMessagesSafe(live, { target: 1000 });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(r.path, "summary");
  const v = validateSurvivalContract(live, r.replacement);
  assert.ok(v.valid, String(v.reason));
  const out = toResponsesRequest(r.replacement).input;
  const last = doc.input.findIndex((i) => i.role === "user" && String(i.content).startsWith("Thanks."));
  for (const it of doc.input.slice(last))
    assert.ok(
      out.some((o) => JSON.stringify(o) === JSON.stringify(it)),
      JSON.stringify(it).slice(0, 80),
    );
  assert.ok(out.length < doc.input.length);
});

test("the Codex reader and this one group the same items alike and see the same pairs and texts", () => {
  const view = (ms: Message[]) =>
    ms.map((m) => ({
      role: m.role,
      calls: m.content.filter((b) => b.type === "tool_use").map((b) => (b as { id: string }).id),
      results: m.content
        .filter((b) => b.type === "tool_result")
        .map((b) => (b as { tool_use_id: string }).tool_use_id),
      texts: m.content.filter((b) => b.type === "text").map((b) => (b as { text: string }).text),
      encrypted: m.content
        .filter((b) => b.type === "redacted_thinking")
        .map((b) => (b as { data: string }).data),
    }));
  // Codex writes every item with its type (an EasyInputMessage without one is not in a rollout).
  const typed = doc.input.map((i) => (i.type === undefined ? { type: "message", ...i } : i));
  assert.deepEqual(view(itemsToMessages(typed)), view(responseItemsToMessages(typed)));
});

test("a compaction item is a message of its own, in both readers: the model's items around it are not joined to it", () => {
  const item = { type: "compaction", id: "cmp_1", encrypted_content: "gAAAAABpHxRlbmNyeXB0ZWQ=" };
  const items = [
    { type: "message", role: "user", content: [{ type: "input_text", text: "Fix the login test" }] },
    { type: "function_call", call_id: "c0", name: "exec_command", arguments: '{"cmd":"ls"}' },
    item,
    { type: "function_call", call_id: "c1", name: "exec_command", arguments: '{"cmd":"cat a"}' },
    { type: "function_call_output", call_id: "c1", output: "a" },
  ];
  for (const ms of [itemsToMessages(items), responseItemsToMessages(items)]) {
    assert.deepEqual(
      ms.map((m) => [m.role, m.content.map((b) => b.type).join(",")]),
      [
        ["user", "text"],
        ["assistant", "tool_use"],
        ["assistant", "provider_compaction"],
        ["assistant", "tool_use"],
        ["user", "tool_result"],
      ],
    );
  }
});
