/**
 * Every real session of the corpus, compacted to 30 % of its estimated size
 * with the embedded extractive summarizer: the pass returns `ok`, and the
 * replacement passes the survival contract on its path.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { basename } from "node:path";
import { importFile } from "../formats/index.js";
import { liveContext } from "../journal/index.js";
import { validateSurvivalContract, isCheckpoint } from "../contract/index.js";
import { compactMessagesSafe } from "./compact.js";
import { estimateTokens } from "./tokens.js";
import { corpusFiles, deepFreeze } from "../../test/support.js";

for (const file of corpusFiles()) {
  test(`compact ${basename(file)} to 30 % with the extractive summarizer`, async () => {
    const messages = deepFreeze(liveContext((await importFile(file)).entries));
    const target = Math.floor(estimateTokens(messages) * 0.3);
    const r = await compactMessagesSafe(messages, { target, anchors: "Keep the public API stable." });
    assert.ok(r.ok, r.ok ? "" : `${r.error.kind}: ${r.error.message}`);
    assert.ok(r.tokens_after < r.tokens_before);
    const v = validateSurvivalContract(messages, r.replacement, {
      path: r.path,
      anchors: "Keep the public API stable.",
    });
    assert.ok(v.valid, v.reason ?? "");
    assert.equal(
      r.replacement.filter(isCheckpoint).length,
      r.path === "summary" ? 1 : messages.filter(isCheckpoint).length > 0 ? 1 : 0,
    );
  });
}
