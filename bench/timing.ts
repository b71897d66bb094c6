/**
 * How the benchmarks time (`npm run bench`, `npm run bench:peers`): CPU time
 * of the process, the parse baseline, the forced collection and the warm-up
 * bounds, defined once so that both say the same thing.
 *
 * Times are the process's CPU time (user + system, microsecond resolution):
 * on a shared machine a loaded core stretches wall-clock time by whatever
 * else runs (seen here: the same compaction from 11 to 36 ms wall-clock
 * within minutes), while CPU time stays within a few percent. On an idle
 * machine the two agree for this single-threaded work (collector threads
 * count too, which can only make a library look slower).
 */

export function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

export function timeMs(fn: () => void): number {
  const t = process.cpuUsage();
  fn();
  return cpuMs(t);
}

export async function timeMsAsync<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = process.cpuUsage();
  const value = await fn();
  return { ms: cpuMs(t), value };
}

/** A full collection, when the process runs with `--expose-gc` (else nothing). */
export const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

/**
 * A full collection, then a pause of `ms` while the collector's threads
 * finish sweeping after it. Without the pause that work lands in the next
 * timed figure, and it grows with the heap: a later LangChain step on 20k
 * messages measured 58 ms right after `gc()` and 18 ms 100 ms after it
 * (2026-12-02), which made the figure at 20k say more about the heap than
 * about the step. No agent loop runs a step right after a full collection.
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
 * slower on small inputs); one is forced before each timed run only.
 */
export const WARMUP_RUNS = 500;
export const WARMUP_MS = 1500;
