/**
 * The one helper every importer uses to turn another agent's compaction into
 * a `compaction` entry: the agent's summary and replacement, its own
 * recorded figures where it has them, `path: "summary"` (or `prune-only` for
 * one that wrote no summary), no coverage receipt
 * (the agent wrote none), and `source_agent` naming it.
 */
import type { CompactionEntry, CompactionTrigger, Message } from "../../model/index.js";
import { providerCompactionIn } from "../../model/index.js";

/** A rough size of messages in tokens (JSON characters / 4), for figures an agent did not record. */
export function roughTokens(messages: readonly Message[]): number {
  if (messages.length === 0) return 0; // nothing before it (a fork's first line): 0, not the size of `[]`
  return Math.ceil(jsonLength(messages.map((m) => m.content)) / 4);
}

/** The characters a string takes in JSON besides its own: quotes, and the escapes of `"`, `\`, controls and lone surrogates. */
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const ESCAPED =
  // eslint-disable-next-line no-control-regex
  /["\\\b\t\n\f\r]|[\u0000-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function jsonStringLength(s: string): number {
  if (!NEEDS_ESCAPE.test(s)) return s.length + 2;
  let n = s.length + 2;
  ESCAPED.lastIndex = 0;
  for (let m = ESCAPED.exec(s); m !== null; m = ESCAPED.exec(s)) {
    const c = m[0].charCodeAt(0);
    // `\"`, `\\`, `\b`…: one more; another control or a lone surrogate: `\uXXXX`, five more.
    n += c === 0x22 || c === 0x5c || c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 1 : 5;
  }
  return n;
}

/** Deeper than this, `jsonLength` asks `JSON.stringify` (which also says what a cycle is). */
const MAX_WALK_DEPTH = 1000;

/**
 * `JSON.stringify(value).length`, counted without building the text (a
 * 5 MB history's contents written out to be measured was a large part of
 * an agent hook's work). Plain data (what the importers read from JSON) is
 * walked; anything else (a class instance, a `toJSON`, a value too deep)
 * is written out by `JSON.stringify` itself, so the figure is always its.
 */
export function jsonLength(value: unknown): number {
  const n = plainJsonLength(value, 0);
  return n >= 0 ? n : (JSON.stringify(value)?.length ?? 0);
}

/** The length, or -1 when the value is not plain data walked here. */
function plainJsonLength(v: unknown, depth: number): number {
  switch (typeof v) {
    case "string":
      return jsonStringLength(v);
    case "number":
      return Number.isFinite(v) ? String(v).length : 4;
    case "boolean":
      return v ? 4 : 5;
    case "object":
      break;
    default:
      return -1; // undefined, a function, a symbol, a BigInt: as JSON.stringify says
  }
  if (v === null) return 4;
  if (depth >= MAX_WALK_DEPTH) return -1;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return -1;
    let n = 2 + Math.max(0, v.length - 1);
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      const k =
        x === undefined || typeof x === "function" || typeof x === "symbol"
          ? 4
          : plainJsonLength(x, depth + 1);
      if (k < 0) return -1;
      n += k;
    }
    return n;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return -1;
  if (typeof (v as { toJSON?: unknown }).toJSON === "function") return -1;
  let n = 2;
  let fields = 0;
  for (const key of Object.keys(v)) {
    const x: unknown = (v as Record<string, unknown>)[key];
    if (x === undefined || typeof x === "function" || typeof x === "symbol") continue;
    const k = plainJsonLength(x, depth + 1);
    if (k < 0) return -1;
    n += jsonStringLength(key) + 1 + k;
    fields++;
  }
  return n + Math.max(0, fields - 1);
}

export interface ImportedCompaction {
  id: string;
  parentId: string | null;
  createdAt: string;
  /** The agent, or the provider whose native compaction it is (`anthropic`, `openai`). */
  sourceAgent: "claude-code" | "codex" | "pi" | "anthropic" | "openai";
  summary: string;
  /** The agent's recorded size before, or the live context it replaced (estimated roughly). */
  tokensBefore: number | readonly Message[];
  model: string;
  trigger: CompactionTrigger;
  /** Whether the agent recorded the trigger (else `trigger` is the default, `auto`). */
  triggerRecorded: boolean;
  replacement: Message[];
  /** `prune-only` for a compaction that wrote no summary (compact-safe's prune-only fork); default `summary`. */
  path?: "summary" | "prune-only";
  /** Agent-specific provenance kept in the payload (e.g. `first_kept_entry_id`). */
  extra?: Record<string, unknown>;
}

/**
 * The provider's native compaction a replacement holds (an Anthropic
 * `compaction` block, an OpenAI `compaction` item), as the payload records
 * it: `provider_compaction` (the provider) and `opaque_summary` (its summary
 * is encrypted: only what else the replacement shows can be judged).
 */
function nativeFields(replacement: readonly Message[]): Record<string, unknown> {
  for (const m of replacement) {
    const found = providerCompactionIn(m);
    if (found) return { provider_compaction: found.block.provider, opaque_summary: found.block.opaque };
  }
  return {};
}

export function importedCompactionEntry(c: ImportedCompaction): CompactionEntry {
  return {
    id: c.id,
    parent_id: c.parentId,
    kind: "compaction",
    created_at: c.createdAt,
    payload: {
      summary: c.summary,
      tokens_before: typeof c.tokensBefore === "number" ? c.tokensBefore : roughTokens(c.tokensBefore),
      tokens_after: roughTokens(c.replacement),
      model: c.model,
      path: c.path ?? "summary",
      coverage: null,
      trigger: c.trigger,
      trigger_recorded: c.triggerRecorded,
      replacement: c.replacement,
      source_agent: c.sourceAgent,
      ...nativeFields(c.replacement),
      ...c.extra,
    },
  };
}
