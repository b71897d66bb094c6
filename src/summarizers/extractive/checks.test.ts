/** Checks recognised by the program they run; their outcome read from their output when a pipe hides the exit status. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Block, Message } from "../../model/index.js";
import fc from "fast-check";
import { FAILURE_LINES, MAY_FAIL, checkOf, checkOfCommands, failureLineOf } from "./checks.js";
import { extractiveSummary, splitSections } from "./index.js";
import { CHECKPOINT_MARKER } from "../../contract/markers.js";

test("checkOf: a check by the program a command runs, never by a word in a path or an argument", () => {
  const checks: [string, string][] = [
    ["go test ./... | tail -20", "go test ./..."],
    ["go test ./cmd/x/ -run 'TestA|TestB' -v", "go test ./cmd/x/"],
    ["cd /w && PYTHONPATH=. pytest -q tests/x.py -k foo", "pytest tests/x.py"],
    ["python3 -m pytest tests", "pytest tests"],
    ["uv run pytest -x", "pytest"],
    ["mise run test 2>&1 | head -100", "mise run test"],
    ["npm test", "npm test"],
    ["npm run check 2>&1 | grep error", "npm run check"],
    ["npx tsc --noEmit", "tsc"],
    ["cargo test -p core -- --nocapture", "cargo test -p=core"],
    ["node --test dist/a.test.js", "node --test dist/a.test.js"],
    ["make", "make"],
    ["make check", "make check"],
    ["npx vitest run src/a.test.ts", "vitest run src/a.test.ts"],
    ["npx eslint . --fix", "eslint ."],
  ];
  for (const [cmd, key] of checks) assert.equal(checkOf(cmd)?.key, key, cmd);
  for (const cmd of [
    "grep -rn explain src/test-explain/",
    "rg 'go test' docs",
    "cat test.log | tail",
    "ls tests/",
    "echo npm test",
    "git commit -m 'fix the build and the tests'",
    "npm install",
    "make install",
    "sed -n 1,20p src/lint/rules.ts",
  ])
    assert.equal(checkOf(cmd), undefined, cmd);
});

test("checkOf: a command named like an object's own property (`constructor`, `toString`) is no check and no crash", () => {
  // The subcommand table was a plain object: `echo go; constructor x` read Object's constructor as a
  // program with subcommands and threw.
  for (const cmd of ["echo go; constructor x", "echo npm; hasOwnProperty -x y", "npm run x; toString"])
    assert.equal(checkOf(cmd), undefined, cmd);
  assert.equal(checkOf("constructor x; go test ./...")?.key, "go test ./...");
});

test("checkOf: quotes inside a word join it; redirections are no words; a heredoc's lines are read as commands", () => {
  assert.equal(checkOf(`go te"st" './pkg/'"a" 2>&1 >out.log`)?.key, "go test ./pkg/a");
  assert.equal(checkOf("FOO=1 nice npx 'jest' src &>/dev/null")?.key, "jest src");
  assert.equal(checkOf("bash <<'EOF'\ncd web\nnpm run lint\nEOF")?.key, "npm run lint");
  // A quote left open runs to the end of what is read.
  assert.equal(checkOf(`make 'test`)?.key, "make test");
  assert.equal(checkOf(`echo "npm test`), undefined);
});

/** Real shapes of each runner's output: failing, then passing. */
const FAILING: [string, string, string][] = [
  [
    "go test",
    "=== RUN   TestA\n--- FAIL: TestA (0.00s)\n    a_test.go:9: want 1\nFAIL\nFAIL\tgithub.com/o/r/pkg\t0.012s\nFAIL",
    "FAIL\tgithub.com/o/r/pkg\t0.012s",
  ],
  [
    "go build failure",
    "# github.com/o/r/pkg\npkg/a.go:3:2: undefined: x\nFAIL\tgithub.com/o/r/pkg [build failed]",
    "FAIL\tgithub.com/o/r/pkg [build failed]",
  ],
  [
    "go panic",
    "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 7 [running]:",
    "panic: runtime error: index out of range [3] with length 3",
  ],
  [
    "cargo test",
    "running 2 tests\ntest a ... ok\ntest b ... FAILED\n\nfailures:\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored",
    "test result: FAILED. 1 passed; 1 failed; 0 ignored",
  ],
  [
    "cargo build",
    "   Compiling x v0.1.0\nerror[E0425]: cannot find value `y` in this scope\n --> src/main.rs:2:5",
    "error[E0425]: cannot find value `y` in this scope",
  ],
  [
    "pytest",
    "....F\n=================== FAILURES ===================\nFAILED tests/test_a.py::test_b - assert 1 == 2\n========= 1 failed, 4 passed in 0.12s =========",
    "========= 1 failed, 4 passed in 0.12s =========",
  ],
  ["pytest -q errors", "ERROR tests/test_x.py\n2 errors in 0.57s", "2 errors in 0.57s"],
  [
    "jest",
    "FAIL src/a.test.ts\n  ● a › works\nTest Suites: 1 failed, 3 passed, 4 total\nTests:       1 failed, 12 passed, 13 total",
    "Test Suites: 1 failed, 3 passed, 4 total",
  ],
  [
    "vitest",
    " ❯ src/a.test.ts (3 tests | 1 failed) 5ms\n Test Files  1 failed | 2 passed (3)\n      Tests  1 failed | 9 passed (10)",
    "Test Files  1 failed | 2 passed (3)",
  ],
  ["node --test", "not ok 3 - parses\n# tests 10\n# pass 9\n# fail 1", "# fail 1"],
  [
    "tsc",
    "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n\nFound 1 error in src/a.ts:3",
    "Found 1 error in src/a.ts:3",
  ],
  [
    "eslint",
    "/w/src/a.ts\n  3:7  error  'x' is assigned a value but never used  no-unused-vars\n\n✖ 1 problem (1 error, 0 warnings)",
    "✖ 1 problem (1 error, 0 warnings)",
  ],
  [
    "npm test",
    "> x@1.0.0 test\n> node --test\n\nnpm error Lifecycle script `test` failed with error:\nnpm error code 1",
    "npm error Lifecycle script `test` failed with error:",
  ],
  [
    "make",
    "cc -c a.c\na.c:1:1: error: unknown type name 'x'\nmake: *** [Makefile:3: a.o] Error 1",
    "make: *** [Makefile:3: a.o] Error 1",
  ],
  [
    "python traceback",
    'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: bad',
    "Traceback (most recent call last):",
  ],
];
const PASSING: [string, string][] = [
  ["go test", "ok  \tgithub.com/o/r/pkg\t0.012s\nok  \tgithub.com/o/r/cmd\t(cached)"],
  ["cargo test", "test result: ok. 12 passed; 0 failed; 0 ignored"],
  ["pytest", "========= 5 passed in 0.12s ========="],
  ["jest", "PASS src/a.test.ts\nTests:       13 passed, 13 total"],
  ["node --test", "# tests 10\n# pass 10\n# fail 0"],
  ["tsc", ""],
  ["eslint", "✔ no problems"],
  [
    "go test names",
    "=== RUN   TestFailureIsReported\n--- PASS: TestFailureIsReported (0.00s)\nPASS\nok  \tx\t0.1s",
  ],
];

test("failureLineOf: each runner's failure summary, and nothing in a passing run", () => {
  for (const [what, out, line] of FAILING) assert.equal(failureLineOf(out), line, what);
  for (const [what, out] of PASSING) assert.equal(failureLineOf(out), undefined, what);
});

const assistant = (...content: Block[]): Message => ({ role: "assistant", content });
const bash = (id: string, command: string): Block => ({
  type: "tool_use",
  id,
  name: "Bash",
  input: { command },
});
const result = (id: string, content: string): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content }],
});
const user = (t: string): Message => ({ role: "user", content: [{ type: "text", text: t }] });

test("a piped check that printed FAIL is failing, not ok; a later pass of the same check (filtered) fixes it", () => {
  const goFail = "--- FAIL: TestParse (0.00s)\nFAIL\nFAIL\tgithub.com/o/r/parse\t0.01s\nFAIL";
  const failing: Message[] = [
    user("Fix the parser."),
    assistant(bash("a", "go test ./parse/... 2>&1 | tail -20")),
    result("a", goFail),
    assistant({ type: "text", text: "The parser test fails." }),
  ];
  const s1 = splitSections(extractiveSummary({ messages: failing })).sections;
  const next1 = s1.get("Next step") ?? "";
  assert.match(next1, /Still failing/, next1);
  assert.match(next1, /FAIL\s+github\.com\/o\/r\/parse/, next1);
  assert.doesNotMatch(s1.get("Commands run") ?? "", /→ ok/, "reported ok although its output says FAIL");
  assert.match(s1.get("Commands run") ?? "", /failed, as its output says/);

  const fixed: Message[] = [
    ...failing,
    assistant(bash("b", "go test ./parse/... -run TestParse -v")),
    result("b", "=== RUN   TestParse\n--- PASS: TestParse (0.00s)\nPASS\nok  \tgithub.com/o/r/parse\t0.01s"),
    assistant({ type: "text", text: "It passes now." }),
  ];
  const s2 = splitSections(extractiveSummary({ messages: fixed })).sections;
  const next2 = s2.get("Next step") ?? "";
  assert.doesNotMatch(next2, /Still failing/, next2);
  assert.match(s2.get("Errors") ?? "", /fixed \(a later run passed\)/);
});

test("a grep whose path names a test is no check run", () => {
  const messages: Message[] = [
    user("Where is explain defined?"),
    assistant(bash("a", "grep -rn 'func explain' cmd/test-explain/")),
    result("a", "cmd/test-explain/main.go:12:func explain() {"),
    assistant({ type: "text", text: "In cmd/test-explain/main.go." }),
  ];
  const next = splitSections(extractiveSummary({ messages })).sections.get("Next step") ?? "";
  assert.doesNotMatch(next, /last check run/, next);
});

test("a second compaction: the earlier note's failing check is not carried when the same check (unpiped) passed since", () => {
  const failing: Message[] = [
    user("Fix the parser."),
    assistant(bash("a", "go test ./parse/... 2>&1 | tail -20")),
    result("a", "--- FAIL: TestParse (0.00s)\nFAIL\tgithub.com/o/r/parse\t0.01s"),
    assistant({ type: "text", text: "The parser test fails." }),
  ];
  const first = extractiveSummary({ messages: failing });
  assert.match(splitSections(first).sections.get("Next step") ?? "", /Still failing/);
  const checkpoint = user(
    `${CHECKPOINT_MARKER}\n${first}\n\n## Coverage\nsummary; last round kept: 0 messages (0 tool results, 0 assistant); anchors 0 chars`,
  );
  const after = (cmd: string): Message[] => [
    checkpoint,
    user("Go on."),
    assistant(bash("b", cmd)),
    result("b", "ok  \tgithub.com/o/r/parse\t0.01s"),
    assistant({ type: "text", text: "It passes." }),
  ];
  const next = splitSections(
    extractiveSummary({ messages: after("go test ./parse/... -count=1") }),
  ).sections.get("Next step");
  assert.doesNotMatch(next ?? "", /Still failing/, next);
  // Another package passing says nothing of this one.
  const other = splitSections(extractiveSummary({ messages: after("go test ./lex/...") })).sections.get(
    "Next step",
  );
  assert.match(other ?? "", /Still failing/, other);
});

test("checkOf's quick test never hides a check: over generated shell lines it agrees with reading every command", () => {
  const programs = [
    "pytest",
    "py.test",
    "jest",
    "npx",
    "uv",
    "tsc",
    "vue-tsc",
    "npm",
    "pnpm",
    "make",
    "mise",
    "go",
    "cargo",
    "./gradlew",
    "gradle",
    "python",
    "python3",
    "python3.11",
    "node",
    "prettier",
    "cat",
    "grep",
    "sed",
    "rg",
    "ls",
    "git",
    "echo",
    "bash",
    "sudo",
    "env",
    "time",
    "timeout",
    "/usr/bin/pytest",
    "./node_modules/.bin/jest",
  ];
  const args = [
    "test",
    "run",
    "lint",
    "check",
    "build",
    "-m",
    "pytest",
    "--test",
    "./...",
    "-q",
    "-k",
    "foo",
    "test:unit",
    "run",
    "FOO=1",
    "x.test.ts",
    "pytest.ini",
    "--check",
    "vet",
    "-p",
    "core",
    "'npm test'",
    '"go test"',
    "2>&1",
  ];
  const seps = [" ", " && ", " || ", "; ", " | ", "\n", " & ", "(", ")", " <<EOF\n", "\t"];
  const line = fc
    .array(
      fc.tuple(
        fc.constantFrom(...programs),
        fc.array(fc.constantFrom(...args), { maxLength: 4 }),
        fc.constantFrom(...seps),
      ),
      {
        minLength: 1,
        maxLength: 5,
      },
    )
    .map((parts) => parts.map(([p, a, sep]) => [p, ...a].join(" ") + sep).join(""));
  fc.assert(
    fc.property(line, (l) => {
      assert.deepEqual(checkOf(l), checkOfCommands(l));
    }),
    { numRuns: 2000 },
  );
});

test("MAY_FAIL: every line a failure pattern takes holds one of its words (the quick test passes over no failure)", () => {
  for (const [, , line] of FAILING) assert.ok(MAY_FAIL.test(line), line);
  const fragments = [
    ...[
      "FAIL",
      "FAILED",
      "failed",
      "failing",
      "fail",
      "error",
      "errors",
      "ERROR",
      "Error",
      "E0425",
      "[E0425]",
    ],
    ...[
      "test result: ",
      "Tests:",
      "Test Suites:",
      "Test Files",
      "#",
      " ",
      "\t",
      "=",
      "1",
      "12",
      "0",
      "passed, ",
    ],
    ...[
      "Found ",
      "✖ ",
      "problems ",
      "(",
      ")",
      "make",
      "[1]",
      ": *** ",
      "--- ",
      "not ok ",
      "panic: ",
      ":",
      ",",
    ],
    ...["Traceback (most recent call last):", "exit status ", "Exit code: ", "exited with code ", "Process "],
    ...[
      "Command failed with exit code ",
      "npm ERR! ",
      "npm error ",
      "ELIFECYCLE",
      "Lifecycle script `x` failed",
    ],
    ...[
      "a.ts",
      "(1,2)",
      " - ",
      "TS2304",
      "error TS1:",
      "x",
      "pkg",
      "0.1s",
      "[build failed]",
      "[setup failed]",
    ],
  ];
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...fragments), { maxLength: 10 }), (parts) => {
      const line = parts.join("");
      if (FAILURE_LINES.some((re) => re.test(line))) assert.ok(MAY_FAIL.test(line), line);
    }),
    { numRuns: 20_000 },
  );
});

test("failureLineOf: a failure line split by colour codes is still read (the quick test is not run on coloured output)", () => {
  const esc = String.fromCharCode(27);
  assert.equal(
    failureLineOf(`ok 1\n${esc}[31mFA${esc}[0mIL${esc}[0m\tgithub.com/o/r 0.1s\n`),
    "FAIL\tgithub.com/o/r 0.1s",
  );
  assert.equal(failureLineOf("all 12 tests passed\nok\n"), undefined);
});
