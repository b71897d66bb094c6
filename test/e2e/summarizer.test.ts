/** LLM summarizers through the binary, against the local fake provider (offline). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { exampleSession } from "../support.js";
import {
  anthropicCompaction,
  anthropicOnDemandCompaction,
  anthropicReply,
  openaiReply,
  startFakeProvider,
  type FakeStep,
} from "../fake-provider.js";
import { readJournalSync } from "../../src/journal/index.js";
import { oneLineError, run, tempDir } from "./helpers.js";

const small = exampleSession;

const SUMMARY =
  "## Objective\nFind out why git status broke in the user's repository.\n\n## Work done\nInspected the gc log and the worktree folder; found an interrupted gc.\n\n## Next step\nDocument the limitation.";

async function journal(dir: string): Promise<string> {
  const j = join(dir, "j.jsonl");
  const r = await run(["import", small, "--out", j]);
  assert.equal(r.code, 0, r.stderr);
  return j;
}

test("openai summarizer answering 500: retried 3 times with the configured backoff, then exit 3; nothing written", async () => {
  const provider = await startFakeProvider(() =>
    openaiReply.error(500, "The server had an error while processing your request."),
  );
  const { dir, cleanup } = tempDir();
  try {
    const j = await journal(dir);
    const before = readFileSync(j);
    const r = await run(
      [
        "compact",
        j,
        "--summarizer",
        "openai",
        "--model",
        "fake-model",
        "--base-url",
        provider.openaiBaseURL,
        "--target",
        "3000",
        "--workspace",
        dir,
      ],
      {
        env: { OPENAI_API_KEY: "sk-test", COMPACT_SAFE_BACKOFF_MS: "5" },
      },
    );
    assert.equal(r.code, 3, r.stderr);
    assert.match(oneLineError(r.stderr), /^compact-safe: summarizer failed: .*gave up after 3 retries/);
    assert.equal(provider.requestCount, 4, "one call and three retries");
    assert.deepEqual(readFileSync(j), before);
  } finally {
    await provider.close();
    cleanup();
  }
});

test("--timeout 1 against a server that never answers: four cut requests, exit 3 in seconds, journal byte-identical", async () => {
  const provider = await startFakeProvider(() => ({ kind: "hang" }));
  const { dir, cleanup } = tempDir();
  try {
    const j = await journal(dir);
    const before = readFileSync(j);
    const started = Date.now();
    const r = await run(
      [
        "compact",
        j,
        "--summarizer",
        "anthropic",
        "--model",
        "fake-model",
        "--base-url",
        provider.anthropicBaseURL,
        "--timeout",
        "1",
        "--target",
        "3000",
        "--workspace",
        dir,
      ],
      { env: { ANTHROPIC_API_KEY: "key", COMPACT_SAFE_BACKOFF_MS: "5" } },
    );
    const elapsed = Date.now() - started;
    assert.equal(r.code, 3, r.stderr);
    assert.match(
      oneLineError(r.stderr),
      /^compact-safe: summarizer failed: anthropic summarizer \(model fake-model at [^)]+\): timed out after 1000 ms \(gave up after 3 retries\)$/,
    );
    assert.equal(provider.requestCount, 4, "one call and three retries");
    // Far under the default request timeout (120 s) it would take without --timeout: no loaded machine reaches it.
    assert.ok(elapsed < 60_000, `took ${elapsed} ms`);
    assert.deepEqual(readFileSync(j), before);
  } finally {
    await provider.close();
    cleanup();
  }
});

test("--timeout: anything but a positive number of seconds is a usage error (exit 2), as is --timeout with extractive", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const j = await journal(dir);
    for (const bad of ["0", "-1", "abc", "1e9"]) {
      const r = await run(["compact", j, "--summarizer", "openai", "--model", "m", "--timeout", bad], {
        env: { OPENAI_API_KEY: "x" },
      });
      assert.equal(r.code, 2, `${bad}: ${r.stderr}`);
      assert.match(oneLineError(r.stderr), /--timeout: expected a positive number of seconds/);
    }
    const e = await run(["compact", j, "--timeout", "5"]);
    assert.equal(e.code, 2);
    assert.match(oneLineError(e.stderr), /--timeout apply to --summarizer openai or anthropic/);
  } finally {
    cleanup();
  }
});

test("openai summarizer answering 401: fails at once (deterministic), exit 3", async () => {
  const provider = await startFakeProvider(() => openaiReply.unauthorized());
  const { dir, cleanup } = tempDir();
  try {
    const j = await journal(dir);
    const r = await run(
      [
        "compact",
        j,
        "--summarizer",
        "openai",
        "--model",
        "m",
        "--base-url",
        provider.openaiBaseURL,
        "--target",
        "3000",
        "--workspace",
        dir,
      ],
      {
        env: { OPENAI_API_KEY: "sk-test", COMPACT_SAFE_BACKOFF_MS: "5" },
      },
    );
    assert.equal(r.code, 3);
    oneLineError(r.stderr);
    assert.equal(provider.requestCount, 1);
  } finally {
    await provider.close();
    cleanup();
  }
});

test("openai and anthropic summarizers that answer: one compaction entry with the model's summary", async () => {
  const provider = await startFakeProvider((req) =>
    req.path.endsWith("/messages") ? anthropicReply.text(SUMMARY) : openaiReply.text(SUMMARY),
  );
  const { dir, cleanup } = tempDir();
  try {
    for (const [name, base, envName] of [
      ["openai", provider.openaiBaseURL, "OPENAI_API_KEY"],
      ["anthropic", provider.anthropicBaseURL, "ANTHROPIC_API_KEY"],
    ] as const) {
      const j = join(dir, `${name}.jsonl`);
      assert.equal((await run(["import", small, "--out", j])).code, 0);
      const r = await run(
        [
          "compact",
          j,
          "--summarizer",
          name,
          "--model",
          "fake-model",
          "--base-url",
          base,
          "--target",
          "3000",
          "--workspace",
          dir,
          "--json",
        ],
        {
          env: { [envName]: "key", COMPACT_SAFE_BACKOFF_MS: "5" },
        },
      );
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      assert.equal((JSON.parse(r.stdout) as { path: string }).path, "summary");
      const comp = readJournalSync(j).entries.filter((e) => e.kind === "compaction");
      assert.equal(comp.length, 1);
      assert.ok(
        JSON.stringify(comp[0]!.payload).includes("found an interrupted gc"),
        `${name}: the model's summary is in the checkpoint`,
      );
    }
    assert.equal(provider.requestCount, 2);
  } finally {
    await provider.close();
    cleanup();
  }
});

test("missing API key or model: exit 2 with one line naming the variable / option, before any request", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const j = await journal(dir);
    const k = await run(["compact", j, "--summarizer", "openai", "--model", "m"], {
      env: { OPENAI_API_KEY: undefined },
    });
    assert.equal(k.code, 2);
    assert.match(oneLineError(k.stderr), /OPENAI_API_KEY is not set/);
    const a = await run(["compact", j, "--summarizer", "anthropic", "--model", "m"], {
      env: { ANTHROPIC_API_KEY: "" },
    });
    assert.equal(a.code, 2);
    assert.match(oneLineError(a.stderr), /ANTHROPIC_API_KEY is not set/);
    const m = await run(["compact", j, "--summarizer", "openai"], { env: { OPENAI_API_KEY: "x" } });
    assert.equal(m.code, 2);
    assert.match(oneLineError(m.stderr), /needs --model/);
    const bad = await run(["compact", j, "--summarizer", "gemini"]);
    assert.equal(bad.code, 2);
  } finally {
    cleanup();
  }
});

/** `compact J --summarizer anthropic-native` against `base`, with the fake's key and a short backoff. */
function compactNative(j: string, base: string, dir: string, extra: string[] = []) {
  return run(
    [
      "compact",
      j,
      "--summarizer",
      "anthropic-native",
      "--model",
      "fake-model",
      "--base-url",
      base,
      "--target",
      "3000",
      "--workspace",
      dir,
      ...extra,
    ],
    { env: { ANTHROPIC_API_KEY: "key", COMPACT_SAFE_BACKOFF_MS: "5" } },
  );
}

test("anthropic-native on demand (the default), on a session far under 50,000 tokens: a compaction appended with the provider's summary; the provider's 4xx (its error shape), 529, no compaction, an empty or placeholder compaction, a timeout: one-line reason, non-zero exit, journal byte-identical", async () => {
  type Req = Parameters<typeof anthropicOnDemandCompaction>[0];
  const answers: ((r: Req) => FakeStep)[] = [
    (r) => anthropicOnDemandCompaction(r, SUMMARY),
    () =>
      anthropicReply.error(
        400,
        "invalid_request_error",
        "messages: there is no user or assistant content to summarize",
        {
          errorCode: "compaction_nothing_to_summarize",
        },
      ),
    () =>
      anthropicReply.error(529, "overloaded_error", "Compaction is temporarily unavailable.", {
        errorCode: "compaction_unavailable",
      }),
    () => anthropicReply.text("A plain answer."),
    (r) => anthropicOnDemandCompaction(r, null),
    (r) => anthropicOnDemandCompaction(r, "(no summary available)"),
    () => ({ kind: "hang" }),
  ];
  let phase = 0;
  const provider = await startFakeProvider((r) => answers[phase]!(r));
  const { dir, cleanup } = tempDir();
  try {
    const ok = await journal(dir);
    const r = await compactNative(ok, provider.anthropicBaseURL, dir, ["--json"]);
    assert.equal(r.code, 0, r.stderr);
    const receipt = JSON.parse(r.stdout) as { path: string; tokens_before: number };
    assert.equal(receipt.path, "summary");
    assert.ok(receipt.tokens_before < 50_000, `${receipt.tokens_before} tokens`);
    const comp = readJournalSync(ok).entries.filter((e) => e.kind === "compaction");
    assert.equal(comp.length, 1);
    assert.ok(JSON.stringify(comp[0]!.payload).includes("found an interrupted gc"));
    const sent = provider.requests[0]!;
    assert.ok(String(sent.headers["anthropic-beta"]).split(",").includes("compact-2026-09-04"));
    assert.equal(sent.body.compaction.type, "summarize");
    assert.match(sent.body.compaction.instructions, /^Write the handoff note of the conversation above/);
    assert.equal(sent.body.context_management, undefined);

    const failures: [string, number, RegExp, number, string[]][] = [
      [
        "refused",
        3,
        /^compact-safe: summarizer failed: anthropic-native summarizer \(model fake-model at [^)]+\): HTTP 400 compaction_nothing_to_summarize: messages: there is no user or assistant content to summarize$/,
        1,
        [],
      ],
      [
        "unavailable",
        3,
        /^compact-safe: summarizer failed: anthropic-native summarizer .*HTTP 529 compaction_unavailable: Compaction is temporarily unavailable\. \(gave up after 3 retries\)$/,
        4,
        [],
      ],
      [
        "not compacted",
        3,
        /^compact-safe: summarizer failed: anthropic-native summarizer .*no compaction block \(stop_reason "end_turn"\)/,
        1,
        [],
      ],
      [
        "empty",
        1,
        /^compact-safe: compaction refused \(unusable_summary\): the summary was empty \(after one corrective retry\)$/,
        2,
        [],
      ],
      [
        "placeholder",
        1,
        /^compact-safe: compaction refused \(unusable_summary\): the summary was a placeholder .*\(after one corrective retry\)$/,
        2,
        [],
      ],
      [
        "timeout",
        3,
        /^compact-safe: summarizer failed: anthropic-native summarizer .*timed out after 200 ms \(gave up after 3 retries\)$/,
        4,
        ["--timeout", "0.2"],
      ],
    ];
    for (const [name, code, message, calls, extra] of failures) {
      phase++;
      const j = join(dir, `${name.replace(" ", "-")}.jsonl`);
      assert.equal((await run(["import", small, "--out", j])).code, 0);
      const before = readFileSync(j);
      const count = provider.requestCount;
      const f = await compactNative(j, provider.anthropicBaseURL, dir, extra);
      assert.equal(f.code, code, `${name}: ${f.stderr}`);
      assert.match(oneLineError(f.stderr), message, name);
      assert.equal(provider.requestCount - count, calls, `${name}: requests`);
      assert.deepEqual(readFileSync(j), before, `${name}: the journal is untouched`);
    }
  } finally {
    await provider.close();
    cleanup();
  }
});

test("anthropic-native --native-mode threshold: the compact_20260112 edit, which the server does not apply to a session under 50,000 tokens (exit 3, the reason in one line, journal byte-identical); --native-mode is checked", async () => {
  const provider = await startFakeProvider((r) => anthropicCompaction(r, SUMMARY));
  const { dir, cleanup } = tempDir();
  try {
    const j = await journal(dir);
    const before = readFileSync(j);
    const r = await compactNative(j, provider.anthropicBaseURL, dir, ["--native-mode", "threshold"]);
    assert.equal(r.code, 3, r.stderr);
    assert.match(
      oneLineError(r.stderr),
      /^compact-safe: summarizer failed: anthropic-native summarizer \(model fake-model, threshold mode at [^)]+\): the response has no compaction block \(stop_reason "end_turn"\): .*at least the trigger \(50000 input tokens.*--native-mode on-demand/,
    );
    assert.deepEqual(readFileSync(j), before);
    assert.equal(provider.requestCount, 1);
    const sent = provider.requests[0]!;
    assert.ok(String(sent.headers["anthropic-beta"]).split(",").includes("compact-2026-01-12"));
    assert.equal(sent.body.context_management.edits[0].type, "compact_20260112");
    assert.equal(sent.body.compaction, undefined);

    const other = await run(
      ["compact", j, "--summarizer", "anthropic", "--model", "m", "--native-mode", "threshold"],
      {
        env: { ANTHROPIC_API_KEY: "x" },
      },
    );
    assert.equal(other.code, 2);
    assert.match(oneLineError(other.stderr), /--native-mode applies to --summarizer anthropic-native only/);
    const bad = await compactNative(j, provider.anthropicBaseURL, dir, ["--native-mode", "later"]);
    assert.equal(bad.code, 2);
    assert.match(oneLineError(bad.stderr), /--native-mode.*later/);
    assert.equal(provider.requestCount, 1, "nothing sent for a usage error");
    assert.deepEqual(readFileSync(j), before);
  } finally {
    await provider.close();
    cleanup();
  }
});

test("openai-native is refused before anything is sent (exit 2, the reason in one line); --prefix-from is checked", async () => {
  const provider = await startFakeProvider(() => anthropicReply.text("unused"));
  const { dir, cleanup } = tempDir();
  try {
    const j = await journal(dir);
    const before = readFileSync(j);
    const o = await run(
      ["compact", j, "--summarizer", "openai-native", "--model", "m", "--base-url", provider.openaiBaseURL],
      { env: { OPENAI_API_KEY: "x" } },
    );
    assert.equal(o.code, 2);
    assert.match(
      oneLineError(o.stderr),
      /openai-native: .*\/responses\/compact answers with an encrypted compaction item and no visible text/,
    );
    const p = await run(["compact", j, "--summarizer", "anthropic", "--model", "m", "--prefix-from", j], {
      env: { ANTHROPIC_API_KEY: "x" },
    });
    assert.equal(p.code, 2);
    assert.match(oneLineError(p.stderr), /--prefix-from applies to --summarizer anthropic-native only/);
    const e = await run(["compact", j, "--prefix-from", j]);
    assert.equal(e.code, 2);
    assert.match(oneLineError(e.stderr), /--prefix-from applies to --summarizer anthropic-native only/);
    const notJson = await compactNative(j, provider.anthropicBaseURL, dir, ["--prefix-from", j]);
    assert.equal(notJson.code, 2);
    assert.match(oneLineError(notJson.stderr), /--prefix-from .*: not JSON/);
    assert.equal(provider.requestCount, 0);
    assert.deepEqual(readFileSync(j), before);
  } finally {
    await provider.close();
    cleanup();
  }
});
