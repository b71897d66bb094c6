import { test } from "node:test";
import assert from "node:assert/strict";
import { AHEAD, AuditPool, WORKER_HEAP_MB, WORKER_YOUNG_MB } from "./audit-pool.js";
import type { AuditAnswer, AuditTask } from "./audit-worker.js";

const FAKE = new URL("./audit-pool.fake-worker.js", import.meta.url);

const task = (path: string): AuditTask => ({
  kind: "audit",
  n: -1,
  file: path,
  root: ".",
  path,
  named: true,
});

async function run(pool: AuditPool, paths: readonly string[], sends?: number[]): Promise<AuditAnswer[]> {
  const got: AuditAnswer[] = [];
  async function* tasks() {
    for (const p of paths) {
      sends?.push(performance.now());
      yield task(p);
    }
  }
  await pool.map(tasks(), (a) => got.push(a));
  return got;
}

test("the pool answers in the tasks' order, whichever worker ends first", { timeout: 30_000 }, async () => {
  const pool = new AuditPool(2, { worker: FAKE });
  try {
    const paths = ["wait:40", "wait:0", "wait:25", "wait:0", "wait:5", "wait:0", "wait:30", "wait:1"];
    const got = await run(pool, paths);
    assert.deepEqual(
      got.map((a) => a.n),
      paths.map((_, i) => i),
    );
    assert.deepEqual(
      got.map((a) => ("record" in a ? (a.record as unknown as { path: string }).path : "")),
      paths,
    );
  } finally {
    await pool.close();
  }
});

test(
  `a worker is sent its next task while it works (at most ${AHEAD} held), so it never waits between two`,
  { timeout: 30_000 },
  async () => {
    const pool = new AuditPool(1, { worker: FAKE });
    try {
      // What the worker held when it answered: the task it read and the next, sent while it read.
      const got = await run(
        pool,
        Array.from({ length: 6 }, () => "wait:20"),
      );
      const held = got.map((a) => ("record" in a ? (a.record as unknown as { held: number }).held : 0));
      assert.equal(Math.max(...held), AHEAD);
    } finally {
      await pool.close();
    }
  },
);

test(
  "a worker that dies: the task it read is skipped, the one it held next is answered by its replacement",
  { timeout: 30_000 },
  async () => {
    const pool = new AuditPool(1, { worker: FAKE });
    try {
      const got = await run(pool, ["wait:0", "die", "wait:0", "wait:0"]);
      assert.deepEqual(
        got.map((a) => a.n),
        [0, 1, 2, 3],
      );
      assert.equal(got[1]!.ok, false);
      assert.match("skipped" in got[1]! ? got[1].skipped.reason : "", /^die: its reader stopped \(exit 3\)$/);
      for (const i of [0, 2, 3]) assert.equal(got[i]!.ok, true, `task ${i} answered`);
    } finally {
      await pool.close();
    }
  },
);

test(
  "a session that needs more than a worker's heap cap is read again by a worker without it; the others go on",
  { timeout: 30_000 },
  async () => {
    const pool = new AuditPool(1, { worker: FAKE, heapMb: 16 });
    try {
      const got = await run(pool, ["wait:0", "big:64", "wait:0", "big:4", "wait:0"]);
      assert.deepEqual(
        got.map((a) => a.ok),
        [true, true, true, true, true],
      );
      const rec = got.map((a) =>
        "record" in a ? (a.record as unknown as { kept: number; threadId: number }) : undefined,
      );
      assert.equal(rec[1]!.kept, 64);
      // Read by a thread of its own (the first ended out of memory), which ended after it: a capped one read on.
      assert.notEqual(rec[1]!.threadId, rec[0]!.threadId);
      assert.notEqual(rec[4]!.threadId, rec[1]!.threadId);
    } finally {
      await pool.close();
    }
  },
);

test(
  "without a cap (heapMb undefined), a worker that dies is not retried: its session is skipped",
  { timeout: 30_000 },
  async () => {
    const pool = new AuditPool(1, { worker: FAKE, heapMb: undefined });
    try {
      const got = await run(pool, ["die", "wait:0"]);
      assert.deepEqual(
        got.map((a) => a.ok),
        [false, true],
      );
    } finally {
      await pool.close();
    }
  },
);

test(
  "a worker's young generation is set by the pool, whatever V8 would derive from the heap's cap",
  { timeout: 60_000 },
  async () => {
    // Node 24's V8 derived 192 MB from the old generation's cap of 96 (one worker's peak RSS 305 MB).
    type Limits = { maxYoungGenerationSizeMb: number; maxOldGenerationSizeMb: number };
    for (const heapMb of [WORKER_HEAP_MB, undefined]) {
      const pool = new AuditPool(1, { worker: FAKE, heapMb });
      try {
        const [a] = await run(pool, ["limits"]);
        const rec = (a as { record: unknown }).record as { resourceLimits: Limits; newSpaceMb: number };
        assert.equal(rec.resourceLimits.maxYoungGenerationSizeMb, WORKER_YOUNG_MB);
        if (heapMb !== undefined) assert.equal(rec.resourceLimits.maxOldGenerationSizeMb, heapMb);
        // The new space is two of its three parts (the semi-spaces; the third, their large objects).
        const most = (WORKER_YOUNG_MB * 2) / 3;
        assert.ok(rec.newSpaceMb <= most, `new space ${rec.newSpaceMb} MB, at most ${most}`);
      } finally {
        await pool.close();
      }
    }
  },
);
