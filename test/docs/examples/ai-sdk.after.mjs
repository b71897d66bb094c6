/* Appended to the README example ai-sdk, which defines these. */
/* global result, compactions, model, fromModelMessages */
import assert from "node:assert/strict";
import { CHECKPOINT_MARKER, validateSurvivalContract } from "compact-safe";

assert.equal(result.text, "Fixed.");
assert.equal(compactions.length, 1, "compacted once");
const [c] = compactions;
assert.equal(c.result.path, "summary");
assert.ok(c.result.tokens_after < c.result.tokens_before);
// What the model received on that step: the checkpoint, then the protected round.
const sent = JSON.stringify(model.doGenerateCalls[c.stepNumber].prompt);
assert.ok(sent.includes(CHECKPOINT_MARKER));
assert.ok(sent.includes(`call_${c.stepNumber}`) && sent.includes(`call_${c.stepNumber - 1}`));
const check = validateSurvivalContract(fromModelMessages(c.replaced), fromModelMessages(c.messages));
assert.equal(check.valid, true, check.reason ?? "");
