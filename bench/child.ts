/**
 * The child processes of the benchmarks (`npm run bench`, `npm run
 * bench:peers`): each measurement runs in a fresh Node process (with
 * `--expose-gc`, a 4 GiB heap) that prints its report as JSON on its last
 * line of output.
 */
import { spawnSync } from "node:child_process";

const MB = 1024 * 1024;

/** The child's report, or why there is none (its exit and last lines of stderr, or a timeout). */
export type ChildOutcome<T> = { report: T } | { why: string; timedOut: boolean };

/** Runs `node --expose-gc --max-old-space-size=4096 ...args` and reads the JSON report on its last line. */
export function runJsonChild<T>(
  args: readonly string[],
  opts: { maxBufferMB: number; timeoutMs?: number; name?: string },
): ChildOutcome<T> {
  const r = spawnSync(process.execPath, ["--expose-gc", "--max-old-space-size=4096", ...args], {
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
