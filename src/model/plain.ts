/**
 * Plain data: what a message handed to compact-safe by a host (an adapter's
 * input) may hold. One bounded, iterative walk checks a value before any
 * conversion touches it, so hostile input is refused with a `ModelError`
 * naming the place instead of a raw `TypeError` / `RangeError` from deep
 * inside a conversion ("Converting circular structure to JSON", "Maximum
 * call stack size exceeded"):
 *
 * - a cycle (an object that contains itself), nesting past the limit;
 * - a BigInt, a function or a symbol (no JSON value);
 * - a property whose getter throws (or a proxy that throws);
 * - a hole in an array (a sparse array);
 * - an object that is not plain (a `Map`, a class instance…), unless the
 *   caller allows it (the AI SDK's `URL` and byte arrays are leaves).
 *
 * - objects shared so often that the value's JSON form would hold more
 *   than `MAX_JSON_VALUES` values (each level of `{ a: x, b: x }` doubles
 *   it: small in memory, endless to serialize).
 *
 * The walk is linear in the size of the value: an object met twice (shared,
 * not cyclic) is walked once, and counted with the size it had. It never
 * modifies what it reads.
 */
import { MAX_MESSAGE_DEPTH } from "./depth.js";
import { CONSTANTS } from "./constants.js";
import { ModelError } from "./schema.js";

type Key = string | number;

export interface PlainDataOptions {
  /**
   * Non-plain objects accepted: `true` as leaves (not walked into, e.g.
   * `URL`, `Uint8Array`), `"walk"` as objects of their own enumerable fields
   * (e.g. a LangChain artifact's class instance); anything else is refused.
   */
  allow?: (v: object) => boolean | "walk";
  /** The deepest nesting accepted, counted from the value (an object or array is 1 level). */
  limit?: number;
}

/** What makes a value not plain data, with the keys leading to the place; undefined when it is plain. */
export interface PlainDataProblem {
  keys: Key[];
  reason: string;
}

interface Frame {
  v: object;
  array: boolean;
  keys: readonly string[] | undefined;
  n: number;
  i: number;
  key: Key;
  /** Values (this object and what it holds, shared ones counted each time) walked so far. */
  size: number;
}

function typeName(v: object): string {
  try {
    const proto: unknown = Object.getPrototypeOf(v);
    const ctor =
      proto !== null && typeof proto === "object"
        ? (proto as { constructor?: unknown }).constructor
        : undefined;
    return typeof ctor === "function" && ctor.name !== "" ? ctor.name : "non-plain";
  } catch {
    return "non-plain";
  }
}

function isPlainObject(v: object): boolean {
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const message = (e: unknown): string => {
  try {
    return (e instanceof Error ? e.message : String(e)).split("\n")[0]!;
  } catch {
    return "unknown error";
  }
};

/**
 * How far the walk is with an object: `ON_PATH` (on the path from the value
 * to where it is: met again, a cycle), or done, as the number of values its
 * JSON form holds (itself included).
 */
const ON_PATH = -1;

/**
 * The most values a value's JSON form may hold, shared objects counted each
 * time they appear: an object shared by both fields of an object shared by
 * both fields of… is small in memory but doubles in JSON at each level, and
 * serializing it (the token estimate, a request) would not end.
 */
export const MAX_JSON_VALUES = CONSTANTS.maxJsonValues;

/**
 * The walk's step at a value `x` met at `key` below the frames of `stack`
 * (the root when the stack is empty): a problem, a frame pushed to walk
 * (`undefined`), or nothing to walk (`undefined`): an object that holds
 * only primitives, or one met before, is counted in the frame above it.
 */
function step(
  x: unknown,
  key: Key,
  stack: Frame[],
  seen: Map<object, number>,
  options: PlainDataOptions,
  limit: number,
): PlainDataProblem | undefined {
  const t = typeof x;
  if (t !== "object") {
    if (t === "bigint") return problemAt(stack, key, "a BigInt, which is no JSON value");
    if (t === "function") return problemAt(stack, key, "a function, which is no JSON value");
    if (t === "symbol") return problemAt(stack, key, "a symbol, which is no JSON value");
    return undefined;
  }
  if (x === null) return undefined;
  const o = x as object;
  const top = stack[stack.length - 1];
  if (top !== undefined && stack.length < limit) {
    // Most objects hold only primitives (a text part, a tool result): counted without a frame or a
    // mark (one that holds no object cannot be on a cycle, and read again it counts the same).
    const flat = flatSize(o);
    if (flat > 0) return count(stack, key, flat);
  }
  const state = seen.get(o);
  if (state === ON_PATH) return problemAt(stack, key, "refers to an object that contains it (a cycle)");
  if (state !== undefined) return count(stack, key, state); // met before: counted again, not walked again
  let array: boolean;
  let keys: readonly string[] | undefined;
  let n: number;
  try {
    array = Array.isArray(o);
    if (!array && !isPlainObject(o)) {
      const allowed = options.allow?.(o);
      if (allowed === true) return undefined;
      if (allowed !== "walk") return problemAt(stack, key, `a ${typeName(o)} object, not plain data`);
    }
    keys = array ? undefined : Object.keys(o);
    n = array ? (o as unknown[]).length : keys!.length;
  } catch (e) {
    return problemAt(stack, key, `cannot be read (${message(e)})`);
  }
  if (stack.length + 1 > limit)
    return problemAt(stack, key, `nested deeper than ${limit} levels (the limit)`);
  stack.push({ v: o, array, keys, n, i: 0, key, size: 1 });
  seen.set(o, ON_PATH);
  return undefined;
}

/**
 * Counts `n` more values (at `key`) in the innermost frame: a problem as soon
 * as they are too many, so that an object read again (a flat one is re-read)
 * cannot make the walk longer than the limit allows.
 */
function count(stack: readonly Frame[], key: Key, n: number): PlainDataProblem | undefined {
  const top = stack[stack.length - 1]!;
  top.size += n;
  return top.size > MAX_JSON_VALUES ? problemAt(stack, key, TOO_MANY) : undefined;
}

const TOO_MANY = `shares objects so that its JSON form would hold more than ${MAX_JSON_VALUES} values (the limit)`;

const isPrimitive = (v: unknown): boolean =>
  typeof v === "string" || typeof v === "number" || typeof v === "boolean" || v === undefined || v === null;

/**
 * The values of `o` (itself included) when it is a plain object or an array
 * holding only JSON primitives, or 0 (anything else, or a read that throws:
 * the walk then reads it again and names the problem). The walk counts such
 * an object met below the top with this, so a caller may count one without
 * the walk.
 */
export function flatSize(o: object): number {
  try {
    if (Array.isArray(o)) {
      if (Object.getPrototypeOf(o) !== Array.prototype) return 0;
      for (let i = 0; i < o.length; i++) if (!Object.hasOwn(o, i) || !isPrimitive(o[i])) return 0;
      return 1 + o.length;
    }
    if (!isPlainObject(o)) return 0;
    // Its own enumerable keys, as the walk reads them (faster than `for in` with `Object.hasOwn`).
    const keys = Object.keys(o);
    for (let i = 0; i < keys.length; i++)
      if (!isPrimitive((o as Record<string, unknown>)[keys[i]!])) return 0;
    return 1 + keys.length;
  } catch {
    return 0;
  }
}

/** A problem at `key` of the innermost frame of `stack` (at the value itself when the stack is empty). */
function problemAt(stack: readonly Frame[], key: Key, reason: string): PlainDataProblem {
  return { keys: stack.length === 0 ? [] : [...stack.slice(1).map((f) => f.key), key], reason };
}

/** The first problem of `value` as plain data, or undefined. */
export function plainDataProblem(
  value: unknown,
  options: PlainDataOptions = {},
): PlainDataProblem | undefined {
  const r = plainDataWalk(value, options);
  return typeof r === "number" ? undefined : r;
}

/**
 * The values `value`'s JSON form holds (itself included, shared objects
 * counted each time they appear, as the limit counts them) when it is plain
 * data, else its first problem. A caller that checks the parts of a larger
 * value one by one adds these counts to judge the whole against
 * `MAX_JSON_VALUES`.
 */
export function plainDataSize(value: unknown, options: PlainDataOptions = {}): number | PlainDataProblem {
  return plainDataWalk(value, options);
}

function plainDataWalk(value: unknown, options: PlainDataOptions): number | PlainDataProblem {
  if (value === null || typeof value !== "object") return step(value, "", [], new Map(), options, 0) ?? 1;
  const limit = options.limit ?? MAX_MESSAGE_DEPTH;
  const stack: Frame[] = [];
  // One map for both marks, local to the walk (a WeakSet per walk costs the garbage collector dearly).
  const seen = new Map<object, number>();
  const first = step(value, "", stack, seen, options, limit);
  if (first) return first;
  // An allowed leaf (a URL, bytes) at the root: no frame was pushed.
  if (stack.length === 0) return 1;
  let size = 0;
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.i >= top.n) {
      stack.pop();
      if (top.size > MAX_JSON_VALUES) return problemAt(stack, top.key, TOO_MANY);
      seen.set(top.v, top.size);
      const parent = stack[stack.length - 1];
      if (parent) parent.size += top.size;
      else size = top.size;
      continue;
    }
    const k: Key = top.array ? top.i : top.keys![top.i]!;
    top.i++;
    let x: unknown;
    try {
      if (top.array && !Object.hasOwn(top.v, k))
        return problemAt(stack, k, "a hole in the array (a sparse array is not a list of values)");
      x = (top.v as Record<Key, unknown>)[k];
    } catch (e) {
      return problemAt(stack, k, `reading it threw (${message(e)})`);
    }
    // A primitive (most values) is counted here, without a call.
    if (isPrimitive(x)) {
      top.size++;
      continue;
    }
    const p = step(x, k, stack, seen, options, limit);
    if (p) return p;
  }
  return size;
}

/** `root` and the keys of a path (a path to a deep value is long: the middle is elided). */
export function keysPath(root: string, keys: readonly Key[]): string {
  const shown = keys.length > 8 ? keys.slice(0, 6) : keys;
  let out = root;
  for (const k of shown)
    out +=
      typeof k === "number" ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
  return keys.length > 8 ? `${out}…(${keys.length - 6} more levels)` : out;
}

/** Built-in objects whose content is not their own enumerable fields (refused even where class instances are walked). */
export function isBuiltinContainer(v: object): boolean {
  return (
    v instanceof Map ||
    v instanceof Set ||
    v instanceof WeakMap ||
    v instanceof WeakSet ||
    v instanceof Promise ||
    v instanceof RegExp ||
    ArrayBuffer.isView(v) ||
    v instanceof ArrayBuffer
  );
}

/** Throws a `ModelError` naming the place (`messages[3].content[0].input…`) when `value` is not plain data. */
export function checkPlainData(value: unknown, path: string, options?: PlainDataOptions): void {
  const p = plainDataProblem(value, options);
  if (p) throw new ModelError(keysPath(path, p.keys), p.reason);
}
