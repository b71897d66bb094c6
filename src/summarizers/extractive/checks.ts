/**
 * Checks (tests, builds, linters, type checkers) recognised by the program a
 * shell command runs, not by a word anywhere in it (`grep -r foo
 * test-explain/` runs grep, no check), and their outcome read from what they
 * print when the exit status does not say it: `go test ./... | tail` exits 0
 * when tests fail, and the tail it prints says `FAIL`. Pure.
 */

/** Characters of a shell line read: a line longer than this is read by its head. */
const LINE_CHARS = 4096;

/**
 * One simple command of a shell line: its words (quotes removed, redirections and env assignments left out).
 * Words are cut out of the line by slices (a word is built by concatenation only where a quote sits inside
 * it): a heredoc or a patch passed to a shell is read as lines of words, thousands of characters.
 */
function simpleCommands(line: string): string[][] {
  const out: string[][] = [];
  // Split on the operators that start another command (`&&`, `||`, `;`, `|`, line breaks), outside quotes.
  const end = Math.min(line.length, LINE_CHARS);
  let words: string[] = [];
  let word = "";
  let inWord = false;
  /** Where the unquoted part of the current word started (-1: none open). */
  let from = -1;
  for (let i = 0; i < end; i++) {
    const ch = line.charCodeAt(i);
    if (ch === 0x27 || ch === 0x22) {
      // ' or ": the quoted part, up to the closing quote (or the end of what is read), joins the word.
      if (from >= 0) word += line.slice(from, i);
      from = -1;
      const close = line.indexOf(ch === 0x27 ? "'" : '"', i + 1);
      const stop = close === -1 || close >= end ? end : close;
      word += line.slice(i + 1, stop);
      inWord = true;
      i = stop;
    } else if (
      ch === 0x7c || // |
      ch === 0x3b || // ;
      ch === 0x0a || // line break
      (ch === 0x26 && line.charCodeAt(i - 1) !== 0x3e) || // & (`2>&1` is a redirection, not a separator)
      ch === 0x28 || // (
      ch === 0x29 // )
    ) {
      if (from >= 0) word += line.slice(from, i);
      from = -1;
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      if (words.length > 0) out.push(keptWords(words));
      words = [];
    } else if (ch === 0x20 || ch === 0x09) {
      if (from >= 0) word += line.slice(from, i);
      from = -1;
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      if (from < 0) from = i;
      inWord = true;
    }
  }
  if (from >= 0) word += line.slice(from, end);
  if (inWord) words.push(word);
  if (words.length > 0) out.push(keptWords(words));
  return out;
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** A redirection word: digits then `<` or `>` (`2>&1`, `>out`, `<in`), or `&` and a digit. */
function isRedirection(w: string): boolean {
  let i = 0;
  while (i < w.length && isDigit(w.charCodeAt(i))) i++;
  const c = w.charCodeAt(i);
  if (c === 0x3c || c === 0x3e) return true;
  return w.length === 2 && w.charCodeAt(0) === 0x26 && isDigit(w.charCodeAt(1));
}

/** The words of a command without its redirections. */
function keptWords(words: string[]): string[] {
  let n = 0;
  for (const w of words) if (isRedirection(w)) n++;
  return n === 0 ? words : words.filter((w) => !isRedirection(w));
}

/** Words before the program that do not change which program runs. */
const PREFIX_WORDS = new Set(["sudo", "time", "env", "exec", "nice", "nohup", "command", "timeout", "xargs"]);
/** Runners that run the program named after them (`npx jest`, `uv run pytest`, `poetry run mypy`). */
const LAUNCHERS = new Set(["npx", "pnpx", "bunx", "dlx"]);
const RUN_VIA = new Set(["uv", "poetry", "pipenv", "hatch", "pdm", "rye", "bundle"]);

/** Programs that check the work whatever their arguments. */
const CHECK_PROGRAMS = new Set([
  "pytest",
  "py.test",
  "tox",
  "nox",
  "jest",
  "vitest",
  "mocha",
  "ava",
  "tap",
  "playwright",
  "tsc",
  "vue-tsc",
  "eslint",
  "biome",
  "ruff",
  "mypy",
  "pyright",
  "flake8",
  "pylint",
  "golangci-lint",
  "staticcheck",
  "rspec",
  "phpunit",
  "ctest",
  "clippy-driver",
  "shellcheck",
  "swiftlint",
  "ktlint",
]);
/** A script or target name that checks the work (`npm run typecheck`, `make test`, `mise run lint`). */
const CHECK_NAME =
  /^(?:test|tests|check|checks|lint|build|typecheck|type-check|types|tsc|verify|ci|vet|e2e|spec|unit|integration)(?:[:._-][\w:.-]*)?$/i;
/** Subcommands that check: `go test`, `cargo clippy`, `deno test`, `dotnet build`, … */
/** A map, not an object: a word such as `constructor` names no program here. */
const CHECK_SUBCOMMANDS: ReadonlyMap<string, RegExp> = new Map([
  ["go", /^(?:test|build|vet)$/],
  ["cargo", /^(?:test|build|check|clippy|nextest|fmt)$/],
  ["deno", /^(?:test|check|lint)$/],
  ["bun", /^test$/],
  ["dotnet", /^(?:test|build)$/],
  ["swift", /^(?:test|build)$/],
  ["mvn", /^(?:test|verify|package|compile)$/],
  ["gradle", /^(?:test|build|check)$/],
  ["./gradlew", /^(?:test|build|check)$/],
  ["mix", /^test$/],
  ["zig", /^(?:test|build)$/],
  ["prettier", /^(?:--check|-c)$/],
]);
/** Package runners whose script names say whether it checks (`npm test`, `pnpm run lint`, `yarn build`). */
const SCRIPT_RUNNERS = new Set([
  "npm",
  "pnpm",
  "yarn",
  "bun",
  "mise",
  "just",
  "make",
  "task",
  "nx",
  "turbo",
  "rake",
]);

/** What a check is, for comparing runs: its program and subcommand or script, and its targets (no flags). */
export interface Check {
  /** The program, its check word and its non-flag arguments, space-separated (`go test ./pkg/...`). */
  key: string;
}

/** A filter or setting whose value is the next word (`-run X`, `-k X`, `--grep X`): left out of the key. */
const FILTER_WITH_VALUE =
  /^(?:-run|-skip|-k|-m|-t|--grep|--testNamePattern|--test-name-pattern|--test-name|--timeout|-timeout|-count|-tags|--reporter|-n|-j|--jobs|--maxfail|--tb)$/;
/** A flag naming what is checked, whose value is the next word (`-p core`, `--filter web`): kept in the key. */
const TARGET_WITH_VALUE =
  /^(?:-p|--package|--project|--workspace|-w|-C|--filter|-F|-f|--file|--config|-c|--features|--target|--manifest-path|--dir|--prefix)$/;

const escapeName = (n: string) => n.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/**
 * A word that `checkOfWords` could take for the program of a check: a check
 * program, a runner of scripts, a program with checking subcommands, python
 * or node. A line without one runs no check, and is not split into commands
 * at all (most commands an agent runs read or edit files).
 */
const MAY_CHECK = new RegExp(
  String.raw`(?:^|[^\w.-])(?:python|node(?![\w.-])|(?:` +
    [
      ...CHECK_PROGRAMS,
      ...SCRIPT_RUNNERS,
      ...[...CHECK_SUBCOMMANDS.keys()].map((k) => k.replace(/^\.\//, "")),
    ]
      .map(escapeName)
      .join("|") +
    String.raw`)(?![\w.-]))`,
);

/** The check a shell line runs, or undefined when it runs none (the first check of the line). */
export function checkOf(line: string): Check | undefined {
  return MAY_CHECK.test(line.length > LINE_CHARS ? line.slice(0, LINE_CHARS) : line)
    ? checkOfCommands(line)
    : undefined;
}

/** `checkOf` without the quick test of `MAY_CHECK`: every simple command of the line read (exported for tests). */
export function checkOfCommands(line: string): Check | undefined {
  for (const words of simpleCommands(line)) {
    const c = checkOfWords(words);
    if (c !== undefined) return c;
  }
  return undefined;
}

/** Whether a shell line runs a check. */
export function isCheckCommand(line: string): boolean {
  return checkOf(line) !== undefined;
}

/** An environment assignment (`FOO=1`). */
const isAssignment = (w: string): boolean => w.includes("=") && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w);

/** `python`, `python3`, `python3.12`. */
const PYTHON = /^python(?:\d(?:\.\d+)?)?$/;

function checkOfWords(all: readonly string[]): Check | undefined {
  let i = 0;
  // Environment assignments and prefixes that only change how the program runs.
  while (i < all.length && (isAssignment(all[i]!) || PREFIX_WORDS.has(all[i]!))) i++;
  while (i < all.length && (LAUNCHERS.has(all[i]!) || (RUN_VIA.has(all[i]!) && all[i + 1] === "run"))) {
    i += LAUNCHERS.has(all[i]!) ? 1 : 2;
    while (i < all.length && all[i]!.startsWith("-")) i++;
  }
  const prog = all[i];
  if (prog === undefined) return undefined;
  const name = prog.includes("/") ? prog.replace(/^.*\//, "") : prog;
  const python = name.startsWith("python") && PYTHON.test(name);
  const sub = CHECK_SUBCOMMANDS.get(name) ?? CHECK_SUBCOMMANDS.get(prog);
  // Most commands run no program that checks: they are passed over before their arguments are read.
  if (
    !python &&
    name !== "node" &&
    sub === undefined &&
    !CHECK_PROGRAMS.has(name) &&
    !SCRIPT_RUNNERS.has(name)
  )
    return undefined;
  const rest = all.slice(i + 1);
  const targets = (from: readonly string[]): string[] => {
    const out: string[] = [];
    for (let k = 0; k < from.length; k++) {
      const w = from[k]!;
      if (w.startsWith("-")) {
        if (w.includes("=")) {
          if (TARGET_WITH_VALUE.test(w.slice(0, w.indexOf("=")))) out.push(w);
        } else if (TARGET_WITH_VALUE.test(w) && k + 1 < from.length) out.push(`${w}=${from[++k]!}`);
        else if (FILTER_WITH_VALUE.test(w)) k++;
        continue;
      }
      out.push(w);
    }
    return out;
  };
  // `python -m pytest`, `python3 -m mypy`.
  if (python && rest[0] === "-m" && rest[1] !== undefined) {
    const mod = rest[1];
    if (CHECK_PROGRAMS.has(mod) || mod === "unittest" || mod === "compileall")
      return { key: [mod, ...targets(rest.slice(2))].join(" ") };
    return undefined;
  }
  if (name === "node" && rest.includes("--test")) return { key: ["node --test", ...targets(rest)].join(" ") };
  if (CHECK_PROGRAMS.has(name)) return { key: [name, ...targets(rest)].join(" ") };
  const args = targets(rest);
  if (sub !== undefined) {
    const word = rest.find((w) => !w.startsWith("-") || sub.test(w));
    if (word !== undefined && sub.test(word)) return { key: [name, ...args].join(" ") };
  }
  if (SCRIPT_RUNNERS.has(name)) {
    // `npm test`, `npm run test:unit`, `mise run lint`, `make check`, `just test`.
    const script = args[0] === "run" || args[0] === "run-script" ? args[1] : args[0];
    if (name === "make" && script === undefined) return { key: "make" };
    if (script !== undefined && CHECK_NAME.test(script)) return { key: [name, ...args].join(" ") };
  }
  return undefined;
}

/**
 * A line of a check's output that says it failed: a runner's failure summary
 * (`FAIL`, `--- FAIL:`, `N failed`, `test result: FAILED`, `# fail N`,
 * `Tests: N failed`), a compiler's or linter's `error:` / `error TS…`, a
 * panic or a traceback, or a non-zero exit the output itself reports. The
 * first such line, trimmed; undefined when none (counts of zero are no
 * failure).
 */
export function failureLineOf(output: string): string | undefined {
  // Runner summaries sit at the end of long outputs: read the head and the tail.
  const text = output.length <= 65_536 ? output : `${output.slice(0, 16_384)}\n${output.slice(-49_152)}`;
  // Most outputs of a passing check hold no word a failure line needs: one search rules them out (a
  // colour code could split such a word, so an output with one is read line by line).
  const coloured = text.includes(ESC);
  if (!coloured && !MAY_FAIL.test(text)) return undefined;
  let found: string | undefined;
  let rank = Number.MAX_SAFE_INTEGER;
  for (const raw of text.split("\n")) {
    const line = (coloured ? raw.replace(ANSI_COLOUR, "") : raw).trim();
    if (line === "" || line.length > 2_000 || !MAY_FAIL.test(line)) continue;
    for (let r = 0; r < FAILURE_LINES.length && r < rank; r++) {
      if (FAILURE_LINES[r]!.test(line)) {
        found = line;
        rank = r;
        break;
      }
    }
    if (rank === 0) break;
  }
  return found;
}

/** Terminal colour codes (runners colour their verdicts). */
const ESC = String.fromCharCode(27);
const ANSI_COLOUR = new RegExp(`${ESC}\\[[0-9;]*m`, "g");

/**
 * A word that every line of `FAILURE_LINES` holds, in some case: a line without one is no failure line
 * (a test in checks.test.ts holds each pattern to it).
 */
export const MAY_FAIL = /fail|error|exit|panic|traceback|not ok|npm |elifecycle/i;

/**
 * Failure lines, the most telling first (a summary over a detail): the first
 * line of the best kind found is the one quoted.
 */
export const FAILURE_LINES: readonly RegExp[] = [
  // Summaries: go, cargo, pytest, jest, vitest, node --test / TAP, mocha, tsc, eslint.
  /^FAIL\s+\S+\s+(?:[\d.]+s|\[build failed\]|\[setup failed\])$/,
  /^test result: FAILED\b/,
  /^=*\s*(?:\d+ (?:passed|skipped|deselected|warnings?), )*[1-9]\d* (?:failed|errors?)\b/,
  /^(?:Tests|Test Suites|Test Files):?\s+[1-9]\d* failed\b/,
  /^#\s*fail\s+[1-9]\d*$/,
  /^[1-9]\d* failing$/,
  /^Found [1-9]\d* errors?\b/,
  /^✖ [1-9]\d* problems? \([1-9]\d* errors?/,
  /\b(?:Lifecycle script `[^`]+` failed|ELIFECYCLE)\b/,
  /^make(?:\[\d+\])?: \*\*\* .*Error \d+/,
  // Details: a failed test, a compile error, a panic, a traceback, an exit the output reports.
  /^--- FAIL: /,
  /^(?:FAILED|ERROR) \S/,
  /^not ok \d+ /,
  /^FAIL\s+\S/,
  /^(?:error|ERROR)(?:\[E\d+\])?: /,
  /^\S+\(\d+,\d+\): error TS\d+:|^\S+:\d+:\d+ - error TS\d+:|^error TS\d+:/,
  /^\d+:\d+\s+error\s/,
  /^panic: /,
  /^Traceback \(most recent call last\):$/,
  /^(?:exit status|Exit code:?|exited with code|Process exited with code|Command failed with exit code) [1-9]\d*$/i,
  /^npm ERR! |^npm error /,
  // Go's bare verdict line, when nothing says more.
  /^FAIL$/,
];
