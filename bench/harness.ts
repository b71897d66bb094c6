/**
 * The one timing and reporting harness of the benchmarks (`npm run bench`,
 * `bench:peers`, `bench:host`): how a figure is timed, the parse baseline,
 * the warm-up, timed pairs, the child processes, the corpus's session files,
 * medians and the printed tables, defined once so that they all say the same
 * thing.
 *
 * Times are the process's CPU time (user + system, microsecond resolution):
 * on a shared machine a loaded core stretches wall-clock time by whatever
 * else runs (seen here: the same compaction from 11 to 36 ms wall-clock
 * within minutes), while CPU time stays within a few percent. On an idle
 * machine the two agree for this single-threaded work.
 *
 * Each measurement runs in a fresh Node process (`runJsonChild`, with
 * `--expose-gc`, a 4 GiB heap and `--single-threaded-gc`) that prints its
 * report as JSON on its last line. `--single-threaded-gc`: each timed figure
 * starts after a forced full collection (`gc()`); with the collector's helper
 * threads, that collection's sweeping went on beside the next timed call and
 * was counted in it (a cold compaction of neurodata: 1.3 ms of wall-clock
 * time counted as 2.8–3.0 ms of CPU time, 1.3 ms with the collector on the
 * main thread). The collections the timed call's own allocations cause are
 * still counted in it.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const MB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Timing

export function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

export function timeMs(fn: () => void): number {
  const t = process.cpuUsage();
  fn();
  return cpuMs(t);
}

export async function timeMsAsync<T>(fn: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const t = process.cpuUsage();
  const value = await fn();
  return { ms: cpuMs(t), value };
}

/** A full collection, when the process runs with `--expose-gc` (else nothing). */
export const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

/**
 * A full collection, then a pause of `ms` while the collector's threads
 * finish sweeping after it (in a process with them: `bench:host`). Without
 * the pause that work lands in the next timed figure, and it grows with the
 * heap: a later LangChain step on 20k messages measured 58 ms right after
 * `gc()` and 18 ms 100 ms after it (2026-12-02).
 */
export async function settledGc(ms = 100): Promise<void> {
  gc();
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * `JSON.parse` of a session file's text, the baseline every ratio is taken
 * against: JSONL line by line (a broken line is part of the corpus and costs
 * its parse attempt), else one JSON text. Returns the values parsed.
 */
export function parseSessionText(text: string, jsonl: boolean): number {
  if (!jsonl) {
    JSON.parse(text);
    return 1;
  }
  let n = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      JSON.parse(line);
      n++;
    } catch {
      // a broken line costs its parse attempt
    }
  }
  return n;
}

/**
 * Untimed warm-up runs before the timed ones, to JIT steady state: up to 500
 * within about 1.5 seconds (a small input takes a few milliseconds, and its
 * code is still being optimised after 20 runs: up to 3x slower there; a
 * large input gets a few). No forced collection between them: one forced
 * after every run kept the code from ever reaching its optimised tiers (3-4x
 * slower on small inputs).
 */
export const WARMUP_RUNS = 500;
export const WARMUP_MS = 1500;

export async function warmUp(run: () => unknown, ms = WARMUP_MS): Promise<void> {
  const start = performance.now();
  for (let i = 0; i < WARMUP_RUNS && performance.now() - start < ms; i++) await run();
}

/** Medians of timed calls in one process, each call against a parse of the input timed beside it. */
export interface Timed {
  parse_ms: number;
  compact_ms: number;
  /** The median of the calls' own ratios to their parse. */
  ratio: number;
  reps: number;
}

/** The medians of timed pairs (a parse, then a call), the ratio being the median of each pair's own ratio. */
export function timedFigures(pairs: readonly { parse_ms: number; compact_ms: number }[]): Timed {
  if (pairs.length === 0) throw new RangeError("timedFigures: no timed pairs");
  return {
    parse_ms: median(pairs.map((p) => p.parse_ms)),
    compact_ms: median(pairs.map((p) => p.compact_ms)),
    ratio: median(pairs.map((p) => p.compact_ms / p.parse_ms)),
    reps: pairs.length,
  };
}

/** Whether to time one more pair: fewer than `most` done, and none yet or still within the budget. */
export function timeAnother(done: number, elapsedMs: number, most: number, budgetMs: number): boolean {
  return done < most && (done === 0 || elapsedMs < budgetMs);
}

/**
 * Timed pairs, interleaved so that both meet the same machine load: `prepare` (untimed: a fresh copy,
 * or the same objects) gives the call, then a forced collection and the parse, timed, then the call,
 * timed (cold: right after the parse, as a host runs it on what it just parsed; `gcBeforeCall`: after a
 * collection of its own, for calls on the same objects); up to `most` pairs within about `budgetMs` of
 * wall-clock time, at least one.
 */
export async function timedPairs(
  parse: () => void,
  prepare: () => () => unknown,
  most: number,
  { budgetMs = Infinity, gcBeforeCall = false }: { budgetMs?: number; gcBeforeCall?: boolean } = {},
): Promise<Timed> {
  const pairs: { parse_ms: number; compact_ms: number }[] = [];
  const start = performance.now();
  while (timeAnother(pairs.length, performance.now() - start, most, budgetMs)) {
    const call = prepare();
    gc();
    const parse_ms = timeMs(parse);
    if (gcBeforeCall) gc();
    pairs.push({ parse_ms, compact_ms: (await timeMsAsync(call)).ms });
  }
  return timedFigures(pairs);
}

// ---------------------------------------------------------------------------------------------
// Child processes

/** The Node flags of every benchmark child (see above). */
export const CHILD_FLAGS: readonly string[] = [
  "--expose-gc",
  "--single-threaded-gc",
  "--max-old-space-size=4096",
];

/** The child's report, or why there is none (its exit and last lines of stderr, or a timeout). */
export type ChildOutcome<T> = { report: T } | { why: string; timedOut: boolean };

/** Runs `node CHILD_FLAGS ...args` and reads the JSON report on its last line. */
export function runJsonChild<T>(
  args: readonly string[],
  opts: { maxBufferMB: number; timeoutMs?: number; name?: string },
): ChildOutcome<T> {
  const r = spawnSync(process.execPath, [...CHILD_FLAGS, ...args], {
    encoding: "utf8",
    maxBuffer: opts.maxBufferMB * MB,
    ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}),
  });
  const lines = (r.stdout ?? "").trim().split("\n");
  const last = lines[lines.length - 1];
  if (r.status === 0 && last) {
    try {
      return { report: JSON.parse(last) as T };
    } catch {
      /* reported below */
    }
  }
  const timedOut = (r.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT";
  const stderr = (r.stderr ?? "").trim().split("\n").slice(-3).join(" | ");
  return { why: `${opts.name ?? "child"} exited ${r.status ?? r.signal}: ${stderr}`, timedOut };
}

// ---------------------------------------------------------------------------------------------
// Inputs and reporting

/** A corpus file name that holds a session (agents' sidecars excluded; the importers decide the rest). */
export function isSessionFileName(name: string): boolean {
  if (name.endsWith(".metadata.json")) return false;
  return name.endsWith(".jsonl") || name.endsWith(".json") || name.endsWith(".traj");
}

/** The corpus's session files, folder by folder, in name order. */
export function corpusFiles(corpusDir: string): string[] {
  const out: string[] = [];
  for (const dir of readdirSync(corpusDir).sort()) {
    const d = join(corpusDir, dir);
    if (dir === "LICENSES" || !statSync(d).isDirectory()) continue;
    for (const f of readdirSync(d).sort()) if (isSessionFileName(f)) out.push(join(d, f));
  }
  return out;
}

/** Whether a session file is read line by line (JSONL) for the parse baseline. */
export const isJsonl = (file: string): boolean => !(file.endsWith(".json") || file.endsWith(".traj"));

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = (s.length - 1) / 2;
  return (s[Math.floor(mid)]! + s[Math.ceil(mid)]!) / 2;
}

/** A bar: what was measured, against what, and whether it is met. */
export interface Check {
  name: string;
  value: string;
  target: string;
  pass: boolean;
}

/** Rows as columns: the first left-aligned, the others right-aligned. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  "))
    .join("\n");
}
