/**
 * The batch's worker pool: `jobs` worker threads (`audit-worker.ts`). Each worker is given its next
 * task while it still works on one (at most `AHEAD` tasks a worker: the one it reads and the one it
 * reads next, a path only), so that it never waits for the main thread between two sessions; a worker
 * reads one session at a time (the sessions in flight are all that is held). `map` hands each answer
 * to its callback in the tasks' order (answers that come early wait, as small records, for those
 * before them). Each worker's heap is capped (`WORKER_HEAP_MB`); a session that needs more is read
 * again by a worker without the cap. A worker that dies otherwise is replaced: the task it was reading
 * is answered as skipped, the one it had next goes to its replacement.
 */
import { Worker } from "node:worker_threads";
import type { AuditAnswer, AuditTask } from "./audit-worker.js";
import { AUDIT_SCHEMA } from "../route/audit-schema.js";

const WORKER = new URL("./audit-worker.js", import.meta.url);

/** Tasks a worker holds at once: the one it works on and the next. */
export const AHEAD = 2;

/**
 * The cap on a worker's old generation, in MB. Without it V8 lets a worker's heap grow to four times
 * what it holds between collections, and one worker's peak RSS moved from 170 to 311 MB from one run
 * to the next over the same sessions; under it the worker collects sooner. A session that needs
 * more is read again by a worker without the cap (the first worker ends out of memory).
 */
export const WORKER_HEAP_MB = 96;

/**
 * Each worker's young generation, in MB (`resourceLimits.maxYoungGenerationSizeMb`: its two
 * semi-spaces and their large objects), set rather than left to V8, which derives it from the old
 * generation's cap: 48 MB on Node 20 and 22, but 192 on Node 24, where one worker's peak RSS went from
 * 170 to 305 MB over the same 1,000 sessions (two workers' 490 MB). 48 is what Node 20 and 22 take; a
 * larger one made two workers at most 4 % faster on Node 22 and 24 and cost 27–38 MB a worker
 * (docs/DECISIONS.md).
 */
export const WORKER_YOUNG_MB = 48;

interface Slot {
  worker: Worker;
  /** The tasks sent to it and not answered yet, in the order sent (it answers them in that order). */
  tasks: AuditTask[];
  /** Without the pool's heap cap: it reads the session that needed more (and what it held next), then ends. */
  once: boolean;
}

export class AuditPool {
  private readonly slots: Slot[] = [];
  private idle: Slot[] = [];
  private waiting: ((slot: Slot) => void)[] = [];
  private onAnswer: (a: AuditAnswer) => void = () => undefined;

  private readonly worker: URL;
  private readonly heapMb: number | undefined;

  /**
   * `worker`: the worker's module (tests give their own); `heapMb`: the cap on each worker's old
   * generation (`WORKER_HEAP_MB`; `undefined`, none).
   */
  constructor(
    readonly jobs: number,
    options: { worker?: URL; heapMb?: number } = {},
  ) {
    this.worker = options.worker ?? WORKER;
    this.heapMb = "heapMb" in options ? options.heapMb : WORKER_HEAP_MB;
    for (let i = 0; i < jobs; i++) this.release(this.spawn(false));
  }

  private spawn(once: boolean): Slot {
    // The young generation is set for every worker (the one without the cap too); the old one is capped but for it.
    const limits = {
      maxYoungGenerationSizeMb: WORKER_YOUNG_MB,
      ...(once || this.heapMb === undefined ? {} : { maxOldGenerationSizeMb: this.heapMb }),
    };
    const slot: Slot = {
      worker: new Worker(this.worker, { stdout: false, stderr: false, resourceLimits: limits }),
      tasks: [],
      once,
    };
    slot.worker.on("message", (a: AuditAnswer) => {
      const i = slot.tasks.findIndex((t) => t.n === a.n);
      // Not its task (any more): a worker that died, its tasks answered or given to another.
      if (i < 0) return;
      slot.tasks.splice(i, 1);
      if (slot.once && slot.tasks.length === 0) this.recycle(slot);
      else this.release(slot);
      this.onAnswer(a);
    });
    const died = (why: string, outOfMemory: boolean) => {
      const i = this.slots.indexOf(slot);
      if (i < 0) return; // closed, recycled, or already replaced
      this.slots.splice(i, 1);
      this.idle = this.idle.filter((s) => s !== slot);
      const [task, ...next] = slot.tasks;
      slot.tasks = [];
      // The heap's cap stopped it: the session it read is read once more, by a worker without the cap.
      const retry = task !== undefined && outOfMemory && !slot.once && this.heapMb !== undefined;
      const fresh = this.spawn(retry);
      for (const t of retry ? [task, ...next] : next) this.send(fresh, t);
      this.release(fresh);
      if (task === undefined || retry) return;
      this.onAnswer({
        n: task.n,
        ok: false,
        skipped: {
          schema: AUDIT_SCHEMA,
          type: "skipped",
          root: task.root,
          path: task.path,
          why: "unreadable",
          reason: `${task.path}: its reader stopped (${why})`,
        },
      });
    };
    slot.worker.on("error", (e: Error & { code?: string }) =>
      died(e.message.split("\n")[0] ?? "error", e.code === "ERR_WORKER_OUT_OF_MEMORY"),
    );
    slot.worker.on("exit", (code) => died(`exit ${code}`, false));
    this.slots.push(slot);
    return slot;
  }

  /** A worker without the cap, its session read: ended, and a capped one takes its place. */
  private recycle(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    this.slots.splice(i, 1);
    void slot.worker.terminate();
    this.release(this.spawn(false));
  }

  private send(slot: Slot, task: AuditTask): void {
    slot.tasks.push(task);
    slot.worker.postMessage(task);
  }

  /** A slot has room for a task: to the first caller waiting, else among the idle (the emptiest first). */
  private release(slot: Slot): void {
    if (slot.once || slot.tasks.length >= AHEAD || !this.slots.includes(slot) || this.idle.includes(slot))
      return;
    const next = this.waiting.shift();
    if (next) next(slot);
    else this.idle.push(slot);
  }

  private acquire(): Promise<Slot> {
    if (this.idle.length > 0) {
      let at = 0;
      for (let i = 1; i < this.idle.length; i++)
        if (this.idle[i]!.tasks.length < this.idle[at]!.tasks.length) at = i;
      return Promise.resolve(this.idle.splice(at, 1)[0]!);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /**
   * Runs every task (numbered 0, 1, … in the order given) and calls `each` with the answers in that
   * order. Resolves when all are answered.
   */
  async map(
    tasks: AsyncIterable<AuditTask> | Iterable<AuditTask>,
    each: (a: AuditAnswer) => void,
  ): Promise<void> {
    const early = new Map<number, AuditAnswer>();
    let next = 0;
    let sent = 0;
    let allSent = false;
    let finish: () => void = () => undefined;
    let fail: (e: unknown) => void = () => undefined;
    let failed = false;
    const finished = new Promise<void>((resolve, reject) => {
      finish = resolve;
      fail = (e) => {
        failed = true;
        reject(e);
      };
    });
    // Handled where it is awaited, below; marked here so that a failure before then is not "unhandled".
    finished.catch(() => undefined);
    this.onAnswer = (a) => {
      early.set(a.n, a);
      try {
        for (let x = early.get(next); x !== undefined; x = early.get(next)) {
          early.delete(next);
          next++;
          each(x);
        }
      } catch (e) {
        fail(e);
        return;
      }
      if (allSent && next === sent) finish();
    };
    for await (const task of tasks) {
      if (failed) break;
      let slot = await this.acquire();
      // It may have died since it was handed over (its replacement took its tasks): another one.
      while (!this.slots.includes(slot)) slot = await this.acquire();
      this.send(slot, { ...task, n: sent++ });
      // Room for one more (it works on one, holds the next): it is free again at once.
      this.release(slot);
    }
    allSent = true;
    if (next === sent) finish();
    await finished;
  }

  /** Ends the workers. */
  async close(): Promise<void> {
    const all = this.slots.splice(0);
    this.idle.length = 0;
    await Promise.all(all.map((s) => s.worker.terminate()));
  }
}
