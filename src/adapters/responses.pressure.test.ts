/**
 * compactResponsesItems with a window compacts only under pressure, as the
 * engine decides it (`shouldCompact`): nothing below the threshold, a
 * compaction above it, and the latest billed prompt counts when given.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "../model/types.js";
import { measurePressure } from "../engine/pressure.js";
import { CONSTANTS } from "../model/constants.js";
import { compactResponsesItems, fromResponsesItems, toResponsesItems } from "./responses.js";

function history(rounds: number): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < rounds; i++) {
    out.push({ role: "user", content: [{ type: "text", text: `step ${i}: read src/f${i}.ts and fix it` }] });
    out.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `call_${i}`, name: "shell", input: { command: `cat src/f${i}.ts` } }],
    });
    out.push({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: `call_${i}`, content: `export const x${i} = ${i};\n`.repeat(40) },
      ],
    });
  }
  return out;
}

test("compactResponsesItems with a window: below the engine's threshold nothing is compacted, at it the items are", async () => {
  const items = toResponsesItems(history(30));
  const tokens = measurePressure({ messages: fromResponsesItems(items) }).tokens;
  const t = CONSTANTS.threshold;
  const below = await compactResponsesItems(items, { window: Math.ceil((tokens + 1) / t) + 1 });
  assert.equal(below.ok, false);
  assert.equal(!below.ok && below.error.kind, "below_threshold");
  assert.equal(below.decision?.compact, false);
  assert.equal(below.decision?.tokens, tokens);
  const above = await compactResponsesItems(items, { window: Math.floor(tokens / t) });
  assert.equal(above.ok, true);
  assert.equal(above.decision?.compact, true);
  assert.ok(above.ok && above.result.tokens_after < above.result.tokens_before);
  // force: compacts below the threshold too; no window: no check (as before).
  assert.equal((await compactResponsesItems(items, { window: tokens * 10, force: true })).ok, true);
  assert.equal((await compactResponsesItems(items, {})).ok, true);
});

test("compactResponsesItems: the latest billed prompt counts in the pressure (what the model was really sent)", async () => {
  const items = toResponsesItems(history(30));
  const tokens = measurePressure({ messages: fromResponsesItems(items) }).tokens;
  const window = tokens * 2; // the estimate alone is at half the window
  const quiet = await compactResponsesItems(items, { window });
  assert.equal(!quiet.ok && quiet.error.kind, "below_threshold");
  // The last response (its output: the last two items) billed a prompt of 1.9× the estimate: that is pressure.
  const billed = { inputTokens: Math.round(tokens * 1.9), outputItems: 2 };
  const r = await compactResponsesItems(items, { window, billed });
  assert.equal(r.decision?.billedParentPromptTokens, billed.inputTokens);
  assert.equal(r.decision?.compact, true);
  assert.equal(r.ok, true);
});
