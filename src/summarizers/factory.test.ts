/** The one summarizer factory: every name builds its summarizer, with the same checks everywhere. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "../model/types.js";
import { SummarizerError } from "./types.js";
import {
  createSummarizer,
  defaultSummarizer,
  OFFLINE_SUMMARIZER_NAMES,
  offlineSummary,
  SUMMARIZER_NAMES,
} from "./factory.js";

const messages: Message[] = [
  { role: "user", content: [{ type: "text", text: "fix the failing test in src/a.ts" }] },
  { role: "assistant", content: [{ type: "text", text: "done" }] },
];

test("every name builds its summarizer; the offline note is the extractive summarizer's", async () => {
  assert.deepEqual(SUMMARIZER_NAMES, ["extractive", "openai", "anthropic", "anthropic-native"]);
  assert.deepEqual(OFFLINE_SUMMARIZER_NAMES, ["extractive"]);
  const extractive = await createSummarizer({ name: "extractive" });
  assert.equal(extractive.name, "extractive");
  assert.equal(defaultSummarizer().name, "extractive");
  const { text } = await extractive.summarize({ messages });
  assert.equal(offlineSummary("extractive", { messages }), text);
  const env = {};
  const openai = await createSummarizer({ name: "openai", model: "m", apiKey: "k", env });
  assert.deepEqual([openai.name, openai.model], ["openai-compatible", "m"]);
  const anthropic = await createSummarizer({ name: "anthropic", model: "c", apiKey: "k", env });
  assert.deepEqual([anthropic.name, anthropic.model], ["anthropic", "c"]);
  const native = await createSummarizer({
    name: "anthropic-native",
    model: "c",
    apiKey: "k",
    env,
    wire: () => ({ messages: [] }),
  });
  assert.equal(native.name, "anthropic-native");
});

test("a bad name or option is a deterministic SummarizerError naming it", async () => {
  const refused = async (spec: unknown, pattern: RegExp) => {
    await assert.rejects(
      createSummarizer(spec as never),
      (e: unknown) => e instanceof SummarizerError && e.kind === "deterministic" && pattern.test(e.message),
    );
  };
  await refused(
    { name: "gpt" },
    /unknown summarizer "gpt" \(known: extractive, openai, anthropic, anthropic-native\)/,
  );
  await refused(null, /unknown summarizer undefined/);
  await refused(
    { name: "openai", apiKey: "k", env: {} },
    /openaiCompatibleSummarizer: the model option is required/,
  );
  await refused({ name: "anthropic", model: "c", env: {} }, /no API key: set the ANTHROPIC_API_KEY/);
  await refused(
    { name: "anthropic-native", model: "c", apiKey: "k", env: {} },
    /anthropic-native needs wire/,
  );
});
