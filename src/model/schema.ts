/**
 * Runtime schemas for the transcript model. Malformed input is rejected with
 * a message that names the JSON path, e.g.
 * `messages[3].content[1] (tool_use): missing "id"`.
 * Unknown block types are accepted and kept opaque.
 */
import { createRequire } from "node:module";
import type { z } from "zod";
import type { Block, JournalEntry, Message } from "./types.js";
import { JOURNAL_KINDS, isMessageKind } from "./types.js";
import { MAX_MESSAGE_DEPTH } from "./depth.js";
import { CompactSafeError } from "./errors.js";

export class ModelError extends CompactSafeError {
  /** JSON path of the offending value, e.g. `messages[3].content[1]`. */
  readonly path: string;
  constructor(path: string, detail: string) {
    super("invalid_message", `${path}: ${detail}`);
    this.name = "ModelError";
    this.path = path;
  }
}

/**
 * The zod schemas, built on first use: zod (about a hundred modules with its
 * locales) is loaded only to check what the plain checks below do not accept
 * at once and to explain an invalid value. The plain checks (`plainlyValid`,
 * `plainEntry`, `plainUsage`, `plainPayload`) accept nothing the schemas refuse.
 */
let built: Schemas | undefined;
type Schemas = ReturnType<typeof buildSchemas>;
function schemas(): Schemas {
  return (built ??= buildSchemas((createRequire(import.meta.url)("zod") as typeof import("zod")).z));
}

function buildSchemas(z: typeof import("zod").z) {
  const usageSchema = z.looseObject({
    input_tokens: z.number().optional(),
    output_tokens: z.number().optional(),
    cache_creation_input_tokens: z.number().nullish(),
    cache_read_input_tokens: z.number().nullish(),
    scope: z.enum(["parent", "child"]).optional(),
  });

  const blockSchemas: Record<string, z.ZodType> = {
    text: z.looseObject({ type: z.literal("text"), text: z.string() }),
    thinking: z.looseObject({
      type: z.literal("thinking"),
      thinking: z.string(),
      signature: z.string().optional(),
    }),
    redacted_thinking: z.looseObject({ type: z.literal("redacted_thinking"), data: z.string() }),
    tool_use: z.looseObject({
      type: z.literal("tool_use"),
      id: z.string().min(1),
      name: z.string(),
      input: z.unknown().refine((v) => v !== undefined, { message: 'missing "input"' }),
      thought_signature: z.string().optional(),
    }),
    tool_result: z.looseObject({
      type: z.literal("tool_result"),
      tool_use_id: z.string().min(1),
      content: z.string(),
      is_error: z.boolean().optional(),
      content_blocks: z.array(z.looseObject({ type: z.string() })).optional(),
      synthetic: z.boolean().optional(),
    }),
    image_url: z.looseObject({
      type: z.literal("image_url"),
      image_url: z.looseObject({ url: z.string() }),
    }),
    provider_compaction: z.looseObject({
      type: z.literal("provider_compaction"),
      provider: z.enum(["anthropic", "openai"]),
      summary: z.string(),
      opaque: z.boolean(),
      native: z.looseObject({ type: z.string() }),
    }),
  };

  const coverageSchema = z.looseObject({
    path: z.enum(["summary", "prune-only"]),
    last_round_messages: z.number(),
    last_round_tool_results: z.number(),
    last_round_assistant: z.number(),
    anchors_chars: z.number(),
  });

  const payloadSchemas: Record<string, z.ZodType> = {
    header: z.looseObject({
      session_id: z.string(),
      created_at: z.string(),
      schema_version: z.number(),
      source_format: z.string(),
      cwd: z.string().optional(),
    }),
    compaction: z.looseObject({
      summary: z.string(),
      tokens_before: z.number(),
      tokens_after: z.number(),
      model: z.string(),
      path: z.enum(["summary", "prune-only"]),
      coverage: coverageSchema.nullable(),
      trigger: z.enum(["auto", "manual"]),
      replacement: z.array(z.unknown()),
    }),
    branch_summary: z.looseObject({
      branch_id: z.string(),
      summary: z.string(),
      parent_branch_id: z.string().nullable(),
      leaf_only: z.boolean().optional(),
    }),
  };

  const entrySchema = z.looseObject({
    id: z.string().min(1),
    parent_id: z.string().nullish(),
    kind: z.enum(JOURNAL_KINDS),
    created_at: z.string(),
    payload: z.record(z.string(), z.unknown()),
  });
  return { usageSchema, blockSchemas, payloadSchemas, entrySchema };
}

function pathToString(root: string, path: readonly PropertyKey[]): string {
  let out = root;
  for (const seg of path) out += typeof seg === "number" ? `[${seg}]` : `.${String(seg)}`;
  return out;
}

function describeIssue(issue: z.core.$ZodIssue, value: unknown): string {
  const last = issue.path[issue.path.length - 1];
  if (issue.code === "invalid_type" && value === undefined && last !== undefined) {
    return `missing "${String(last)}"`;
  }
  if (issue.code === "invalid_type") {
    const got = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
    return `${last !== undefined ? `"${String(last)}" ` : ""}must be ${issue.expected}, got ${got}`;
  }
  if (issue.code === "too_small" && typeof value === "string") {
    return `"${String(last)}" must not be empty`;
  }
  return issue.message;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg as string];
  }
  return cur;
}

function failFrom(error: z.ZodError, data: unknown, root: string, label?: string): never {
  const issue = error.issues[0]!;
  // Report the issue against its parent object so the message reads `x.y: missing "id"`.
  const value = valueAt(data, issue.path);
  const parentPath = issue.code === "invalid_type" ? issue.path.slice(0, -1) : issue.path.slice(0, -1);
  const where = pathToString(root, parentPath) + (label ? ` (${label})` : "");
  throw new ModelError(where, describeIssue(issue, value));
}

type Key = string | number;

/** Renders `root` and the first keys of a path (a path to a deep value is long: the rest is elided). */
function shortPath(root: string, keys: readonly Key[]): string {
  const shown = keys.length > 8 ? keys.slice(0, 6) : keys;
  let out = root;
  for (const k of shown) out += typeof k === "number" ? `[${k}]` : `.${k}`;
  return keys.length > 8 ? `${out}…(${keys.length - 6} more levels)` : out;
}

/** True when `v` (a container at level `level`) or anything in it is deeper than `limit`; `keys` then holds the path. */
function deeper(v: object, level: number, limit: number, keys: Key[]): boolean {
  if (level > limit) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (x !== null && typeof x === "object") {
        keys.push(i);
        if (deeper(x, level + 1, limit, keys)) return true;
        keys.pop();
      }
    }
  } else {
    for (const k of Object.keys(v)) {
      const x: unknown = (v as Record<string, unknown>)[k];
      if (x !== null && typeof x === "object") {
        keys.push(k);
        if (deeper(x, level + 1, limit, keys)) return true;
        keys.pop();
      }
    }
  }
  return false;
}

/**
 * Throws a `ModelError` naming the path when `value` nests deeper than
 * `limit` levels (counted from `value`: an object or array is 1 level). The
 * walk is bounded by `limit` (it never recurses deeper), so a hostile value
 * gets this error, never a stack overflow; a cyclic value is refused the same way.
 */
export function checkDepth(value: unknown, path = "value", limit: number = MAX_MESSAGE_DEPTH): void {
  if (value === null || typeof value !== "object") return;
  const keys: Key[] = [];
  if (deeper(value, 1, limit, keys))
    throw new ModelError(shortPath(path, keys), `nested deeper than ${limit} levels (the limit)`);
}

const optString = (v: unknown): boolean => v === undefined || typeof v === "string";
const optBoolean = (v: unknown): boolean => v === undefined || typeof v === "boolean";

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);
const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const optNumber = (v: unknown): boolean => v === undefined || isNumber(v);
const nullishNumber = (v: unknown): boolean => v === undefined || v === null || isNumber(v);
const isPath = (v: unknown): boolean => v === "summary" || v === "prune-only";

/** A valid usage record, checked without the schema (it runs only for what this does not accept). */
function plainUsage(u: unknown): boolean {
  return (
    isObject(u) &&
    optNumber(u.input_tokens) &&
    optNumber(u.output_tokens) &&
    nullishNumber(u.cache_creation_input_tokens) &&
    nullishNumber(u.cache_read_input_tokens) &&
    (u.scope === undefined || u.scope === "parent" || u.scope === "child")
  );
}

/** A valid payload of a kind that is not a message, checked without its schema (as `plainUsage`). */
function plainPayload(kind: string, p: Record<string, unknown>): boolean {
  switch (kind) {
    case "header":
      return (
        typeof p.session_id === "string" &&
        typeof p.created_at === "string" &&
        isNumber(p.schema_version) &&
        typeof p.source_format === "string" &&
        optString(p.cwd)
      );
    case "compaction": {
      const c = p.coverage;
      return (
        typeof p.summary === "string" &&
        isNumber(p.tokens_before) &&
        isNumber(p.tokens_after) &&
        typeof p.model === "string" &&
        isPath(p.path) &&
        (c === null ||
          (isObject(c) &&
            isPath(c.path) &&
            isNumber(c.last_round_messages) &&
            isNumber(c.last_round_tool_results) &&
            isNumber(c.last_round_assistant) &&
            isNumber(c.anchors_chars))) &&
        (p.trigger === "auto" || p.trigger === "manual") &&
        Array.isArray(p.replacement)
      );
    }
    case "branch_summary":
      return (
        typeof p.branch_id === "string" &&
        typeof p.summary === "string" &&
        (p.parent_branch_id === null || typeof p.parent_branch_id === "string") &&
        optBoolean(p.leaf_only)
      );
    default:
      return false;
  }
}

/** The block types that have a schema (`blockSchemas`). */
const KNOWN_BLOCK_TYPES: ReadonlySet<string> = new Set([
  "text",
  "thinking",
  "redacted_thinking",
  "tool_use",
  "tool_result",
  "image_url",
  "provider_compaction",
]);

/** The common valid blocks, checked without the schema (the schema only runs to explain a failure). */
function plainlyValid(b: Record<string, unknown>): boolean {
  switch (b.type) {
    case "text":
      return typeof b.text === "string";
    case "thinking":
      return typeof b.thinking === "string" && optString(b.signature);
    case "redacted_thinking":
      return typeof b.data === "string";
    case "tool_use":
      return (
        typeof b.id === "string" &&
        b.id.length > 0 &&
        typeof b.name === "string" &&
        b.input !== undefined &&
        optString(b.thought_signature)
      );
    case "tool_result":
      return (
        typeof b.tool_use_id === "string" &&
        b.tool_use_id.length > 0 &&
        typeof b.content === "string" &&
        optBoolean(b.is_error) &&
        optBoolean(b.synthetic) &&
        (b.content_blocks === undefined ||
          (Array.isArray(b.content_blocks) &&
            b.content_blocks.every((x: unknown) => isObject(x) && typeof x.type === "string")))
      );
    case "image_url":
      return isObject(b.image_url) && typeof b.image_url.url === "string";
    case "provider_compaction":
      return (
        (b.provider === "anthropic" || b.provider === "openai") &&
        typeof b.summary === "string" &&
        typeof b.opaque === "boolean" &&
        isObject(b.native) &&
        typeof b.native.type === "string"
      );
    default:
      return false;
  }
}

function parseBlockShape(data: unknown, path: string, nesting: number): Block {
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new ModelError(path, "a content block must be an object");
  }
  const type = (data as { type?: unknown }).type;
  if (typeof type !== "string" || type.length === 0) {
    throw new ModelError(path, 'missing "type"');
  }
  // A block of a type without a schema is kept opaque.
  if (!KNOWN_BLOCK_TYPES.has(type)) return data as Block;
  if (!plainlyValid(data as Record<string, unknown>)) {
    const r = schemas().blockSchemas[type]!.safeParse(data);
    if (!r.success) failFrom(r.error, data, path, type);
  }
  if (type === "tool_result") {
    const nested = (data as { content_blocks?: unknown[] }).content_blocks;
    if (nested !== undefined && nesting >= MAX_MESSAGE_DEPTH)
      throw new ModelError(path, `content_blocks nested deeper than ${MAX_MESSAGE_DEPTH} levels (the limit)`);
    if (nested !== undefined)
      for (let i = 0; i < nested.length; i++)
        parseBlockShape(nested[i], `${path}.content_blocks[${i}]`, nesting + 1);
  }
  return data as Block;
}

const ROLES = ["user", "assistant", "system", "assistant_interrupted"] as const;

/**
 * Validates one message `{ role, content: Block[] }`, nested at most
 * `MAX_MESSAGE_DEPTH` levels (a `ModelError` naming the path otherwise).
 */
export function parseMessage(data: unknown, path = "message"): Message {
  checkDepth(data, path, MAX_MESSAGE_DEPTH);
  return parseMessageShape(data, path);
}

function parseMessageShape(data: unknown, path: string): Message {
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new ModelError(path, "a message must be an object");
  }
  const m = data as Record<string, unknown>;
  if (m.role === undefined) throw new ModelError(path, 'missing "role"');
  if (!(ROLES as readonly unknown[]).includes(m.role)) {
    throw new ModelError(
      path,
      `unknown role ${JSON.stringify(m.role)} (expected one of ${ROLES.join(", ")})`,
    );
  }
  if (!Array.isArray(m.content)) {
    throw new ModelError(
      path,
      m.content === undefined ? 'missing "content"' : '"content" must be an array of blocks',
    );
  }
  for (let i = 0; i < m.content.length; i++) parseBlockShape(m.content[i], `${path}.content[${i}]`, 0);
  if (m.usage !== undefined && !plainUsage(m.usage)) {
    const r = schemas().usageSchema.safeParse(m.usage);
    if (!r.success) failFrom(r.error, m.usage, `${path}.usage`);
  }
  return data as unknown as Message;
}

/** Validates a message array. */
export function parseMessages(data: unknown, path = "messages"): Message[] {
  if (!Array.isArray(data)) throw new ModelError(path, "expected an array of messages");
  // A loop, not a callback (see DECISIONS.md, hot code makes no closure per call).
  for (let i = 0; i < data.length; i++) parseMessage(data[i], `${path}[${i}]`);
  return data as Message[];
}

/** The envelope of a valid entry, checked without the schema (the schema only runs to explain a failure). */
function plainEntry(e: Record<string, unknown>): boolean {
  const p = e.payload;
  return (
    typeof e.id === "string" &&
    e.id.length > 0 &&
    (e.parent_id === undefined || e.parent_id === null || typeof e.parent_id === "string") &&
    typeof e.created_at === "string" &&
    (JOURNAL_KINDS as readonly unknown[]).includes(e.kind) &&
    p !== null &&
    typeof p === "object" &&
    !Array.isArray(p)
  );
}

/** Validates one journal entry `{ id, parent_id?, kind, created_at, payload }`. */
/**
 * The one journal recogniser: a record shaped like a compact-safe journal
 * entry (a string `id`, a string `kind`, an object `payload`). A file is a
 * journal when its first non-blank line is one; the format detector and the
 * command line both ask this.
 */
export function looksLikeJournalEntry(o: unknown): boolean {
  if (o === null || typeof o !== "object" || Array.isArray(o)) return false;
  const r = o as Record<string, unknown>;
  return (
    typeof r.id === "string" &&
    typeof r.kind === "string" &&
    r.payload !== null &&
    typeof r.payload === "object" &&
    !Array.isArray(r.payload)
  );
}

export function parseJournalEntry(data: unknown, path = "entry"): JournalEntry {
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new ModelError(path, "a journal entry must be an object");
  }
  const kind = (data as { kind?: unknown }).kind;
  if (
    kind !== undefined &&
    typeof kind === "string" &&
    !(JOURNAL_KINDS as readonly string[]).includes(kind)
  ) {
    throw new ModelError(
      path,
      `unknown kind ${JSON.stringify(kind)} (expected one of ${JOURNAL_KINDS.join(", ")})`,
    );
  }
  if (!plainEntry(data as Record<string, unknown>)) {
    const r = schemas().entrySchema.safeParse(data);
    if (!r.success) failFrom(r.error, data, path);
  }
  const e = data as JournalEntry;
  // Depth: the fields beside the payload here, the payload below (messages from the message itself).
  for (const [k, v] of Object.entries(e)) if (k !== "payload") checkDepth(v, `${path}.${k}`);
  if (isMessageKind(e.kind)) {
    parseMessage(e.payload, `${path}.payload`);
  } else {
    for (const [k, v] of Object.entries(e.payload))
      if (!(e.kind === "compaction" && k === "replacement")) checkDepth(v, `${path}.payload.${k}`);
    if (!plainPayload(e.kind, e.payload as unknown as Record<string, unknown>)) {
      const pr = schemas().payloadSchemas[e.kind]!.safeParse(e.payload);
      if (!pr.success) failFrom(pr.error, e.payload, `${path}.payload`, e.kind);
    }
    if (e.kind === "compaction") parseMessages(e.payload.replacement, `${path}.payload.replacement`);
  }
  return e;
}
