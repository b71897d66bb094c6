/**
 * The engine's corpus suite (skipped, saying so, on a clone without ../shared).
 * Every real session of the corpus, compacted to 30 % of its estimated size
 * with the embedded extractive summarizer: the pass returns `ok`, and the
 * replacement passes the survival contract on its path. And the secret
 * redactor leaves the encrypted reasoning blobs of a real Codex session alone.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { importFile } from "../formats/index.js";
import { liveContext } from "../journal/index.js";
import { validateSurvivalContract, isCheckpoint } from "../contract/index.js";
import { compactMessagesSafe } from "./compact.js";
import { estimateTokens, fastEstimator, fastTokensCeiling } from "./tokens.js";
import { redactSecrets } from "../redact/redact.js";
import { corpusDir, corpusFiles, corpusSuite, deepFreeze } from "../../test/support.js";

corpusSuite("engine", () => {
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

  test("the ceiling of the fast estimate (fastTokensCeiling) is finite and never under the estimate of a message", async () => {
    for (const file of corpusFiles()) {
      for (const m of liveContext((await importFile(file)).entries)) {
        const ceiling = fastTokensCeiling(m);
        assert.ok(Number.isFinite(ceiling), `${basename(file)}: a message with no ceiling`);
        assert.ok(
          ceiling >= fastEstimator.message(m),
          `${basename(file)}: ${ceiling} < ${fastEstimator.message(m)}`,
        );
      }
    }
  });

  test("the real Codex session's encrypted reasoning blobs are left untouched", () => {
    const file = join(corpusDir, "codex", "coda-rollout-2025-10-04T22-31-15.jsonl");
    let blobs = 0;
    let withSk = 0;
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (!line.includes("encrypted_content")) continue;
      let o: { payload?: { encrypted_content?: unknown } };
      try {
        o = JSON.parse(line) as typeof o;
      } catch {
        continue;
      }
      const blob = o.payload?.encrypted_content;
      if (typeof blob !== "string") continue;
      blobs++;
      if (blob.includes("sk-")) withSk++;
      assert.equal(redactSecrets(blob), blob);
    }
    assert.ok(blobs > 100, `found ${blobs} blobs`);
    assert.ok(withSk >= 1, "the corpus holds the sk- false-positive case");
  });
});
