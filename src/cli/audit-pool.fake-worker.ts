/**
 * A stand-in worker for `audit-pool.test.ts`, one task at a time in the order sent (as the real
 * worker): a task waits as long as its path names (`wait:MS`); `die` ends the thread; `big:MB` holds
 * that many MB of objects while it works, as a large session would.
 */
import { parentPort, threadId } from "node:worker_threads";
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
    // `held`: the tasks sent to this thread and not answered yet, this one included.
    parentPort!.postMessage({
      n: task.n,
      ok: true,
      record: { path: task.path, held, kept: kept.length, threadId },
    });
    held--;
  });
});
