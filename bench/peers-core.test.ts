import { test } from "node:test";
import assert from "node:assert/strict";
import { parseSessionText } from "./timing.js";
import {
  barVerdict,
  budgetTokens,
  coldAllowance,
  firstDifference,
  gatherRows,
  isSessionFileName,
  langChainInputTexts,
  parseArgs,
  piRequestTexts,
  renderTable,
  repsFor,
  timeAnother,
  timedFigures,
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
    redaction: timed(0.1),
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

test("barVerdict: cold no more than pi's cold plus the redaction of pi's input; input no larger where pi keeps the contract", () => {
  const rows = (cs: Partial<ChildReport>, pi: Partial<ChildReport>, input = "s.jsonl") =>
    gatherRows([report("compact-safe", 0, { input, ...cs }), report("pi", 0, { input, ...pi })]);
  // pi: cold 2.0x, its input's redaction 0.5x (allowance 2.5x), warm 0.25x, 600 chars, contract kept.
  const pi = {
    cold: timed(2),
    warm: timed(0.25),
    redaction: timed(0.5),
    summarizer: { calls: 1, chars: 600, tokens: 1 },
  };
  assert.deepEqual(barVerdict(rows({ cold: timed(1) }, pi)), {
    met: true,
    misses: [],
    sessions: 1,
    input_judged: 1,
    input_not_judged: [],
    redaction_slower_than_pi: { own_input: 0, pi_input: 0, judged: 1 },
    within_allowance: { "compact-safe": { within: 1, judged: 1 } },
  });
  // Slower than pi alone, within pi plus the redaction of pi's input: met; exactly the allowance: met.
  assert.equal(barVerdict(rows({ cold: timed(2.4) }, pi)).met, true);
  assert.equal(barVerdict(rows({ cold: timed(2.5) }, pi)).met, true);
  // First and warm are reported, not judged (warm 0.5x against pi's 0.25x).
  assert.equal(barVerdict(rows({ cold: timed(1), first_ms: 400 }, pi)).met, true);
  // Over the allowance, and a larger input where pi keeps the contract: both named.
  const all = barVerdict(rows({ cold: timed(2.6), summarizer: { calls: 1, chars: 700, tokens: 1 } }, pi));
  assert.equal(all.met, false);
  assert.deepEqual(all.misses, [
    "s.jsonl: cold 2.60x vs pi 2.00x + redaction of pi's input 0.50x = 2.50x; summarizer input 700 chars vs pi 600",
  ]);
  // Equal input size is allowed.
  assert.equal(
    barVerdict(rows({ cold: timed(1), summarizer: { calls: 1, chars: 600, tokens: 1 } }, pi)).met,
    true,
  );
  // Pi sent nothing (no redaction figure): the allowance is pi's cold alone.
  const nothing = { ...pi, redaction: null };
  assert.equal(barVerdict(rows({ cold: timed(2) }, nothing)).met, true);
  assert.deepEqual(barVerdict(rows({ cold: timed(2.1) }, nothing)).misses, [
    "s.jsonl: cold 2.10x vs pi 2.00x + redaction of pi's input 0.00x = 2.00x",
  ]);
  // Where pi's result breaks the contract, the input sizes are not judged (and the session is named).
  const broken = barVerdict(
    rows(
      { cold: timed(1), summarizer: { calls: 1, chars: 5000, tokens: 1 } },
      { ...pi, contract: { valid: false, reason: "checkpoint kept beside its own" } },
    ),
  );
  assert.equal(broken.met, true);
  assert.equal(broken.input_judged, 0);
  assert.deepEqual(broken.input_not_judged, ["s.jsonl"]);
  // ... nor where pi made no result to check; the cold bar still holds there.
  const none = barVerdict(
    rows({ cold: timed(3), summarizer: { calls: 1, chars: 5000, tokens: 1 } }, { ...pi, contract: null }),
  );
  assert.deepEqual(none.misses, ["s.jsonl: cold 3.00x vs pi 2.00x + redaction of pi's input 0.50x = 2.50x"]);
  // The ratios are the medians over the children: one slow child of three does not miss.
  const three = barVerdict(
    gatherRows([
      report("compact-safe", 0, { cold: timed(1) }),
      report("compact-safe", 1, { cold: timed(9) }),
      report("compact-safe", 2, { cold: timed(2) }),
      ...[0, 1, 2].map((rep) => report("pi", rep, { ...pi })),
    ]),
  );
  assert.equal(three.met, true);
  // Synthetic inputs are reported, not judged.
  const synth = barVerdict([
    ...rows({ cold: timed(1) }, pi),
    ...gatherRows([report("compact-safe", 0, { input: "synthetic-1k", kind: "synthetic", cold: timed(99) })]),
    ...gatherRows([{ lib: "pi", input: "synthetic-1k", kind: "synthetic", rep: 0, failed: "timed out" }]),
  ]);
  assert.equal(synth.met, true);
  // A failed pi child, or no pi row at all, is a miss.
  const failed = barVerdict([
    ...gatherRows([report("compact-safe", 0, { cold: timed(1) })]),
    ...gatherRows([{ lib: "pi", input: "s.jsonl", kind: "corpus", rep: 0, failed: "crash" }]),
  ]);
  assert.equal(failed.met, false);
  assert.match(failed.misses[0]!, /pi failed \(rep 0: crash\)/);
  assert.deepEqual(barVerdict(gatherRows([report("compact-safe", 0)])).misses, [
    "s.jsonl: pi was not measured",
  ]);
  // No corpus session: nothing shows the bar met.
  assert.equal(barVerdict([]).met, false);
});

test("barVerdict counts, for every library but pi, the sessions where its cold is within pi's allowance", () => {
  const pi = { cold: timed(2), redaction: timed(0.5) };
  const session = (input: string, cs: number, langchain: number | null) =>
    gatherRows([
      report("compact-safe", 0, { input, cold: timed(cs) }),
      report("pi", 0, { input, ...pi }),
      ...(langchain === null ? [] : [report("langchain", 0, { input, cold: timed(langchain) })]),
    ]);
  // Allowance 2.5x: compact-safe within on a (2.5) and c, langchain on a only; langchain not measured on c;
  // pi, the allowance itself, is not counted.
  const v = barVerdict([
    ...session("a.jsonl", 2.5, 1),
    ...session("b.jsonl", 2.6, 3),
    ...session("c.jsonl", 1, null),
  ]);
  assert.deepEqual(v.within_allowance, {
    "compact-safe": { within: 2, judged: 3 },
    langchain: { within: 1, judged: 2 },
  });
  // A failed pi child leaves the session unjudged for every library.
  const failed = barVerdict([
    ...gatherRows([
      report("compact-safe", 0, { cold: timed(1) }),
      report("langchain", 0, { cold: timed(1) }),
    ]),
    ...gatherRows([{ lib: "pi", input: "s.jsonl", kind: "corpus", rep: 0, failed: "crash" }]),
  ]);
  assert.deepEqual(failed.within_allowance, {});
  const one = session("a.jsonl", 2.5, 3);
  const table = renderTable(
    one,
    { versions: {}, date: "d", machine: "m", coldReps: 1, seconds: 1 },
    barVerdict(one),
  );
  assert.match(
    table,
    /cold within pi's cold \+ the redaction of pi's input, by library: compact-safe 1\/1, langchain 0\/1/,
  );
});

test("coldAllowance: pi's cold plus the redaction of its input, null without pi's cold figure", () => {
  assert.equal(coldAllowance({ cold_ratio: 0.25, redact_ratio: 0.5 }), 0.75);
  assert.equal(coldAllowance({ cold_ratio: 0.25, redact_ratio: null }), 0.25);
  assert.equal(coldAllowance({ cold_ratio: null, redact_ratio: 0.5 }), null);
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
  assert.match(text, /bar .*: MET \(1\/1 sessions\)/);
  assert.match(text, /summarizer input judged on 1\/1 sessions/);
  assert.match(text, /pi +cold .*; cold \+ redaction of its input 4\.10x/);
});

test("barVerdict: counts the sessions where redacting a summarizer input alone is slower than pi's cold compaction", () => {
  const session = (input: string, csRedact: number | null, piRedact: number | null, piCold: number) =>
    gatherRows([
      report("compact-safe", 0, { input, redaction: csRedact === null ? null : timed(csRedact) }),
      report("pi", 0, { input, cold: timed(piCold), redaction: piRedact === null ? null : timed(piRedact) }),
    ]);
  const v = barVerdict([
    ...session("a.jsonl", 0.5, 0.8, 0.3), // both slower than pi's 0.3x
    ...session("b.jsonl", 0.2, 0.4, 0.3), // only pi's input
    ...session("c.jsonl", null, 0.1, 0.3), // compact-safe sent nothing
  ]);
  assert.deepEqual(v.redaction_slower_than_pi, { own_input: 1, pi_input: 2, judged: 3 });
  const table = renderTable(
    gatherRows([report("compact-safe", 0, { redaction: timed(0.5) }), report("pi", 0, { cold: timed(0.3) })]),
    { versions: {}, date: "d", machine: "m", coldReps: 1, seconds: 1 },
    barVerdict(
      gatherRows([
        report("compact-safe", 0, { redaction: timed(0.5) }),
        report("pi", 0, { cold: timed(0.3) }),
      ]),
    ),
  );
  assert.match(
    table,
    /redaction alone \(the redact column\) is slower than pi's whole cold compaction on 1\/1 sessions/,
  );
  assert.match(table, /\s0\.50x\s/);
});
