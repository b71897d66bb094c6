/**
 * `npm run bench:hooks`: how long each hook (`compact-safe hook claude-code`,
 * `hook codex`, and pi's extension, `extensions/compact-safe.js`) keeps
 * its agent waiting on a session of at least 5 MB (the bar: 1 s). Claude
 * Code's and Codex's sessions are corpus sessions of that agent put end to
 * end in a temporary folder (the corpus is only read), ending with a
 * compaction the hook audits; pi's is generated (its corpus sessions are
 * under 5 MB). Each hook runs as its agent runs it, five times: a command
 * hook (Claude Code, Codex) as a child process with its JSON input on stdin,
 * timed to its exit; pi's extension in process, its `session_compact`
 * handler timed until it returns to pi (its verdict must still be recorded).
 * The median and the slowest run are printed. Exits 1 when a median passes
 * the bar or a hook reports no verdict, 2 when the corpus is missing.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliPath, corpusDir } from "../test/support.js";
import { claudeCodeSession, codexSession, piSession } from "./hook-sessions.js";
import { context, lastCompaction, loadExtension } from "../test/pi-extension.js";

const BAR_MS = 1000;
const RUNS = 5;

interface HookCase {
  name: string;
  /** Builds the session in `dir`; returns its path. */
  session(dir: string): string;
  /**
   * Runs the hook once; calls `returned` when the agent would go on, if that comes before the hook
   * ends (otherwise the whole run is timed). Resolves with a reason when the hook did not do its work.
   */
  run(session: string, dir: string, returned: () => void): Promise<string | undefined>;
}

/** A command hook, run as Claude Code and Codex run one: a child process, its input on stdin. */
function commandHook(agent: string, input: (session: string, dir: string) => unknown): HookCase["run"] {
  return async (session, dir) => {
    const r = spawnSync(process.execPath, [cliPath, "hook", agent], {
      input: JSON.stringify(input(session, dir)),
      encoding: "utf8",
      cwd: dir,
    });
    // Its answer: a verdict on the compaction, or the last round restated.
    return r.status === 0 && /survival contract|the last round before this compaction/.test(r.stdout)
      ? undefined
      : `exit ${r.status}: ${r.stderr.trim() || r.stdout.trim() || "no output"}`;
  };
}

const CASES: HookCase[] = [
  {
    name: "Claude Code SessionStart (compact)",
    session: claudeCodeSession,
    run: commandHook("claude-code", (session, dir) => ({
      hook_event_name: "SessionStart",
      source: "compact",
      transcript_path: session,
      cwd: dir,
    })),
  },
  {
    name: "Codex PostCompact",
    session: codexSession,
    run: commandHook("codex", (session, dir) => ({
      hook_event_name: "PostCompact",
      trigger: "auto",
      transcript_path: session,
      cwd: dir,
    })),
  },
  {
    name: "pi session_compact (extension)",
    session: (dir) => piSession(dir).file,
    run: async (session, dir, returned) => {
      process.env.COMPACT_SAFE_BIN = cliPath;
      const pi = await loadExtension();
      await pi.handlers.get("session_compact")!(
        {
          type: "session_compact",
          compactionEntry: lastCompaction(readFileSync(session, "utf8")),
          fromExtension: false,
        },
        context(pi, session, dir),
      );
      returned(); // pi goes on here; the verdict is recorded in the background
      await pi.recorded;
      return pi.entries.length === 1 ? undefined : "no verdict recorded";
    },
  },
];

async function main(): Promise<number> {
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
        const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
        let held: number | undefined;
        const problem = await c.run(session, dir, () => (held = elapsed()));
        times.push(held ?? elapsed());
        if (problem !== undefined) {
          console.error(`bench:hooks: ${c.name}: the hook did not report a verdict (${problem})`);
          return 1;
        }
      }
      times.sort((a, b) => a - b);
      const median = times[Math.floor(RUNS / 2)]!;
      const ok = median <= BAR_MS;
      if (!ok) failed++;
      console.log(
        `${ok ? "ok  " : "FAIL"} ${c.name.padEnd(36)} ${mb.toFixed(1)} MB  median ${median.toFixed(0)} ms  ` +
          `slowest ${times.at(-1)!.toFixed(0)} ms  (bar ${BAR_MS} ms)`,
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

process.exitCode = await main();
