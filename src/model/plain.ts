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
 * The walk is linear in the size of the value: an object met twice (shared,
 * not cyclic) is checked once. It never modifies what it reads.
 */
import { MAX_MESSAGE_DEPTH } from "./depth.js";
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

/** The first problem of `value` as plain data, or undefined. */
export function plainDataProblem(
  value: unknown,
  options: PlainDataOptions = {},
): PlainDataProblem | undefined {
  const limit = options.limit ?? MAX_MESSAGE_DEPTH;
  const stack: Frame[] = [];
  const onPath = new Set<object>();
  const done = new WeakSet<object>();
  // The keys from the value to `last`, a key of the innermost frame.
  const keysTo = (last: Key): Key[] => [...stack.slice(1).map((f) => f.key), last];
  // A value (at `key` of the top frame; the root when the stack is empty): a problem, or pushed to walk.
  const visit = (x: unknown, key: Key): PlainDataProblem | undefined => {
    const at = (reason: string): PlainDataProblem => ({
      keys: stack.length === 0 ? [] : keysTo(key),
      reason,
    });
    switch (typeof x) {
      case "bigint":
        return at("a BigInt, which is no JSON value");
      case "function":
        return at("a function, which is no JSON value");
      case "symbol":
        return at("a symbol, which is no JSON value");
      case "object":
        break;
      default:
        return undefined;
    }
    if (x === null || done.has(x)) return undefined;
    if (onPath.has(x)) return at("refers to an object that contains it (a cycle)");
    let array: boolean;
    let keys: readonly string[] | undefined;
    let n: number;
    try {
      array = Array.isArray(x);
      if (!array && !isPlainObject(x)) {
        const allowed = options.allow?.(x);
        if (allowed === true) return undefined;
        if (allowed !== "walk") return at(`a ${typeName(x)} object, not plain data`);
      }
      keys = array ? undefined : Object.keys(x);
      n = array ? (x as unknown[]).length : keys!.length;
    } catch (e) {
      return at(`cannot be read (${message(e)})`);
    }
    if (stack.length + 1 > limit) return at(`nested deeper than ${limit} levels (the limit)`);
    stack.push({ v: x, array, keys, n, i: 0, key });
    onPath.add(x);
    return undefined;
  };
  const first = visit(value, "");
  if (first) return first;
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.i >= top.n) {
      stack.pop();
      onPath.delete(top.v);
      done.add(top.v);
      continue;
    }
    const k: Key = top.array ? top.i : top.keys![top.i]!;
    top.i++;
    let x: unknown;
    try {
      if (top.array && !Object.hasOwn(top.v, k))
        return { keys: keysTo(k), reason: "a hole in the array (a sparse array is not a list of values)" };
      x = (top.v as Record<Key, unknown>)[k];
    } catch (e) {
      return { keys: keysTo(k), reason: `reading it threw (${message(e)})` };
    }
    const p = visit(x, k);
    if (p) return p;
  }
  return undefined;
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
