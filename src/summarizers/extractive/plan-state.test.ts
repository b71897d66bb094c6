/**
 * The plan as it stands and the state of the work, from messages of the shapes the real clients write
 * (Claude Code 2.1.17+ `TaskCreate`/`TaskUpdate`/`TaskList` and their results, `TodoWrite`, Codex
 * `update_plan`, Claude Code's compact summary opening a span).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Block, Message } from "../../model/index.js";
import { extractiveSummary, splitSections } from "./index.js";
import { foreignParts, withoutAnalysis } from "./fold.js";
import { saysWhatRemains } from "./render.js";

const user = (t: string): Message => ({ role: "user", content: [{ type: "text", text: t }] });
const assistant = (...content: Block[]): Message => ({ role: "assistant", content });
const text = (t: string): Block => ({ type: "text", text: t });
const call = (id: string, name: string, input: unknown): Block => ({ type: "tool_use", id, name, input });
const result = (id: string, content: string, is_error = false): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content, ...(is_error ? { is_error } : {}) }],
});
const nextStep = (messages: Message[], following: Message[] = []): string =>
  splitSections(extractiveSummary({ messages, following })).sections.get("Next step") ?? "";

/** Tasks made one a call, as Claude Code writes them (the id is the result's). */
function created(...subjects: string[]): Message[] {
  return subjects.flatMap((s, i) => [
    assistant(call(`c${i}`, "TaskCreate", { subject: s, description: `${s}.`, activeForm: `${s}ing` })),
    result(`c${i}`, `Task #${i + 1} created successfully: ${s}`),
  ]);
}
const update = (id: string, taskId: string, status: string): Message[] => [
  assistant(call(id, "TaskUpdate", { taskId, status })),
  result(id, `Updated task #${taskId} status`),
];

test("TaskCreate/TaskUpdate: the latest state of each task, the Next step from the first in progress", () => {
  const messages = [
    user("add session-end tracking"),
    ...created("Add EndedAt field", "Add hook constant", "Run verification (fmt, lint, tests)"),
    ...update("u1", "1", "in_progress"),
    ...update("u2", "1", "completed"),
    ...update("u3", "3", "in_progress"),
    assistant(text("Running the checks now.")),
  ];
  const next = nextStep(messages);
  assert.match(
    next,
    /^Next: #3 Run verification \(fmt, lint, tests\) \(in_progress, the first item in progress/m,
  );
  assert.match(next, /Plan \(the latest TaskCreate\/TaskUpdate list/);
  assert.match(next, /^- \[completed\] #1 Add EndedAt field$/m);
  assert.match(next, /^- \[pending\] #2 Add hook constant$/m);
  assert.match(next, /^- \[in_progress\] #3 Run verification/m);
});

test("TaskCreate/TaskUpdate: with none in progress the first pending; a deleted task is gone", () => {
  const messages = [
    user("fix the bugs"),
    ...created("Fix deferred condensation", "Filter stale sessions", "Fix log routing"),
    ...update("u1", "1", "deleted"),
    assistant(text("Starting.")),
  ];
  const next = nextStep(messages);
  assert.match(next, /^Next: #2 Filter stale sessions \(pending, the first item pending/m);
  assert.doesNotMatch(next, /Fix deferred condensation/);
});

test("TaskList's result is the whole state (ids, statuses, blocked-by notes dropped)", () => {
  const messages = [
    user("go on"),
    assistant(call("l1", "TaskList", {})),
    result(
      "l1",
      "#1 [completed] Fix deferred condensation\n#2 [in_progress] Filter stale sessions [blocked by #1]\n#3 [pending] Fix log routing [blocked by #2]",
    ),
    assistant(text("Next task.")),
  ];
  const next = nextStep(messages);
  assert.match(next, /^Next: #2 Filter stale sessions \(in_progress/m);
  assert.match(next, /^- \[pending\] #3 Fix log routing$/m);
});

test("a plan whose every item is done is reported as done, not as the plan", () => {
  const messages = [
    user("add the field"),
    ...created("Add EndedAt field", "Run tests"),
    ...update("u1", "1", "completed"),
    ...update("u2", "2", "completed"),
    assistant(text("All set.")),
  ];
  const next = nextStep(messages);
  assert.match(
    next,
    /The plan is done: all 2 items of the latest TaskCreate\/TaskUpdate list completed \(the last: #2 Run tests\)/,
  );
  assert.doesNotMatch(next, /Plan \(the latest/);
  assert.doesNotMatch(next, /^Next: /m);
  const todo = [
    user("x"),
    assistant(call("t", "TodoWrite", { todos: [{ content: "a", status: "completed", activeForm: "a" }] })),
    result("t", "Todos have been modified successfully."),
    assistant(text("Finished.")),
  ];
  assert.match(
    nextStep(todo),
    /The plan is done: all 1 item of the latest TodoWrite list completed \(the last: a\)/,
  );
});

test("update_plan and TodoWrite: the first in progress, not the first pending before it", () => {
  const plan = [
    { step: "Read the parser", status: "completed" },
    { step: "Write the tests", status: "pending" },
    { step: "Fix the lexer", status: "in_progress" },
  ];
  const messages = [
    user("fix it"),
    assistant(call("p", "update_plan", { plan })),
    result("p", "Plan updated"),
  ];
  assert.match(nextStep(messages), /^Next: Fix the lexer \(in_progress/m);
});

test("a task updated after the cut (in the kept messages) updates the plan the note lists", () => {
  const span = [user("do it"), ...created("First", "Second"), ...update("u1", "1", "in_progress")];
  const following = [...update("u2", "1", "completed"), ...update("u3", "2", "in_progress")];
  const next = nextStep(span, following);
  assert.match(next, /^Next: #2 Second \(in_progress/m);
  assert.match(next, /^- \[completed\] #1 First$/m);
});

test("an earlier note's task plan is updated by the TaskUpdate calls after it", () => {
  const first = extractiveSummary({
    messages: [user("do it"), ...created("First", "Second"), ...update("u1", "1", "in_progress")],
  });
  const second = [
    { role: "user", content: [{ type: "text", text: `[compact-safe checkpoint]\n${first}` }] } as Message,
    ...update("u2", "1", "completed"),
    ...update("u3", "2", "completed"),
    assistant(text("Both done.")),
  ];
  assert.match(nextStep(second), /The plan is done: all 2 items/);
});

test("Done means a call did the work: reads alone are under way, an edit applied is done", () => {
  const reads = [
    user("fix the parser"),
    assistant(text("Let me look at the parser."), call("r1", "Read", { file_path: "/p/parser.ts" })),
    result("r1", "export function parse() {}"),
  ];
  const next = nextStep(reads);
  assert.match(next, /^Under way, not done: the last step made 1 call that changed nothing/m);
  assert.doesNotMatch(next, /^Done \(/m);
  const edit = [
    ...reads.slice(0, 1),
    assistant(
      text("Fixing the parser."),
      call("e1", "Edit", { file_path: "/p/parser.ts", old_string: "a", new_string: "b" }),
    ),
    result("e1", "The file /p/parser.ts has been updated."),
  ];
  assert.match(nextStep(edit), /^Done \(1 call ok\): changed parser\.ts/m);
});

test("not done only when the last message says what remains: 'Let me know' is no work left", () => {
  assert.equal(
    saysWhatRemains("All tests pass and the fix is in. Let me know if you want anything else."),
    false,
  );
  assert.equal(saysWhatRemains("The parser is fixed.\n\nLet me run the tests now."), true);
  assert.equal(saysWhatRemains("Fixed the lexer; the formatter is still to do."), true);
  assert.equal(saysWhatRemains("Fixed the lexer. Remaining work: the formatter."), true);
  const messages = [
    user("fix it"),
    assistant(text("Done: the fix is in and the tests pass. Let me know if you want anything else.")),
  ];
  assert.match(nextStep(messages), /^Finished, nothing pending/m);
});

/** Claude Code's compact summary, in the shape it writes (analysis scratchpad, then the numbered summary). */
const CLAUDE_SUMMARY = [
  "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.",
  "",
  "Analysis:",
  "Let me chronologically analyze the conversation:",
  "",
  "1. **Initial Request**: User asked to add session-end tracking.",
  "",
  "Summary:",
  "1. Primary Request and Intent:",
  "   The user wanted to add an `EndedAt` timestamp to session state and hooks that set it.",
  "",
  "2. Key Technical Concepts:",
  "   - Go, hooks",
  "",
  "6. All user messages:",
  '   - "keep each commit with working code please"',
  '   - "address the review comments"',
  "",
  "7. Pending Tasks:",
  "   - Update the callers in rewind.go",
  "   - Commit the changes addressing the review",
  "",
  "8. Current Work:",
  "   Editing the handlers.",
  "",
  "9. Optional Next Step:",
  "   Update the callers in rewind.go.",
].join("\n");

test("a foreign summary's request and user messages are read; its analysis is not", () => {
  const p = foreignParts(CLAUDE_SUMMARY);
  assert.match(p.objective ?? "", /^The user wanted to add an `EndedAt` timestamp/);
  assert.deepEqual(p.userMessages, [
    '"keep each commit with working code please"',
    '"address the review comments"',
  ]);
  assert.deepEqual(p.pending, [
    "Update the callers in rewind.go",
    "Commit the changes addressing the review",
  ]);
  assert.doesNotMatch(withoutAnalysis(CLAUDE_SUMMARY), /chronologically analyze/);
  assert.match(withoutAnalysis(CLAUDE_SUMMARY), /Primary Request and Intent/);
});

test("a second compaction: the earlier summary's objective is the note's, its pending work read against the span", () => {
  const messages = [
    user(CLAUDE_SUMMARY),
    assistant(
      text("Updating rewind.go."),
      call("e1", "Edit", { file_path: "/r/cmd/rewind.go", old_string: "a", new_string: "b" }),
    ),
    result("e1", "The file /r/cmd/rewind.go has been updated."),
    assistant(text("Updated the callers.")),
  ];
  const s = splitSections(extractiveSummary({ messages })).sections;
  assert.match(s.get("Objective") ?? "", /add an `EndedAt` timestamp/);
  assert.doesNotMatch(s.get("Objective") ?? "", /no plain user request/);
  const next = s.get("Next step") ?? "";
  assert.match(next, /^- \[done since: changed rewind\.go\] Update the callers in rewind\.go$/m);
  assert.match(next, /^- \[pending\] Commit the changes addressing the review$/m);
  // Once a commit succeeded after the summary, that task is done too (a read-only command does nothing).
  const committed = [
    ...messages.slice(0, -1),
    assistant(call("g0", "Bash", { command: "git status" })),
    result("g0", "On branch main"),
    assistant(call("g1", "Bash", { command: 'git commit -am "Address the review"' })),
    result("g1", "[main 1a2b3c4] Address the review\n 1 file changed"),
    assistant(text("Committed.")),
  ];
  const after = splitSections(extractiveSummary({ messages: committed })).sections.get("Next step") ?? "";
  assert.match(
    after,
    /^- \[done since: `git commit -am "Address the review"` succeeded\] Commit the changes/m,
  );
  // Not carried as current in the earlier summary's text either.
  assert.doesNotMatch(s.get("Earlier summary") ?? "", /Pending Tasks/);
});

test("an earlier summary that must be shortened loses its analysis first, never its technical summary", () => {
  const analysis = Array.from(
    { length: 120 },
    (_, i) => `${i + 2}. **Phase ${i}**: explored things at length.`,
  );
  const long = CLAUDE_SUMMARY.replace("Summary:\n", `${analysis.join("\n")}\n\nSummary:\n`);
  const note = extractiveSummary({ messages: [user(long), assistant(text("ok"))], maxTokens: 1500 });
  const earlier = splitSections(note).sections.get("Earlier summary") ?? "";
  assert.match(earlier, /Primary Request and Intent/);
  assert.match(earlier, /Current Work/);
  assert.doesNotMatch(earlier, /Phase 60/);
});

test("the LLM summarizers get the plan as it stands, delimited as data, with the same rule", async () => {
  const { buildUserPrompt } = await import("../prompt.js");
  const messages = [user("add it"), ...created("First", "Second"), ...update("u1", "1", "completed")];
  const prompt = buildUserPrompt({ messages });
  const m = /<<<PLAN (\w+) BEGIN>>>\n([\s\S]*?)\n<<<PLAN \1 END>>>/.exec(prompt);
  assert.ok(m, "a delimited plan block");
  assert.equal(m[2], "- [completed] #1 First\n- [pending] #2 Second");
  assert.match(prompt, /latest TaskCreate\/TaskUpdate state/);
  assert.doesNotMatch(buildUserPrompt({ messages: [user("no plan")] }), /<<<PLAN/);
});
