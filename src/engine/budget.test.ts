import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../model/types.js";
import { CONSTANTS } from "../model/constants.js";
import { compactMessagesSafe, summaryBudget } from "./compact.js";
import { replacementParts, verbatimTokens } from "./replacement.js";
import { estimateTokens } from "./tokens.js";

/** A working session: many rounds of requests, reads and edits, with errors and decisions along the way. */
function session(rounds: number): Message[] {
  const h: Message[] = [];
  for (let i = 0; i < rounds; i++) {
    h.push({
      role: "user",
      content: [{ type: "text", text: `Step ${i}: port module m${i} and keep the API.` }],
    });
    h.push({
      role: "assistant",
      content: [
        { type: "text", text: `Reading src/m${i}.ts before changing it.` },
        { type: "tool_use", id: `r${i}`, name: "Read", input: { file_path: `src/m${i}.ts` } },
      ],
    });
    h.push({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: `r${i}`, content: `export const m${i} = ${i};\n`.repeat(8) },
      ],
    });
    h.push({
      role: "assistant",
      content: [
        {
          type: "tool_use",
          id: `e${i}`,
          name: "Edit",
          input: { file_path: `src/m${i}.ts`, old: "a", new: "b" },
        },
      ],
    });
    h.push({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: `e${i}`,
          content: i % 3 === 0 ? `error: TS2322 in src/m${i}.ts line ${i}` : "ok",
          ...(i % 3 === 0 ? { is_error: true } : {}),
        },
      ],
    });
    h.push({ role: "assistant", content: [{ type: "text", text: `Done with m${i}; tests pass.` }] });
  }
  return h;
}

test("summaryBudget: the target minus the verbatim parts, held between the floor and the cap", () => {
  assert.equal(summaryBudget(10_000, 9_000), 1_000);
  assert.equal(summaryBudget(10_000, 9_900), CONSTANTS.summaryMinTokens);
  assert.equal(summaryBudget(10_000, 12_000), CONSTANTS.summaryMinTokens);
  assert.equal(summaryBudget(100_000, 1_000), CONSTANTS.summaryMaxTokens);
});

test("the note's size follows the target: targets from 5 % to 50 % of a session", async () => {
  const h = session(40);
  const total = estimateTokens(h);
  const verbatim = verbatimTokens(replacementParts(h, {}), undefined);
  let lastChars = 0;
  const budgets: number[] = [];
  for (const pct of [5, 10, 15, 20, 30, 40, 50]) {
    const target = Math.floor((total * pct) / 100);
    const r = await compactMessagesSafe(h, { target, retainedUserTokens: 0 });
    assert.ok(r.ok, `${pct} %: ${r.ok ? "" : r.error.message}`);
    if (r.path !== "summary") continue; // pruning alone reached this target
    const expected = summaryBudget(
      target,
      verbatimTokens(replacementParts(h, { retainedUserTokens: 0 }), undefined),
    );
    assert.equal(r.summary_budget, expected, `${pct} %`);
    assert.ok(
      r.summary.length <= expected * 4,
      `${pct} %: ${r.summary.length} chars over ${expected} tokens`,
    );
    assert.ok(r.summary.length >= lastChars, `${pct} %: the note shrank as the target grew`);
    lastChars = r.summary.length;
    budgets.push(expected);
    if (target - verbatim >= CONSTANTS.summaryMinTokens)
      assert.ok(r.target_reached, `${pct} %: ${r.target_missed}`);
  }
  // The budget really moved with the target (not one fixed size at every target).
  assert.ok(new Set(budgets).size >= 3, `budgets ${budgets.join(", ")}`);
});

test("summaryMaxTokens overrides the budget the target leaves", async () => {
  const h = session(60);
  const r = await compactMessagesSafe(h, { target: 3_000, summaryMaxTokens: 700 });
  assert.ok(r.ok && r.path === "summary");
  assert.equal(r.summary_budget, 700);
  assert.ok(r.summary.length <= 700 * 4);
});

test("a target the kept messages alone exceed: the receipt says why", async () => {
  const h = session(40);
  // The protected round is made large: a long last result.
  h[h.length - 2] = {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "e39", content: "x ".repeat(3_000) }],
  };
  const r = await compactMessagesSafe(h, { target: 500 });
  assert.ok(r.ok);
  assert.equal(r.target_reached, false);
  assert.match(
    r.target_missed ?? "",
    /is \d+ tokens, leaving less than the note's floor of 300 under the target of 500; the protected last round alone is \d+ tokens/,
  );
  assert.equal(r.summary_budget, CONSTANTS.summaryMinTokens);
});
