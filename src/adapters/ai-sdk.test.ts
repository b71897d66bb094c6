/**
 * compact-safe/ai-sdk, tested with the AI SDK's own mock language models
 * (`ai/test`) and its own `modelMessageSchema`.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  APICallError,
  generateText,
  jsonSchema,
  modelMessageSchema,
  simulateReadableStream,
  stepCountIs,
  streamText,
  tool,
  ToolLoopAgent,
  type ModelMessage,
} from "ai";
import { MockLanguageModelV4 } from "ai/test";
import type { Message } from "../model/types.js";
import { CHECKPOINT_MARKER } from "../contract/markers.js";
import { validateSurvivalContract } from "../contract/validate.js";
import { compactMessagesSafe } from "../engine/compact.js";
import { SummarizerError } from "../summarizers/types.js";
import { SYSTEM_PROMPT } from "../summarizers/prompt.js";
import { history } from "../../test/arbitraries.js";
import { fromModelMessagesIndexed, type ConversionCache } from "../wire/ai-sdk.js";
import {
  aiSdkSummarizer,
  compactSafePrepareStep,
  fromModelMessages,
  toModelMessages,
  type CompactionEvent,
  type RefusedEvent,
} from "./ai-sdk.js";

type V4Result = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;

const usage = (input = 100): V4Result["usage"] => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
});

function answer(
  content: V4Result["content"],
  finish: "stop" | "tool-calls" | "length" = "stop",
  input = 100,
): V4Result {
  return { content, finishReason: { unified: finish, raw: undefined }, usage: usage(input), warnings: [] };
}

function schemaValid(m: unknown): void {
  const r = modelMessageSchema.safeParse(m);
  assert.ok(r.success, `not a valid ModelMessage: ${JSON.stringify(r.error?.issues)}`);
}

// ---------------------------------------------------------------------------
// Conversion

const everyKind: ModelMessage[] = [
  {
    role: "system",
    content: "You are a coding agent.",
    providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
  },
  { role: "user", content: "Fix the login bug." },
  {
    role: "user",
    content: [
      { type: "text", text: "This screenshot", providerOptions: { openai: { detail: "high" } } },
      { type: "image", image: new URL("https://example.com/a.png") },
      { type: "image", image: "iVBORw0KGgo=", mediaType: "image/png" },
      { type: "file", mediaType: "image/png", data: new Uint8Array([1, 2, 3]) },
      { type: "file", mediaType: "application/pdf", data: Buffer.from("%PDF"), filename: "spec.pdf" },
      { type: "file", mediaType: "text/plain", data: { type: "text", text: "inline doc" } },
      { type: "file", mediaType: "image", data: { type: "reference", reference: { openai: "file_1" } } },
      { type: "file", mediaType: "image/jpeg", data: { type: "data", data: new Uint8Array([7]).buffer } },
    ],
    providerOptions: { openai: { user: "u1" } },
  },
  {
    role: "assistant",
    content: [
      {
        type: "reasoning",
        text: "Let me look.",
        providerOptions: { anthropic: { signature: "EqQBCkgIBxAB==" } },
      },
      { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "opaque-bytes" } } },
      {
        type: "reasoning",
        text: "Summary of reasoning",
        providerOptions: { openai: { itemId: "rs_123", reasoningEncryptedContent: "gAAAAB…enc" } },
      },
      { type: "text", text: "I will read the file." },
      {
        type: "tool-call",
        toolCallId: "call_1",
        toolName: "read",
        input: { path: "src/login.ts" },
        providerOptions: { google: { thoughtSignature: "ts1" } },
      },
      {
        type: "tool-call",
        toolCallId: "srv_1",
        toolName: "web_search",
        input: { q: "x" },
        providerExecuted: true,
      },
      {
        type: "tool-result",
        toolCallId: "srv_1",
        toolName: "web_search",
        output: { type: "json", value: { hits: [1, 2] } },
      },
      { type: "tool-approval-request", approvalId: "ap_1", toolCallId: "call_1", reason: "writes" },
      { type: "custom", kind: "openai.compaction", providerOptions: { openai: { id: "c1" } } },
      { type: "reasoning-file", mediaType: "image/png", data: new URL("https://example.com/r.png") },
    ],
  },
  {
    role: "tool",
    content: [
      { type: "tool-approval-response", approvalId: "ap_1", approved: true, reason: "ok" },
      {
        type: "tool-result",
        toolCallId: "call_1",
        toolName: "read",
        output: { type: "text", value: "export {}" },
      },
    ],
  },
  {
    role: "assistant",
    content: [
      { type: "tool-call", toolCallId: "c2", toolName: "run", input: {} },
      { type: "tool-call", toolCallId: "c3", toolName: "run", input: {} },
      { type: "tool-call", toolCallId: "c4", toolName: "run", input: {} },
      { type: "tool-call", toolCallId: "c5", toolName: "run", input: {} },
      { type: "tool-call", toolCallId: "c6", toolName: "shot", input: {} },
    ],
  },
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: "c2",
        toolName: "run",
        output: { type: "error-text", value: "exit 1" },
      },
      {
        type: "tool-result",
        toolCallId: "c3",
        toolName: "run",
        output: { type: "error-json", value: { code: 1 } },
      },
      {
        type: "tool-result",
        toolCallId: "c4",
        toolName: "run",
        output: { type: "execution-denied", reason: "not allowed" },
      },
      {
        type: "tool-result",
        toolCallId: "c5",
        toolName: "run",
        output: {
          type: "text",
          value: "ok",
          providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
        },
      },
      {
        type: "tool-result",
        toolCallId: "c6",
        toolName: "shot",
        output: {
          type: "content",
          value: [
            { type: "text", text: "screenshot:" },
            { type: "file", mediaType: "image/png", data: { type: "data", data: "AAAA" } },
            { type: "image-url", url: "https://example.com/s.png" },
          ],
        },
      },
    ],
  },
  { role: "tool", content: [] },
  { role: "assistant", content: "Done." },
];

describe("fromModelMessages / toModelMessages", () => {
  test("every message kind and part variant round-trips deepEqual, as plain data", () => {
    for (const m of everyKind) schemaValid(m);
    const ours = fromModelMessages(everyKind);
    assert.deepStrictEqual(toModelMessages(ours), everyKind);
    assert.deepStrictEqual(structuredClone(ours), ours, "compact-safe messages hold plain data only");
  });

  test("native blocks where the meaning matches", () => {
    const ours = fromModelMessages(everyKind);
    const a = ours[3]!.content;
    assert.deepEqual(a[0], { type: "thinking", thinking: "Let me look.", signature: "EqQBCkgIBxAB==" });
    assert.deepEqual(a[1], { type: "redacted_thinking", data: "opaque-bytes" });
    assert.equal(a[2]!.type, "thinking");
    assert.ok((a[2] as unknown as { ai_sdk: { providerOptions?: unknown } }).ai_sdk.providerOptions);
    assert.deepEqual(
      { ...a[4], ai_sdk: undefined },
      {
        type: "tool_use",
        id: "call_1",
        name: "read",
        input: { path: "src/login.ts" },
        thought_signature: "ts1",
        ai_sdk: undefined,
      },
    );
    assert.equal(a[5]!.type, "server_tool_use");
    assert.equal(a[6]!.type, "provider_tool_result");
    // A tool message is a user message of tool_result blocks paired by tool_use_id.
    assert.equal(ours[4]!.role, "user");
    assert.deepEqual(ours[4]!.content[1], {
      type: "tool_result",
      tool_use_id: "call_1",
      content: "export {}",
    });
    const results = ours[6]!.content as { tool_use_id: string; content: string; is_error?: boolean }[];
    assert.deepEqual(
      results.map((r) => [r.tool_use_id, r.content, r.is_error ?? false]),
      [
        ["c2", "exit 1", true],
        ["c3", '{"code":1}', true],
        ["c4", "Tool execution denied: not allowed", true],
        ["c5", "ok", false],
        ["c6", "screenshot:", false],
      ],
    );
    assert.deepEqual((results[4] as { content_blocks?: unknown }).content_blocks, [
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
      { type: "image_url", image_url: { url: "https://example.com/s.png" } },
    ]);
    assert.deepEqual(ours[2]!.content[1], {
      type: "image_url",
      image_url: { url: "https://example.com/a.png" },
      ai_sdk: { type: "image", image: { $ai_sdk: "url", href: "https://example.com/a.png" } },
    });
    // The whole history validates as compact-safe messages and against its own contract.
    const v = validateSurvivalContract(ours, ours, { path: "prune-only" });
    assert.equal(v.valid, true, v.reason ?? "");
  });

  test("a block the engine rewrote is converted from what it says now, keeping the tool name and provider options", () => {
    const ours = fromModelMessages([
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "t", toolName: "grep", input: {} }] },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "t",
            toolName: "grep",
            output: { type: "json", value: { lines: ["a", "b"] } },
            providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
          },
        ],
      },
    ]);
    const block = ours[1]!.content[0] as { content: string };
    block.content = "[bounded] a";
    assert.deepEqual(toModelMessages(ours)[1], {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "t",
          toolName: "grep",
          output: { type: "text", value: "[bounded] a" },
          providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
        },
      ],
    });
  });

  test("compact-safe fields with no AI SDK meaning travel in providerOptions['compact-safe']", () => {
    const ours: Message[] = [
      {
        role: "system",
        content: [
          { type: "text", text: "a", cache_control: { type: "ephemeral" } },
          { type: "text", text: "b" },
        ],
      },
      { role: "user", content: [{ type: "text", text: "hi" }], meta: { source_index: 0 } },
      {
        role: "assistant_interrupted",
        content: [
          { type: "text", text: "x" },
          { type: "tool_use", id: "u1", name: "Bash", input: { command: "ls" } },
          { type: "web_search_tool_result", tool_use_id: "s", content: [] },
        ],
        usage: { input_tokens: 10, output_tokens: 2 },
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "u1", content: "a.ts", synthetic: true, is_error: true },
          { type: "text", text: "and also this" },
          { type: "thinking", thinking: "odd" },
        ],
      },
    ];
    const mm = toModelMessages(ours);
    for (const m of mm) schemaValid(m);
    assert.deepEqual(
      mm.map((m) => m.role),
      ["system", "user", "assistant", "tool", "user"],
      "a user message mixing tool results and text is split into a tool and a user message",
    );
    assert.equal(mm[0]!.content, "a\n\nb");
    assert.deepStrictEqual(fromModelMessages(mm), ours);
  });

  test("the conversion cache reuses a message only in the same context, and joins never edit a cached message", () => {
    const cache: ConversionCache = new WeakMap();
    const result: ModelMessage = {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "a", toolName: "read", output: { type: "text", value: "x" } },
      ],
    };
    const call = (toolName: string): ModelMessage => ({
      role: "assistant",
      content: [{ type: "tool-call", toolCallId: "a", toolName, input: {} }],
    });
    for (const history of [
      [call("read"), result],
      [call("write"), result],
      [call("read"), result],
    ]) {
      const ours = fromModelMessagesIndexed(history, modelMessageSchema as never, "messages", cache).messages;
      assert.deepStrictEqual(toModelMessages(ours), history);
    }
    // A user message mixing tool results and text travels as two AI SDK messages joined back on import.
    const mixed = toModelMessages([
      { role: "assistant", content: [{ type: "tool_use", id: "u", name: "Bash", input: {} }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "u", content: "ok" },
          { type: "text", text: "next" },
        ],
      },
    ]);
    const first = fromModelMessagesIndexed(mixed, undefined, "messages", cache).messages;
    const again = fromModelMessagesIndexed(mixed, undefined, "messages", cache).messages;
    assert.equal(first[1]!.content.length, 2);
    assert.deepStrictEqual(again, first);
  });

  test("invalid input: one line naming the input's own path, from the ai package's schema", () => {
    const bad = (m: unknown[], re: RegExp): void =>
      assert.throws(
        () => fromModelMessages(m as ModelMessage[]),
        (e: Error) => re.test(e.message) && !e.message.includes("\n"),
      );
    bad(
      [
        { role: "user", content: "x" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "a" },
            { type: "tool-call", toolCallId: 3 },
          ],
        },
      ],
      /^messages\[1\]\.content\[1\]\.toolCallId: .*expected string/,
    );
    bad(
      [{ role: "usr", content: "x" }],
      /^messages\[0\]\.role: unknown role "usr" \(expected one of system, user, assistant, tool\)/,
    );
    bad(
      [{ role: "user", content: [{ type: "txt", text: "a" }] }],
      /^messages\[0\]\.content\[0\]\.type: unknown type "txt"/,
    );
    bad(
      [
        {
          role: "tool",
          content: [{ type: "tool-result", toolCallId: "a", toolName: "b", output: { type: "text" } }],
        },
      ],
      /^messages\[0\]\.content\[0\]\.output\.value: /,
    );
    assert.throws(
      () => toModelMessages([{ role: "user", content: "x" }] as unknown as Message[]),
      /messages\[0\]: "content" must be an array/,
    );
  });
});

// ---------------------------------------------------------------------------
// Property tests

const po = fc.option(
  fc.dictionary(
    fc.constantFrom("anthropic", "openai", "google", "bedrock"),
    fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), {
      maxKeys: 3,
      noNullPrototype: true,
    }),
    { maxKeys: 2, noNullPrototype: true },
  ),
  { nil: undefined },
);
/**
 * Adds provider options, or (as the schema also accepts) an explicit `providerOptions: undefined`
 * or a key the schema does not know (it strips it when parsing; the input still carries it).
 */
const withPo = <T extends object>(a: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  fc
    .tuple(a, po, fc.constantFrom("none", "undefined", "extra", "none", "none"))
    .map(([x, p, odd]) =>
      p !== undefined
        ? { ...x, providerOptions: p }
        : odd === "undefined"
          ? { ...x, providerOptions: undefined }
          : odd === "extra"
            ? { ...x, id: "x-1" }
            : x,
    );
const bytes = fc.uint8Array({ maxLength: 12 });
const dataContent = fc.oneof(
  fc.base64String({ maxLength: 16 }),
  bytes,
  bytes.map((b) => Buffer.from(b)),
  bytes.map((b) => new Uint8Array(b).buffer),
);
const url = fc.webUrl().map((u) => new URL(u));
const mediaType = fc.constantFrom("image/png", "image", "application/pdf", "text/plain");
const text = fc.string({ maxLength: 20 });
const id = fc.constantFrom("c1", "c2", "c3", "call_x");
const textPart = withPo(fc.record({ type: fc.constant("text" as const), text }));
const filePart = withPo(
  fc.record(
    {
      type: fc.constant("file" as const),
      mediaType,
      filename: text,
      data: fc.oneof(
        dataContent,
        url,
        fc.record({ type: fc.constant("data"), data: dataContent }),
        fc.record({ type: fc.constant("url"), url }),
        fc.record({
          type: fc.constant("reference"),
          reference: fc.dictionary(fc.constantFrom("openai", "anthropic"), text, { noNullPrototype: true }),
        }),
        fc.record({ type: fc.constant("text"), text }),
      ),
    },
    { requiredKeys: ["type", "mediaType", "data"] },
  ),
);
const imagePart = withPo(
  fc.record(
    { type: fc.constant("image" as const), image: fc.oneof(dataContent, url), mediaType },
    { requiredKeys: ["type", "image"] },
  ),
);
const reasoningPart = fc.oneof(
  withPo(fc.record({ type: fc.constant("reasoning" as const), text })),
  fc.record({
    type: fc.constant("reasoning" as const),
    text,
    providerOptions: fc.oneof(
      fc.record({ anthropic: fc.record({ signature: fc.base64String({ maxLength: 20 }) }) }),
      fc.record({ anthropic: fc.record({ redactedData: fc.base64String({ maxLength: 20 }) }) }),
      fc.record({
        openai: fc.record({ itemId: text, reasoningEncryptedContent: fc.option(text, { nil: null }) }),
      }),
    ),
  }),
);
const toolCall = withPo(
  fc.record(
    {
      type: fc.constant("tool-call" as const),
      toolCallId: id,
      toolName: fc.constantFrom("read", "bash"),
      input: fc.jsonValue({ maxDepth: 2 }),
      providerExecuted: fc.boolean(),
    },
    { requiredKeys: ["type", "toolCallId", "toolName", "input"] },
  ),
);
const output = fc.oneof(
  withPo(fc.record({ type: fc.constant("text"), value: text })),
  withPo(fc.record({ type: fc.constant("json"), value: fc.jsonValue({ maxDepth: 2 }) })),
  withPo(fc.record({ type: fc.constant("error-text"), value: text })),
  withPo(fc.record({ type: fc.constant("error-json"), value: fc.jsonValue({ maxDepth: 2 }) })),
  withPo(fc.record({ type: fc.constant("execution-denied"), reason: text }, { requiredKeys: ["type"] })),
  fc.record({
    type: fc.constant("content"),
    value: fc.array(
      fc.oneof(
        fc.record({ type: fc.constant("text"), text }),
        fc.record({
          type: fc.constant("file"),
          mediaType,
          data: fc.record({ type: fc.constant("data"), data: dataContent }),
        }),
        fc.record({ type: fc.constant("image-url"), url: fc.webUrl() }),
        fc.record({ type: fc.constant("image-data"), data: fc.base64String({ maxLength: 8 }), mediaType }),
        fc.record({ type: fc.constant("file-id"), fileId: text }),
      ),
      { maxLength: 3 },
    ),
  }),
);
const toolResult = withPo(
  fc.record({
    type: fc.constant("tool-result" as const),
    toolCallId: id,
    toolName: fc.constantFrom("read", "bash"),
    output,
  }),
);
const approvalRequest = fc.record(
  {
    type: fc.constant("tool-approval-request" as const),
    approvalId: text,
    toolCallId: id,
    reason: text,
    isAutomatic: fc.boolean(),
  },
  { requiredKeys: ["type", "approvalId", "toolCallId"] },
);
const approvalResponse = fc.record(
  {
    type: fc.constant("tool-approval-response" as const),
    approvalId: text,
    approved: fc.boolean(),
    reason: text,
  },
  { requiredKeys: ["type", "approvalId", "approved"] },
);
const customPart = withPo(
  fc.record({ type: fc.constant("custom" as const), kind: fc.constantFrom("openai.x", "anthropic.y") }),
);
const reasoningFile = fc.record({
  type: fc.constant("reasoning-file" as const),
  mediaType,
  data: fc.oneof(dataContent, url, fc.record({ type: fc.constant("url"), url })),
});
/** fast-check makes some objects with a null prototype; a ModelMessage from JSON or code has plain objects. */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (
    v === null ||
    typeof v !== "object" ||
    v instanceof Uint8Array ||
    v instanceof ArrayBuffer ||
    v instanceof URL
  )
    return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
}

const modelMessage: fc.Arbitrary<ModelMessage> = withPo(
  fc.oneof(
    fc.record({ role: fc.constant("system" as const), content: text }),
    fc.record({
      role: fc.constant("user" as const),
      content: fc.oneof(text, fc.array(fc.oneof(textPart, imagePart, filePart), { maxLength: 4 })),
    }),
    fc.record({
      role: fc.constant("assistant" as const),
      content: fc.oneof(
        text,
        fc.array(
          fc.oneof(
            textPart,
            reasoningPart,
            toolCall,
            toolResult,
            approvalRequest,
            customPart,
            reasoningFile,
            filePart,
          ),
          { maxLength: 5 },
        ),
      ),
    }),
    fc.record({
      role: fc.constant("tool" as const),
      content: fc.array(fc.oneof(toolResult, approvalResponse), { maxLength: 4 }),
    }),
  ),
) as fc.Arbitrary<ModelMessage>;

describe("property: nothing is lost either way", () => {
  test("compact-safe histories → ModelMessage (valid under the ai schema) → compact-safe: deepEqual", () => {
    fc.assert(
      fc.property(history, (h) => {
        const mm = toModelMessages(h);
        for (const m of mm) schemaValid(m);
        // The generated histories need no carried fields: every block has an AI SDK meaning.
        assert.equal(JSON.stringify(mm).includes('"compact-safe"'), false);
        assert.deepStrictEqual(fromModelMessages(mm), h);
      }),
      { numRuns: 150 },
    );
  });

  test("generated ModelMessages → compact-safe → ModelMessage: deepEqual", () => {
    fc.assert(
      fc.property(
        fc.array(modelMessage, { maxLength: 8 }).map((a) => plain(a) as ModelMessage[]),
        (mm) => {
          for (const m of mm) schemaValid(m);
          const ours = fromModelMessages(mm);
          assert.deepStrictEqual(structuredClone(ours), ours);
          assert.deepStrictEqual(toModelMessages(ours), mm);
        },
      ),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------
// prepareStep in a real generateText tool loop

const LONG_TEXT = "I checked the module and the session handling. ".repeat(60);

/** A mock model that calls `read` on each step until `calls` calls were made, then answers. */
function toolLoopModel(
  calls: number,
  opts: { longText?: boolean; billed?: (step: number) => number } = {},
): MockLanguageModelV4 {
  let n = 0;
  return new MockLanguageModelV4({
    doGenerate: async () => {
      n++;
      const input = opts.billed?.(n) ?? 100;
      if (n > calls) return answer([{ type: "text", text: "The login bug is fixed." }], "stop", input);
      return answer(
        [
          { type: "text", text: opts.longText ? `Step ${n}. ${LONG_TEXT}` : `Step ${n}.` },
          {
            type: "tool-call",
            toolCallId: `call_${n}`,
            toolName: "read",
            input: JSON.stringify({ path: `src/f${n}.ts` }),
          },
        ],
        "tool-calls",
        input,
      );
    },
  });
}

const read = tool({
  inputSchema: jsonSchema<{ path: string }>({ type: "object", properties: { path: { type: "string" } } }),
  execute: async ({ path }) => `// ${path}\n${"const x = 1;\n".repeat(60)}`,
});

function promptText(prompt: unknown): string {
  return JSON.stringify(prompt);
}

describe("compactSafePrepareStep", () => {
  test("a tool loop past the window compacts once; the next request holds the checkpoint and the protected round; the contract holds", async () => {
    const model = toolLoopModel(9, { longText: true });
    const events: CompactionEvent[] = [];
    const refused: RefusedEvent[] = [];
    const result = await generateText({
      model,
      tools: { read },
      messages: [{ role: "user", content: "Fix the login bug in src/." }],
      stopWhen: stepCountIs(12),
      prepareStep: compactSafePrepareStep({
        window: 12_000,
        onCompaction: (e) => events.push(e),
        onRefused: (e) => refused.push(e),
      }),
    });
    assert.equal(result.text, "The login bug is fixed.");
    assert.equal(events.length, 1, `compacted ${events.length} times; refused: ${JSON.stringify(refused)}`);
    const e = events[0]!;
    assert.equal(e.result.path, "summary");
    assert.ok(e.result.tokens_after < e.result.tokens_before);
    // The request the mock model received on that step: the checkpoint and the protected round.
    const sent = model.doGenerateCalls[e.stepNumber]!.prompt;
    const text = promptText(sent);
    assert.ok(text.includes(CHECKPOINT_MARKER), "the checkpoint reached the model");
    assert.ok(text.includes("Fix the login bug in src/."), "the user's instruction reached the model");
    const last = e.stepNumber; // the calls of steps last-1 and last (1-based call ids) are the two newest exchanges
    for (const id of [`call_${last - 1}`, `call_${last}`])
      assert.ok(text.includes(id), `${id} kept verbatim`);
    assert.ok(!text.includes('"call_1"'), "the oldest exchange was summarized");
    assert.ok(sent.length < model.doGenerateCalls[e.stepNumber - 1]!.prompt.length + 2);
    // The contract, on what the model received, as compact-safe messages.
    const before = fromModelMessages(e.replaced);
    const after = fromModelMessages(e.messages);
    const v = validateSurvivalContract(before, after);
    assert.equal(v.valid, true, v.reason ?? "");
    // Later steps ran on the replacement plus what followed (the AI SDK carries it forward).
    const next = model.doGenerateCalls[e.stepNumber + 1]!.prompt;
    assert.ok(promptText(next).includes(CHECKPOINT_MARKER));
    assert.equal(next.length, sent.length + 2);
  });

  test("the last step's billed prompt triggers a compaction that the estimate alone would not", async () => {
    const run = async (billed?: (n: number) => number): Promise<number> => {
      const events: CompactionEvent[] = [];
      await generateText({
        model: toolLoopModel(6, { longText: true, billed }),
        tools: { read },
        messages: [{ role: "user", content: "Fix the login bug in src/." }],
        stopWhen: stepCountIs(8),
        prepareStep: compactSafePrepareStep({ window: 200_000, onCompaction: (e) => events.push(e) }),
      });
      return events.length === 0 ? -1 : events[0]!.stepNumber;
    };
    assert.equal(await run(), -1, "the estimate is far under the window");
    assert.equal(await run((n) => (n >= 5 ? 190_000 : 1_000)), 5, "step 5 billed 190k of a 200k window");
  });

  test("a failing summarizer model leaves the history untouched and is reported", async () => {
    const summarizerModel = new MockLanguageModelV4({
      doGenerate: async () => {
        throw new APICallError({
          message: "invalid x-api-key",
          url: "https://api.example.com/v1/messages",
          requestBodyValues: {},
          statusCode: 401,
          responseBody: '{"error":{"type":"authentication_error","message":"invalid x-api-key"}}',
        });
      },
    });
    const model = toolLoopModel(9, { longText: true });
    const refused: RefusedEvent[] = [];
    const compacted: CompactionEvent[] = [];
    await generateText({
      model,
      tools: { read },
      messages: [{ role: "user", content: "Fix the login bug in src/." }],
      stopWhen: stepCountIs(12),
      prepareStep: compactSafePrepareStep({
        window: 12_000,
        summarizerModel,
        onCompaction: (e) => compacted.push(e),
        onRefused: (e) => refused.push(e),
      }),
    });
    assert.equal(compacted.length, 0);
    assert.ok(refused.length > 0);
    assert.equal(refused[0]!.error.kind, "summarizer_failed");
    assert.match(refused[0]!.error.message, /HTTP 401/);
    // Every step ran on the whole history: each prompt extends the previous one.
    const prompts = model.doGenerateCalls.map((c) => c.prompt);
    for (let i = 1; i < prompts.length; i++) {
      assert.equal(prompts[i]!.length, prompts[i - 1]!.length + 2);
      assert.deepEqual(prompts[i]!.slice(0, prompts[i - 1]!.length), prompts[i - 1]);
    }
    assert.ok(!promptText(prompts[prompts.length - 1]).includes(CHECKPOINT_MARKER));
  });

  test("streamText: the same helper compacts a streamed tool loop", async () => {
    let n = 0;
    const model = new MockLanguageModelV4({
      doStream: async () => {
        n++;
        const finish = (reason: "stop" | "tool-calls") => ({
          type: "finish" as const,
          finishReason: { unified: reason, raw: undefined },
          usage: usage(),
        });
        const chunks =
          n > 9
            ? [
                { type: "text-start" as const, id: "t" },
                { type: "text-delta" as const, id: "t", delta: "Fixed." },
                { type: "text-end" as const, id: "t" },
                finish("stop"),
              ]
            : [
                { type: "text-start" as const, id: "t" },
                { type: "text-delta" as const, id: "t", delta: `Step ${n}. ${LONG_TEXT}` },
                { type: "text-end" as const, id: "t" },
                {
                  type: "tool-call" as const,
                  toolCallId: `call_${n}`,
                  toolName: "read",
                  input: JSON.stringify({ path: `f${n}` }),
                },
                finish("tool-calls"),
              ];
        return { stream: simulateReadableStream({ chunks, chunkDelayInMs: null, initialDelayInMs: null }) };
      },
    });
    const events: CompactionEvent[] = [];
    const r = streamText({
      model,
      tools: { read },
      messages: [{ role: "user", content: "Fix the login bug in src/." }],
      stopWhen: stepCountIs(10),
      prepareStep: compactSafePrepareStep({ window: 12_000, onCompaction: (e) => events.push(e) }),
    });
    assert.equal(await r.text, "Fixed.");
    assert.equal(events.length, 1);
    assert.ok(promptText(model.doStreamCalls[events[0]!.stepNumber]!.prompt).includes(CHECKPOINT_MARKER));
  });

  test("ToolLoopAgent with an AI SDK model as the summarizer: its summary is the checkpoint the model reads", async () => {
    const summarizerModel = new MockLanguageModelV4({
      modelId: "mock-summarizer",
      doGenerate: async () =>
        answer([
          { type: "text", text: "## Goal\nFix the login bug.\n## Progress\nRead src/f1.ts to src/f6.ts." },
        ]),
    });
    const model = toolLoopModel(9, { longText: true });
    const events: CompactionEvent[] = [];
    const agent = new ToolLoopAgent({
      model,
      tools: { read },
      stopWhen: stepCountIs(12),
      prepareStep: compactSafePrepareStep({
        window: 12_000,
        summarizerModel,
        onCompaction: (e) => events.push(e),
      }),
    });
    const r = await agent.generate({ prompt: "Fix the login bug in src/." });
    assert.equal(r.text, "The login bug is fixed.");
    assert.equal(events.length, 1);
    assert.equal(events[0]!.result.model, "mock-summarizer");
    assert.equal(summarizerModel.doGenerateCalls.length, 1);
    const sent = promptText(model.doGenerateCalls[events[0]!.stepNumber]!.prompt);
    assert.ok(sent.includes("Read src/f1.ts to src/f6.ts."), "the summary reached the model");
    assert.ok(sent.includes(CHECKPOINT_MARKER));
  });

  test("a host that sends the whole history again gets the last replacement re-applied, not a new compaction", async () => {
    const events: CompactionEvent[] = [];
    const prepare = compactSafePrepareStep({ window: 12_000, onCompaction: (e) => events.push(e) });
    const model = toolLoopModel(9, { longText: true });
    const r = await generateText({
      model,
      tools: { read },
      messages: [{ role: "user", content: "Fix the login bug in src/." }],
      stopWhen: stepCountIs(12),
      prepareStep: prepare,
    });
    assert.equal(events.length, 1);
    // A chat route: the next request carries the full, uncompacted history plus a new user turn.
    const full: ModelMessage[] = [
      { role: "user", content: "Fix the login bug in src/." },
      ...r.responseMessages,
      { role: "user", content: "Thanks. Now add a test." },
    ];
    assert.ok(full.length > events[0]!.replaced.length);
    const out = await prepare({ messages: full, stepNumber: 0, steps: [] });
    assert.ok(out, "the replacement is re-applied");
    assert.equal(events.length, 1, "no second compaction");
    assert.ok(promptText(out.messages).includes(CHECKPOINT_MARKER));
    assert.deepEqual(out.messages[out.messages.length - 1], {
      role: "user",
      content: "Thanks. Now add a test.",
    });
    for (const m of out.messages) schemaValid(m);
  });

  test("under the threshold it returns nothing; a bad window fails at construction", async () => {
    const prepare = compactSafePrepareStep({ window: 100_000 });
    assert.equal(
      await prepare({ messages: [{ role: "user", content: "hi" }], stepNumber: 0, steps: [] }),
      undefined,
    );
    assert.throws(() => compactSafePrepareStep({ window: 0 }), /window must be a positive number/);
    assert.throws(() => compactSafePrepareStep({ window: 10, threshold: 2 }), /threshold/);
  });

  test("an invalid history is reported and the step runs untouched", async () => {
    const refused: RefusedEvent[] = [];
    const prepare = compactSafePrepareStep({ window: 10, onRefused: (e) => refused.push(e) });
    const r = await prepare({
      messages: [{ role: "user", content: [{ type: "txt" }] }] as unknown as ModelMessage[],
      stepNumber: 3,
      steps: [],
    });
    assert.equal(r, undefined);
    assert.equal(refused[0]!.error.kind, "invalid_messages");
    assert.match(refused[0]!.error.message, /^messages\[0\]\.content\[0\]\.type: unknown type "txt"/);
  });
});

// ---------------------------------------------------------------------------
// aiSdkSummarizer

const transcript: Message[] = [
  { role: "user", content: [{ type: "text", text: "Rename parseConfig to loadConfig everywhere." }] },
  {
    role: "assistant",
    content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "grep -rn parseConfig src" } }],
  },
  {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "t1", content: "src/a.ts:3: parseConfig()" }],
  },
  { role: "assistant", content: [{ type: "text", text: "Found one use in src/a.ts." }] },
];

const SUMMARY = [
  "## Goal",
  "Rename parseConfig to loadConfig.",
  "## Progress",
  "Found the call in src/a.ts.",
].join("\n");

describe("aiSdkSummarizer", () => {
  test("sends the project's prompt to the model and returns its text", async () => {
    const model = new MockLanguageModelV4({
      modelId: "mock-sum",
      doGenerate: async () => answer([{ type: "text", text: SUMMARY }]),
    });
    const s = aiSdkSummarizer(model);
    assert.equal(s.model, "mock-sum");
    const r = await s.summarize({ messages: transcript, maxTokens: 800 });
    assert.equal(r.text, SUMMARY);
    assert.equal(r.truncated, undefined);
    const call = model.doGenerateCalls[0]!;
    assert.equal(call.maxOutputTokens, 1600);
    assert.deepEqual(call.prompt[0], { role: "system", content: SYSTEM_PROMPT });
    assert.match(promptText(call.prompt[1]), /grep -rn parseConfig src/);
  });

  test("cut-off and tool-call answers are flagged; placeholder and empty answers are refused by the pass", async () => {
    const cut = aiSdkSummarizer(
      new MockLanguageModelV4({
        doGenerate: async () => answer([{ type: "text", text: "## Goal\nRen" }], "length"),
      }),
    );
    assert.equal((await cut.summarize({ messages: transcript })).truncated, true);
    const calls = aiSdkSummarizer(
      new MockLanguageModelV4({
        doGenerate: async () =>
          answer([{ type: "tool-call", toolCallId: "x", toolName: "bash", input: "{}" }], "tool-calls"),
      }),
    );
    assert.equal((await calls.summarize({ messages: transcript })).toolCallRequested, true);
    for (const bad of ["...", "", "TODO"]) {
      const model = new MockLanguageModelV4({
        doGenerate: async () => answer([{ type: "text", text: bad }]),
      });
      const long: Message[] = [];
      for (let i = 0; i < 6; i++) long.push(...transcript.map((m) => structuredClone(m)));
      long.forEach((m, i) => {
        for (const b of m.content) {
          if (b.type === "tool_use") (b as { id: string }).id = `t${i}`;
          if (b.type === "tool_result") (b as { tool_use_id: string }).tool_use_id = `t${i - 1}`;
          if (b.type === "text") (b as { text: string }).text += ` ${"details ".repeat(200)}`;
        }
      });
      const r = await compactMessagesSafe(long, { summarizer: aiSdkSummarizer(model), target: 200 });
      assert.equal(r.ok, false, `summary ${JSON.stringify(bad)} was accepted`);
      if (!r.ok) assert.equal(r.error.kind, "unusable_summary");
      assert.equal(model.doGenerateCalls.length, 2, "one corrective retry");
    }
  });

  test("provider failures map to the failure ladder's kinds", async () => {
    const failing = (statusCode: number, body: string) =>
      aiSdkSummarizer(
        new MockLanguageModelV4({
          doGenerate: async () => {
            throw new APICallError({
              message: body,
              url: "u",
              requestBodyValues: {},
              statusCode,
              responseBody: body,
            });
          },
        }),
      );
    const kind = async (s: ReturnType<typeof aiSdkSummarizer>): Promise<string> => {
      try {
        await s.summarize({ messages: transcript });
        return "none";
      } catch (e) {
        assert.ok(e instanceof SummarizerError);
        return e.kind;
      }
    };
    assert.equal(await kind(failing(429, '{"error":{"message":"rate limited"}}')), "transient");
    assert.equal(await kind(failing(503, "overloaded")), "transient");
    assert.equal(await kind(failing(401, '{"error":{"message":"bad key"}}')), "deterministic");
    assert.equal(
      await kind(
        failing(400, '{"error":{"code":"context_length_exceeded","message":"maximum context length"}}'),
      ),
      "prompt_too_long",
    );
  });
});
