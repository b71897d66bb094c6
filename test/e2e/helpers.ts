/** Running the built `compact-safe` binary from the end-to-end tests. */
import assert from "node:assert/strict";
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliPath, repoRoot } from "../support.js";
import { loadMatrix, runMatrix } from "../../src/contract/index.js";

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Kill the command (SIGKILL) after this many milliseconds: a hang then fails instead of stalling the suite. */
  timeoutMs?: number;
}

/** Runs `compact-safe ARGS` asynchronously (so an in-process fake server can answer it). */
export function run(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cliPath, ...args],
      {
        cwd: options.cwd,
        env: { ...process.env, NO_COLOR: "1", ...options.env },
        maxBuffer: 256 * 1024 * 1024,
        encoding: "utf8",
        timeout: options.timeoutMs ?? 0,
        killSignal: "SIGKILL",
      },
      (error, stdout, stderr) => {
        const e = error as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
        resolve({
          code: e === null ? 0 : typeof e.code === "number" ? e.code : null,
          signal: e?.signal ?? null,
          stdout,
          stderr,
        });
      },
    );
  });
}

/** Spawns `compact-safe ARGS` and returns the child (for kill tests). */
export function spawnCli(args: readonly string[], options: RunOptions = {}): ChildProcess {
  return spawn(process.execPath, [cliPath, ...args], {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Waits for a child to exit. */
export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once("exit", (code, signal) => resolve({ code, signal }));
  });
}

/** A fresh temporary folder (removed by the returned cleanup). */
export function tempDir(prefix = "cs-e2e-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function copy(src: string, dst: string): string {
  copyFileSync(src, dst);
  return dst;
}

/** Runs async jobs with at most `limit` at once. */
export async function pool<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** The last non-empty stderr line must be one `compact-safe: ...` line (no stack trace). */
export function oneLineError(stderr: string): string {
  const lines = stderr.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("compact-safe: warning:"));
  if (lines.length !== 1 || !lines[0]!.startsWith("compact-safe: ")) {
    throw new Error(`expected one "compact-safe: ..." error line on stderr, got:\n${stderr}`);
  }
  return lines[0]!;
}

/** `validate --matrix FILES` exits 0 with the same output as the dependency-free .mjs validator. */
export async function matrixLikeMjs(files: readonly string[]): Promise<void> {
  const r = await run(["validate", "--matrix", ...files]);
  const mjs = execFileSync(
    process.execPath,
    [join(repoRoot, "contract", "validate_survival_contract.mjs"), ...files],
    { encoding: "utf8" },
  );
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.stdout, mjs);
  assert.match(r.stdout, /^ok \d+ survival-contract fixtures\n$/);
}

/**
 * `validate --matrix FILE` prints what the library's `runMatrix` returns: the
 * same DISAGREE lines, the same count and exit code. Returns the cases that
 * disagree.
 */
export async function cliMatchesRunMatrix(file: string): Promise<string[]> {
  const lib = runMatrix(loadMatrix(file));
  const cli = await run(["validate", "--matrix", file]);
  const disagree = lib.filter((r) => !r.agrees);
  assert.equal(cli.code, disagree.length === 0 ? 0 : 1, cli.stderr);
  const lines = cli.stdout.trim().split("\n");
  assert.deepEqual(
    lines.filter((l) => l.startsWith("DISAGREE")),
    disagree.map((r) => `DISAGREE ${file} ${r.id}: ${r.problem}`),
  );
  assert.equal(lines.at(-1), `ok ${lib.length - disagree.length} survival-contract fixtures`);
  return disagree.map((r) => r.id);
}

/**
 * A fork read back as its agent's session keeps what must survive of the
 * original's: both exported to each provider's request, `validate` A->B
 * passes (with the compaction's `path`).
 */
export async function assertForkKeepsContract(
  dir: string,
  original: string,
  fork: string,
  path: string,
): Promise<void> {
  for (const p of ["anthropic", "openai"] as const) {
    const a = join(dir, `a.${p}.json`);
    const b = join(dir, `b.${p}.json`);
    assert.equal((await run(["export", original, "--to", p, "--out", a])).code, 0);
    assert.equal((await run(["export", fork, "--to", p, "--out", b])).code, 0);
    const v = await run(["validate", a, b, "--path", path]);
    assert.equal(v.code, 0, `${p}: ${v.stdout} ${v.stderr}`);
  }
}

/** The `--json` receipt of `compact --fork`. */
export interface ForkReceiptJson {
  path: string;
  fork: { path: string; session_id: string; resume: string };
}

/** Runs `compact FILE --fork --json --workspace DIR [extra]`, which must succeed; its receipt. */
export async function forkOf(
  file: string,
  dir: string,
  extra: readonly string[] = [],
): Promise<ForkReceiptJson> {
  const r = await run(["compact", file, "--fork", "--json", "--workspace", dir, ...extra]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as ForkReceiptJson;
}
