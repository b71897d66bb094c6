import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { compactResponsesItems, fromResponsesItems, toResponsesItems } from "./responses.js";
import type { Block, Message } from "../model/index.js";
import { ModelError } from "../model/index.js";
import { validateSurvivalContract } from "../contract/index.js";
import { history } from "../../test/arbitraries.js";
import {
  responsesConversation,
  responsesConversationWithNoise,
  responsesItems,
} from "../../test/responses-items.js";
import { startFakeServer, type RecordedRequest } from "../../test/clients/fake-server.js";
import type { ServerResponse } from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../../test/support.js";

const ENC = "gAAAAABo+kL0w3Y5/x==\u00e9?not-base64 at all";
const ARGS = '{ "command" : ["ls",  "-la"], "note": "spaced \\u00e9" }';

/** One item of every kind, as Codex and the Agents SDK write them. */
const everyKind = [
  { role: "developer", content: "be brief" },
  {
    type: "message",
    role: "user",
    content: [
      { type: "input_text", text: "fix the bug" },
      { type: "input_image", image_url: "data:image/png;base64,AA==", detail: "high" },
      { type: "input_file", file_id: "file_1" },
    ],
  },
  {
    type: "reasoning",
    id: "rs_1",
    summary: [{ type: "summary_text", text: "think" }],
    encrypted_content: ENC,
  },
  { type: "reasoning", id: "rs_2", summary: [], content: [{ type: "reasoning_text", text: "raw" }] },
  {
    type: "message",
    id: "msg_1",
    role: "assistant",
    status: "completed",
    phase: "commentary",
    content: [
      { type: "output_text", text: "ok", annotations: [], logprobs: [] },
      { type: "refusal", refusal: "no" },
    ],
  },
  {
    type: "function_call",
    id: "fc_1",
    call_id: "call_1",
    name: "shell",
    arguments: ARGS,
    status: "completed",
  },
  { type: "custom_tool_call", call_id: "call_2", name: "apply_patch", input: "*** Begin Patch\n" },
  { type: "function_call_output", call_id: "call_1", output: "a\nb" },
  { type: "custom_tool_call_output", call_id: "call_2", output: [{ type: "input_text", text: "done" }] },
  { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "x" } },
  { id: "msg_0" },
  { type: "compaction", encrypted_content: "ENC-compaction" },
  {
    type: "local_shell_call",
    id: "ls_1",
    call_id: "call_3",
    action: { type: "exec", command: ["ls"], env: {} },
    status: "completed",
  },
  { type: "local_shell_call_output", id: "call_3", output: "x" },
  {
    type: "computer_call",
    id: "cu_1",
    call_id: "call_4",
    action: { type: "screenshot" },
    pending_safety_checks: [],
    status: "completed",
  },
  {
    type: "computer_call_output",
    call_id: "call_4",
    output: { type: "computer_screenshot", image_url: "data:image/png;base64,AA==" },
  },
  { type: "mcp_call", id: "mcp_1", server_label: "git", name: "log", arguments: "{}", output: "log" },
  { type: "message", role: "user", content: [] },
  { type: "future_item", foo: 1 },
  { type: "message", role: "assistant", content: "plain" },
  { type: "function_call", call_id: "call_9", name: "f", arguments: '{"a":1}' },
] as unknown as ResponseInputItem[];

test("every item kind reads into messages and writes back deepEqual; blobs and arguments byte for byte", () => {
  const messages = fromResponsesItems(everyKind);
  const back = toResponsesItems(messages);
  assert.deepEqual(back, everyKind);
  assert.equal(JSON.stringify(back), JSON.stringify(everyKind));
  // Keys in an unusual order come back in that order.
  const odd = [
    { call_id: "c", arguments: "{}", type: "function_call", name: "f" },
    { output: "o", type: "function_call_output", call_id: "c" },
    {
      content: [{ text: "t", annotations: [], type: "output_text" }],
      role: "assistant",
      type: "message",
      id: "m",
      status: "completed",
    },
  ] as unknown as ResponseInputItem[];
  assert.equal(JSON.stringify(toResponsesItems(fromResponsesItems(odd))), JSON.stringify(odd));
  const json = JSON.stringify(back);
  assert.ok(json.includes(JSON.stringify(ENC)), "encrypted_content byte for byte");
  assert.ok(json.includes(JSON.stringify(ARGS)), "arguments byte for byte");
  // The contract sees the pairs: calls are tool_use, outputs tool_result, with the call ids.
  const blocks = messages.flatMap((m) => m.content);
  const uses = blocks.filter((b) => b.type === "tool_use").map((b) => (b as { id: string }).id);
  const results = blocks
    .filter((b) => b.type === "tool_result")
    .map((b) => (b as { tool_use_id: string }).tool_use_id);
  assert.deepEqual(uses, ["call_1", "call_2", "call_3", "call_4", "call_9"]);
  assert.deepEqual(results, ["call_1", "call_2", "call_3", "call_4"]);
  const call1 = blocks.find((b) => b.type === "tool_use" && (b as { id: string }).id === "call_1") as {
    input: unknown;
  };
  assert.deepEqual(call1.input, { command: ["ls", "-la"], note: "spaced é" });
  const enc = blocks.find((b) => b.type === "redacted_thinking") as unknown as {
    data: string;
    origin: string;
  };
  assert.equal(enc.data, ENC);
  assert.equal(enc.origin, "openai");
  // Roles: developer is a system message; model-side items group into one assistant message.
  assert.deepEqual(
    messages.map((m) => m.role),
    [
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      // The compaction item, a message of its own: the summary of what came before it.
      "assistant",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ],
  );
  assert.deepEqual(
    messages[5]!.content.map((b) => b.type),
    ["provider_compaction"],
  );
});

test("an item that is exactly what its blocks alone would be written as carries no responses field", () => {
  const items = [
    { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
    { type: "function_call", call_id: "c1", name: "read", arguments: '{"path":"a"}' },
    { type: "function_call_output", call_id: "c1", output: "text" },
    { type: "message", role: "assistant", content: "done" },
  ] as unknown as ResponseInputItem[];
  const messages = fromResponsesItems(items);
  assert.deepEqual(messages, [
    { role: "user", content: [{ type: "text", text: "hi" }] },
    { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "read", input: { path: "a" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "text" }] },
    { role: "assistant", content: [{ type: "text", text: "done" }] },
  ]);
  assert.deepEqual(toResponsesItems(messages), items);
});

test("a changed input or output is written from its new value; unchanged, from the raw item", () => {
  const items = [
    { role: "user", content: "go" },
    { type: "function_call", id: "fc_1", call_id: "c1", name: "read", arguments: '{ "path": "a" }' },
    { type: "function_call_output", call_id: "c1", output: [{ type: "input_text", text: "long output" }] },
  ] as unknown as ResponseInputItem[];
  const messages = fromResponsesItems(items);
  const use = messages[1]!.content[0] as Block & { input: unknown };
  const res = messages[2]!.content[0] as Block & { content: string };
  const changed: Message[] = [
    messages[0]!,
    { role: "assistant", content: [{ ...use, input: { path: "b" } }] },
    { role: "user", content: [{ ...res, content: "[pruned]" }] },
  ];
  const out = toResponsesItems(changed) as unknown as Record<string, unknown>[];
  assert.equal(out[1]!.arguments, '{"path":"b"}');
  assert.equal(out[1]!.id, "fc_1", "the item's other fields stay");
  assert.equal(out[2]!.output, "[pruned]");
  // A call without a Responses origin whose result answers a custom tool call is written as its kind.
  const custom = toResponsesItems([
    {
      role: "assistant",
      content: fromResponsesItems([
        { type: "custom_tool_call", call_id: "p", name: "apply_patch", input: "x" },
      ] as never)[0]!.content,
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "p", content: "ok" }] },
  ]) as unknown as Record<string, unknown>[];
  assert.equal(custom[1]!.type, "custom_tool_call_output");
});

test("a content part whose item's first part is gone is still written, as a message of its own", () => {
  const [m] = fromResponsesItems([
    {
      type: "message",
      id: "msg_1",
      role: "assistant",
      status: "completed",
      content: [
        { type: "output_text", text: "first", annotations: [] },
        { type: "refusal", refusal: "second" },
      ],
    },
  ] as unknown as ResponseInputItem[]);
  const out = toResponsesItems([{ role: "assistant", content: [m!.content[1]!] }]);
  assert.deepEqual(out, [
    { type: "message", role: "assistant", content: [{ type: "refusal", refusal: "second" }] },
  ]);
});

test("invalid items: an error naming the item's path, one line", () => {
  const cases: [unknown[], RegExp][] = [
    [[{ role: "user", content: "x" }, 5], /^items\[1\]: expected an item object, got number 5$/],
    [
      [
        { type: "message", role: "user", content: "x" },
        { type: "function_call", call_id: "c", name: "n", arguments: {} },
      ],
      /^items\[1\]\.arguments: expected a string, got an object$/,
    ],
    [
      [{ type: "function_call_output", output: "x" }],
      /^items\[0\]\.call_id: expected a string, got nothing$/,
    ],
    [
      [{ type: "message", role: "tool", content: "x" }],
      /^items\[0\]\.role: expected "user", "assistant", "system" or "developer"/,
    ],
    [
      [{ type: "message", role: "user", content: [{ type: "input_text", text: 3 }] }],
      /^items\[0\]\.content\[0\]\.text: expected a string/,
    ],
    [
      [{ type: "reasoning", id: "r", summary: [], encrypted_content: 7 }],
      /^items\[0\]\.encrypted_content: expected a string or null/,
    ],
    [[{ foo: 1 }], /^items\[0\]: not a Responses input item/],
  ];
  for (const [items, re] of cases) {
    assert.throws(
      () => fromResponsesItems(items as ResponseInputItem[]),
      (e: unknown) => e instanceof ModelError && re.test(e.message) && !e.message.includes("\n"),
      String(re),
    );
  }
});

test("default export: only what the API takes; carry: true keeps the rest in compact_safe fields", () => {
  const messages: Message[] = [
    { role: "system", content: [{ type: "text", text: "sys" }] },
    { role: "user", content: [{ type: "text", text: "q" }], meta: { source_index: 1 } },
    {
      role: "assistant_interrupted",
      content: [
        { type: "thinking", thinking: "hm", signature: "sig==" },
        { type: "text", text: "a", cache_control: { type: "ephemeral" } },
        { type: "tool_use", id: "t1", name: "Read", input: { p: 1 } },
        { type: "server_tool_use", id: "s1", name: "web", input: {} },
      ],
      usage: { input_tokens: 5, output_tokens: 1, scope: "parent" },
    },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "t1",
          content: "r",
          is_error: true,
          content_blocks: [{ type: "image_url", image_url: { url: "data:x" } }],
        },
      ],
    },
    { role: "user", content: [] },
  ];
  const api = toResponsesItems(messages) as unknown as Record<string, unknown>[];
  assert.ok(!JSON.stringify(api).includes("compact_safe"));
  assert.deepEqual(
    api.map((i) => i.type),
    ["message", "message", "message", "function_call", "function_call_output"],
  );
  const carried = toResponsesItems(messages, { carry: true });
  assert.deepEqual(fromResponsesItems(carried), messages);
});

test("property: generated compact-safe histories → items (carry) → back deepEqual; the API form is stable", () => {
  fc.assert(
    fc.property(history, (h) => {
      assert.deepEqual(fromResponsesItems(toResponsesItems(h, { carry: true })), h);
      const api = toResponsesItems(h);
      assert.deepEqual(toResponsesItems(fromResponsesItems(api)), api);
    }),
    { numRuns: 150 },
  );
});

test("property: generated Responses items → compact-safe → back deepEqual (and through carry)", () => {
  fc.assert(
    fc.property(responsesItems, (items) => {
      const messages = fromResponsesItems(items);
      const back = toResponsesItems(messages);
      assert.deepEqual(back, items);
      assert.equal(JSON.stringify(back), JSON.stringify(items), "the same JSON text, keys in the same order");
      assert.deepEqual(fromResponsesItems(toResponsesItems(messages, { carry: true })), messages);
    }),
    { numRuns: 300 },
  );
});

for (const [name, items, runs] of [
  ["conversations", responsesConversation, 60],
  ["conversations with any other items inserted", responsesConversationWithNoise, 60],
] as const) {
  test(`property: a compaction of generated ${name} validates and keeps the reasoning it keeps byte for byte`, async () => {
    let compacted = 0;
    await fc.assert(
      fc.asyncProperty(items, async (items) => {
        const before = JSON.stringify(items);
        const r = await compactResponsesItems(items, { target: 200 });
        assert.equal(JSON.stringify(items), before, "the input is never mutated");
        if (!r.ok) return;
        compacted++;
        const original = fromResponsesItems(items);
        const replacement = fromResponsesItems(r.items);
        const v = validateSurvivalContract(original, replacement, { path: r.result.path });
        assert.ok(v.valid, String(v.reason));
        for (const it of r.items) {
          const rec = it as unknown as Record<string, unknown>;
          if (rec.type === "reasoning")
            assert.ok(items.includes(it), "a kept reasoning item is the original object");
          if (rec.type === "function_call")
            assert.ok(
              items.some((o) => {
                const orig = o as unknown as Record<string, unknown>;
                return orig.call_id === rec.call_id && orig.arguments === rec.arguments;
              }),
              "arguments byte for byte",
            );
        }
      }),
      { numRuns: runs },
    );
    assert.ok(compacted > 10, `only ${compacted} generated histories compacted`);
  });
}

test("compactResponsesItems: the replacement as items, unchanged items the originals; a refusal leaves them", async () => {
  const items: ResponseInputItem[] = [];
  for (let i = 0; i < 12; i++) {
    items.push({ role: "user", content: `step ${i}` } as ResponseInputItem);
    items.push({
      type: "reasoning",
      id: `rs_${i}`,
      summary: [],
      encrypted_content: `${ENC}${i}`,
    } as ResponseInputItem);
    items.push({
      type: "function_call",
      id: `fc_${i}`,
      call_id: `c${i}`,
      name: "read",
      arguments: ARGS,
    } as ResponseInputItem);
    items.push({
      type: "function_call_output",
      call_id: `c${i}`,
      output: "x".repeat(2000),
    } as ResponseInputItem);
  }
  const r = await compactResponsesItems(items, { target: 500 });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(r.result.path, "summary");
  assert.ok(r.items.length < items.length);
  const kept = r.items.filter((it) => items.includes(it));
  assert.ok(kept.length >= 8, `${kept.length} originals kept`);
  const checkpoint = r.items.find((it) => !items.includes(it)) as unknown as Record<string, unknown>;
  assert.equal(checkpoint.role, "user");
  const small = await compactResponsesItems(items.slice(0, 4));
  assert.equal(small.ok, false);
  assert.equal(small.ok ? "" : small.error.kind, "nothing_to_compact");
  await assert.rejects(
    compactResponsesItems([{ type: "function_call", call_id: 1 } as unknown as ResponseInputItem]),
    /^ModelError: items\[0\]\.call_id: expected a string/,
  );
});

test("compactResponsesItems keeps a provider's compaction item as the prefix of the replacement; forced away, the checkpoint names it", async () => {
  // A Responses body shaped as the API writes it: instructions, a developer message, the work the
  // server compacted, its opaque compaction item, then the work after it.
  const body = JSON.parse(
    readFileSync(
      join(repoRoot, "test", "fixtures", "provider-compaction", "responses-compaction-body.json"),
      "utf8",
    ),
  ) as { input: ResponseInputItem[] };
  const items = body.input;
  const item = items.find((i) => (i as { type?: string }).type === "compaction")!;
  const r = await compactResponsesItems(items, { target: 1500 });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(r.result.path, "summary");
  // The developer message, then the item itself (the caller's object), then the rest compacted.
  assert.equal(r.items[0], items[0]);
  assert.equal(r.items[1], item);
  assert.equal(r.items.filter((i) => (i as { type?: string }).type === "compaction").length, 1);
  assert.equal(r.result.coverage.provider_compactions_kept, 1);
  const checkpoint = JSON.stringify(
    r.items.find((i) => JSON.stringify(i).includes("[compact-safe checkpoint]")),
  );
  assert.match(
    checkpoint,
    /provider compaction kept first: an encrypted provider summary of 3 earlier messages \(openai\)/,
  );

  // Forced away (a result meant for another provider): no item, the checkpoint says what stood there.
  const folded = await compactResponsesItems(items, { target: 1500, providerCompaction: "fold" });
  assert.ok(folded.ok, folded.ok ? "" : folded.error.message);
  assert.equal(folded.items.filter((i) => (i as { type?: string }).type === "compaction").length, 0);
  assert.equal(folded.result.coverage.provider_compactions_folded, 1);
  const note = JSON.stringify(
    folded.items.find((i) => JSON.stringify(i).includes("[compact-safe checkpoint]")),
  );
  assert.match(
    note,
    /an encrypted provider summary of 3 earlier messages stood here \(openai: only it could read the summary/,
  );
});

function answer(req: RecordedRequest, res: ServerResponse): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      id: "resp_1",
      object: "response",
      created_at: 0,
      status: "completed",
      model: "gpt-test",
      output: [
        {
          type: "reasoning",
          id: "rs_out",
          summary: [{ type: "summary_text", text: "s" }],
          encrypted_content: ENC,
        },
        {
          type: "function_call",
          id: "fc_out",
          call_id: "call_out",
          name: "shell",
          arguments: ARGS,
          status: "completed",
        },
        {
          type: "message",
          id: "msg_out",
          role: "assistant",
          status: "completed",
          content: [
            {
              type: "output_text",
              text: `got ${(req.body as { input: unknown[] }).input.length}`,
              annotations: [],
            },
          ],
        },
      ],
      usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
    }),
  );
}

test("the openai client sends exported items to a Responses server as they are, and its output reads back", async () => {
  const server = await startFakeServer(answer);
  try {
    const client = new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0 });
    const input = toResponsesItems(fromResponsesItems(everyKind));
    const response = await client.responses.create({ model: "gpt-test", input, store: false });
    const body = server.requests[0]!.body as { input: Record<string, unknown>[] };
    assert.deepEqual(body.input, everyKind);
    assert.equal(body.input[2]!.encrypted_content, ENC);
    assert.equal(body.input[5]!.arguments, ARGS);
    assert.equal(response.output_text, `got ${everyKind.length}`);
    // The response's output items, appended to the history, read and write back unchanged.
    const next = [...everyKind, ...response.output];
    assert.deepEqual(toResponsesItems(fromResponsesItems(next)), next);
    await client.responses.create({ model: "gpt-test", input: toResponsesItems(fromResponsesItems(next)) });
    const second = server.requests[1]!.body as { input: Record<string, unknown>[] };
    assert.equal(second.input.at(-3)!.encrypted_content, ENC);
    assert.equal(second.input.at(-2)!.arguments, ARGS);
  } finally {
    await server.close();
  }
});
