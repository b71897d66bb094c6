import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../../model/index.js";
import { SYSTEM_PROMPT } from "../prompt.js";
import { extractiveSummary, splitSections } from "./index.js";
import { SECTIONS, SUMMARY_SECTIONS } from "./sections.js";

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });

test("one table: the extractive note's headers and the LLM prompt's sections and hints are the table's, in order", () => {
  const note = extractiveSummary({ messages: [user("Fix the parser.")] });
  const headers = note
    .split("\n")
    .filter((l) => l.startsWith("## "))
    .map((l) => l.slice(3));
  assert.deepEqual(
    headers,
    SECTIONS.map((s) => s.name),
  );
  assert.deepEqual(
    SUMMARY_SECTIONS,
    SECTIONS.map((s) => s.name),
  );
  const asked = SYSTEM_PROMPT.split("\n").filter((l) => /^\d+\. ## /.test(l));
  assert.deepEqual(
    asked,
    SECTIONS.map((s, i) => `${i + 1}. ## ${s.name}: ${s.hint}`),
  );
});

test("the budget is split by the table's weights: two sections that both overflow get shares in their ratio", () => {
  // Many failed edits: "Files changed" and "Errors" both need far more than the note has; the other sections little.
  const messages: Message[] = [user("Rename every module.")];
  for (let i = 0; i < 400; i++) {
    const id = `c${i}`;
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id, name: "Edit", input: { file_path: `src/module-${i}/file.ts` } }],
    });
    messages.push({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: id, content: `error: cannot edit module ${i}`, is_error: true },
      ],
    });
  }
  const sections = splitSections(extractiveSummary({ messages })).sections;
  const files = sections.get("Files changed")!.length;
  const errors = sections.get("Errors")!.length;
  const weight = (name: string) => SECTIONS.find((s) => s.name === name)!.weight;
  const ratio = files / errors;
  const wanted = weight("Files changed") / weight("Errors");
  assert.ok(
    Math.abs(ratio - wanted) / wanted < 0.05,
    `files ${files} / errors ${errors} = ${ratio}, wanted ${wanted}`,
  );
});
