/**
 * Runtime schemas for the transcript model. Malformed input is rejected with
 * a message that names the JSON path, e.g.
 * `messages[3].content[1] (tool_use): missing "id"`.
 * Unknown block types are accepted and kept opaque.
 */
import { z } from "zod";
import type { Block, JournalEntry, Message } from "./types.js";
import { JOURNAL_KINDS, isMessageKind } from "./types.js";

export class ModelError extends Error {
  /** JSON path of the offending value, e.g. `messages[3].content[1]`. */
  readonly path: string;
  constructor(path: string, detail: string) {
    super(`${path}: ${detail}`);
    this.name = "ModelError";
    this.path = path;
  }
}

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
};

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

/** Validates one content block. Unknown types are kept opaque. */
export function parseBlock(data: unknown, path = "block"): Block {
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new ModelError(path, "a content block must be an object");
  }
  const type = (data as { type?: unknown }).type;
  if (typeof type !== "string" || type.length === 0) {
    throw new ModelError(path, 'missing "type"');
  }
  const schema = blockSchemas[type];
  if (!schema) return data as Block;
  const r = schema.safeParse(data);
  if (!r.success) failFrom(r.error, data, path, type);
  if (type === "tool_result") {
    const nested = (data as { content_blocks?: unknown[] }).content_blocks;
    nested?.forEach((b, i) => parseBlock(b, `${path}.content_blocks[${i}]`));
  }
  return data as Block;
}

const ROLES = ["user", "assistant", "system", "assistant_interrupted"] as const;

/** Validates one message `{ role, content: Block[] }`. */
export function parseMessage(data: unknown, path = "message"): Message {
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
  m.content.forEach((b, i) => parseBlock(b, `${path}.content[${i}]`));
  if (m.usage !== undefined) {
    const r = usageSchema.safeParse(m.usage);
    if (!r.success) failFrom(r.error, m.usage, `${path}.usage`);
  }
  return data as unknown as Message;
}

/** Validates a message array. */
export function parseMessages(data: unknown, path = "messages"): Message[] {
  if (!Array.isArray(data)) throw new ModelError(path, "expected an array of messages");
  data.forEach((m, i) => parseMessage(m, `${path}[${i}]`));
  return data as Message[];
}

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

/** Validates one journal entry `{ id, parent_id?, kind, created_at, payload }`. */
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
  const r = entrySchema.safeParse(data);
  if (!r.success) failFrom(r.error, data, path);
  const e = data as JournalEntry;
  if (isMessageKind(e.kind)) {
    parseMessage(e.payload, `${path}.payload`);
  } else {
    const ps = payloadSchemas[e.kind]!;
    const pr = ps.safeParse(e.payload);
    if (!pr.success) failFrom(pr.error, e.payload, `${path}.payload`, e.kind);
    if (e.kind === "compaction") parseMessages(e.payload.replacement, `${path}.payload.replacement`);
  }
  return e;
}
