/**
 * When the core's work left for after answers runs (`background.ts`): one
 * piece at a time, while no request is on its way, at the latest after its
 * longest wait, and at once for a session whose next request came.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Background } from "./background.js";

const tick = () => new Promise((r) => setImmediate(r));

test("a piece waits while a request is on its way and runs once it is answered", async () => {
  const bg = new Background(60_000);
  let answer!: () => void;
  bg.track(new Promise<void>((r) => (answer = r)));
  let ran = false;
  const piece = bg.turn("a").then((release) => {
    ran = true;
    release();
  });
  for (let i = 0; i < 5; i++) await tick();
  assert.equal(ran, false, "not while the request is on its way");
  answer();
  await piece;
  assert.equal(ran, true);
});

test("one piece at a time, in the order they came", async () => {
  const bg = new Background(60_000);
  const order: string[] = [];
  let running = 0;
  const piece = (key: string) =>
    bg.turn(key).then(async (release) => {
      running++;
      assert.equal(running, 1, "never two at once");
      order.push(key);
      await tick();
      running--;
      release();
    });
  await Promise.all([piece("a"), piece("b"), piece("c")]);
  assert.deepEqual(order, ["a", "b", "c"]);
});

test("under traffic that never stops, a piece runs after its longest wait; a session's next request hurries its piece", async () => {
  const bg = new Background(5);
  bg.track(new Promise<void>(() => {})); // a request that is never answered
  const release = await bg.turn("a"); // resolves: waited its longest
  release();
  const slow = new Background(60_000);
  slow.track(new Promise<void>(() => {}));
  let ran = "";
  const b = slow.turn("b").then((r) => ((ran += "b"), r()));
  const c = slow.turn("c").then((r) => ((ran += "c"), r()));
  for (let i = 0; i < 5; i++) await tick();
  assert.equal(ran, "", "nothing while traffic goes on");
  slow.hurry("c");
  await c;
  assert.equal(ran, "c", "the hurried session's piece first");
  slow.hurry("b");
  await b;
  assert.equal(ran, "cb");
});

test("a release given twice frees the turn once", async () => {
  const bg = new Background(60_000);
  const r1 = await bg.turn("a");
  let second = false;
  const p = bg.turn("b").then((r) => ((second = true), r));
  r1();
  r1();
  const r2 = await p;
  assert.equal(second, true);
  let third = false;
  const q = bg.turn("c").then((r) => ((third = true), r()));
  for (let i = 0; i < 5; i++) await tick();
  assert.equal(third, false, "b still holds the turn");
  r2();
  await q;
});
