/**
 * The anthropic-native summarizer against local fakes that speak the documented
 * compaction wires (test/fake-provider.ts): on demand, the default
 * (`anthropicOnDemandCompaction`: beta `compact-2026-09-04`, the `compaction`
 * parameter with compact-safe's instructions, no trigger), and at a threshold
 * (`anthropicCompaction`: beta `compact-2026-01-12`, the `compact_20260112` edit with
 * `pause_after_compaction`, compacting only a request that reaches the trigger). The
 * request's live prefix (system, tools, leading messages), the `compaction` block and
 * `stop_reason: "compaction"`, the usage; a span far under 50,000 tokens; a provider
 * that refuses (its error shape), one that does not compact, an empty or placeholder
 * compaction, a timeout; and the engine's pass around it (receipt, contract).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../model/index.js";
import { SummarizerError, type SummaryRequest } from "./types.js";
import {
  ANTHROPIC_COMPACTION_BETA,
  ANTHROPIC_COMPACTION_EDIT,
  ANTHROPIC_ON_DEMAND_BETA,
  COMPACTION_TURN_TEXT,
  MIN_COMPACTION_TRIGGER,
  nativeInstructions,
} from "./anthropic-native.js";
import { SYSTEM_PROMPT } from "./prompt.js";
import { anthropicNativeSummarizer } from "../route/native-summarizer.js";
import { toAnthropicRequest } from "../formats/export/anthropic.js";
import { compactMessagesSafe } from "../engine/compact.js";
import { validateSurvivalContract } from "../contract/index.js";
import {
  anthropicCompaction,
  anthropicOnDemandCompaction,
  anthropicReply,
  startFakeProvider,
} from "../../test/fake-provider.js";

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

test("on demand (the default): beta compact-2026-09-04, the compaction parameter with compact-safe's instructions, the session's system, tools and leading messages as they are", async () => {
  const provider = await startFakeProvider((r) =>
    anthropicOnDemandCompaction(r, SUMMARY, { cacheRead: 4000 }),
  );
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
    const betas = String(sent.headers["anthropic-beta"]).split(",");
    assert.ok(betas.includes(ANTHROPIC_ON_DEMAND_BETA), betas.join(","));
    assert.ok(!betas.includes(ANTHROPIC_COMPACTION_BETA), "the older beta is not sent");
    assert.match(String(sent.headers["x-api-key"] ?? sent.headers.authorization), /^(Bearer )?key$/);
    assert.deepEqual(sent.body.compaction, { type: "summarize", instructions: nativeInstructions(request) });
    assert.equal(sent.body.context_management, undefined, "never beside the compaction parameter");
    const instructions: string = sent.body.compaction.instructions;
    assert.ok(instructions.includes(SYSTEM_PROMPT), "the prompt template, whole");
    assert.match(instructions, /Keep the summary under about 1500 tokens: the state of the work first/);
    assert.match(instructions, /Focus requested by the user: the rename/);
    assert.match(
      instructions,
      /<<<KEPT [0-9a-f]{16} BEGIN>>>[\s\S]*Now run the tests\.[\s\S]*<<<KEPT [0-9a-f]{16} END>>>/,
    );
    // The live prefix: the session's system and tools as given, its leading messages as the exporter
    // writes them, and nothing after them: the span ends with an assistant turn, which a compaction
    // request summarizes as it stands (no user turn is added to ask for it).
    assert.deepEqual(sent.body.system, SYSTEM);
    assert.deepEqual(sent.body.tools, TOOLS);
    const live = toAnthropicRequest([...span, ...following]).messages;
    const leading = toAnthropicRequest(span).messages;
    assert.deepEqual(sent.body.messages, live.slice(0, leading.length));
    assert.ok(!sent.rawBody.includes(COMPACTION_TURN_TEXT));
    assert.equal(sent.body.model, "claude-test");
    assert.equal(typeof sent.body.max_tokens, "number");
  } finally {
    await provider.close();
  }
});

test("a span far under 50,000 tokens: summarized on demand; the threshold mode's server does not compact it and the failure says why", async () => {
  const provider = await startFakeProvider((r) =>
    r.body?.compaction !== undefined
      ? anthropicOnDemandCompaction(r, SUMMARY)
      : anthropicCompaction(r, SUMMARY),
  );
  try {
    const onDemand = anthropicNativeSummarizer({
      model: "m",
      baseURL: provider.anthropicBaseURL,
      apiKey: "k",
    });
    const r = await onDemand.summarize(request);
    assert.equal(r.text, SUMMARY);
    // The whole request is a few thousand characters: under a thousand tokens by any count.
    assert.ok(provider.requests[0]!.rawBody.length < 20_000, `${provider.requests[0]!.rawBody.length} chars`);

    const threshold = anthropicNativeSummarizer({
      model: "m",
      baseURL: provider.anthropicBaseURL,
      apiKey: "k",
      mode: "threshold",
    });
    await assert.rejects(threshold.summarize(request), (e: unknown) => {
      assert.ok(e instanceof SummarizerError);
      assert.equal(e.kind, "deterministic");
      assert.match(
        e.message,
        /^anthropic-native summarizer \(model m, threshold mode at [^)]+\): the response has no compaction block \(stop_reason "end_turn"\): .*50000 input tokens.*mode "on-demand" \(--native-mode on-demand\)/,
      );
      assert.ok(!e.message.includes("\n"));
      return true;
    });
    assert.equal(provider.requests[1]!.body.context_management.edits[0].type, ANTHROPIC_COMPACTION_EDIT);
  } finally {
    await provider.close();
  }
});

test("without the system option the span's system messages are the system; a span ending with a user turn is sent as it is", async () => {
  const provider = await startFakeProvider((r) => anthropicOnDemandCompaction(r, SUMMARY));
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
  const provider = await startFakeProvider((r) => anthropicOnDemandCompaction(r, SUMMARY));
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

test("the provider's errors, in its shape: a 400 fails at once (deterministic) with its code and message on one line; compaction_unavailable (529) is transient; nothing to summarize is refused", async () => {
  const provider = await startFakeProvider([
    anthropicReply.error(400, "invalid_request_error", "compaction is not supported on this model"),
    anthropicReply.error(
      529,
      "overloaded_error",
      "Compaction is temporarily unavailable. Retry the request.",
      {
        errorCode: "compaction_unavailable",
      },
    ),
  ]);
  try {
    const s = anthropicNativeSummarizer({ model: "m", baseURL: provider.anthropicBaseURL, apiKey: "k" });
    await assert.rejects(s.summarize(request), (e: unknown) => {
      assert.ok(e instanceof SummarizerError);
      assert.equal(e.kind, "deterministic");
      assert.equal(e.status, 400);
      assert.match(
        e.message,
        /^anthropic-native summarizer \(model m at [^)]+\): HTTP 400 invalid_request_error: compaction is not supported on this model$/,
      );
      return true;
    });
    await assert.rejects(s.summarize(request), (e: unknown) => {
      assert.ok(e instanceof SummarizerError);
      assert.equal(e.kind, "transient");
      assert.equal(e.status, 529);
      assert.match(e.message, /HTTP 529 compaction_unavailable: Compaction is temporarily unavailable/);
      return true;
    });
  } finally {
    await provider.close();
  }
  // The fake's own checks, which the server makes: nothing to summarize, a turn not finished.
  const strict = await startFakeProvider((r) => anthropicOnDemandCompaction(r, SUMMARY));
  try {
    const s = anthropicNativeSummarizer({ model: "m", baseURL: strict.anthropicBaseURL, apiKey: "k" });
    await assert.rejects(s.summarize({ messages: span.slice(0, 1) }), (e: unknown) => {
      assert.ok(e instanceof SummarizerError);
      assert.equal(e.kind, "deterministic");
      assert.match(
        e.message,
        /HTTP 400 compaction_nothing_to_summarize: messages: there is no user or assistant content/,
      );
      assert.ok(!e.message.includes("\n"));
      return true;
    });
    // A span whose last call has no result: the exporter leaves the unanswered call out, so the
    // request never ends on an unfinished assistant turn (which the server refuses).
    const r = await s.summarize({ messages: span.slice(0, 3) });
    assert.equal(r.text, SUMMARY);
    assert.deepEqual(
      strict.requests[1]!.body.messages.map((m: { role: string }) => m.role),
      ["user"],
    );
    assert.equal(strict.requestCount, 2);
  } finally {
    await strict.close();
  }
});

test("a response with no compaction block (the server answered instead): a deterministic one-line error naming stop_reason and the threshold mode", async () => {
  const provider = await startFakeProvider(() => anthropicReply.text("Sure, here is the next step."));
  try {
    const s = anthropicNativeSummarizer({ model: "m", baseURL: provider.anthropicBaseURL, apiKey: "k" });
    await assert.rejects(s.summarize(request), (e: unknown) => {
      assert.ok(e instanceof SummarizerError);
      assert.equal(e.kind, "deterministic");
      assert.match(
        e.message,
        /no compaction block \(stop_reason "end_turn"\): the server did not compact \(a model or gateway without on-demand compaction, beta compact-2026-09-04.*--native-mode threshold/,
      );
      assert.ok(!e.message.includes("\n"));
      return true;
    });
  } finally {
    await provider.close();
  }
});

test('an empty compaction (content null or "") or a placeholder: the engine refuses it after one corrective retry; nothing is returned as ok', async () => {
  const provider = await startFakeProvider((r, i) => anthropicOnDemandCompaction(r, i === 0 ? null : ""));
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
    assert.match(provider.requests[2]!.body.compaction.instructions, /previous summary was refused/);
  } finally {
    await provider.close();
  }
  const placeholder = await startFakeProvider((r) =>
    anthropicOnDemandCompaction(r, "(no summary available)"),
  );
  try {
    const s = anthropicNativeSummarizer({ model: "m", baseURL: placeholder.anthropicBaseURL, apiKey: "k" });
    const r = await compactMessagesSafe(longHistory(), { summarizer: s, target: 200 });
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.error.kind, "unusable_summary");
    assert.match(r.error.message, /the summary was a placeholder .*\(after one corrective retry\)/);
    assert.equal(placeholder.requestCount, 2);
  } finally {
    await placeholder.close();
  }
});

test("a timeout is transient and says so, whether no headers come or the body stalls after them", async () => {
  const provider = await startFakeProvider([
    { kind: "hang" },
    {
      kind: "stall",
      status: 200,
      headers: { "content-type": "application/json" },
      partialBody: '{"id":"msg_1",',
    },
  ]);
  try {
    const s = anthropicNativeSummarizer({
      model: "m",
      baseURL: provider.anthropicBaseURL,
      apiKey: "k",
      timeoutMs: 200,
    });
    for (const what of ["no headers", "a stalled body"]) {
      await assert.rejects(s.summarize(request), (e: unknown) => {
        assert.ok(e instanceof SummarizerError, what);
        assert.equal(e.kind, "transient", what);
        assert.match(e.message, /timed out after 200 ms/, what);
        return true;
      });
    }
    assert.equal(provider.requestCount, 2, "no retry inside the summarizer");
  } finally {
    await provider.close();
  }
});

test("options refused at construction: an unknown mode, a trigger with the on-demand mode, a trigger under the API's minimum, no key", () => {
  assert.throws(
    () => anthropicNativeSummarizer({ model: "m", apiKey: "k", mode: "later" as never }),
    /mode must be "on-demand" or "threshold"; got "later"/,
  );
  assert.throws(
    () => anthropicNativeSummarizer({ model: "m", apiKey: "k", triggerTokens: 60_000 }),
    /triggerTokens applies to mode "threshold" only/,
  );
  assert.throws(
    () => anthropicNativeSummarizer({ model: "m", apiKey: "k", mode: "threshold", triggerTokens: 10_000 }),
    /triggerTokens must be a whole number of input tokens, at least 50000/,
  );
  assert.throws(() => anthropicNativeSummarizer({ model: "m", env: {} }), /ANTHROPIC_API_KEY/);
});

test("the threshold mode: beta compact-2026-01-12, the compact_20260112 edit with its trigger and pause_after_compaction, one user turn after a span ending with an assistant turn", async () => {
  // The fake stands for a session large enough to reach the trigger.
  const provider = await startFakeProvider((r) => anthropicCompaction(r, SUMMARY, { inputTokens: 80_000 }));
  try {
    const s = anthropicNativeSummarizer({
      model: "claude-test",
      baseURL: provider.anthropicBaseURL,
      apiKey: "key",
      system: SYSTEM,
      tools: TOOLS,
      mode: "threshold",
      triggerTokens: 60_000,
    });
    const r = await s.summarize(request);
    assert.equal(r.text, SUMMARY);
    const sent = provider.requests[0]!;
    const betas = String(sent.headers["anthropic-beta"]).split(",");
    assert.ok(betas.includes(ANTHROPIC_COMPACTION_BETA));
    assert.ok(!betas.includes(ANTHROPIC_ON_DEMAND_BETA));
    assert.equal(sent.body.compaction, undefined);
    assert.deepEqual(sent.body.context_management, {
      edits: [
        {
          type: ANTHROPIC_COMPACTION_EDIT,
          trigger: { type: "input_tokens", value: 60_000 },
          instructions: nativeInstructions(request),
          pause_after_compaction: true,
        },
      ],
    });
    assert.deepEqual(sent.body.system, SYSTEM);
    assert.deepEqual(sent.body.tools, TOOLS);
    const leading = toAnthropicRequest(span).messages;
    assert.deepEqual(sent.body.messages.slice(0, leading.length), leading);
    assert.deepEqual(sent.body.messages.slice(leading.length), [
      { role: "user", content: [{ type: "text", text: COMPACTION_TURN_TEXT }] },
    ]);
    // Its default trigger is the API's minimum.
    const d = anthropicNativeSummarizer({
      model: "m",
      baseURL: provider.anthropicBaseURL,
      apiKey: "k",
      mode: "threshold",
    });
    await d.summarize(request);
    assert.equal(
      provider.requests[1]!.body.context_management.edits[0].trigger.value,
      MIN_COMPACTION_TRIGGER,
    );
  } finally {
    await provider.close();
  }
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
  const provider = await startFakeProvider((r) => anthropicOnDemandCompaction(r, SUMMARY));
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
    // The messages are the history's own, as exported, up to the protected round, and nothing after.
    const live = toAnthropicRequest(history).messages;
    assert.ok(sent.messages.length < live.length);
    assert.deepEqual(sent.messages, live.slice(0, sent.messages.length));
  } finally {
    await provider.close();
  }
});
