import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../model/types.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "../summarizers/types.js";
import { SummarizerError } from "../summarizers/types.js";
import { compactMessagesSafe, completeUnits, measureForPrune, pruneSizeBeforeRedaction } from "./compact.js";
import { fastEstimator, type TokenEstimator } from "./tokens.js";
import { protectedRound } from "../contract/rounds.js";
import { shouldCompact, measurePressure } from "./pressure.js";
import { STUB_PREFIX } from "./prune.js";
import { isCheckpoint, validateSurvivalContract, CHECKPOINT_MARKER } from "../contract/index.js";
import { deepFreeze } from "../../test/support.js";

const text = (role: Message["role"], t: string): Message => ({ role, content: [{ type: "text", text: t }] });

/** A task with `n` exchanges whose results are `size` bytes each. */
function task(n: number, size = 2000): Message[] {
  const out: Message[] = [text("user", "Fix the flaky test in session_store.")];
  for (let i = 0; i < n; i++) {
    out.push({
      role: "assistant",
      content: [
        { type: "text", text: `Step ${i}.` },
        { type: "tool_use", id: `c${i}`, name: "Read", input: { file_path: `src/f${i}.ts` } },
      ],
    });
    out.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `c${i}`, content: `line ${i}\n`.repeat(size / 8) }],
    });
  }
  return out;
}

/** A scripted summarizer: each call takes the next step (a result or an error). */
function scripted(steps: (SummaryResult | Error)[]): Summarizer & { calls: SummaryRequest[] } {
  const calls: SummaryRequest[] = [];
  return {
    name: "scripted",
    model: "scripted-1",
    calls,
    async summarize(req: SummaryRequest): Promise<SummaryResult> {
      calls.push(req);
      const step = steps[Math.min(calls.length - 1, steps.length - 1)]!;
      if (step instanceof Error) throw step;
      return step;
    },
  };
}
const good: SummaryResult = {
  text: "## Objective\nFix the flaky test.\n## Work done\nRead files.",
  model: "scripted-1",
};
const noSleep = { sleep: async () => {} };

test("summary path: ok only after validation, smaller than the original, input untouched", async () => {
  const history = deepFreeze(task(8));
  const before = JSON.stringify(history);
  const r = await compactMessagesSafe(history, {
    summarizer: scripted([good]),
    target: 100,
    anchors: "ship 0.9.12",
  });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(JSON.stringify(history), before);
  assert.equal(r.path, "summary");
  assert.ok(r.tokens_after < r.tokens_before);
  assert.equal(r.replacement.filter(isCheckpoint).length, 1);
  assert.ok(validateSurvivalContract(history, r.replacement, { anchors: "ship 0.9.12" }).valid);
  assert.match((r.checkpoint!.content[0] as { text: string }).text, /ship 0\.9\.12/);
});

test("the summarizer is given the span and, apart, the messages kept verbatim after it (the protected round)", async () => {
  const history = deepFreeze(task(8));
  const s = scripted([good]);
  const r = await compactMessagesSafe(history, { summarizer: s, target: 100 });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  const req = s.calls[0]!;
  const n = req.messages.length;
  assert.deepEqual([...req.messages, ...(req.following ?? [])], history);
  assert.ok(n < history.length && n > 0);
  // What follows is exactly the protected last round the replacement ends with.
  assert.deepEqual(r.replacement.slice(-(history.length - n)), req.following);
});

test("prune-only is tried first and committed when it reaches the target", async () => {
  const history = deepFreeze(task(8));
  const s = scripted([good]);
  const r = await compactMessagesSafe(history, { summarizer: s, target: 3000 });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(r.path, "prune-only");
  assert.equal(s.calls.length, 0, "no summarizer call");
  const stubs = r.replacement
    .flatMap((m) => m.content)
    .filter((b) => b.type === "tool_result" && (b as { content: string }).content.startsWith(STUB_PREFIX));
  assert.equal(stubs.length, 6, "the six results outside the protected round are stubs");
  assert.match(
    (stubs[0] as { content: string }).content,
    /Read \{"file_path":"src\/f0\.ts"\}; 1750 bytes removed/,
  );
  assert.ok(validateSurvivalContract(history, r.replacement, { path: "prune-only" }).valid);
});

test("a prune-only history that stays over the target before its redaction is not redacted (not built)", async () => {
  // The bound of what stubbing can save says the target may be reached; the pruned history's size
  // before redaction says it is not: the summary path follows, and the redaction of the prune-only
  // history (most of its cost) is never paid. Seen through the estimator: nothing it measures holds a
  // redacted tool result, which only the prune-only history has (the summary path keeps no old result).
  const history = task(8);
  history.splice(
    3,
    0,
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "env", name: "Bash", input: { command: "cat .env" } }],
    },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "env",
          content: "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        },
      ],
    },
  );
  deepFreeze(history);
  const round = protectedRound(history);
  const { tokens, pruneSavingsBound } = measureForPrune(history, round.regionStart, fastEstimator);
  const unredacted = pruneSizeBeforeRedaction(history, round, fastEstimator);
  const target = Math.floor((tokens - pruneSavingsBound + unredacted) / 2);
  assert.ok(
    tokens - pruneSavingsBound <= target && target < unredacted,
    `${tokens - pruneSavingsBound} ${target} ${unredacted}`,
  );
  let redactedResults = 0;
  const spy: TokenEstimator = {
    name: "spy",
    text: (t) => fastEstimator.text(t),
    message(m) {
      for (const b of m.content)
        if (b.type === "tool_result" && (b as { content: string }).content.includes("[REDACTED:"))
          redactedResults++;
      return fastEstimator.message(m);
    },
  };
  const r = await compactMessagesSafe(history, { target, estimator: spy, summarizer: scripted([good]) });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(r.path, "summary");
  assert.equal(redactedResults, 0, "the prune-only history was redacted, then thrown away");
  // With pruneOnly asked for, the same history is pruned and redacted.
  const p = await compactMessagesSafe(history, { pruneOnly: true, estimator: spy });
  assert.ok(p.ok && p.path === "prune-only");
  assert.ok(redactedResults > 0);
});

test("summaryOnly: the summary path even where prune-only reaches the target; not with pruneOnly", async () => {
  const history = deepFreeze(task(8));
  const pruned = await compactMessagesSafe(history, { summarizer: scripted([good]), target: 3000 });
  assert.ok(pruned.ok && pruned.path === "prune-only", "prune-only reaches this target");
  const s = scripted([good]);
  const r = await compactMessagesSafe(history, { summarizer: s, target: 3000, summaryOnly: true });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(r.path, "summary");
  assert.equal(s.calls.length, 1);
  assert.ok(validateSurvivalContract(history, r.replacement, { path: "summary" }).valid);
  await assert.rejects(
    compactMessagesSafe(history, { pruneOnly: true, summaryOnly: true }),
    /pruneOnly and summaryOnly exclude each other/,
  );
});

test("repeated identical reads keep only the latest copy; nested images go", async () => {
  const history: Message[] = [text("user", "look")];
  for (let i = 0; i < 3; i++) {
    history.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `r${i}`, name: "Read", input: { file_path: "same.ts" } }],
    });
    history.push({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: `r${i}`,
          content: "x".repeat(200),
          content_blocks:
            i === 0 ? [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] : undefined,
        },
      ],
    });
  }
  history.push(...task(3).slice(1));
  const r = await compactMessagesSafe(deepFreeze(history), { pruneOnly: true });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(r.prune.deduplicated, 2, "the two older copies; the latest stays");
  assert.equal(r.prune.imagesDropped, 1);
});

test("a second compaction replaces a foreign checkpoint instead of stacking it", async () => {
  const history = [
    text("user", "Another language model started to solve this problem: earlier work"),
    ...task(6),
  ];
  const s = scripted([good]);
  const r = await compactMessagesSafe(deepFreeze(history), { summarizer: s, target: 10 });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(r.replacement.filter(isCheckpoint).length, 1);
  assert.ok((r.checkpoint!.content[0] as { text: string }).text.startsWith(CHECKPOINT_MARKER));
  assert.ok(s.calls[0]!.messages.some(isCheckpoint), "the previous checkpoint is given to the summarizer");
});

test("failure ladder: transient errors retried 3 times with exponential backoff, then the pass fails", async () => {
  const waits: number[] = [];
  const s = scripted([new SummarizerError("transient", "HTTP 503", { status: 503 })]);
  const r = await compactMessagesSafe(deepFreeze(task(6)), {
    summarizer: s,
    target: 10,
    sleep: async (ms) => void waits.push(ms),
    backoffMs: 100,
  });
  assert.equal(r.ok, false);
  assert.equal(r.ok ? "" : r.error.kind, "summarizer_failed");
  assert.equal(s.calls.length, 4);
  assert.deepEqual(waits, [100, 200, 400]);
});

test("failure ladder: retry-after is honoured; success after a transient error", async () => {
  const waits: number[] = [];
  const s = scripted([
    new SummarizerError("transient", "HTTP 429", { status: 429, retryAfterMs: 7000 }),
    good,
  ]);
  const r = await compactMessagesSafe(deepFreeze(task(6)), {
    summarizer: s,
    target: 10,
    sleep: async (ms) => void waits.push(ms),
  });
  assert.ok(r.ok);
  assert.deepEqual(waits, [7000]);
  assert.equal(r.attempts, 2);
});

test("failure ladder: deterministic errors fail at once", async () => {
  const s = scripted([new SummarizerError("deterministic", "HTTP 401: invalid api key", { status: 401 })]);
  const r = await compactMessagesSafe(deepFreeze(task(6)), { summarizer: s, target: 10, ...noSleep });
  assert.equal(r.ok, false);
  assert.equal(s.calls.length, 1);
  assert.match(r.ok ? "" : r.error.message, /401/);
});

test("failure ladder: prompt too long drops the oldest complete unit, never a pair half, never the checkpoint", async () => {
  const history = [text("user", "Another language model started to solve this problem: keep me"), ...task(8)];
  const s = scripted([
    new SummarizerError("prompt_too_long", "prompt is too long"),
    new SummarizerError("prompt_too_long", "prompt is too long"),
    good,
  ]);
  const r = await compactMessagesSafe(deepFreeze(history), { summarizer: s, target: 10, ...noSleep });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(s.calls.length, 3);
  const sizes = s.calls.map((c) => c.messages.length);
  assert.ok(sizes[0]! > sizes[1]! && sizes[1]! > sizes[2]!);
  for (const c of s.calls) {
    assert.ok(c.messages.some(isCheckpoint), "checkpoint never dropped");
    const calls = new Set(
      c.messages.flatMap((m) =>
        m.content.filter((b) => b.type === "tool_use").map((b) => (b as { id: string }).id),
      ),
    );
    const results = c.messages.flatMap((m) =>
      m.content
        .filter((b) => b.type === "tool_result")
        .map((b) => (b as { tool_use_id: string }).tool_use_id),
    );
    assert.ok(
      results.every((id) => calls.has(id)),
      "no orphaned result",
    );
  }
});

for (const [label, bad] of [
  ["empty", { text: "", model: "m" }],
  ["punctuation", { text: "...", model: "m" }],
  ["placeholder", { text: "(no summary available)", model: "m" }],
  ["content-free", { text: "Summary of the conversation.", model: "m" }],
  ["refusal", { text: "I'm sorry, I can't help with that.", model: "m" }],
  ["cut off", { text: "## Objective\nFix", model: "m", truncated: true }],
  ["tool call", { text: "", model: "m", toolCallRequested: true }],
] as const) {
  test(`unusable summary (${label}): one corrective retry, then the pass fails with the history untouched`, async () => {
    const history = deepFreeze(task(6));
    const s = scripted([bad as SummaryResult]);
    const r = await compactMessagesSafe(history, { summarizer: s, target: 10, ...noSleep });
    assert.equal(r.ok, false);
    assert.equal(r.ok ? "" : r.error.kind, "unusable_summary");
    assert.equal(s.calls.length, 2);
    assert.match(s.calls[1]!.correction ?? "", /refused/);
  });
}

test("a corrective retry that succeeds gives ok", async () => {
  const s = scripted([{ text: "(no summary available)", model: "m" }, good]);
  const r = await compactMessagesSafe(deepFreeze(task(6)), { summarizer: s, target: 10, ...noSleep });
  assert.ok(r.ok);
  assert.equal(r.attempts, 2);
});

test("nothing to compact when the whole history is the protected round", async () => {
  const r = await compactMessagesSafe(deepFreeze(task(2)), { summarizer: scripted([good]) });
  assert.equal(r.ok ? "" : r.error.kind, "nothing_to_compact");
});

test("nothing to compact (with the reason) when the replacement would not be smaller", async () => {
  const history = [text("user", "a"), text("assistant", "b"), text("user", "c"), text("assistant", "d")];
  const huge: SummaryResult = { text: "word ".repeat(5000), model: "m" };
  const r = await compactMessagesSafe(deepFreeze(history), { summarizer: scripted([huge]) });
  assert.equal(r.ok ? "" : r.error.kind, "nothing_to_compact");
  assert.match(
    r.ok ? "" : r.error.message,
    /not smaller than the history's \d+; the protected last round alone is \d+ tokens/,
  );
});

test("anchors larger than the history: nothing to compact, and the reason names the anchors", async () => {
  const r = await compactMessagesSafe(deepFreeze(task(4, 400)), {
    summarizer: scripted([good]),
    anchors: "Never push to main. ".repeat(400),
  });
  assert.equal(r.ok ? "" : r.error.kind, "nothing_to_compact");
  assert.match(r.ok ? "" : r.error.message, /the pinned anchors \(restated in every checkpoint\) \d+ tokens/);
});

test("shrinking is judged on what the provider receives: unsigned thinking removed does not count", async () => {
  // Old turns carry a lot of unsigned thinking (never sent to Anthropic, nor to OpenAI); the
  // checkpoint that replaces them would make the request the provider receives larger.
  const history: Message[] = [text("user", "Look into the build.")];
  for (let i = 0; i < 4; i++) {
    history.push({
      role: "assistant",
      content: [
        { type: "thinking", thinking: `pondering step ${i} `.repeat(400) },
        { type: "tool_use", id: `k${i}`, name: "Bash", input: { command: `make step${i}` } },
      ],
    });
    history.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `k${i}`, content: "ok" }] });
  }
  const note: SummaryResult = {
    text: `## Work done\n${"ran make for every step; all passed. ".repeat(40)}`,
    model: "m",
  };
  const r = await compactMessagesSafe(deepFreeze(history), { summarizer: scripted([note]) });
  assert.equal(r.ok ? "" : r.error.kind, "nothing_to_compact");
  assert.match(r.ok ? "" : r.error.message, /Anthropic request would be \d+ tokens, not smaller/);
});

test("a lone complete exchange before an in-flight round is protected by the pass", async () => {
  const history: Message[] = [
    text("user", "Explain the project layout."),
    text("assistant", "The project has these parts: ".repeat(300)),
    text("user", "Install the dependencies."),
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "i1", name: "Bash", input: { command: "npm ci" } }],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "i1", content: "added 212 packages" }] },
    text("user", "Now start the dev server."),
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "srv", name: "Bash", input: { command: "npm run dev" } }],
    },
  ];
  const r = await compactMessagesSafe(deepFreeze(history), { summarizer: scripted([good]), target: 10 });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  const ids = r.replacement.flatMap((m) => m.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])));
  assert.deepEqual(ids, ["i1", "srv"]);
});

test("prune-only bounds protected results over 8 KiB and drops their nested blocks", async () => {
  const history = task(6, 4000);
  const last = history[history.length - 1]!;
  const big = "x".repeat(20_000);
  history[history.length - 1] = {
    role: "user",
    content: [
      {
        ...(last.content[0] as { type: "tool_result"; tool_use_id: string; content: string }),
        content: big,
        content_blocks: [{ type: "text", text: "nested ".repeat(2000) }],
      },
    ],
  };
  const r = await compactMessagesSafe(deepFreeze(history), { pruneOnly: true });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(r.path, "prune-only");
  const kept = r.replacement[r.replacement.length - 1]!.content[0] as {
    content: string;
    content_blocks?: unknown;
  };
  assert.ok(Buffer.byteLength(kept.content) < 8192 + 200, `bounded (${kept.content.length} chars)`);
  assert.match(kept.content, /tool result truncated; original 20000 bytes/);
  assert.equal(kept.content_blocks, undefined);
});

test("a small protected result whose nested blocks are oversized keeps its content and loses the blocks", async () => {
  const history = task(6);
  const last = history[history.length - 1]!;
  const r0 = last.content[0] as { type: "tool_result"; tool_use_id: string; content: string };
  history[history.length - 1] = {
    role: "user",
    content: [{ ...r0, content: "short", content_blocks: [{ type: "text", text: "y".repeat(10_000_000) }] }],
  };
  const r = await compactMessagesSafe(deepFreeze(history), { summarizer: scripted([good]), target: 10 });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  const kept = r.replacement[r.replacement.length - 1]!.content[0] as {
    content: string;
    content_blocks?: unknown;
  };
  assert.equal(kept.content, "short");
  assert.equal(kept.content_blocks, undefined);
});

test("secrets are redacted from the summary the pass writes, while the protected round stays verbatim", async () => {
  const history = task(6);
  history.push(text("user", "my key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"));
  history.push(text("assistant", "noted"));
  const leaky: SummaryResult = {
    text: "## Objective\nUse key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 and ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    model: "m",
  };
  const r = await compactMessagesSafe(deepFreeze(history), { summarizer: scripted([leaky]), target: 10 });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  const cp = (r.checkpoint!.content[0] as { text: string }).text;
  assert.ok(!cp.includes("sk-ant-api03-abcdef"), cp);
  assert.ok(!cp.includes("ghp_abcdef"));
  assert.ok(
    r.replacement.some((m) =>
      m.content.some(
        (b) => b.type === "text" && (b as { text: string }).text.includes("sk-ant-api03-abcdef"),
      ),
    ),
    "protected user text verbatim",
  );
});

test("pressure: child usage never counts; a large billed parent prompt triggers even when the estimate is small", () => {
  const small: Message[] = [text("user", "hi")];
  for (let i = 0; i < 200; i++) {
    small.push({
      role: "assistant",
      content: [{ type: "text", text: "sub" }],
      usage: { input_tokens: 150_000, scope: "child" },
    });
  }
  const cheap = shouldCompact({ messages: small }, { window: 200_000, threshold: 0.8 });
  assert.equal(cheap.compact, false);
  assert.equal(cheap.billedParentPromptTokens, null);

  const billed: Message[] = [
    text("user", "hi"),
    {
      role: "assistant",
      content: [{ type: "text", text: "ok" }],
      usage: { input_tokens: 10, cache_read_input_tokens: 170_000, cache_creation_input_tokens: 5000 },
    },
    text("user", "more"),
  ];
  const d = shouldCompact({ messages: billed }, { window: 200_000, threshold: 0.8 });
  assert.equal(d.billedParentPromptTokens, 175_010);
  assert.ok(d.estimate < 100);
  assert.equal(d.compact, true);
  assert.ok(d.tokens > 175_010, "plus what came after the billed prompt");
});

test("pressure: the billed figure is cleared by a history rewrite", async () => {
  const history = task(6);
  history[history.length - 2] = { ...history[history.length - 2]!, usage: { input_tokens: 190_000 } };
  assert.equal(measurePressure({ messages: history }).billedParentPromptTokens, 190_000);
  const r = await compactMessagesSafe(deepFreeze(history), { summarizer: scripted([good]), target: 10 });
  assert.ok(r.ok);
  assert.equal(measurePressure({ messages: r.replacement }).billedParentPromptTokens, null);
});

test("units never separate a call from its result", () => {
  const units = completeUnits(task(3));
  assert.equal(units.length, 4);
  assert.ok(units.slice(1).every((u) => u.length === 2));
});
