/**
 * The note as a hand-over, through the engine (`compactMessagesSafe`, the
 * default extractive summarizer): said once, and kept whole over a second
 * compaction.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../model/types.js";
import { CONSTANTS } from "../model/constants.js";
import { compactMessagesSafe, summaryBudget } from "./compact.js";

const textOf = (m: Message): string => m.content.map((b) => (b.type === "text" ? b.text : "")).join("\n");

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const say = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });

/** One round of work on a file: a write or an edit, its result, and a report. */
function round(i: number, tool: "Write" | "Edit"): Message[] {
  const path = `src/part${i}.ts`;
  return [
    user(`Step ${i}: ${tool === "Write" ? "create" : "change"} ${path} as agreed.`),
    {
      role: "assistant",
      content: [
        {
          type: "tool_use",
          id: `t${i}`,
          name: tool,
          input: { file_path: path, content: `export const p${i} = ${i};` },
        },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: "ok\n".repeat(200) }] },
    say(`Step ${i} is done: ${path} holds p${i}.`),
  ];
}

/** The section `title` of a note (its body, up to the next header). */
function section(note: string, title: string): string {
  const m = new RegExp(`^## ${title}\\n([\\s\\S]*?)(?=^## |(?![\\s\\S]))`, "m").exec(note);
  return m?.[1] ?? "";
}

test("a user message the replacement keeps verbatim is referred to in the note, not quoted again", async () => {
  const plan = `Port the billing module to the new API. ${"Keep every public name and its tests. ".repeat(40)}`;
  const history = [
    user(plan),
    ...[1, 2, 3, 4, 5, 6].flatMap((i) => round(i, "Edit")),
    user("Now run the tests."),
  ];
  const r = await compactMessagesSafe(history, { target: 1 });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(r.path, "summary");
  // The plan is among the retained older user messages, word for word.
  assert.ok(r.replacement.some((m) => m.role === "user" && textOf(m) === plan));
  const note = textOf(r.checkpoint!);
  assert.ok(!note.includes(plan), "the note quotes the plan again");
  assert.ok(!note.includes(plan.slice(0, 200)), "the note repeats the plan's text");
  assert.match(note, /kept word for word above this note, \d+ characters/);
});

test("summaryBudget: a second compaction carries the earlier note's size over and budgets what is new", () => {
  // Nothing carried: the rule of a first compaction.
  assert.equal(summaryBudget(100_000, 1_000, 50_000, 0), CONSTANTS.summaryMaxTokens);
  // Carried: the earlier note whole, plus the usual budget for the new messages.
  assert.equal(summaryBudget(100_000, 1_000, 50_000, 2_000), 2_000 + CONSTANTS.summaryMaxTokens);
  // The new part is held under half of the new messages alone.
  assert.equal(summaryBudget(100_000, 1_000, 2_000 + 600, 2_000), 2_000 + 300);
  // Held under the cap however large the earlier note was.
  assert.equal(summaryBudget(100_000, 1_000, 90_000, 7_500), CONSTANTS.summaryCarriedMaxTokens);
});

test("a second compaction keeps every still-true section of the first note at least as long", async () => {
  const history = [
    user("Build the parts module, one file a step."),
    ...[1, 2, 3, 4, 5, 6, 7, 8].flatMap((i) => round(i, i % 2 === 0 ? "Write" : "Edit")),
    user("Carry on."),
  ];
  const first = await compactMessagesSafe(history, { target: 1 });
  assert.ok(first.ok && first.path === "summary", first.ok ? first.path : first.error.message);
  const firstNote = textOf(first.checkpoint!);
  // The session goes on, then compacts again.
  const after = [...first.replacement, ...[9, 10].flatMap((i) => round(i, "Write")), user("Go on.")];
  const second = await compactMessagesSafe(after, { target: 1 });
  assert.ok(second.ok && second.path === "summary", second.ok ? second.path : second.error.message);
  const secondNote = textOf(second.checkpoint!);
  for (const title of ["Files changed", "Commands run", "Errors", "Work done"]) {
    const was = section(firstNote, title).replace(/\s+/g, " ").trim();
    const now = section(secondNote, title).replace(/\s+/g, " ").trim();
    assert.ok(now.length >= was.length, `${title}: ${was.length} -> ${now.length}\n${was}\n---\n${now}`);
  }
  // A file the first note marked as written is still marked so.
  assert.match(section(firstNote, "Files changed"), /src\/part2\.ts \(written\)/);
  assert.match(section(secondNote, "Files changed"), /src\/part2\.ts \(written\)/);
});
