/**
 * Child process for the lock fault tests.
 *
 * `race`: waits until START_AT (epoch ms) so that every worker races at
 * once, takes the journal lock (waiting), writes `enter PID` and then
 * `exit PID` to LOG while holding it, and then releases the lock (HOW
 * `release`) or exits holding it (HOW `die`), which leaves a stale lock for
 * the next worker to break.
 *
 * `cycle`: takes and releases the lock in a loop until killed; prints `ready`
 * on standard output once the loop runs (after its first take and release).
 *
 * Usage: node lock-worker.js race FILE LOG START_AT release|die HOLD_MS
 *        node lock-worker.js cycle FILE
 */
import { appendFileSync } from "node:fs";
import { acquireLock } from "../../src/journal/lock.js";

const [mode, file, log, startArg, how, holdArg] = process.argv.slice(2);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

if (mode === "cycle" && file) {
  for (let round = 0; ; round++) {
    const lock = await acquireLock(file, { wait: true, timeoutMs: 60_000, pollMs: 1 });
    await lock.release();
    if (round === 0) process.stdout.write("ready\n");
  }
} else if (mode === "race" && file && log && startArg && (how === "release" || how === "die") && holdArg) {
  await sleep(Math.max(0, Number(startArg) - Date.now()));
  const lock = await acquireLock(file, { wait: true, timeoutMs: 60_000, pollMs: 2 });
  appendFileSync(log, `enter ${process.pid}\n`);
  await sleep(Number(holdArg));
  appendFileSync(log, `exit ${process.pid}\n`);
  if (how === "release") await lock.release();
  process.exit(0);
} else {
  process.stderr.write(
    "usage: lock-worker race FILE LOG START_AT release|die HOLD_MS | lock-worker cycle FILE\n",
  );
  process.exit(2);
}
