import { test } from "node:test";
import assert from "node:assert/strict";
import { isSessionFileName, parseSessionText, timeAnother, timedFigures } from "./harness.js";
import {
  barVerdict,
  budgetTokens,
  firstDifference,
  gatherRows,
  langChainInputTexts,
  parseArgs,
  piRequestTexts,
  renderTable,
  repsFor,
  type ChildFailure,
  type ChildReport,
  type Lib,
  type Row,
} from "./peers-core.js";

/** A child's timed figures with the given ratio (parse 2 ms). */
const timed = (ratio: number, reps = 7) => ({ parse_ms: 2, compact_ms: 2 * ratio, ratio, reps });

function report(lib: Lib, rep: number, o: Partial<ChildReport> = {}): ChildReport {
  return {
    lib,
    input: "s.jsonl",
    kind: "corpus",
    rep,
    messages: 10,
    bytes: 1000,
    tokens_before: 1000,
    budget: 300,
    first_ms: 40,
    first_parse_ms: 4,
    cold: timed(2),
    warm: timed(0.5),
    summarizer: { calls: 1, chars: 500, tokens: 150 },
    outcome: "summary",
    compacted: true,
    result_messages: 4,
    contract: { valid: true, reason: null },
    roundtrip: rep === 0 && lib !== "compact-safe" ? { ok: true, detail: null } : null,
    ...o,
  };
}

test("parseArgs: defaults, options, and one-line errors", () => {
  assert.deepEqual(parseArgs([]), {
    json: false,
    only: undefined,
    sizes: [1000, 10000, 100000],
    coldReps: 3,
  });
  assert.deepEqual(parseArgs(["--json", "--only", "codex", "--sizes", "1000,2000", "--cold-reps", "5"]), {
    json: true,
    only: "codex",
    sizes: [1000, 2000],
    coldReps: 5,
  });
  assert.deepEqual(parseArgs(["--sizes", "none"]).valueOf(), {
    json: false,
    only: undefined,
    sizes: [],
    coldReps: 3,
  });
  assert.match((parseArgs(["--sizes", "1k"]) as { error: string }).error, /not a list of integers/);
  assert.match((parseArgs(["--only"]) as { error: string }).error, /--only needs/);
  assert.match((parseArgs(["--only", "--json"]) as { error: string }).error, /--only needs/);
  assert.match((parseArgs(["--cold-reps", "0"]) as { error: string }).error, /--cold-reps/);
  assert.match((parseArgs(["--fast"]) as { error: string }).error, /unknown option "--fast"/);
});

test("budgetTokens is 30 % of the estimate, at least 1", () => {
  assert.equal(budgetTokens(10_000), 3_000);
  assert.equal(budgetTokens(1_001), 300);
  assert.equal(budgetTokens(0), 1);
});

test("isSessionFileName: sessions yes, sidecars and other files no", () => {
  assert.ok(isSessionFileName("a.jsonl"));
  assert.ok(isSessionFileName("replay.traj"));
  assert.ok(isSessionFileName("trajectory.json"));
  assert.ok(!isSessionFileName("entire-1a.metadata.json"));
  assert.ok(!isSessionFileName("SOURCES.md"));
});

test("parseSessionText parses JSONL line by line (a broken line costs its attempt) or one JSON text", () => {
  assert.equal(parseSessionText('{"a":1}\n\n{broken\n[2]\n', true), 2);
  assert.equal(parseSessionText('[{"a":1},{"b":2}]', false), 1);
  assert.throws(() => parseSessionText("{broken", false));
});

test("piRequestTexts: the system prompt and every text part of pi-ai's Context", () => {
  const texts = piRequestTexts({
    systemPrompt: "SYS",
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "hello" },
          { type: "image", data: "xx" },
        ],
      },
      { role: "user", content: "plain" },
    ],
  });
  assert.deepEqual(texts, ["SYS", "hello", "plain"]);
  assert.deepEqual(piRequestTexts(undefined), []);
});

test("langChainInputTexts: string contents and text parts", () => {
  assert.deepEqual(
    langChainInputTexts([
      { content: "prompt" },
      { content: [{ type: "text", text: "a" }, "b", { type: "x" }] },
    ]),
    ["prompt", "a", "b"],
  );
});

test("firstDifference names the first message that differs, and the fields", () => {
  const a = [
    { role: "user", content: [{ type: "text", text: "x" }] },
    { role: "assistant", content: [], meta: { a: 1 } },
  ];
  assert.equal(firstDifference(a, structuredClone(a)), null);
  const b = structuredClone(a);
  b[1]!.meta = { a: 2 };
  assert.equal(firstDifference(a, b), "message 1 (assistant) differs in meta");
  assert.equal(firstDifference(a, a.slice(0, 1)), "2 messages became 1");
});

test("timedFigures: medians of the pairs, the ratio the median of each pair's own ratio", () => {
  const t = timedFigures([
    { parse_ms: 1, compact_ms: 4 }, // 4
    { parse_ms: 4, compact_ms: 4 }, // 1
    { parse_ms: 2, compact_ms: 5 }, // 2.5
  ]);
  // The ratio of the medians would be 4 / 2 = 2.
  assert.deepEqual(t, { parse_ms: 2, compact_ms: 4, ratio: 2.5, reps: 3 });
  assert.throws(() => timedFigures([]), RangeError);
});

test("repsFor and timeAnother: up to 7 timed calls (3 on the largest), within the budget, at least one", () => {
  assert.equal(repsFor(1_000), 7);
  assert.equal(repsFor(20_000), 7);
  assert.equal(repsFor(100_000), 3);
  assert.equal(timeAnother(0, 0, 7, 4_000), true);
  assert.equal(timeAnother(3, 3_999, 7, 4_000), true);
  assert.equal(timeAnother(7, 10, 7, 4_000), false);
  assert.equal(timeAnother(1, 4_000, 7, 4_000), false);
  // The first one runs however long the warm-up took.
  assert.equal(timeAnother(0, 60_000, 3, 4_000), true);
});

test("gatherRows: cold, first and warm are medians over the children, failures kept", () => {
  const reports: (ChildReport | ChildFailure)[] = [
    // The child's own cold ratio counts, not its medians' ratio (4 / 2 here).
    report("compact-safe", 0, { cold: { parse_ms: 2, compact_ms: 4, ratio: 1, reps: 7 }, first_ms: 8 }),
    report("pi", 0, { cold: timed(4) }),
    report("compact-safe", 1, { cold: timed(3), warm: timed(0.25), first_ms: 40 }),
    report("pi", 1, { cold: timed(5) }),
    report("compact-safe", 2, { cold: timed(2), warm: timed(0.75), first_ms: 80 }),
    { lib: "pi", input: "s.jsonl", kind: "corpus", rep: 2, failed: "timed out after 60 s" },
  ];
  const rows = gatherRows(reports);
  assert.deepEqual(
    rows.map((r) => r.lib),
    ["compact-safe", "pi"],
  );
  const [cs, pi] = rows as [Row, Row];
  assert.equal(cs.cold_ratio, 2);
  assert.equal(cs.cold_ms, 4);
  assert.equal(cs.cold_reps, 3);
  assert.equal(cs.cold_pairs, 7);
  assert.equal(cs.warm_ratio, 0.5);
  assert.equal(cs.warm_ms, 1);
  // first: the median of first_ms / first_parse_ms (8 / 4, 40 / 4, 80 / 4).
  assert.equal(cs.first_ratio, 10);
  assert.equal(cs.first_ms, 40);
  assert.equal(cs.failed, null);
  assert.equal(pi.cold_ratio, 4.5);
  assert.equal(pi.cold_reps, 2);
  assert.equal(pi.failed, "rep 2: timed out after 60 s");
  assert.deepEqual(pi.roundtrip, { ok: true, detail: null });
});

test("gatherRows: an input whose every child failed still has its row, with no figures", () => {
  const rows = gatherRows([
    { lib: "langchain", input: "synthetic-100k", kind: "synthetic", rep: 0, failed: "timed out" },
  ]);
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!.kind, "synthetic");
  assert.equal(rows[0]!.cold_ratio, null);
  assert.equal(rows[0]!.summarizer_chars, null);
  assert.equal(rows[0]!.failed, "rep 0: timed out");
});

test("barVerdict: compact-safe keeps the contract on every corpus session; speed and input sizes are not judged", () => {
  const session = (input: string, cs: Partial<ChildReport>) =>
    gatherRows([
      report("compact-safe", 0, { input, ...cs }),
      // pi ten times faster, a tenth of the input, and its result breaking the contract: none of it judged.
      report("pi", 0, {
        input,
        cold: timed(0.2),
        summarizer: { calls: 1, chars: 10, tokens: 1 },
        contract: { valid: false, reason: "missing checkpoint" },
      }),
    ]);
  assert.deepEqual(
    barVerdict(session("s.jsonl", { cold: timed(9), summarizer: { calls: 1, chars: 900, tokens: 1 } })),
    {
      met: true,
      misses: [],
      sessions: 1,
    },
  );
  const broken = barVerdict([
    ...session("a.jsonl", {}),
    ...session("b.jsonl", { contract: { valid: false, reason: "last round: tool call t1 missing" } }),
    ...session("c.jsonl", { contract: null, outcome: "below threshold" }),
  ]);
  assert.equal(broken.met, false);
  assert.deepEqual(broken.misses, [
    "b.jsonl: the contract is not kept: last round: tool call t1 missing",
    "c.jsonl: compact-safe made no result (below threshold)",
  ]);
  // A failed child, or no compact-safe row at all, is a miss; a failed peer is not.
  const failed = barVerdict([
    ...gatherRows([{ lib: "compact-safe", input: "s.jsonl", kind: "corpus", rep: 0, failed: "crash" }]),
    ...gatherRows([report("pi", 0)]),
  ]);
  assert.deepEqual(failed.misses, ["s.jsonl: compact-safe failed (rep 0: crash)"]);
  assert.deepEqual(barVerdict(gatherRows([report("pi", 0)])).misses, [
    "s.jsonl: compact-safe was not measured",
  ]);
  assert.equal(
    barVerdict([
      ...gatherRows([report("compact-safe", 0)]),
      ...gatherRows([{ lib: "pi", input: "s.jsonl", kind: "corpus", rep: 0, failed: "crash" }]),
    ]).met,
    true,
  );
  // Synthetic inputs are reported, not judged; no corpus session: nothing shows the bar met.
  const synth = gatherRows([
    report("compact-safe", 0, {
      input: "synthetic-1k",
      kind: "synthetic",
      contract: { valid: false, reason: "x" },
    }),
  ]);
  assert.equal(barVerdict([...session("s.jsonl", {}), ...synth]).met, true);
  assert.equal(barVerdict(synth).met, false);
  assert.equal(barVerdict([]).met, false);
});

test("renderTable shows the versions, the budget, each library's figures, the contract and the bar", () => {
  const rows = gatherRows([
    report("compact-safe", 0, { cold: timed(1) }),
    report("pi", 0, {
      cold: timed(4),
      first_ms: 120,
      warm: timed(1),
      roundtrip: { ok: false, detail: "message 3 (user) differs in meta" },
    }),
    report("langchain", 0, { contract: { valid: false, reason: "missing checkpoint" } }),
  ]);
  const bar = barVerdict(rows);
  const text = renderTable(
    rows,
    {
      versions: { "@mariozechner/pi-coding-agent": "0.73.1" },
      date: "D",
      machine: "M",
      coldReps: 3,
      seconds: 12,
    },
    bar,
  );
  assert.match(text, /@mariozechner\/pi-coding-agent 0\.73\.1/);
  assert.match(text, /budget B = 30 %/);
  assert.match(text, /s\.jsonl {2}\(10 messages, 1 KB, ~1000 tokens, B = 300;/);
  assert.match(text, /CPU time/);
  assert.match(text, /library +cold +first +warm +cold ms +first ms +warm ms/);
  // cold, first, warm ratios, then cold, first and warm ms.
  assert.match(text, /compact-safe +1\.00x +10\.00x +0\.50x +2\.00 +40 +1\.00 /);
  assert.match(text, /pi +4\.00x +30\.00x +1\.00x/);
  assert.match(text, /B = 300; 7 cold pairs, 7 warm calls per process\)/);
  assert.match(text, /compact-safe +cold 1\.00x \(max 1\.00x\), first 10\.00x, warm 0\.50x/);
  assert.match(text, /FAILS: message 3 \(user\) differs in meta/);
  assert.match(text, /INVALID: missing checkpoint/);
  assert.match(
    text,
    /bar \(every corpus session: compact-safe's result keeps the survival contract; .*: MET \(1\/1 sessions\)/,
  );
});
