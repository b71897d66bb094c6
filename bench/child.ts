/**
 * The child processes of the benchmarks (`npm run bench`, `npm run
 * bench:peers`): each measurement runs in a fresh Node process (with
 * `--expose-gc`, a 4 GiB heap, and the collector on the main thread) that
 * prints its report as JSON on its last line of output.
 *
 * `--single-threaded-gc`: the figures are the process's CPU time (every
 * thread), and each timed pair starts after a forced full collection
 * (`gc()`). With the collector's helper threads, that collection's sweeping
 * went on beside the next timed call and was counted in it: a cold
 * compaction of neurodata took 1.3 ms of wall-clock time and was counted
 * 2.8–3.0 ms of CPU time (1.3 ms with the collector on the main thread, its
 * parse 0.75 ms either way), and the small sessions' figures moved by up to
 * 2.6× from one run to the next. On the main thread, the forced collection
 * ends before the timer starts, and the collections that the timed call's
 * own allocations cause are still counted in it.
 */
import { spawnSync } from "node:child_process";

const MB = 1024 * 1024;

/** The Node flags of every benchmark child (see above). */
export const CHILD_FLAGS: readonly string[] = [
  "--expose-gc",
  "--single-threaded-gc",
  "--max-old-space-size=4096",
];

/** The child's report, or why there is none (its exit and last lines of stderr, or a timeout). */
export type ChildOutcome<T> = { report: T } | { why: string; timedOut: boolean };

/** Runs `node --expose-gc --single-threaded-gc --max-old-space-size=4096 ...args` and reads the JSON report on its last line. */
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
