/** The note tells the state of the work: the user's own words, their rules, what is fixed, and what is next. */
import { messageRefOfText } from "../../model/refs.js";
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Block, Message } from "../../model/index.js";
import { extractiveSummary, splitSections } from "./index.js";
import { isConstraint, rejectionOf, reportedPart, sentencesOf, unwrapUserText } from "./user-text.js";

const user = (t: string, meta?: Record<string, unknown>): Message => ({
  role: "user",
  content: [{ type: "text", text: t }],
  ...(meta ? { meta } : {}),
});
const assistant = (...content: Block[]): Message => ({ role: "assistant", content });
const text = (t: string): Block => ({ type: "text", text: t });
const bash = (id: string, command: string): Block => ({
  type: "tool_use",
  id,
  name: "Bash",
  input: { command },
});
const result = (id: string, content: string, is_error = false): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content, ...(is_error ? { is_error } : {}) }],
});

test("unwrapUserText: a slash command as /name args, expanded prompts and command output by their size", () => {
  assert.deepEqual(
    unwrapUserText(
      "<command-message>workflows:plan</command-message>\n<command-name>/workflows:plan</command-name>\n<command-args>add telemetry</command-args>",
    ),
    { kind: "command", text: "/workflows:plan add telemetry" },
  );
  assert.deepEqual(unwrapUserText("<command-name>/exit</command-name>"), { kind: "command", text: "/exit" });
  assert.equal(unwrapUserText("<local-command-stdout>Bye!</local-command-stdout>").kind, "output");
  const injected = unwrapUserText("# Create a plan\n\n" + "x".repeat(11_000), user("", { is_meta: true }));
  assert.equal(injected.kind, "injected");
  assert.match(injected.text, /"Create a plan", 11017 characters/);
  assert.deepEqual(unwrapUserText("fix the bug"), { kind: "direction", text: "fix the bug" });
});

test("reportedPart keeps whole sentences: a dot in a file name, a version or a URL does not end one (it cut them at it)", () => {
  assert.equal(
    reportedPart(
      "Updated src/app.ts to fix it. Let me run the tests. Version 1.2.3 works, see https://x.dev/a.b",
    ),
    "Updated src/app.ts to fix it. Version 1.2.3 works, see https://x.dev/a.b",
  );
  assert.deepEqual(sentencesOf("Done... Really?! yes.\nnext"), ["Done...", " Really?!", " yes.", "\nnext"]);
  assert.deepEqual(sentencesOf(""), []);
  // One pass: a long text without a sentence end is not read again from each of its characters.
  const long = "path/to/file.ts ".repeat(20_000);
  assert.deepEqual(sentencesOf(long), [long]);
});

test("reportedPart with a limit: the head of the whole result, whole sentences, stopped past the limit", () => {
  const text = Array.from({ length: 60 }, (_, i) =>
    i % 3 === 0 ? `Let me look at part ${i}.` : `Fixed part ${i} in src/p${i}.ts.`,
  ).join(" ");
  const whole = reportedPart(text);
  for (const max of [0, 10, 100, 457, 912]) {
    const head = reportedPart(text, max);
    assert.ok(whole.startsWith(head), `max ${max}`);
    assert.ok(head.length > max, `max ${max}: ${head.length}`);
    // No sentence more than it takes to pass the limit.
    const lastSentence = head.slice(head.lastIndexOf(" Fixed") + 1);
    assert.ok(head.length - lastSentence.length - 1 <= max, `max ${max}`);
  }
  assert.equal(reportedPart(text, whole.length), whole);
  assert.equal(reportedPart("Let me check. OK.", 5), "");
});

test("isConstraint and rejectionOf", () => {
  for (const t of [
    "no, use X",
    "don't push",
    "Keep the API",
    "I said keep it in paths",
    "never edit vendored code",
  ])
    assert.ok(isConstraint(t), t);
  for (const t of ["fix the failing test", "what does this do?"]) assert.ok(!isConstraint(t), t);
  assert.equal(
    rejectionOf(
      "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\nwe have more inbound changes coming from parent",
    ),
    "we have more inbound changes coming from parent",
  );
  assert.match(rejectionOf("[Request interrupted by user for tool use]") ?? "", /interrupted/);
  assert.equal(rejectionOf("Exit code 1"), undefined);
});

test("the note: a rejection's reason, the user's rule, a fixed error, and the unanswered request as the next step", () => {
  const reason = "we have more inbound changes coming from parent";
  const messages: Message[] = [
    user("<command-name>/review</command-name>\n<command-args>PR 42</command-args>"),
    user("# Review a pull request\n" + "Step by step instructions. ".repeat(400), { is_meta: true }),
    assistant(text("Running the tests."), bash("c1", "npm test")),
    result("c1", "Exit code 1\nFAIL parse.test.ts", true),
    assistant(text("Fixed the parser; running again."), bash("c2", "npm test")),
    result("c2", "ok, 40 passed"),
    assistant(text("Pushing."), bash("c3", "git push")),
    result(
      "c3",
      `The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n${reason}`,
      true,
    ),
    user("No, keep the branch local until parent lands."),
    assistant(text("Understood.")),
    user("Now update manual_commit_session.go to use the new API."),
  ];
  const s = splitSections(extractiveSummary({ messages })).sections;
  assert.match(s.get("Objective") ?? "", /\/review PR 42/);
  assert.ok(
    !(s.get("User direction") ?? "").includes("Step by step instructions"),
    "the expanded prompt is not quoted",
  );
  const rules = s.get("Decisions and constraints") ?? "";
  assert.ok(rules.includes(reason), rules);
  assert.ok(rules.includes("No, keep the branch local until parent lands."), rules);
  assert.match(s.get("Errors") ?? "", /`Exit code 1 — FAIL parse\.test\.ts` — fixed \(a later run passed\)/);
  const next = s.get("Next step") ?? "";
  assert.match(
    next,
    /^The user's latest request, not answered yet:\nNow update manual_commit_session\.go to use the new API\./,
  );
  assert.ok(!/Still failing/.test(next), next);
});

test("the next step is never a step the history shows done", () => {
  const messages: Message[] = [
    user("Rename the flag to --verbose."),
    assistant(text("Now update `cli.ts`:"), {
      type: "tool_use",
      id: "e1",
      name: "Edit",
      input: { file_path: "src/cli.ts", old_string: "a", new_string: "b" },
    }),
    result("e1", "The file src/cli.ts has been updated."),
  ];
  const next = splitSections(extractiveSummary({ messages })).sections.get("Next step") ?? "";
  assert.match(next, /^Done \(1 call ok\): changed cli\.ts; the step began "Now update `cli\.ts`:"\./);
  assert.match(next, /Continue the user's latest request:\nRename the flag to --verbose\./);
});

test("the next step is read to the cut: the kept last round, not only the span, says where the work stands", () => {
  const edit = (id: string, file: string): Block => ({
    type: "tool_use",
    id,
    name: "Edit",
    input: { file_path: file, old_string: "a", new_string: "b" },
  });
  const span: Message[] = [
    user("Use the constant everywhere."),
    assistant(text("Now update `session.go`:"), edit("e1", "session.go")),
    result("e1", "The file session.go has been updated."),
  ];
  const following: Message[] = [
    assistant(text("Wait - auto_commit stores BaseCommit short. Checking:"), edit("e2", "auto_commit.go")),
    result("e2", "The file auto_commit.go has been updated."),
  ];
  const sections = splitSections(extractiveSummary({ messages: span, following })).sections;
  const next = sections.get("Next step") ?? "";
  assert.match(
    next,
    /^Done \(1 call ok\): changed auto_commit\.go; the step began "Wait - auto_commit stores/,
  );
  assert.ok(!next.includes("Now update `session.go`"), next);
  // The other sections describe the span alone (the kept round is read verbatim after the note).
  assert.ok(!(sections.get("Files changed") ?? "").includes("auto_commit.go"));
  // Without what follows, the span's own last step.
  const alone = splitSections(extractiveSummary({ messages: span })).sections.get("Next step") ?? "";
  assert.match(alone, /the step began "Now update `session\.go`:"/);
});

test("a long paste is quoted by its head and its tail, with the size of the cut; a secret at its end is redacted", () => {
  const log = [
    "Here is the CI log, please fix it:",
    ...Array.from({ length: 400 }, (_, i) => `step ${i}: compiling module number ${i} of the workspace`),
    "FATAL: linker failed with token ghp_abcdefghijklmnopqrstuvwxyz0123456789 in env",
  ].join("\n");
  const note = extractiveSummary({ messages: [user(log), assistant(text("Looking."))], maxTokens: 800 });
  const dir = splitSections(note).sections.get("User direction") ?? "";
  assert.match(dir, /^User message 1\/1:\n`+\nHere is the CI log, please fix it:/);
  // The cut cites the message's ref: `recall` gives the whole paste back.
  assert.match(dir, /\[… cut \d+ chars\] \(recall msg:[0-9a-f]{12}\)\n/);
  assert.ok(
    dir.includes(`(recall ${messageRefOfText(log)})`),
    "the ref of the message as written, before redaction",
  );
  assert.match(dir, /FATAL: linker failed with token/, "the tail of the paste is kept");
  assert.ok(!note.includes("ghp_abcdefghijklmnopqrstuvwxyz0123456789"), "the secret in the tail is redacted");
});

test("an error is fixed by a later passing run of its command, open again when it fails again, never by another command", () => {
  const run = (id: string, command: string, out: string, failed: boolean): Message[] => [
    assistant(bash(id, command)),
    result(id, out, failed),
  ];
  const errors = (messages: Message[]): string =>
    splitSections(extractiveSummary({ messages: [user("Make the tests pass."), ...messages] })).sections.get(
      "Errors",
    ) ?? "";
  const fail = (id: string) => run(id, "npm test", "Exit code 1\nFAIL parse.test.ts", true);
  const lint = (id: string) => run(id, "npm run lint", "Exit code 1\nlint: 2 problems", true);
  const pass = (id: string, command = "npm test") => run(id, command, "ok", false);
  const fixed = /`Exit code 1 — FAIL parse\.test\.ts`( \(×\d+\))? — fixed/;
  assert.match(errors([...fail("a"), ...pass("b")]), fixed);
  assert.doesNotMatch(errors([...fail("a"), ...pass("b"), ...fail("c")]), fixed);
  assert.match(errors([...fail("a"), ...pass("b"), ...fail("c"), ...pass("d")]), fixed);
  const other = errors([...fail("a"), ...lint("l"), ...pass("b", "npm run build")]);
  assert.doesNotMatch(other, /fixed/);
  const mixed = errors([...fail("a"), ...lint("l"), ...pass("b")]);
  assert.match(mixed, fixed);
  assert.match(mixed, /`Exit code 1 — lint: 2 problems`(?! — fixed)/);
});

test("the note quotes the user's own words only: the harness's environment, instructions and reminders are not user direction", () => {
  const messages: Message[] = [
    user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
    user("# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nAlways run make.\n</INSTRUCTIONS>"),
    {
      role: "user",
      content: [
        { type: "text", text: "add a --dry-run flag" },
        { type: "text", text: "<system-reminder>\nPlan mode is active.\n</system-reminder>" },
      ],
    },
    assistant(text("Adding it.")),
  ];
  const s = splitSections(extractiveSummary({ messages })).sections;
  const direction = `${s.get("Objective") ?? ""}\n${s.get("User direction") ?? ""}\n${s.get("Decisions and constraints") ?? ""}`;
  assert.match(direction, /add a --dry-run flag/);
  assert.doesNotMatch(
    direction,
    /environment_context|AGENTS\.md|Always run make|system-reminder|Plan mode/,
    direction,
  );
});
