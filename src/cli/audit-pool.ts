/**
 * The batch's worker pool: `jobs` worker threads (`audit-worker.ts`), each given one task at a time.
 * `map` runs tasks as workers free up, never more than `jobs` at once (a task is one session: the
 * sessions in flight are all that is held), and hands each answer to `onAnswer` in the tasks' order
 * (answers that come early wait, as small records, for those before them). A worker that dies (out of
 * memory on a huge session) is replaced, and its task answered as skipped.
 */
import { Worker } from "node:worker_threads";
import type { AuditAnswer, AuditTask } from "./audit-worker.js";
import { AUDIT_SCHEMA } from "../route/audit-schema.js";

const WORKER = new URL("./audit-worker.js", import.meta.url);

interface Slot {
  worker: Worker;
  task?: AuditTask;
}

export class AuditPool {
  private readonly slots: Slot[] = [];
  private readonly idle: Slot[] = [];
  private waiting: ((slot: Slot) => void)[] = [];
  private onAnswer: (a: AuditAnswer) => void = () => undefined;

  constructor(readonly jobs: number) {
    for (let i = 0; i < jobs; i++) this.release(this.spawn());
  }

  private spawn(): Slot {
    const slot: Slot = { worker: new Worker(WORKER, { stdout: false, stderr: false }) };
    slot.worker.on("message", (a: AuditAnswer) => {
      slot.task = undefined;
      this.release(slot);
      this.onAnswer(a);
    });
    const died = (why: string) => {
      const task = slot.task;
      slot.task = undefined;
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      const j = this.idle.indexOf(slot);
      if (j >= 0) this.idle.splice(j, 1);
      if (task === undefined) return;
      this.release(this.spawn());
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
    slot.worker.on("error", (e) => died(e.message.split("\n")[0] ?? "error"));
    slot.worker.on("exit", (code) => died(`exit ${code}`));
    this.slots.push(slot);
    return slot;
  }

  private release(slot: Slot): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else this.idle.push(slot);
  }

  private acquire(): Promise<Slot> {
    const slot = this.idle.pop();
    if (slot) return Promise.resolve(slot);
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
      const slot = await this.acquire();
      slot.task = { ...task, n: sent++ };
      slot.worker.postMessage(slot.task);
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
