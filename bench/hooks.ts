/**
 * `npm run bench:hooks`: how long each hook recipe of `examples/hooks/` keeps
 * its agent waiting on a session of at least 5 MB (the bar: 1 s). Each
 * session is made of corpus sessions of that agent put end to end in a
 * temporary folder (the corpus is only read), ending with a compaction the
 * hook audits. Each hook runs as its agent runs it (a child process, its JSON
 * input on stdin), five times; the median and the slowest run are printed.
 * Exits 1 when a median passes the bar, 2 when the corpus is missing.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { corpusDir, repoRoot } from "../test/support.js";

const BAR_MS = 1000;
const MIN_BYTES = 5 * 1024 * 1024;
const RUNS = 5;

interface HookCase {
  name: string;
  hook: string;
  /** Builds the session in `dir`; returns its path. */
  session(dir: string): string;
  input(session: string, dir: string): unknown;
  /** What the hook must print for the run to count (it did its work). */
  expect: RegExp;
}

/** Corpus files of one agent, end to end (repeated until MIN_BYTES), then `tail`. */
function endToEnd(dir: string, name: string, files: string[], tail: string): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < MIN_BYTES; i++) {
    const text = readFileSync(join(corpusDir, files[i % files.length]!), "utf8");
    parts.push(text.endsWith("\n") ? text : `${text}\n`);
    size += Buffer.byteLength(text);
  }
  const file = join(dir, name);
  writeFileSync(file, parts.join("") + tail);
  return file;
}

const CASES: HookCase[] = [
  {
    name: "Claude Code SessionStart (compact)",
    hook: "claude-code-session-start.mjs",
    // The largest session last: its own compaction is the one audited.
    session: (dir) =>
      endToEnd(
        dir,
        "cc.jsonl",
        ["claude-code/entire-98-78b713483d-0.jsonl", "claude-code/entire-cd-95adddad32-0.jsonl"],
        "",
      ),
    input: (session, dir) => ({
      hook_event_name: "SessionStart",
      source: "compact",
      transcript_path: session,
      cwd: dir,
    }),
    expect: /survival contract/,
  },
  {
    name: "Codex PostCompact",
    hook: "codex-post-compact.mjs",
    session: (dir) =>
      endToEnd(
        dir,
        "rollout.jsonl",
        [
          "codex/openprintkit-rollout-2025-10-31T19-02-58.jsonl",
          "codex/coda-rollout-2025-10-04T22-31-15.jsonl",
          "codex/moonmind-rollout-2025-11-12T17-48-11.jsonl",
        ],
        // A compaction that kept nothing but its summary, as Codex records one.
        JSON.stringify({
          timestamp: "2026-12-01T00:00:00.000Z",
          type: "compacted",
          payload: { message: "summary", replacement_history: [] },
        }) + "\n",
      ),
    input: (session, dir) => ({
      hook_event_name: "PostCompact",
      trigger: "auto",
      transcript_path: session,
      cwd: dir,
    }),
    expect: /survival contract/,
  },
];

function main(): number {
  if (!existsSync(corpusDir)) {
    console.error(`bench:hooks: the corpus is not at ${corpusDir}`);
    return 2;
  }
  const dir = mkdtempSync(join(tmpdir(), "cs-bench-hooks-"));
  let failed = 0;
  try {
    for (const c of CASES) {
      const session = c.session(dir);
      const mb = statSync(session).size / (1024 * 1024);
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const started = process.hrtime.bigint();
        const r = spawnSync(process.execPath, [join(repoRoot, "examples", "hooks", c.hook)], {
          input: JSON.stringify(c.input(session, dir)),
          encoding: "utf8",
        });
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
        if (r.status !== 0 || !c.expect.test(r.stdout)) {
          console.error(
            `bench:hooks: ${c.name}: the hook did not report a verdict (exit ${r.status}): ${r.stderr.trim()}`,
          );
          return 1;
        }
      }
      times.sort((a, b) => a - b);
      const median = times[Math.floor(RUNS / 2)]!;
      const ok = median <= BAR_MS;
      if (!ok) failed++;
      console.log(
        `${ok ? "ok  " : "FAIL"} ${c.name.padEnd(36)} ${mb.toFixed(1)} MB  median ${median.toFixed(0)} ms  slowest ${times.at(-1)!.toFixed(0)} ms  (bar ${BAR_MS} ms)`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `bench:hooks: ${CASES.length - failed}/${CASES.length} hooks within ${BAR_MS} ms on a session of 5 MB or more`,
  );
  return failed === 0 ? 0 : 1;
}

process.exitCode = main();
