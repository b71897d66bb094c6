/**
 * The `ai-sdk` format: AI SDK `ModelMessage[]` files, as written by an app's
 * real `generateText` tool loop (the AI SDK's own mock model), detected from
 * their content, read without loss of the tool pairs, and a broken message
 * named as an AI SDK message.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { aiSdkHistory } from "../../../test/ai-sdk-history.js";
import { liveContext } from "../../journal/tree.js";
import { detectFormat, importText } from "../detect.js";
import { FormatError } from "../common/types.js";

test("an AI SDK ModelMessage[] file is detected as ai-sdk and read with its tool pairs", async () => {
  const history = await aiSdkHistory();
  const text = JSON.stringify(history, null, 2);
  assert.equal(detectFormat(text, "chat.json"), "ai-sdk");
  assert.equal(detectFormat(JSON.stringify({ messages: history }), "chat.json"), "ai-sdk");
  const { entries, report } = importText(text, "chat.json");
  assert.equal(report.format, "ai-sdk");
  assert.equal(report.total, history.length);
  assert.equal(report.imported, history.length);
  assert.deepEqual(report.skipped, []);
  const live = liveContext(entries);
  const uses = live.flatMap((m) => m.content).filter((b) => b.type === "tool_use");
  const results = live.flatMap((m) => m.content).filter((b) => b.type === "tool_result");
  assert.deepEqual(
    uses.map((b) => (b as { id: string }).id),
    ["call_1", "call_2"],
  );
  assert.deepEqual(
    results.map((b) => [(b as { tool_use_id: string }).tool_use_id, (b as { content: string }).content]),
    [
      ["call_1", "// src/f1.ts"],
      ["call_2", "// src/f2.ts"],
    ],
  );
  // --format ai-sdk reads it the same way.
  assert.deepEqual(liveContext(importText(text, "chat.json", { format: "ai-sdk" }).entries), live);
});

test("an AI SDK message that breaks its rules is named as one, with its number", async () => {
  const history = (await aiSdkHistory()) as unknown as Record<string, unknown>[];
  const broken = structuredClone(history);
  const part = (broken[2]!.content as Record<string, unknown>[])[0]!;
  part.toolCallId = "";
  assert.throws(
    () => importText(JSON.stringify(broken), "chat.json"),
    (e: unknown) =>
      e instanceof FormatError &&
      e.message ===
        'chat.json: message 3: looks like an AI SDK message but content[0] (tool-result): "toolCallId" must be a non-empty string',
  );
});
