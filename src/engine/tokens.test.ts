import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { Message } from "../model/index.js";
import { ModelError } from "../model/schema.js";
import {
  FAST_CALIBRATION,
  calibrateOverhead,
  createFastEstimator,
  estimateTokens,
  exactEstimator,
  fastEstimator,
  jsonChars,
  priorThinkingFor,
  type TokenEstimator,
} from "./tokens.js";

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const assistant = (text: string, thinking?: string): Message => ({
  role: "assistant",
  content: [
    ...(thinking !== undefined ? [{ type: "thinking" as const, thinking, signature: "sig" }] : []),
    { type: "text" as const, text },
  ],
});

const SAMPLE_PROSE =
  "The compaction pass keeps the protected last round verbatim and summarizes everything before it. " +
  "It validates the replacement against the survival contract before it returns ok, and it never mutates its input.";
const SAMPLE_CODE = [
  "export function add(a: number, b: number): number {",
  "  if (!Number.isFinite(a) || !Number.isFinite(b)) throw new RangeError(`bad input: ${a}, ${b}`);",
  "  return a + b;",
  "}",
  '{"file_path": "/work/main/src/engine/tokens.ts", "old_string": "const x = 1;", "new_string": "const x = 2;"}',
].join("\n");

test("the fast estimator uses the calibration constants", () => {
  const c = FAST_CALIBRATION;
  assert.equal(fastEstimator.text("a".repeat(1000)), Math.ceil(1000 / c.proseCharsPerToken));
  assert.equal(fastEstimator.text("é".repeat(100)), Math.ceil(100 * c.nonAsciiTokensPerChar));
  assert.equal(fastEstimator.text(""), 0);
  const prose = "x".repeat(640);
  assert.equal(
    fastEstimator.message(user(prose)),
    c.perMessage + c.perBlock + Math.ceil(640 / c.proseCharsPerToken),
  );
  const result: Message = {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "t1", content: prose }],
  };
  assert.equal(
    fastEstimator.message(result),
    c.perMessage + c.perBlock + c.perToolBlock + Math.ceil(640 / c.codeCharsPerToken),
  );
  const image: Message = {
    role: "user",
    content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }],
  };
  assert.equal(fastEstimator.message(image), c.perMessage + c.perBlock + c.perImage);
  assert.ok(Object.isFrozen(FAST_CALIBRATION));
});

test("a custom calibration changes the estimate, and bad constants are refused", () => {
  const double = createFastEstimator({
    ...FAST_CALIBRATION,
    proseCharsPerToken: FAST_CALIBRATION.proseCharsPerToken / 2,
  });
  const text = "y".repeat(3000);
  assert.equal(double.text(text), Math.ceil(3000 / (FAST_CALIBRATION.proseCharsPerToken / 2)));
  assert.ok(double.text(text) > fastEstimator.text(text));
  assert.throws(
    () => createFastEstimator({ ...FAST_CALIBRATION, codeCharsPerToken: 0 }),
    /characters per token/,
  );
  assert.throws(() => createFastEstimator({ ...FAST_CALIBRATION, perBlock: Number.NaN }), /perBlock/);
});

test("the estimator is cached per message object", () => {
  const est = createFastEstimator();
  const m = user("hello world, this is a message of some length");
  const first = est.message(m);
  // The cache is keyed by the object: mutating it in place is not seen (the engine never does that)...
  (m.content[0] as { text: string }).text = "z".repeat(10_000);
  assert.equal(est.message(m), first);
  // ...while an equal-content copy is measured afresh.
  const copy: Message = structuredClone(m);
  assert.ok(est.message(copy) > first);
  // A shallow copy (same content array, e.g. with its usage cleared) shares the entry.
  assert.equal(est.message({ ...m, usage: undefined, meta: { x: 1 } }), first);
  // Each estimator has its own cache.
  assert.equal(createFastEstimator().message(m), est.message(copy));
});

test("exact (o200k) and fast estimators agree within a sane ratio on sample text", async () => {
  const exact = await exactEstimator();
  assert.equal(exact.name, "o200k_base");
  for (const sample of [SAMPLE_PROSE, SAMPLE_CODE, SAMPLE_PROSE.repeat(20), SAMPLE_CODE.repeat(20)]) {
    const e = exact.text(sample);
    const f = fastEstimator.text(sample);
    const ratio = f / e;
    // Claude's tokenizer spends 20-30 % more tokens than o200k on such text, and the fast estimator is calibrated on Claude.
    assert.ok(ratio > 0.8 && ratio < 1.8, `fast ${f} vs exact ${e} (ratio ${ratio.toFixed(2)})`);
  }
  assert.equal(exact.text("hello world"), 2);
  assert.ok((await exactEstimator()) === exact, "loaded once");
});

test("overhead is added once, and must be a non-negative number", () => {
  const msgs = [user("first question"), assistant("first answer"), user("second question")];
  const base = estimateTokens(msgs);
  assert.equal(
    base,
    msgs.reduce((n, m) => n + fastEstimator.message(m), 0),
  );
  assert.equal(estimateTokens(msgs, fastEstimator, { overhead: 12_345 }), base + 12_345);
  assert.equal(estimateTokens([], fastEstimator, { overhead: 7 }), 7);
  assert.throws(() => estimateTokens(msgs, fastEstimator, { overhead: -1 }), /overhead/);
  assert.throws(
    () => estimateTokens(msgs, fastEstimator, { overhead: Number.POSITIVE_INFINITY }),
    /overhead/,
  );
});

test("calibrateOverhead is billed minus the estimate of what was sent, never negative", () => {
  const sent = [user("please fix the failing test in src/engine"), assistant("Looking at it now.")];
  const est = estimateTokens(sent);
  assert.equal(calibrateOverhead(est + 20_000, sent), 20_000);
  assert.equal(calibrateOverhead(est - 5, sent), 0);
  assert.throws(() => calibrateOverhead(-3, sent), /billed/);
  // Round trip: the calibrated overhead reproduces the billed figure for the same messages.
  const overhead = calibrateOverhead(41_000, sent);
  assert.equal(estimateTokens(sent, fastEstimator, { overhead }), 41_000);
});

test("priorThinking drop removes only the thinking of turns before the latest user turn", () => {
  const think = "t".repeat(3200);
  const thinkCost = FAST_CALIBRATION.perBlock + Math.ceil(3200 / FAST_CALIBRATION.proseCharsPerToken);
  const toolCall: Message = {
    role: "assistant",
    content: [
      { type: "thinking", thinking: think, signature: "s" },
      { type: "tool_use", id: "c1", name: "Bash", input: { command: "ls" } },
    ],
  };
  const toolResult: Message = {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "c1", content: "a\nb" }],
  };
  const msgs = [user("q1"), assistant("a1", think), user("q2"), toolCall, toolResult];
  const keep = estimateTokens(msgs);
  assert.equal(estimateTokens(msgs, fastEstimator, { priorThinking: "keep" }), keep);
  // Only the first answer's thinking goes: the tool loop after "q2" is the current turn (a tool result is not a user turn).
  assert.equal(estimateTokens(msgs, fastEstimator, { priorThinking: "drop" }), keep - thinkCost);
  // With no user turn after them, nothing is dropped.
  assert.equal(
    estimateTokens(msgs.slice(0, 2), fastEstimator, { priorThinking: "drop" }),
    estimateTokens(msgs.slice(0, 2)),
  );
});

test("priorThinking drop works with a custom estimator that has no thinking method", () => {
  const words: TokenEstimator = {
    name: "words",
    text: (s) => (s.trim() === "" ? 0 : s.trim().split(/\s+/).length),
    message: (m) =>
      m.content.reduce(
        (n, b) => n + words.text("text" in b ? String(b.text) : "thinking" in b ? String(b.thinking) : ""),
        0,
      ),
  };
  const msgs = [user("one"), assistant("two words", "three little words"), user("four")];
  assert.equal(estimateTokens(msgs, words), 1 + 5 + 1);
  assert.equal(estimateTokens(msgs, words, { priorThinking: "drop" }), 7 - (FAST_CALIBRATION.perBlock + 3));
});

test("priorThinkingFor follows the model's documented behaviour", () => {
  assert.equal(priorThinkingFor("claude-opus-4-5-20251101"), "keep");
  assert.equal(priorThinkingFor("claude-opus-4-6"), "keep");
  assert.equal(priorThinkingFor("claude-opus-4-1-20250805"), "drop");
  assert.equal(priorThinkingFor("claude-opus-4-20250514"), "drop");
  assert.equal(priorThinkingFor("claude-sonnet-4-5-20250929"), "drop");
  assert.equal(priorThinkingFor("claude-sonnet-4-20250514"), "drop");
  assert.equal(priorThinkingFor("claude-haiku-4-5-20251001"), "drop");
  assert.equal(priorThinkingFor("claude-3-7-sonnet-20250219"), "drop");
  assert.equal(priorThinkingFor("gpt-5-codex"), "keep");
  assert.equal(priorThinkingFor(undefined), "keep");
});

test("the code units outside ASCII are counted exactly, in short and long texts, surrogates and lone halves included", () => {
  const units = (s: string) => {
    let n = 0;
    for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) n++;
    return n;
  };
  const unit = fc.oneof(
    fc.constantFrom(
      "a",
      "{",
      "\n",
      "\u007f",
      "\u0080",
      "é",
      "ÿ",
      "─",
      "中",
      "😀",
      "\ud800",
      "\udfff",
      "\uffff",
    ),
    fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  );
  fc.assert(
    fc.property(fc.array(unit, { maxLength: 400 }), (parts) => {
      const s = parts.join("");
      assert.equal(jsonChars(s).other, units(s));
    }),
    { seed: 20261203, numRuns: 500 },
  );
  // Longer than the reused buffer (128k units), then a short one: nothing of the first is counted again.
  const long = `${"x─".repeat(70_000)}😀`;
  assert.equal(jsonChars(long).other, units(long));
  assert.equal(jsonChars("é.").other, 1);
  // Read two units at a time: an odd length does not count the unit a longer text left after it.
  assert.equal(jsonChars("─".repeat(1001)).other, 1001);
  assert.equal(jsonChars("abc").other, 0);
  assert.equal(jsonChars("ab─").other, 1);
});

test("jsonChars: an object or array of primitives, counted without the walk, counts as the walk counts it", () => {
  // Inside an array the value is walked (the array holds an object); alone it is counted flat.
  const primitive = fc.oneof(
    fc.string({ unit: "grapheme" }),
    fc.string(),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
  );
  const flat = fc.oneof(
    fc.dictionary(fc.string({ unit: "grapheme" }), primitive),
    fc.array(primitive),
    // A hole reads as undefined.
    fc.array(primitive).map((a) => {
      a.length += 2;
      return a;
    }),
  );
  fc.assert(
    fc.property(flat, (v) => {
      const walked = jsonChars([v]);
      assert.deepEqual(jsonChars(v), { ascii: walked.ascii - 2, other: walked.other });
    }),
    { numRuns: 500 },
  );
});

test("jsonChars counts a tool input as JSON.stringify writes it, without building the text; a cycle is refused", () => {
  const input = {
    command: ["bash", "-lc", "ls -la"],
    n: 12,
    ok: true,
    none: null,
    deep: { é: "café ☕" },
    e: [],
  };
  const text = JSON.stringify(input);
  let other = 0;
  for (const ch of text) if (ch.charCodeAt(0) >= 0x80) other += ch.length;
  assert.deepEqual(jsonChars(input), { ascii: text.length - other, other });
  // Escapes are not counted: a string counts its own length.
  assert.equal(jsonChars({ patch: 'a\n"b"' }).ascii, JSON.stringify({ patch: 'a\n"b"' }).length - 3);
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  // A cycle (or a value too deep) is a RangeError, as JSON.stringify gives; the estimator names the path.
  assert.throws(() => jsonChars(cyclic), RangeError);
  const looped: Message = {
    role: "assistant",
    content: [{ type: "tool_use", id: "t", name: "X", input: cyclic }],
  };
  assert.throws(
    () => estimateTokens([looped]),
    (e: unknown) => e instanceof ModelError && e.path.startsWith("messages[0].content[0].input"),
  );
  // The fast estimator counts a call by these counts: within a token of the stringified text's cost.
  const call: Message = { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input }] };
  const viaText = Math.ceil(
    (`Bash ${text}`.length - other) / FAST_CALIBRATION.codeCharsPerToken +
      other * FAST_CALIBRATION.nonAsciiTokensPerChar,
  );
  const framing = FAST_CALIBRATION.perMessage + FAST_CALIBRATION.perBlock + FAST_CALIBRATION.perToolBlock;
  assert.equal(createFastEstimator().message(call), framing + viaText);
});
