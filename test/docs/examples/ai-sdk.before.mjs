/* Prepended to the README example ai-sdk, which uses model and read. */
/* eslint-disable @typescript-eslint/no-unused-vars */
// The AI SDK's own mock model stands in for a real one: it reads one file per step
// (writing a long note each time) until nine files are read, then answers.
import { jsonSchema, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";

const note = "I checked the module and the session handling. ".repeat(60);
const usage = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};
let calls = 0;
const model = new MockLanguageModelV4({
  doGenerate: async () => {
    calls++;
    if (calls > 9)
      return { content: [{ type: "text", text: "Fixed." }], finishReason: { unified: "stop" }, usage, warnings: [] };
    return {
      content: [
        { type: "text", text: `Step ${calls}. ${note}` },
        { type: "tool-call", toolCallId: `call_${calls}`, toolName: "read", input: JSON.stringify({ path: `src/f${calls}.ts` }) },
      ],
      finishReason: { unified: "tool-calls" },
      usage,
      warnings: [],
    };
  },
});
const read = tool({
  inputSchema: jsonSchema({ type: "object", properties: { path: { type: "string" } } }),
  execute: async ({ path }) => `// ${path}\n${"const x = 1;\n".repeat(60)}`,
});
