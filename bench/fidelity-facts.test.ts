import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../src/model/index.js";
import {
  appears,
  continuationCues,
  directionOf,
  distinctiveWords,
  errorFirstLine,
  fileFact,
  followingWorkText,
  historyFacts,
  keptFacts,
  messagesText,
  nextStepHit,
  nextStepNamed,
  nextStepText,
  userDirection,
} from "./fidelity-facts.js";

const user = (text: string, meta?: Record<string, unknown>): Message => ({
  role: "user",
  content: [{ type: "text", text }],
  ...(meta ? { meta } : {}),
});
const call = (id: string, name: string, input: unknown): Message => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name, input }],
});
const result = (id: string, content: string, extra: Record<string, unknown> = {}): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content, ...extra }],
});

const CWD = "/home/u/proj";

/** A small Claude Code-like history with every kind of fact, and a few things that are not facts. */
const HISTORY: Message[] = [
  user("Please add a --verbose flag to the CLI and keep the API stable"),
  call("c1", "Edit", { file_path: "/home/u/proj/src/cli/main.ts", old_string: "a", new_string: "b" }),
  result("c1", "ok"),
  call("c2", "Write", { file_path: "docs/verbose.md", content: "--- a/x\n+++ b/not-a-change.ts\n@@ x" }),
  result("c2", "ok"),
  call("c3", "Bash", { command: "npm test", description: "Run the tests" }),
  result("c3", "Exit code 1\nFAIL src/cli/main.test.ts", { is_error: true }),
  call("c4", "edit", { path: "src/cli/options.ts", oldText: "x", newText: "y" }),
  result("c4", "<tool_use_error>String to replace not found in file.</tool_use_error>", { is_error: true }),
  call("c5", "apply_patch", {
    input: "*** Begin Patch\n*** Update File: src/engine/x.ts\n@@\n-a\n+b\n*** End Patch",
  }),
  result("c5", "ok"),
  call("c6", "Read", { file_path: "/home/u/proj/README.md" }),
  result("c6", "[abandoned]", { is_error: true, synthetic: true }),
  user(
    "<command-message>review</command-message>\n<command-name>/review</command-name>\n<command-args>PR 12</command-args>",
  ),
  user("# Review Command\n\nThe expanded prompt of the slash command, 11,000 characters long", {
    is_meta: true,
  }),
  user("<local-command-stdout>Bye!</local-command-stdout>"),
  user("[Request interrupted by user for tool use]"),
  user("<bash-input>git status</bash-input>"),
  user("Ran `npm run check`\n(no output)", { bash_execution: { command: "npm run check", exit_code: 0 } }),
  user("<system-reminder>a reminder</system-reminder>no, use    commander   instead"),
  call("c7", "exec_command", { cmd: "git diff --stat" }),
  result("c7", '{"output":"fatal: not a git repository\\nmore","metadata":{"exit_code":128}}', {
    is_error: true,
  }),
  user("Please add a --verbose flag to the CLI and keep the API stable"),
];

test("appears: a match must stand on its own, except at the cut end of a head", () => {
  assert.equal(appears("ok", "look here"), false);
  assert.equal(appears("ok", "it is ok."), true);
  assert.equal(appears("main.ts", "see src/cli/main.ts:12"), true);
  assert.equal(appears("main.ts", "see domain.ts"), false);
  assert.equal(appears("do we have it at this po", "do we have it at this point?"), false);
  assert.equal(appears("do we have it at this po", "do we have it at this point?", true), true);
  assert.equal(appears("", "anything"), false);
});

test("userDirection: wrappers unwrapped, output and markers are no direction", () => {
  assert.equal(
    userDirection(
      "<command-message>x</command-message><command-name>/workflows:review</command-name><command-args>https://e/pull/2</command-args>",
    ),
    "/workflows:review https://e/pull/2",
  );
  assert.equal(userDirection("<command-name>/exit</command-name><command-args></command-args>"), "/exit");
  assert.equal(userDirection("<local-command-caveat>Caveat: …</local-command-caveat>"), undefined);
  assert.equal(userDirection("<bash-stdout>done</bash-stdout><bash-stderr></bash-stderr>"), undefined);
  assert.equal(userDirection("[Request interrupted by user]"), undefined);
  assert.equal(userDirection("<system-reminder>x</system-reminder>\nfix it"), "fix it");
  assert.equal(directionOf(result("a", "text")), undefined);
  assert.equal(
    directionOf(
      user(
        "[compact-safe checkpoint]\nx\n\n## Coverage\nsummary; last round kept: 1 messages (0 tool results, 0 assistant); anchors 0 chars\n",
      ),
    ),
    undefined,
  );
});

test("errorFirstLine: the first non-blank line, wrappers removed", () => {
  assert.equal(errorFirstLine("\n\nExit code 1\nmore"), "Exit code 1");
  assert.equal(
    errorFirstLine("<tool_use_error>File has not been read yet.</tool_use_error>"),
    "File has not been read yet.",
  );
  assert.equal(errorFirstLine('{"output":"boom\\nrest","metadata":{"exit_code":1}}'), "boom");
  assert.equal(errorFirstLine("Exit code: 2\nWall time: 1 s\nOutput:\nno such file\n"), "no such file");
  assert.equal(errorFirstLine("   \n"), undefined);
});

test("fileFact: relative to the cwd, absolute joined to it", () => {
  assert.deepEqual(fileFact("/home/u/proj/src/a.ts", CWD), {
    path: "/home/u/proj/src/a.ts",
    base: "a.ts",
    rel: "src/a.ts",
    abs: "/home/u/proj/src/a.ts",
  });
  assert.deepEqual(fileFact("src/a.ts", CWD), {
    path: "src/a.ts",
    base: "a.ts",
    rel: "src/a.ts",
    abs: "/home/u/proj/src/a.ts",
  });
  // Outside the cwd: the relative form is the path as written.
  assert.equal(fileFact("/etc/hosts", CWD).rel, "/etc/hosts");
  assert.equal(fileFact("src/a.ts", undefined).abs, "src/a.ts");
});

test("historyFacts: files, directions, errors, commands and the last instruction of a hand-made history", () => {
  const f = historyFacts(HISTORY, CWD);
  assert.deepEqual(
    f.files.map((x) => x.rel),
    ["src/cli/main.ts", "docs/verbose.md", "src/cli/options.ts", "src/engine/x.ts"],
  );
  assert.deepEqual(f.directions, [
    "Please add a --verbose flag to the CLI and keep the API stable",
    "/review PR 12",
    "no, use    commander   instead",
  ]);
  assert.deepEqual(f.errors, [
    "Exit code 1",
    "String to replace not found in file.",
    "fatal: not a git repository",
  ]);
  assert.deepEqual(f.commands, ["npm test", "git status", "npm run check", "git diff --stat"]);
  assert.equal(f.lastInstruction, "Please add a --verbose flag to the CLI and keep the API stable");
});

test("keptFacts: files by basename, relative and absolute path; heads of directions; the last instruction verbatim", () => {
  const f = historyFacts(HISTORY, CWD);
  const summary = [
    "Edited `main.ts` and /home/u/proj/src/cli/options.ts; wrote docs/verbose.md.",
    "User: /review PR 12. They said: no, use commander instead.",
    "Errors: Exit code 1; String to replace not found in file.",
    "Ran: npm test, git diff --stat",
  ].join("\n");
  const k = keptFacts(f, summary);
  assert.deepEqual(k.files_basename, { kept: 3, total: 4 });
  assert.deepEqual(k.files_relative, { kept: 2, total: 4 });
  assert.deepEqual(k.files_absolute, { kept: 1, total: 4 });
  assert.deepEqual(k.missed.files, ["src/cli/main.ts", "src/engine/x.ts"]);
  assert.deepEqual(k.directions, { kept: 2, total: 3 });
  assert.deepEqual(k.errors, { kept: 2, total: 3 });
  assert.deepEqual(k.commands, { kept: 2, total: 4 });
  assert.equal(k.last_instruction, false);
  // The whole last instruction, re-flowed over two lines, is verbatim; its head alone is not.
  const again = keptFacts(f, "> Please add a --verbose flag to the CLI\n> and keep the API stable");
  assert.equal(again.last_instruction, false); // the quote markers break it
  assert.equal(
    keptFacts(f, "Please add a --verbose flag to the CLI\nand keep the API stable").last_instruction,
    true,
  );
  assert.equal(keptFacts(f, "Please add a --verbose flag to the CLI").last_instruction, false);
  assert.equal(
    keptFacts(historyFacts([call("x", "Bash", { command: "ls" })], CWD), "").last_instruction,
    null,
  );
});

test("keptFacts: a long direction is kept by its first 60 characters, cut mid-word", () => {
  const long = "how about including the commit sha? Do we have it at this point? And what about the tag?";
  const f = historyFacts([user(long)], CWD);
  assert.equal(
    keptFacts(f, "- how about including the commit sha? Do we have it at this point?").directions.kept,
    1,
  );
  assert.equal(keptFacts(f, "- how about including the commit sha?").directions.kept, 0);
  // Short directions are not found inside other words.
  assert.equal(keptFacts(historyFacts([user("ok")], CWD), "look, it works").directions.kept, 0);
});

test("messagesText: texts, tool inputs and results", () => {
  const text = messagesText([call("a", "Bash", { command: "make", nested: ["x.ts"] }), result("a", "done")]);
  assert.deepEqual(text.split("\n"), ["make", "x.ts", "done"]);
});

test("nextStepText: Claude Code's, pi's and compact-safe's layouts, and the fallbacks", () => {
  const claude = [
    "Summary:",
    "8. Current Work:",
    "   Was editing auth.go",
    "",
    "9. Optional Next Step:",
    "   Run the tests for auth.go.",
    "   1. Then commit.",
    "",
    "If you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: /x.jsonl",
    "Please continue the conversation from where we left it off without asking the user any further questions. Continue with the last task that you were asked to work on.",
  ].join("\n");
  assert.equal(nextStepText(claude), "Run the tests for auth.go.\n   1. Then commit.");
  // Claude Code's resume instructions are no next step, even as the last paragraph.
  assert.equal(
    nextStepText("Did X.\n\nPlease continue the conversation from where we left it off without asking."),
    "Did X.",
  );
  const pi =
    "## Progress\n### Done\n- a\n## Next Steps\n### First\n1. Wire the hook\n## Critical Context\n- b";
  assert.equal(nextStepText(pi), "### First\n1. Wire the hook");
  const own = "## Objective\nx\n## Next step\nNow update `manual_commit_session.go`:";
  assert.equal(nextStepText(own), "Now update `manual_commit_session.go`:");
  // A note's own section, not the numbered one of an earlier summary it quotes further down.
  const folded = `## Next step\nRun the lint.\n## Earlier summary\n${claude}`;
  assert.equal(nextStepText(folded), "Run the lint.");
  assert.equal(nextStepText("## Goal\nx\n## Pending\nfix the parser\n## Notes\ny"), "fix the parser");
  assert.equal(nextStepText("10. **Current Work**: fixing the lexer\n\nmore"), "fixing the lexer\n\nmore");
  assert.equal(nextStepText("First paragraph.\n\nThen the last one."), "Then the last one.");
});

test("continuationCues and nextStepHit: paths by basename, commands, distinctive words; folders and stop words are not work", () => {
  const after: Message[] = [
    user("go on"),
    call("a", "Read", { file_path: "/home/u/proj/packages/agent/src/session.ts" }),
    result("a", "..."),
    call("b", "Bash", { command: "npm run check", description: "Typecheck after the refactoring" }),
    result("b", "ok"),
    {
      role: "assistant",
      content: [
        { type: "tool_use", id: "c", name: "Grep", input: { pattern: "resolveApiKey" } },
        { type: "tool_use", id: "d", name: "Grep", input: { pattern: "one" } },
        { type: "tool_use", id: "e", name: "Grep", input: { pattern: "two" } },
        { type: "tool_use", id: "f", name: "Grep", input: { pattern: "sixthcallword" } },
      ],
    },
  ];
  const cues = continuationCues(after);
  assert.equal(cues.calls, 5);
  assert.deepEqual(cues.paths, ["/home/u/proj/packages/agent/src/session.ts"]);
  assert.deepEqual(cues.commands, ["npm run check"]);
  assert.deepEqual(cues.words.sort(), ["refactoring", "resolveapikey", "typecheck"]);
  assert.equal(nextStepHit("Look at session.ts next", cues), "path session.ts");
  assert.equal(nextStepHit("then `npm run check`", cues), "command npm run check");
  assert.equal(nextStepHit("Add resolveApiKey to the event", cues), "word resolveapikey");
  assert.equal(nextStepHit("Continue with the packages; should be quick", cues), undefined);
  assert.equal(nextStepHit("sixthcallword", cues), undefined);
  assert.equal(nextStepHit("anything", continuationCues([])), undefined);
  assert.deepEqual(distinctiveWords("cd /a/packages/coding && run manual_commit_session tests"), [
    "manual_commit_session",
  ]);
});

test("historyFacts: a rejected call's words are a direction, its boilerplate no error", () => {
  const f = historyFacts(
    [
      { role: "user", content: [{ type: "text", text: "push it" }] },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "p", name: "Bash", input: { command: "git push" } }],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "p",
            is_error: true,
            content:
              "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\nwe have more inbound changes coming from parent",
          },
        ],
      },
    ],
    CWD,
  );
  assert.deepEqual(f.directions, ["push it", "we have more inbound changes coming from parent"]);
  assert.deepEqual(f.errors, []);
});

test("followingWorkText: every next-step, pending, current-work or plan section, for both sides' layouts", () => {
  const claude = [
    "1. Primary Request:",
    "   Port it.",
    "7. Pending Tasks:",
    "   - update callers in cmd/root.go",
    "8. Current Work:",
    "   Editing hooks.go",
    "9. Optional Next Step:",
    "   Run go test ./...",
  ].join("\n");
  const t = followingWorkText(claude);
  assert.match(t, /cmd\/root\.go/);
  assert.match(t, /hooks\.go/);
  assert.match(t, /go test/);
  assert.doesNotMatch(t, /Port it/);
  const note =
    "## Objective\nPort it.\n## Plan\n- [ ] wire src/b.ts\n## Next step\nEdit src/a.ts.\n## Files changed\n- src/c.ts";
  const n = followingWorkText(note);
  assert.match(n, /src\/b\.ts/);
  assert.match(n, /src\/a\.ts/);
  assert.doesNotMatch(n, /src\/c\.ts|Port it/);
  // No such section: the last paragraph, as nextStepText reads it.
  assert.equal(followingWorkText("Did things.\n\nThen run make."), "Then run make.");
});

test("nextStepNamed: a file by basename or a command by its head or program and argument; words alone do not count", () => {
  const cues = {
    calls: 3,
    paths: ["/repo/src/engine/compact.ts"],
    commands: ["cd /repo && npm test -- --grep budget", "git status"],
    words: ["summarybudget"],
  };
  assert.equal(nextStepNamed("Edit compact.ts next.", cues), "path compact.ts");
  assert.equal(nextStepNamed("Then run `npm test` again.", cues), "command npm test");
  assert.equal(nextStepNamed("Check git status.", cues), "command git status");
  assert.equal(nextStepNamed("Look at summarybudget again.", cues), undefined);
  assert.equal(nextStepNamed("Edit compact.tsx", cues), undefined);
  assert.equal(nextStepNamed("finished, nothing pending", cues), undefined);
});
