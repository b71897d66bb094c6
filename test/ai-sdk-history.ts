/** An AI SDK `ModelMessage[]` history made by a real `generateText` tool loop (the AI SDK's own mock model). */
import assert from "node:assert/strict";
import { generateText, jsonSchema, modelMessageSchema, stepCountIs, tool, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";

type Result = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;
const usage: Result["usage"] = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};

/** What an app stores after a two-call tool loop: its prompt, then every step's response messages. */
export async function aiSdkHistory(): Promise<ModelMessage[]> {
  let n = 0;
  const model = new MockLanguageModelV4({
    doGenerate: async () => {
      n++;
      if (n > 2)
        return {
          content: [{ type: "text", text: "Done." }],
          finishReason: { unified: "stop", raw: undefined },
          usage,
          warnings: [],
        };
      return {
        content: [
          { type: "text", text: `Step ${n}.` },
          {
            type: "tool-call",
            toolCallId: `call_${n}`,
            toolName: "read",
            input: JSON.stringify({ path: `src/f${n}.ts` }),
          },
        ],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  const read = tool({
    inputSchema: jsonSchema<{ path: string }>({ type: "object", properties: { path: { type: "string" } } }),
    execute: async ({ path }) => `// ${path}`,
  });
  const prompt: ModelMessage[] = [{ role: "user", content: "Fix the login bug." }];
  const r = await generateText({ model, tools: { read }, messages: prompt, stopWhen: stepCountIs(5) });
  const history = [...prompt, ...r.steps.flatMap((s) => s.response.messages)];
  for (const m of history) assert.ok(modelMessageSchema.safeParse(m).success);
  return history;
}
