/**
 * Mutators of serialized histories: JSON-level (a parsed line or document),
 * line-level (JSONL) and byte-level. Every mutator is a pure function of its
 * input and the seeded `Rng`; each returns a short label for the reproducer.
 * No FIFOs or other special files (another part of the suite covers those).
 */
import { ALL_CHECKPOINT_MARKERS } from "../../src/contract/markers.js";
import type { Rng } from "./rng.js";

/** Every checkpoint marker the contract recognises (its own first). */
export const CHECKPOINT_MARKERS = ALL_CHECKPOINT_MARKERS;

/** Text that marks a user message planted by a mutator (so the oracle knows it is the user's own text). */
export const PLANTED_TAG = "fuzz-planted-";

type Json = unknown;
interface Slot {
  parent: Record<string, Json> | Json[];
  key: string | number;
}

/** Every (parent, key) slot of a JSON value, breadth first, at most `limit` of them (iterative: no recursion). */
export function slots(root: Json, limit = 5000): Slot[] {
  const out: Slot[] = [];
  const queue: Json[] = [root];
  for (let q = 0; q < queue.length && out.length < limit; q++) {
    const v = queue[q];
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        out.push({ parent: v, key: i });
        queue.push(x);
      });
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v as Record<string, Json>)) {
        out.push({ parent: v as Record<string, Json>, key: k });
        queue.push(x);
      }
    }
  }
  return out;
}

const get = (s: Slot): Json => (s.parent as Record<string | number, Json>)[s.key];
const set = (s: Slot, v: Json): void => {
  (s.parent as Record<string | number, Json>)[s.key] = v;
};

const CONTROL_SNIPPETS = [
  "\u0000",
  "\u0007",
  "\u001b[2J\u001b[H",
  "\u001b]0;pwned\u0007",
  "\u009b31m",
  "\r",
  "\u2028",
  "\ud800",
  "\udfff",
  "\ufeff",
  "\u202e",
  "\u007f",
];

export function controlString(rng: Rng): string {
  let s = "";
  const n = rng.int(1, 4);
  for (let i = 0; i < n; i++) s += rng.pick(CONTROL_SNIPPETS);
  return s;
}

/** A string of about `bytes` bytes of UTF-8, ASCII or multi-byte (so bounds must not split a character). */
export function hugeString(rng: Rng, bytes: number): string {
  const unit = rng.pick(["line of output\n", "ünïcödé 😀 ", "日本語のテキスト", "x"]);
  const unitBytes = Buffer.byteLength(unit, "utf8");
  return unit.repeat(Math.max(1, Math.ceil(bytes / unitBytes)));
}

/** A deeply nested JSON text (arrays or objects), built as a string (never through recursion). */
export function deepJson(rng: Rng, depth: number): string {
  if (rng.chance(0.5)) return "[".repeat(depth) + "]".repeat(depth);
  return '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}

const ID_KEYS = new Set(["id", "tool_use_id", "call_id", "toolCallId", "tool_call_id", "uuid", "parentUuid"]);

function wrongValue(rng: Rng, v: Json): Json {
  const options: Json[] = [null, 0, -1, 1e308, true, "", "x", [], {}, [1, "a"], { type: "text" }];
  let w = rng.pick(options);
  for (let i = 0; i < 4 && typeof w === typeof v && Array.isArray(w) === Array.isArray(v); i++)
    w = rng.pick(options);
  return w;
}

/** A JSON-level mutation of a parsed value, in place. Returns a label, or undefined when it did not apply. */
export function mutateJson(
  root: Json,
  rng: Rng,
  opts: { hugeBytes: number; nonce: () => string },
): string | undefined {
  const all = slots(root);
  if (all.length === 0) return undefined;
  const op = rng.int(0, 6);
  switch (op) {
    case 0: {
      const objs = all.filter((s) => !Array.isArray(s.parent));
      if (objs.length === 0) return undefined;
      const s = rng.pick(objs);
      delete (s.parent as Record<string, Json>)[s.key as string];
      return `missing-field ${String(s.key)}`;
    }
    case 1: {
      const s = rng.pick(all);
      set(s, wrongValue(rng, get(s)));
      return `wrong-type ${String(s.key)}`;
    }
    case 2: {
      const strs = all.filter((s) => typeof get(s) === "string");
      if (strs.length === 0) return undefined;
      const s = rng.pick(strs);
      set(s, hugeString(rng, opts.hugeBytes));
      return `huge-string ${String(s.key)} ${opts.hugeBytes}B`;
    }
    case 3: {
      const strs = all.filter((s) => typeof get(s) === "string");
      if (strs.length === 0) return undefined;
      const s = rng.pick(strs);
      const v = get(s) as string;
      const at = rng.int(0, v.length);
      set(s, v.slice(0, at) + controlString(rng) + v.slice(at));
      return `control-chars ${String(s.key)}`;
    }
    case 4: {
      const ids = all.filter((s) => ID_KEYS.has(String(s.key)) && typeof get(s) === "string");
      if (ids.length < 2) return undefined;
      const a = rng.pick(ids);
      const b = rng.pick(ids);
      set(b, get(a));
      return `duplicate-id ${String(b.key)}`;
    }
    case 5: {
      // A checkpoint marker at the start of user text.
      const users = all.filter((s) => {
        const v = get(s);
        return (
          v !== null &&
          typeof v === "object" &&
          ((v as Record<string, Json>).role === "user" || (v as Record<string, Json>).type === "user")
        );
      });
      if (users.length === 0) return undefined;
      const u = get(rng.pick(users));
      const texts = slots(u).filter(
        (s) => (s.key === "text" || s.key === "content") && typeof get(s) === "string",
      );
      if (texts.length === 0) return undefined;
      const s = texts[0]!;
      set(s, `${rng.pick(CHECKPOINT_MARKERS)} ${opts.nonce()} ${get(s) as string}`);
      return "marker-in-user-text";
    }
    default: {
      const s = rng.pick(all);
      set(s, { __deep__: true });
      return "deep-nesting";
    }
  }
}

/** Serializes a value whose `{ __deep__: true }` placeholders become deeply nested JSON. */
export function stringifyWithDeep(v: Json, rng: Rng, depth: number): string {
  const text = JSON.stringify(v);
  return text.replace(/\{"__deep__":true\}/g, () => deepJson(rng, depth));
}

/** A line-level mutation of JSONL lines (a new array). */
export function mutateLines(lines: string[], rng: Rng): { lines: string[]; label: string } {
  const out = [...lines];
  if (out.length === 0) return { lines: out, label: "empty" };
  const i = rng.int(0, out.length - 1);
  switch (rng.int(0, 5)) {
    case 0:
      out.splice(i, rng.int(1, 3));
      return { lines: out, label: `drop-lines@${i}` };
    case 1:
      out.splice(i, 0, out[i]!);
      return { lines: out, label: `duplicate-line@${i}` };
    case 2: {
      const j = rng.int(0, out.length - 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
      return { lines: out, label: `swap-lines@${i},${j}` };
    }
    case 3:
      out[i] = out[i]!.slice(0, rng.int(0, out[i]!.length));
      return { lines: out, label: `truncate-line@${i}` };
    case 4:
      out.splice(
        i,
        0,
        rng.pick(["", "   ", "{", "null", "[]", '{"type":"user"}', "garbage", "{}{}", "\u0000"]),
      );
      return { lines: out, label: `junk-line@${i}` };
    default:
      out.length = i + 1;
      return { lines: out, label: `truncate-history@${i}` };
  }
}

/** A byte-level mutation (flips, cut) of a buffer (a new buffer). */
export function mutateBytes(buf: Buffer, rng: Rng): { bytes: Buffer; label: string } {
  const out = Buffer.from(buf);
  if (out.length === 0) return { bytes: out, label: "empty" };
  if (rng.chance(0.3)) {
    const cut = rng.int(0, out.length - 1);
    return { bytes: out.subarray(0, cut), label: `cut@${cut}` };
  }
  const n = rng.int(1, 8);
  for (let k = 0; k < n; k++) {
    const at = rng.int(0, out.length - 1);
    out[at] = out[at]! ^ (1 << rng.int(0, 7));
  }
  return { bytes: out, label: `flip×${n}` };
}
