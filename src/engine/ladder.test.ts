/**
 * The failure ladder end to end: compactMessagesSafe with each LLM summarizer
 * against a local server on 127.0.0.1 that speaks the provider's wire format.
 * For every case: the history is untouched, the error names the cause, and the
 * number of requests is exactly what the ladder allows.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../model/types.js";
import { SummarizerError, type Summarizer } from "../summarizers/types.js";
import { openaiCompatibleSummarizer, anthropicSummarizer } from "../summarizers/index.js";
import {
  startFakeProvider,
  closedPortURL,
  openaiReply,
  anthropicReply,
  type FakeStep,
  type FakeProvider,
} from "../../test/fake-provider.js";
import { compactMessagesSafe, MAX_RETRY_AFTER_MS, type CompactResult } from "./compact.js";
import { isCheckpoint } from "../contract/index.js";
import { deepFreeze } from "../../test/support.js";

/**
 * A bound no loaded machine reaches, far under what the failure would take (a 30 s retry-after wait,
 * a 60 s request timeout, or no end at all): the tests check that a call ends, not how fast.
 */
const LONG_BEFORE = 20_000;

function history(): Message[] {
  const out: Message[] = [
    { role: "user", content: [{ type: "text", text: "Fix the flaky session_store test." }] },
  ];
  for (let i = 0; i < 8; i++) {
    out.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `c${i}`, name: "Bash", input: { command: `cargo test part${i}` } }],
    });
    out.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `c${i}`, content: `running part ${i}\n`.repeat(120) }],
    });
  }
  return out;
}

const GOOD =
  "## Objective\nFix the flaky session_store test.\n## Work done\nRan the suite in parts.\n## Next step\nRerun part 7.";

interface Provider {
  name: string;
  make(baseURL: string, timeoutMs?: number): Summarizer;
  base(p: FakeProvider): string;
  ok(text: string): FakeStep;
  status(code: number): FakeStep;
  rateLimited(seconds: number): FakeStep;
  unauthorized(): FakeStep;
  empty(): FakeStep;
  cutOff(): FakeStep;
  toolCall(): FakeStep;
  tooLong(): FakeStep;
}

const providers: Provider[] = [
  {
    name: "openai",
    make: (baseURL, timeoutMs) =>
      openaiCompatibleSummarizer({ baseURL, model: "gpt-test", apiKey: "test-key", timeoutMs }),
    base: (p) => p.openaiBaseURL,
    ok: (t) => openaiReply.text(t),
    status: (code) => openaiReply.error(code, `upstream error ${code}`),
    rateLimited: (s) => openaiReply.rateLimited(s),
    unauthorized: () => openaiReply.unauthorized(),
    empty: () => openaiReply.text(""),
    cutOff: () => openaiReply.length("## Objective\nFix the"),
    toolCall: () => openaiReply.toolCall("bash", { command: "ls" }),
    tooLong: () => openaiReply.contextLengthExceeded(),
  },
  {
    name: "anthropic",
    make: (baseURL, timeoutMs) =>
      anthropicSummarizer({ baseURL, model: "claude-test", apiKey: "test-key", timeoutMs }),
    base: (p) => p.anthropicBaseURL,
    ok: (t) => anthropicReply.text(t),
    status: (code) =>
      anthropicReply.error(
        code,
        code >= 500 ? "api_error" : "invalid_request_error",
        `upstream error ${code}`,
      ),
    rateLimited: (s) => anthropicReply.rateLimited(s),
    unauthorized: () => anthropicReply.unauthorized(),
    empty: () => anthropicReply.text(""),
    cutOff: () => anthropicReply.maxTokens("## Objective\nFix the"),
    toolCall: () => anthropicReply.toolUse("bash", { command: "ls" }),
    tooLong: () => anthropicReply.promptTooLong(),
  },
];

const servers: FakeProvider[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

async function run(p: Provider, steps: FakeStep[], opts: { timeoutMs?: number } = {}) {
  const server = await startFakeProvider(steps);
  servers.push(server);
  const input = deepFreeze(history());
  const before = JSON.stringify(input);
  const waits: number[] = [];
  const result: CompactResult = await compactMessagesSafe(input, {
    summarizer: p.make(p.base(server), opts.timeoutMs),
    target: 50,
    sleep: async (ms) => void waits.push(ms),
    backoffMs: 10,
  });
  assert.equal(JSON.stringify(input), before, "the history is untouched");
  return { result, requests: server.requestCount, waits, server };
}

function failed(r: CompactResult, kind: string, cause: RegExp): void {
  assert.equal(r.ok, false, "the pass must fail");
  if (r.ok) return;
  assert.equal(r.error.kind, kind, r.error.message);
  assert.match(r.error.message, cause);
  assert.ok(!r.error.message.includes("\n"), "one line");
}

for (const p of providers) {
  test(`${p.name}: a normal answer compacts, with one request`, async () => {
    const { result, requests } = await run(p, [p.ok(GOOD)]);
    assert.ok(result.ok, result.ok ? "" : result.error.message);
    assert.equal(requests, 1);
    assert.equal(result.replacement.filter(isCheckpoint).length, 1);
  });

  for (const code of [500, 503]) {
    test(`${p.name}: HTTP ${code} is retried 3 times with backoff, then fails`, async () => {
      const { result, requests, waits } = await run(p, Array(5).fill(p.status(code)));
      failed(result, "summarizer_failed", new RegExp(`${code}`));
      assert.equal(requests, 4);
      assert.deepEqual(waits, [10, 20, 40]);
    });
  }

  test(`${p.name}: HTTP 503 then success`, async () => {
    const { result, requests } = await run(p, [p.status(503), p.ok(GOOD)]);
    assert.ok(result.ok);
    assert.equal(requests, 2);
  });

  test(`${p.name}: 429 with retry-after waits what the server asked`, async () => {
    const { result, requests, waits } = await run(p, [p.rateLimited(2), p.ok(GOOD)]);
    assert.ok(result.ok, result.ok ? "" : result.error.message);
    assert.equal(requests, 2);
    assert.deepEqual(waits, [2000]);
  });

  test(`${p.name}: a timeout is transient (4 requests, then fail)`, async () => {
    const slow = { ...(p.ok(GOOD) as object), delayMs: 2000 } as FakeStep;
    // 300 ms, not less: on a loaded machine a shorter timer can fire before the server has read the request.
    const { result, requests } = await run(p, Array(4).fill(slow), { timeoutMs: 300 });
    failed(result, "summarizer_failed", /tim(e|ed) ?out/i);
    assert.equal(requests, 4);
  });

  test(`${p.name}: connection refused is transient (no server ever answers)`, async () => {
    const url = await closedPortURL();
    const input = deepFreeze(history());
    let sleeps = 0;
    const result = await compactMessagesSafe(input, {
      summarizer: p.make(p.name === "openai" ? `${url}/v1` : url),
      target: 50,
      sleep: async () => void sleeps++,
    });
    failed(result, "summarizer_failed", /connect|refused|ECONNREFUSED/i);
    assert.equal(sleeps, 3);
  });

  test(`${p.name}: 401 fails at once`, async () => {
    const { result, requests } = await run(p, [p.unauthorized(), p.ok(GOOD)]);
    failed(result, "summarizer_failed", /401/);
    assert.equal(requests, 1);
  });

  for (const [label, step, cause] of [
    ["an empty content", p.empty(), /empty/],
    ["(no summary available)", p.ok("(no summary available)"), /placeholder/],
    ["a refusal", p.ok("I'm sorry, but I can't help with that."), /refusal/],
    ["a cut-off answer", p.cutOff(), /cut off/],
    ["a tool call instead of text", p.toolCall(), /call tools/],
  ] as const) {
    test(`${p.name}: ${label} gets one corrective retry, then the pass fails`, async () => {
      const { result, requests, server } = await run(p, [step, step, p.ok(GOOD)]);
      failed(result, "unusable_summary", cause);
      assert.equal(requests, 2);
      assert.match(JSON.stringify(server.requests[1]!.body), /previous answer was refused/);
    });
  }

  test(`${p.name}: prompt too long drops the oldest unit and succeeds`, async () => {
    const { result, requests, server } = await run(p, [p.tooLong(), p.ok(GOOD)]);
    assert.ok(result.ok, result.ok ? "" : result.error.message);
    assert.equal(requests, 2);
    const first = JSON.stringify(server.requests[0]!.body).length;
    const second = JSON.stringify(server.requests[1]!.body).length;
    assert.ok(second < first, "the second request is smaller");
  });
}

// ---------------------------------------------------------------------------
// Bounded waits: the retry-after cap, the ladder's time budget, whole-request timeouts, one label.

for (const p of providers) {
  test(`${p.name}: a 429 asking for a day (retry-after: 86400) waits at most 60 s`, async () => {
    const { result, requests, waits } = await run(p, [p.rateLimited(86_400), p.ok(GOOD)]);
    assert.ok(result.ok, result.ok ? "" : result.error.message);
    assert.equal(requests, 2);
    assert.deepEqual(waits, [MAX_RETRY_AFTER_MS]);
  });

  test(`${p.name}: a wait that would overrun the ladder's budget is not slept; the pass fails as transient`, async () => {
    const server = await startFakeProvider([p.rateLimited(86_400), p.rateLimited(86_400), p.ok(GOOD)]);
    servers.push(server);
    let clock = 1_000_000;
    const waits: number[] = [];
    const result = await compactMessagesSafe(deepFreeze(history()), {
      summarizer: p.make(p.base(server)),
      target: 50,
      budgetMs: 100_000,
      now: () => clock,
      sleep: async (ms) => {
        waits.push(ms);
        clock += ms;
      },
    });
    failed(result, "summarizer_failed", /HTTP 429.*transient.*100 s time budget/);
    assert.deepEqual(waits, [60_000], "one capped wait, then the second would overrun the budget");
    assert.equal(server.requestCount, 2);
  });

  test(`${p.name}: a body that stalls after the headers is retried as transient, each try bounded by the timeout`, async () => {
    const started = Date.now();
    const { result, requests } = await run(p, Array(4).fill({ kind: "stall" }), { timeoutMs: 300 });
    failed(result, "summarizer_failed", /timed out after 300 ms.*gave up after 3 retries/);
    assert.equal(requests, 4);
    assert.ok(Date.now() - started < LONG_BEFORE, `took ${Date.now() - started} ms`);
  });

  test(`${p.name}: a server that never answers is cut at the ladder's budget, whatever the request timeout`, async () => {
    const server = await startFakeProvider(() => ({ kind: "hang" }));
    servers.push(server);
    const started = Date.now();
    const result = await compactMessagesSafe(deepFreeze(history()), {
      summarizer: p.make(p.base(server), 60_000),
      target: 50,
      budgetMs: 400,
    });
    failed(result, "summarizer_failed", /no answer within the 0\.4 s time budget.*transient/);
    assert.ok(Date.now() - started < LONG_BEFORE, `took ${Date.now() - started} ms`);
    assert.equal(server.requestCount, 1);
  });

  test(`${p.name}: a failure names the summarizer once`, async () => {
    const { result } = await run(p, [p.unauthorized()]);
    failed(result, "summarizer_failed", /401/);
    const message = result.ok ? "" : result.error.message;
    const label = p.name === "openai" ? "openai-compatible summarizer" : "anthropic summarizer";
    assert.equal(message.split(label).length - 1, 1, message);
    assert.ok(message.startsWith(`${label} (model `), message);
  });
}

test("the budget also bounds a summarizer that ignores the abort signal", async () => {
  const stuck: Summarizer = {
    name: "stuck",
    model: "m",
    summarize: () => new Promise(() => {}),
  };
  const started = Date.now();
  const result = await compactMessagesSafe(deepFreeze(history()), {
    summarizer: stuck,
    target: 50,
    budgetMs: 150,
  });
  failed(
    result,
    "summarizer_failed",
    /^stuck summarizer \(model m\): no answer within the 0\.15 s time budget/,
  );
  assert.ok(Date.now() - started < LONG_BEFORE, `took ${Date.now() - started} ms`);
});

test("a summarizer's message without its label gets it once; the caller's abort cuts a wait short", async () => {
  const calls: number[] = [];
  const flaky: Summarizer = {
    name: "flaky",
    model: "m",
    summarize: async () => {
      calls.push(Date.now());
      throw new SummarizerError("transient", "HTTP 503: busy", { retryAfterMs: 30_000 });
    },
  };
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 100);
  const started = Date.now();
  const result = await compactMessagesSafe(deepFreeze(history()), {
    summarizer: flaky,
    target: 50,
    signal: ac.signal,
  });
  failed(result, "summarizer_failed", /^compaction aborted \(flaky summarizer: HTTP 503: busy\)$/);
  assert.equal(calls.length, 1);
  assert.ok(Date.now() - started < LONG_BEFORE, `took ${Date.now() - started} ms`);
});

test("the caller's abort during a stalled request ends the pass at once, without a retry", async () => {
  const server = await startFakeProvider(() => ({ kind: "stall" }));
  servers.push(server);
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 100);
  const started = Date.now();
  const result = await compactMessagesSafe(deepFreeze(history()), {
    summarizer: providers[0]!.make(server.openaiBaseURL, 60_000),
    target: 50,
    signal: ac.signal,
  });
  failed(result, "summarizer_failed", /^compaction aborted/);
  assert.equal(server.requestCount, 1);
  assert.ok(Date.now() - started < LONG_BEFORE, `took ${Date.now() - started} ms`);
});

test("a summarizer's signal, read at once or only later, aborts when the time budget runs out", async () => {
  for (const readLate of [false, true]) {
    let aborted: Promise<boolean> | undefined;
    let keys: string[] = [];
    const waits: Summarizer = {
      name: "waits",
      model: "m",
      summarize: async (request) => {
        keys = Object.keys(request);
        if (readLate) await new Promise((resolve) => setImmediate(resolve));
        const signal = request.signal!;
        aborted = new Promise((resolve) => {
          if (signal.aborted) resolve(true);
          else signal.addEventListener("abort", () => resolve(true), { once: true });
        });
        return new Promise(() => {});
      },
    };
    const result = await compactMessagesSafe(deepFreeze(history()), {
      summarizer: waits,
      target: 50,
      budgetMs: 100,
    });
    failed(result, "summarizer_failed", /no answer within the 0\.1 s time budget/);
    assert.ok(keys.includes("signal"), "the request lists its signal like its other fields");
    assert.equal(await aborted, true, readLate ? "read late" : "read at once");
  }
});
