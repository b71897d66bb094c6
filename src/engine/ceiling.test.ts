/**
 * The ceiling of the fast estimate (`fastTokensCeiling`) and the pressure
 * check it spares (`PressureMemo.surelyBelow`): the ceiling is never under
 * the estimate, whatever the texts hold, and a check that says "surely
 * below" never says so of a history `shouldCompact` would compact. (On the
 * corpus sessions: corpus.test.ts.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { Block, Message } from "../model/index.js";
import { createFastEstimator, fastEstimator, fastTokensCeiling, FAST_CALIBRATION } from "./tokens.js";
import { PressureMemo, shouldCompact } from "./pressure.js";
import { history } from "../../test/arbitraries.js";
import { syntheticSession } from "../../bench/synthetic.js";

/** Texts of every kind of character: ASCII, Latin-1, box drawing, CJK, emoji, lone surrogates. */
const text = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: "grapheme", maxLength: 100 }),
  fc.string({ unit: "binary", maxLength: 100 }),
  fc.constantFrom("", "é", "─".repeat(50), "中文", "😀", "\ud800", "x".repeat(1000)),
);
const primitive = fc.oneof(
  text,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
);
const input = fc.oneof(
  text,
  primitive,
  fc.dictionary(fc.string({ unit: "grapheme", maxLength: 12 }), primitive, { maxKeys: 6 }),
  fc.array(primitive, { maxLength: 6 }),
  // Nested, as Codex's shell calls and todo lists are.
  fc.dictionary(fc.string({ maxLength: 5 }), fc.array(primitive, { maxLength: 3 }), {
    minKeys: 1,
    maxKeys: 3,
  }),
  fc.array(fc.dictionary(fc.string({ maxLength: 5 }), primitive, { maxKeys: 3 }), { maxLength: 3 }),
);
const block: fc.Arbitrary<Block> = fc.oneof(
  text.map((t) => ({ type: "text", text: t })),
  fc
    .tuple(text, fc.option(text))
    .map(([t, s]) =>
      s === null ? { type: "thinking", thinking: t } : { type: "thinking", thinking: t, signature: s },
    ),
  fc.constant({ type: "redacted_thinking", data: "opaque" }),
  fc
    .tuple(fc.string({ maxLength: 20 }), input)
    .map(([name, x]) => ({ type: "tool_use", id: "c", name, input: x })),
  fc
    .tuple(text, fc.boolean())
    .map(([t, e]) =>
      e
        ? { type: "tool_result", tool_use_id: "c", content: t, is_error: true }
        : { type: "tool_result", tool_use_id: "c", content: t },
    ),
  fc.constant({ type: "image_url", image_url: { url: "https://example.com/a.png" } }),
  fc.tuple(text, text).map(([t, u]) => ({
    type: "tool_result",
    tool_use_id: "c",
    content: t,
    content_blocks: [
      { type: "text", text: u },
      { type: "image_url", image_url: { url: "data:image/png;base64,AA" } },
    ],
  })),
  // Not read for a ceiling: an unknown block, a text that is not a string, an input no JSON holds.
  fc.constant({ type: "custom", kind: "x" } as Block),
  fc.constant({ type: "text", text: 3 } as unknown as Block),
  fc.constant({ type: "tool_use", id: "c", name: "f", input: () => 1 } as Block),
);
const message: fc.Arbitrary<Message> = fc
  .tuple(fc.constantFrom("user", "assistant"), fc.array(block, { maxLength: 6 }))
  .map(([role, content]) => ({ role, content }) as Message);

test("the ceiling is never under the fast estimate, whatever the texts hold; Infinity for a block it cannot read", () => {
  fc.assert(
    fc.property(message, (m) => {
      const ceiling = fastTokensCeiling(m);
      let estimate: number;
      try {
        estimate = fastEstimator.message(m);
      } catch {
        assert.equal(ceiling, Infinity, "an estimate that throws has no ceiling");
        return;
      }
      assert.ok(ceiling >= estimate, `${ceiling} < ${estimate}`);
      const plain = m.content.every(
        (b) =>
          b.type !== "custom" &&
          (b.type !== "text" || typeof b.text === "string") &&
          (b.type !== "tool_use" || typeof b.input !== "function"),
      );
      assert.equal(Number.isFinite(ceiling), plain);
    }),
    { seed: 20261205, numRuns: 1000 },
  );
});

test("the ceiling of an all non-ASCII text is the estimate's rate, and of ASCII text about twice the estimate", () => {
  const wide: Message = { role: "user", content: [{ type: "text", text: "中".repeat(1000) }] };
  const narrow: Message = { role: "user", content: [{ type: "text", text: "a".repeat(1000) }] };
  const c = FAST_CALIBRATION;
  assert.equal(
    fastEstimator.message(wide),
    c.perMessage + c.perBlock + Math.ceil(1000 * c.nonAsciiTokensPerChar),
  );
  assert.equal(fastTokensCeiling(wide), fastEstimator.message(wide) + 1);
  assert.ok(fastTokensCeiling(narrow) > 2 * fastEstimator.message(narrow));
});

test("the ceiling is never under the estimate on the synthetic sessions", () => {
  for (const m of syntheticSession(2_000)) assert.ok(fastTokensCeiling(m) >= fastEstimator.message(m));
});

/** A billed prompt on the last assistant message (or given by the host), or none. */
const billing = fc.option(
  fc.record({
    tokens: fc.integer({ min: 1, max: 400_000 }),
    recorded: fc.boolean(),
    index: fc.integer({ min: -5, max: 60 }),
  }),
);

test("surelyBelow never says so of a history shouldCompact would compact, step after step", () => {
  fc.assert(
    fc.property(
      fc.array(history, { minLength: 1, maxLength: 4 }),
      fc.integer({ min: 1, max: 400_000 }),
      fc.option(fc.double({ min: 0.05, max: 1, noNaN: true })),
      billing,
      (steps, window, threshold, bill) => {
        // As the AI SDK step uses it: one memo, asked `surelyBelow` first and measured only when not.
        const memo = new PressureMemo();
        let messages: Message[] = [];
        for (const more of steps) {
          messages = [...messages, ...more];
          let billed: { tokens: number; index: number } | undefined;
          if (bill && !bill.recorded) billed = { tokens: bill.tokens, index: bill.index };
          if (bill?.recorded) {
            const i = messages.findLastIndex((m) => m.role === "assistant");
            if (i >= 0) messages[i] = { ...messages[i]!, usage: { input_tokens: bill.tokens } };
          }
          const options = { window, threshold: threshold ?? undefined };
          const fresh = shouldCompact({ messages, billed }, options);
          if (memo.surelyBelow({ messages, billed, memo }, options))
            assert.equal(fresh.compact, false, `${fresh.tokens} >= ${fresh.thresholdTokens}`);
          else assert.deepEqual(shouldCompact({ messages, billed, memo }, options), fresh);
        }
      },
    ),
    { seed: 20261205, numRuns: 300 },
  );
});

test("surelyBelow: far under the window it decides; near it, a custom estimator or bad options, it leaves it to shouldCompact", () => {
  const messages = syntheticSession(200);
  const memo = new PressureMemo();
  const estimate = shouldCompact({ messages }, { window: 1e9 }).estimate;
  assert.equal(memo.surelyBelow({ messages, memo }, { window: estimate * 4 }), true);
  assert.equal(memo.surelyBelow({ messages, memo }, { window: estimate }), false);
  assert.equal(memo.measured, 0, "no message estimated");
  const custom = createFastEstimator(FAST_CALIBRATION, "mine");
  assert.equal(memo.surelyBelow({ messages, estimator: custom, memo }, { window: estimate * 4 }), false);
  assert.equal(memo.surelyBelow({ messages, memo }, { window: 0 }), false);
  assert.equal(memo.surelyBelow({ messages, memo }, { window: estimate * 4, threshold: 2 }), false);
  // A billed prompt over the window: not below, whatever the messages' size.
  const billed = { tokens: estimate * 4, index: messages.length - 1 };
  assert.equal(memo.surelyBelow({ messages, billed, memo }, { window: estimate * 4 }), false);
  // A message whose content cannot be read: left to shouldCompact (which names the problem).
  const broken = [...messages, { role: "user", content: null } as unknown as Message];
  assert.equal(memo.surelyBelow({ messages: broken, memo }, { window: estimate * 4 }), false);
  assert.equal(memo.surelyBelow({ messages, memo }, { window: estimate * 4 }), true);
});
