/**
 * The anthropic-native summarizer against a local fake that speaks the documented
 * compaction wire (`anthropicCompaction` in test/fake-provider.ts): the request
 * (beta header, the `compact_20260112` edit with compact-safe's instructions and
 * `pause_after_compaction`, the live prefix: system, tools, leading messages), the
 * `compaction` block and `stop_reason: "compaction"`, the usage; a provider that
 * refuses, one that does not compact, one that returns an empty compaction; and the
 * engine's pass around it (receipt, contract).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../model/index.js";
import { SummarizerError, type SummaryRequest } from "./types.js";
import {
  ANTHROPIC_COMPACTION_BETA,
  ANTHROPIC_COMPACTION_EDIT,
  COMPACTION_TURN_TEXT,
  MIN_COMPACTION_TRIGGER,
  nativeInstructions,
} from "./anthropic-native.js";
import { SYSTEM_PROMPT } from "./prompt.js";
import { anthropicNativeSummarizer } from "../route/native-summarizer.js";
import { toAnthropicRequest } from "../formats/export/anthropic.js";
import { compactMessagesSafe } from "../engine/compact.js";
import { validateSurvivalContract } from "../contract/index.js";
import { anthropicCompaction, anthropicReply, startFakeProvider } from "../../test/fake-provider.js";

const SUMMARY =
  "## Objective\nRename parseConfig to loadConfig.\n\n## Next step\nRun the tests after the rename in src/a.ts.";

const TOOLS = [
  {
    name: "Bash",
    description: "Run a shell command.",
    input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
];
const SYSTEM = [{ type: "text", text: "You are a coding agent.", cache_control: { type: "ephemeral" } }];

const span: Message[] = [
  { role: "system", content: [{ type: "text", text: "You are a coding agent." }] },
  { role: "user", content: [{ type: "text", text: "Please rename parseConfig to loadConfig everywhere." }] },
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
const following: Message[] = [
  { role: "user", content: [{ type: "text", text: "Now run the tests." }] },
  { role: "assistant", content: [{ type: "text", text: "Running them." }] },
];
const request: SummaryRequest = { messages: span, following, focus: "the rename", maxTokens: 1500 };

test("the request: beta header, the compact_20260112 edit with compact-safe's instructions and pause_after_compaction, the session's system, tools and leading messages", async () => {
  const provider = await startFakeProvider((r) => anthropicCompaction(r, SUMMARY, { cacheRead: 4000 }));
  try {
    const s = anthropicNativeSummarizer({
      model: "claude-test",
      baseURL: provider.anthropicBaseURL,
      apiKey: "key",
      system: SYSTEM,
      tools: TOOLS,
    });
    assert.equal(s.name, "anthropic-native");
    const r = await s.summarize(request);
    assert.equal(r.text, SUMMARY);
    assert.equal(r.model, "claude-test");
    // The compaction's own usage (its iteration), where the cache read shows the prefix paid.
    assert.deepEqual(r.usage, {
      input_tokens: 200,
      output_tokens: 900,
      cache_read_input_tokens: 4000,
      cache_creation_input_tokens: 0,
    });
    assert.equal(provider.requestCount, 1);
    const sent = provider.requests[0]!;
    assert.equal(sent.path, "/v1/messages");
    assert.ok(String(sent.headers["anthropic-beta"]).split(",").includes(ANTHROPIC_COMPACTION_BETA));
    assert.match(String(sent.headers["x-api-key"] ?? sent.headers.authorization), /^(Bearer )?key$/);
    assert.deepEqual(sent.body.context_management, {
      edits: [
        {
          type: ANTHROPIC_COMPACTION_EDIT,
          trigger: { type: "input_tokens", value: MIN_COMPACTION_TRIGGER },
          instructions: nativeInstructions(request),
          pause_after_compaction: true,
        },
      ],
    });
    const instructions: string = sent.body.context_management.edits[0].instructions;
    assert.ok(instructions.includes(SYSTEM_PROMPT), "the prompt template, whole");
    assert.match(instructions, /Keep the summary under about 1500 tokens: the state of the work first/);
    assert.match(instructions, /Focus requested by the user: the rename/);
    assert.match(
      instructions,
      /<<<KEPT [0-9a-f]{16} BEGIN>>>[\s\S]*Now run the tests\.[\s\S]*<<<KEPT [0-9a-f]{16} END>>>/,
    );
    // The live prefix: the session's system and tools as given, its leading messages as the exporter writes them.
    assert.deepEqual(sent.body.system, SYSTEM);
    assert.deepEqual(sent.body.tools, TOOLS);
    const live = toAnthropicRequest([...span, ...following]).messages;
    const leading = toAnthropicRequest(span).messages;
    assert.deepEqual(sent.body.messages.slice(0, leading.length), live.slice(0, leading.length));
    // The span ends with an assistant turn: one user turn asks for the compaction after the prefix.
    assert.deepEqual(sent.body.messages.slice(leading.length), [
      { role: "user", content: [{ type: "text", text: COMPACTION_TURN_TEXT }] },
    ]);
    assert.equal(sent.body.model, "claude-test");
    assert.equal(typeof sent.body.max_tokens, "number");
  } finally {
    await provider.close();
  }
});

test("without the system option the span's system messages are the system; a span ending with a user turn gets no added turn", async () => {
  const provider = await startFakeProvider((r) => anthropicCompaction(r, SUMMARY));
  try {
    const s = anthropicNativeSummarizer({ model: "m", baseURL: provider.anthropicBaseURL, apiKey: "k" });
    await s.summarize({ messages: span.slice(0, 4) });
    const sent = provider.requests[0]!.body;
    assert.deepEqual(sent.system, [{ type: "text", text: "You are a coding agent." }]);
    assert.equal(sent.tools, undefined);
    assert.deepEqual(sent.messages, toAnthropicRequest(span.slice(0, 4)).messages);
  } finally {
    await provider.close();
  }
});

test("what is sent out is redacted: a secret in a user message, a tool input and a result never leaves; thinking that holds one is dropped", async () => {
  const key = "sk-ant-api03-" + "A".repeat(93) + "AA";
  const secretSpan: Message[] = [
    { role: "user", content: [{ type: "text", text: `Use the key ${key} for the deploy.` }] },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: `The key is ${key}.`, signature: "sig" },
        { type: "tool_use", id: "t1", name: "Bash", input: { command: `deploy --key ${key}` } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: `using ${key}: ok` }] },
  ];
  const provider = await startFakeProvider((r) => anthropicCompaction(r, SUMMARY));
  try {
    const s = anthropicNativeSummarizer({ model: "m", baseURL: provider.anthropicBaseURL, apiKey: "k" });
    await s.summarize({ messages: secretSpan });
    const raw = provider.requests[0]!.rawBody;
    assert.ok(!raw.includes(key), "the key was sent");
    assert.match(raw, /\[REDACTED:[a-z_-]+\]/);
    const assistant = provider.requests[0]!.body.messages[1];
    assert.deepEqual(
      assistant.content.map((b: { type: string }) => b.type),
      ["tool_use"],
      "the signed thinking that held the key is left out",
    );
  } finally {
    await provider.close();
  }
});

test("a provider that refuses: 400 fails at once (deterministic), 529 is transient, each with the provider's message", async () => {
  const provider = await startFakeProvider([
    anthropicReply.error(400, "invalid_request_error", "compaction is not supported on this model"),
    anthropicReply.overloaded(),
  ]);
  try {
    const s = anthropicNativeSummarizer({ model: "m", baseURL: provider.anthropicBaseURL, apiKey: "k" });
    await assert.rejects(s.summarize(request), (e: unknown) => {
      assert.ok(e instanceof SummarizerError);
      assert.equal(e.kind, "deterministic");
      assert.equal(e.status, 400);
      assert.match(
        e.message,
        /^anthropic-native summarizer \(model m at [^)]+\): .*compaction is not supported/,
      );
      return true;
    });
    await assert.rejects(s.summarize(request), (e: unknown) => {
      assert.ok(e instanceof SummarizerError);
      assert.equal(e.kind, "transient");
      return true;
    });
  } finally {
    await provider.close();
  }
});

test("a response with no compaction block (the server did not compact): a deterministic one-line error naming stop_reason and the trigger", async () => {
  const provider = await startFakeProvider(() => anthropicReply.text("Sure, here is the next step."));
  try {
    const s = anthropicNativeSummarizer({ model: "m", baseURL: provider.anthropicBaseURL, apiKey: "k" });
    await assert.rejects(s.summarize(request), (e: unknown) => {
      assert.ok(e instanceof SummarizerError);
      assert.equal(e.kind, "deterministic");
      assert.match(e.message, /no compaction block \(stop_reason "end_turn"\).*50000 input tokens/);
      assert.ok(!e.message.includes("\n"));
      return true;
    });
  } finally {
    await provider.close();
  }
});

test('an empty compaction (content null or ""): text "", which the engine refuses after one corrective retry; nothing is returned as ok', async () => {
  const provider = await startFakeProvider((r, i) => anthropicCompaction(r, i === 0 ? null : ""));
  try {
    const s = anthropicNativeSummarizer({ model: "m", baseURL: provider.anthropicBaseURL, apiKey: "k" });
    const direct = await s.summarize(request);
    assert.equal(direct.text, "");
    const history = longHistory();
    const r = await compactMessagesSafe(history, { summarizer: s, target: 200 });
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.error.kind, "unusable_summary");
    assert.match(r.error.message, /the summary was empty \(after one corrective retry\)/);
    assert.equal(provider.requestCount, 3, "one direct call, then a call and its corrective retry");
    // The corrective retry's reason is in its instructions.
    assert.match(
      provider.requests[2]!.body.context_management.edits[0].instructions,
      /previous summary was refused/,
    );
  } finally {
    await provider.close();
  }
});

test("a timeout is transient and says so; a trigger under the API's minimum is refused at construction", async () => {
  const provider = await startFakeProvider(() => ({ kind: "hang" }));
  try {
    const s = anthropicNativeSummarizer({
      model: "m",
      baseURL: provider.anthropicBaseURL,
      apiKey: "k",
      timeoutMs: 200,
    });
    await assert.rejects(s.summarize(request), (e: unknown) => {
      assert.ok(e instanceof SummarizerError);
      assert.equal(e.kind, "transient");
      assert.match(e.message, /timed out after 200 ms/);
      return true;
    });
  } finally {
    await provider.close();
  }
  assert.throws(
    () => anthropicNativeSummarizer({ model: "m", apiKey: "k", triggerTokens: 10_000 }),
    /triggerTokens must be a whole number of input tokens, at least 50000/,
  );
  assert.throws(() => anthropicNativeSummarizer({ model: "m", env: {} }), /ANTHROPIC_API_KEY/);
});

function longHistory(): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < 12; i++) {
    out.push({ role: "user", content: [{ type: "text", text: `Step ${i}: look at file${i}.ts please.` }] });
    out.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `c${i}`, name: "Read", input: { file_path: `src/file${i}.ts` } }],
    });
    out.push({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: `c${i}`, content: `export const v${i} = ${i};\n`.repeat(40) },
      ],
    });
    out.push({ role: "assistant", content: [{ type: "text", text: `file${i}.ts exports v${i}.` }] });
  }
  return out;
}

test("through the engine: the compaction's summary in the checkpoint, the protected round verbatim, the contract kept", async () => {
  const provider = await startFakeProvider((r) => anthropicCompaction(r, SUMMARY));
  try {
    const s = anthropicNativeSummarizer({
      model: "m",
      baseURL: provider.anthropicBaseURL,
      apiKey: "k",
      tools: TOOLS,
    });
    const history = longHistory();
    const r = await compactMessagesSafe(history, { summarizer: s, target: 200 });
    assert.equal(r.ok, true, r.ok ? "" : r.error.message);
    if (!r.ok) return;
    assert.equal(r.path, "summary");
    assert.ok(r.summary.includes("Rename parseConfig to loadConfig."));
    assert.deepEqual(r.replacement.slice(-2), history.slice(-2));
    assert.equal(validateSurvivalContract(history, r.replacement).valid, true);
    assert.equal(provider.requestCount, 1);
    const sent = provider.requests[0]!.body;
    assert.deepEqual(sent.tools, TOOLS);
    // The leading messages are the history's own, as exported, up to the protected round.
    const live = toAnthropicRequest(history).messages;
    const n = sent.messages.length - 1;
    assert.deepEqual(sent.messages.slice(0, n), live.slice(0, n));
  } finally {
    await provider.close();
  }
});
