/**
 * `compact --summarizer anthropic-native` through the binary on a real Claude Code
 * session of the corpus (skipped, saying so, on a clone without ../shared), against
 * the local fake of the documented compaction wire: the session is compacted, the
 * contract holds between its live context and the replacement, the checkpoint holds
 * the compaction's summary, and the one request sent reuses the live prefix (the
 * system and tools of --prefix-from as given, the session's leading messages as the
 * exporter writes them) with the documented on-demand `compaction` parameter.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { corpusDir, corpusSuite } from "../../support.js";
import { run, tempDir } from "../helpers.js";
import { anthropicOnDemandCompaction, startFakeProvider } from "../../fake-provider.js";
import { importFile } from "../../../src/formats/detect.js";
import { liveContext } from "../../../src/journal/tree.js";
import { readJournalSync } from "../../../src/journal/index.js";
import { toAnthropicRequest } from "../../../src/formats/export/anthropic.js";
import { redactForProvider } from "../../../src/summarizers/anthropic-native.js";
import { validateSurvivalContract } from "../../../src/contract/index.js";
import type { CompactionEntry } from "../../../src/model/index.js";

const SESSION = "claude-code/entire-d3-7d736cbc10-0.jsonl";

const SUMMARY =
  "## Objective\nThe user's task in this session, as the provider's compaction wrote it.\n\n" +
  "## Next step\nContinue from the last message kept after this note.";

const PREFIX = {
  system: [
    { type: "text", text: "You are Claude Code, a coding agent.", cache_control: { type: "ephemeral" } },
  ],
  tools: [
    {
      name: "Bash",
      description: "Run a shell command.",
      input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
    },
    {
      name: "Read",
      description: "Read a file.",
      input_schema: {
        type: "object",
        properties: { file_path: { type: "string" } },
        required: ["file_path"],
      },
    },
  ],
};

corpusSuite("anthropic-native summarizer", () => {
  test(`compact --summarizer anthropic-native on ${SESSION}: the contract holds, the request reuses the live prefix`, async () => {
    const session = join(corpusDir, SESSION);
    const provider = await startFakeProvider((r) =>
      anthropicOnDemandCompaction(r, SUMMARY, { cacheRead: 90_000 }),
    );
    const { dir, cleanup } = tempDir();
    try {
      const prefix = join(dir, "request.json");
      writeFileSync(prefix, JSON.stringify(PREFIX));
      const out = join(dir, "j.jsonl");
      const r = await run(
        [
          "compact",
          session,
          "--out",
          out,
          "--summarizer",
          "anthropic-native",
          "--model",
          "claude-test",
          "--base-url",
          provider.anthropicBaseURL,
          "--prefix-from",
          prefix,
          "--target",
          "20000",
          "--workspace",
          dir,
          "--json",
        ],
        { env: { ANTHROPIC_API_KEY: "key" }, timeoutMs: 300_000 },
      );
      assert.equal(r.code, 0, r.stderr);
      const receipt = JSON.parse(r.stdout) as { path: string; tokens_before: number; tokens_after: number };
      assert.equal(receipt.path, "summary");
      assert.ok(receipt.tokens_after < receipt.tokens_before);

      // The contract, between the session's live context and what the journal now holds.
      const live = liveContext((await importFile(session)).entries);
      const entry = readJournalSync(out).entries.find((e) => e.kind === "compaction") as CompactionEntry;
      assert.ok(entry, "a compaction entry was written");
      assert.ok(entry.payload.summary.includes("as the provider's compaction wrote it"));
      assert.equal(entry.payload.model, "claude-test");
      const verdict = validateSurvivalContract(live, entry.payload.replacement);
      assert.equal(verdict.valid, true, verdict.valid ? "" : JSON.stringify(verdict));

      // One request, on the documented wire, reusing the live prefix.
      assert.equal(provider.requestCount, 1);
      const sent = provider.requests[0]!;
      assert.equal(sent.path, "/v1/messages");
      assert.ok(String(sent.headers["anthropic-beta"]).split(",").includes("compact-2026-09-04"));
      assert.equal(sent.body.context_management, undefined);
      assert.equal(sent.body.compaction.type, "summarize");
      assert.match(sent.body.compaction.instructions, /^Write the handoff note of the conversation above/);
      assert.match(sent.body.compaction.instructions, /## Next step/);
      assert.deepEqual(sent.body.system, PREFIX.system);
      assert.deepEqual(sent.body.tools, PREFIX.tools);
      // The leading messages: the live context's, as the exporter writes it (redacted as sent out).
      const expected = toAnthropicRequest(redactForProvider(live)).messages;
      // On demand, the messages are the span as it stands: nothing is added after them.
      const leading: unknown[] = sent.body.messages;
      assert.ok(leading.length >= 10, `${leading.length} leading messages`);
      assert.ok(leading.length < expected.length, "the protected round is not sent");
      assert.deepEqual(leading, expected.slice(0, leading.length));
    } finally {
      await provider.close();
      cleanup();
    }
  });
});
