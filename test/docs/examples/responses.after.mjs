/* eslint-disable no-undef -- runs after the README block, which defines r, history, response (see test/docs/readme-adapters.test.ts) */
import assert from "node:assert/strict";

assert.ok(r.ok, r.ok ? "" : r.error.message);
assert.ok(history.length < original.length, "the history was compacted");
// The newest reasoning item and call are the caller's own objects, sent byte for byte.
const lastReasoning = original.findLast((i) => i.type === "reasoning");
const lastCall = original.findLast((i) => i.type === "function_call");
assert.ok(history.includes(lastReasoning) && history.includes(lastCall));
const sent = received[0].input;
assert.deepEqual(sent.find((i) => i.id === lastReasoning.id), lastReasoning);
assert.equal(sent.find((i) => i.id === lastCall.id).arguments, lastCall.arguments);
assert.equal(sent.filter((i) => i.role === "user" && i.content[0]?.text?.startsWith("[compact-safe checkpoint")).length, 1);
assert.equal(response.output_text, "ok");
// The next turn: the compacted history is under the threshold, so nothing is done.
const next = await compactResponsesItems(history, { window: 8_000, billed });
assert.equal(next.ok, false);
assert.equal(next.error.kind, "below_threshold", next.error.message);
server.close();
