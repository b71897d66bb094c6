import { test } from "node:test";
import assert from "node:assert/strict";
import type { Block, Message } from "../src/model/index.js";
import { itemNamed, openItemsNamed, planAt, planBars, shownOpen, staleItems } from "./fidelity-plan.js";

const call = (id: string, name: string, input: unknown): Message => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name, input } as Block],
});
const result = (id: string, content: string): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content }],
});

test("planAt: TaskCreate ids from their results, TaskUpdate statuses, deleted tasks gone", () => {
  const plan = planAt([
    call("a", "TaskCreate", { subject: "Add EndedAt field", description: "…", activeForm: "Adding" }),
    result("a", "Task #1 created successfully: Add EndedAt field"),
    call("b", "TaskCreate", { subject: "Run verification", description: "…", activeForm: "Running" }),
    result("b", "Task #2 created successfully: Run verification"),
    call("c", "TaskCreate", { subject: "Dropped", description: "…", activeForm: "x" }),
    result("c", "Task #3 created successfully: Dropped"),
    call("u", "TaskUpdate", { taskId: "1", status: "completed" }),
    call("v", "TaskUpdate", { taskId: "3", status: "deleted" }),
  ]);
  assert.deepEqual(plan, [
    { text: "Add EndedAt field", status: "completed" },
    { text: "Run verification", status: "pending" },
  ]);
});

test("planAt: a TaskList result is the whole state; a later TodoWrite list replaces it", () => {
  const listed = [
    call("l", "TaskList", {}),
    result("l", "#1 [pending] Fix condensation\n#2 [in_progress] Filter sessions [blocked by #1]"),
  ];
  assert.deepEqual(planAt(listed), [
    { text: "Fix condensation", status: "pending" },
    { text: "Filter sessions", status: "in_progress" },
  ]);
  const todo = call("t", "TodoWrite", { todos: [{ content: "a", status: "completed", activeForm: "a" }] });
  assert.deepEqual(planAt([...listed, todo]), [{ text: "a", status: "completed" }]);
});

test("itemNamed and openItemsNamed: words, or two thirds of the distinctive words", () => {
  assert.equal(
    itemNamed(
      "Filter stale sessions in findSessionsForWorktree",
      "next: filter stale sessions in findSessionsForWorktree",
    ),
    true,
  );
  assert.equal(
    itemNamed("Filter stale sessions in findSessionsForWorktree", "findSessionsForWorktree returns them all"),
    false,
  );
  assert.equal(
    itemNamed("Update handlers to use agent.HookSessionEnd", "Update handlers to use agent.HookStop"),
    false,
  );
  const plan = [
    { text: "Fix condensation", status: "completed" },
    { text: "Filter stale sessions", status: "pending" },
  ];
  assert.deepEqual(openItemsNamed(plan, "Next: Filter stale sessions"), { kept: 1, total: 1 });
  assert.deepEqual(openItemsNamed(undefined, "x"), { kept: 0, total: 0 });
});

test("staleItems: an item shown open after the continuation completed it", () => {
  const first =
    "## Next step\nNext: #2 Filter stale sessions (in_progress, the first item in progress in the plan).\n- [pending] #3 Fix log routing";
  const after = [
    { text: "Filter stale sessions", status: "completed" },
    { text: "Fix log routing", status: "pending" },
  ];
  assert.deepEqual(shownOpen(first), ["#2 Filter stale sessions", "#3 Fix log routing"]);
  assert.deepEqual(staleItems(first, "Next: #2 Filter stale sessions (in_progress, x).", after), [
    "Filter stale sessions",
  ]);
  assert.deepEqual(
    staleItems(
      first,
      "- [completed] #2 Filter stale sessions\nNext: #3 Fix log routing (pending, x).",
      after,
    ),
    [],
  );
  const bars = planBars([], ["Filter stale sessions"], 1);
  assert.equal(bars.find((b) => b.name.startsWith("second compaction"))?.met, false);
});
