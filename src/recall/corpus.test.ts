/**
 * The recall server on corpus sessions compacted by compact-safe: every stubbed result comes back byte
 * for byte (redacted where it held a secret) through the MCP SDK's client on the built binary.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { corpusDir, corpusSuite } from "../../test/support.js";
import { compactInto, connect, recallWhole, stubbedOriginals } from "../../test/recall-client.js";
import { redactSecrets } from "../redact/redact.js";

const SESSIONS = ["codex/coda-rollout-2025-10-04T22-31-15.jsonl", "pi/pi-mono-before-compaction.jsonl"];

corpusSuite("recall server", () => {
  let dir = "";
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "cs-recall-corpus-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const rel of SESSIONS)
    test(`${rel}: recall gives back every stubbed result of a prune-only compaction`, async () => {
      const journal = join(dir, `${basename(rel)}.journal.jsonl`);
      compactInto(join(corpusDir, rel), journal);
      const stubbed = await stubbedOriginals(journal);
      assert.ok(stubbed.size > 0, "the compaction stubbed results");
      const client = await connect([journal]);
      try {
        for (const [id, original] of stubbed)
          assert.equal(await recallWhole(client, `tool:${id}`), redactSecrets(original), id);
      } finally {
        await client.close();
      }
    });
});
