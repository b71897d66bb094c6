/**
 * A stand-in worker for `audit-pool.test.ts`, one task at a time in the order sent (as the real
 * worker): a task waits as long as its path names (`wait:MS`); `die` ends the thread; `big:MB` holds
 * that many MB of objects while it works, as a large session would; `limits` answers the thread's
 * resource limits as V8 applied them, and its new space's size after a churn of objects that live a while.
 */
import { getHeapSpaceStatistics } from "node:v8";
import { parentPort, resourceLimits, threadId } from "node:worker_threads";
import type { AuditTask } from "./audit-worker.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let queue: Promise<void> = Promise.resolve();
let held = 0;
parentPort?.on("message", (task: AuditTask) => {
  held++;
  queue = queue.then(async () => {
    if (task.path === "die") process.exit(3);
    const big = Number(/^big:(\d+)$/.exec(task.path)?.[1] ?? 0);
    const kept: number[][] = [];
    for (let mb = 0; mb < big; mb++) kept.push(Array.from({ length: 1 << 17 }, (_, i) => i + mb * 0.5));
    await sleep(Number(/^wait:(\d+)$/.exec(task.path)?.[1] ?? 0));
    let newSpaceMb: number | undefined;
    if (task.path === "limits") {
      // Objects that live a while (as a session's do): the new space grows to the most it may.
      let live: { i: number; s: string }[] = [];
      for (let i = 0; i < 4_000_000; i++) {
        live.push({ i, s: `x${i}` });
        if (live.length > 400_000) live = [];
      }
      newSpaceMb = getHeapSpaceStatistics().find((s) => s.space_name === "new_space")!.space_size / 2 ** 20;
    }
    // `held`: the tasks sent to this thread and not answered yet, this one included.
    parentPort!.postMessage({
      n: task.n,
      ok: true,
      record: { path: task.path, held, kept: kept.length, threadId, resourceLimits, newSpaceMb },
    });
    held--;
  });
});
