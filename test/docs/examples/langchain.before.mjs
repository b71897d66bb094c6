// Fakes for the README's LangChain example: LangChain's own fake chat models stand in for real ones.
/* eslint-disable @typescript-eslint/no-unused-vars -- used by the README block that follows this file */
import { AIMessage, fakeModel, tool } from "langchain";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { z } from "zod";

// The agent's model: reads four files, one per turn, then answers.
const model = fakeModel();
for (const f of ["a", "b", "c", "d"])
  model.respond(
    new AIMessage({
      content: `reading ${f}.ts`,
      tool_calls: [{ id: `call_${f}`, name: "read_file", args: { path: `${f}.ts` } }],
    }),
  );
model.respond(new AIMessage("All four files are read."));

const readFile = tool(async ({ path }) => `contents of ${path}\n${"line of code\n".repeat(250)}`, {
  name: "read_file",
  description: "Read a file",
  schema: z.object({ path: z.string() }),
});

// The summarizer: any LangChain chat model.
const summarizer = new FakeListChatModel({
  responses: ["## Objective\nRead the four files.\n## Work done\nRead a.ts and b.ts."],
});
