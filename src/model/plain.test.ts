/** plainDataProblem: one bounded, iterative, linear walk that names the place of what is not plain data. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkPlainData, MAX_JSON_VALUES, plainDataProblem } from "./plain.js";
import { ModelError } from "./schema.js";

test("plain data passes; each kind of hostile value is named with its keys", () => {
  assert.equal(
    plainDataProblem([{ a: [1, "x", null, true, undefined, { b: {} }] }, Object.create(null)]),
    undefined,
  );
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = { back: cyclic };
  assert.deepEqual(plainDataProblem([cyclic]), {
    keys: [0, "self", "back"],
    reason: "refers to an object that contains it (a cycle)",
  });
  assert.deepEqual(plainDataProblem({ n: 1n }), { keys: ["n"], reason: "a BigInt, which is no JSON value" });
  const getter = Object.defineProperty({}, "x", {
    enumerable: true,
    get: () => {
      throw new Error("boom");
    },
  });
  assert.deepEqual(plainDataProblem({ g: getter }), { keys: ["g", "x"], reason: "reading it threw (boom)" });
  // eslint-disable-next-line no-sparse-arrays
  assert.equal(plainDataProblem([1, , 3])?.keys[0], 1);
  assert.match(plainDataProblem({ m: new Map() })!.reason, /^a Map object, not plain data$/);
  assert.equal(plainDataProblem({ u: new URL("https://x") }, { allow: (v) => v instanceof URL }), undefined);
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.match(plainDataProblem(deep)!.reason, /^nested deeper than 256 levels/);
  assert.throws(
    () => checkPlainData({ content: [{ x: 2n }] }, "messages[3]"),
    (e: unknown) =>
      e instanceof ModelError && e.message === "messages[3].content[0].x: a BigInt, which is no JSON value",
  );
});

test("an object shared many times (not a cycle) is walked once, and counted each time it appears", () => {
  const dag = (levels: number): Record<string, unknown> => {
    let v: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < levels; i++) v = { l: v, r: v };
    return v;
  };
  // 2^10 paths: 3 × 2^10 - 1 values in JSON, accepted.
  assert.equal(plainDataProblem(dag(10), { limit: 100 }), undefined);
  // 2^60 paths: 120 objects in memory, an endless JSON form (the token estimate would never end); refused at once.
  const p = plainDataProblem({ input: dag(60) }, { limit: 100 });
  assert.ok(p);
  assert.match(
    p.reason,
    new RegExp(`^shares objects so that its JSON form would hold more than ${MAX_JSON_VALUES} values`),
  );
  assert.equal(p.keys[0], "input");
  // Just past the limit, refused; a flat array of as many values as that would be, too (counted the same way).
  assert.equal(2 ** 24, MAX_JSON_VALUES);
  assert.ok(plainDataProblem(dag(23), { limit: 100 })); // 3 × 2^23 - 1 > 2^24 values
  assert.equal(plainDataProblem(dag(22), { limit: 100 }), undefined); // 3 × 2^22 - 1 < 2^24
});

test("a flat array shared many times is refused as soon as the count passes the limit", () => {
  const flat = new Array<number>(1_000_000).fill(1);
  const p = plainDataProblem({ rows: new Array(1000).fill(flat) });
  assert.ok(p);
  assert.match(p.reason, /^shares objects so that its JSON form would hold more than/);
  // Refused at the 17th copy (17 × 1,000,001 > 2^24), not after reading all 1,000.
  assert.deepEqual(p.keys, ["rows", 16]);
});

test("the walk reads what it is given and changes nothing", () => {
  const value = { a: [1, { b: "c" }], d: { e: null } };
  const before = structuredClone(value);
  plainDataProblem(value);
  assert.deepEqual(value, before);
});
