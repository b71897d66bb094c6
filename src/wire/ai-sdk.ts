/**
 * AI SDK `ModelMessage` ⇄ compact-safe messages, both ways without loss.
 *
 * Native meaning first: text ⇄ `text`; reasoning ⇄ `thinking` (an Anthropic
 * `signature` becomes the block's signature) or `redacted_thinking` (Anthropic
 * `redactedData`); tool-call ⇄ `tool_use` (same id; a provider-executed call
 * ⇄ `server_tool_use`); a `tool` message ⇄ a user message of `tool_result`
 * blocks paired by `tool_use_id`; an assistant tool-result (provider-executed)
 * ⇄ `provider_tool_result`; an image or image file ⇄ `image_url`. AI SDK parts
 * with no compact-safe meaning (custom, reasoning-file, tool approvals, other
 * files) are kept as blocks of their own type, as given.
 *
 * What one side cannot say natively travels in the other's extension slot:
 * - AI SDK → compact-safe: when a block alone would not give back the same
 *   part (provider options, toolName, output variants, `providerExecuted`…),
 *   the part is kept whole under the block's `ai_sdk` field; message-level
 *   fields under `meta.ai_sdk`. Binary data and `URL`s are kept in a JSON form
 *   (`{ $ai_sdk: "uint8array" | "buffer" | "arraybuffer", base64 }`,
 *   `{ $ai_sdk: "url", href }`) so that the messages stay plain data.
 * - compact-safe → AI SDK: a block that the part alone would not give back is
 *   kept whole under the part's `providerOptions["compact-safe"].block`;
 *   a message's meta, usage and `assistant_interrupted` role under the
 *   message's `providerOptions["compact-safe"]`.
 * A carried part is used only while the block still says what it said (same
 * text, same result…): a block the engine rewrote (a bounded result, redacted
 * text) is converted afresh from what it says now.
 */
import { isDeepStrictEqual } from "node:util";
import type {
  Block,
  Message,
  Role,
  TextBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock,
} from "../model/types.js";
import { ModelError, parseMessages } from "../model/schema.js";
import { checkPlainData, flatSize, plainDataSize } from "../model/plain.js";
import { MAX_MESSAGE_DEPTH } from "../model/depth.js";
import { CONSTANTS } from "../model/constants.js";
import { isRecord } from "./common.js";

/** The AI SDK message shape, structurally (the `ai` package is an optional peer). */
export interface AiModelMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | AiPart[];
  providerOptions?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

export interface AiPart {
  type: string;
  providerOptions?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

/** The namespace of compact-safe's own fields inside AI SDK `providerOptions`. */
export const CS = "compact-safe";
/** Where compact-safe keeps what a block or message cannot say of its AI SDK original. */
export const AI = "ai_sdk";

type Ctx = "user" | "assistant" | "tool" | "system";
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------------------
// Binary data and URLs kept as plain JSON.

const TAG = "$ai_sdk";

export function encodeValue(v: unknown): unknown {
  if (v instanceof URL) return { [TAG]: "url", href: v.href };
  if (Buffer.isBuffer(v)) return { [TAG]: "buffer", base64: v.toString("base64") };
  if (v instanceof Uint8Array)
    return {
      [TAG]: "uint8array",
      base64: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64"),
    };
  if (v instanceof ArrayBuffer) return { [TAG]: "arraybuffer", base64: Buffer.from(v).toString("base64") };
  if (Array.isArray(v)) return v.map(encodeValue);
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encodeValue(x)]));
  return v;
}

export function decodeValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(decodeValue);
  if (!isObj(v)) return v;
  const tag = v[TAG];
  if (typeof tag === "string" && Object.keys(v).length === 2) {
    if (tag === "url" && typeof v.href === "string") return new URL(v.href);
    if (typeof v.base64 === "string") {
      const buf = Buffer.from(v.base64, "base64");
      if (tag === "buffer") return buf;
      if (tag === "uint8array") return new Uint8Array(buf);
      if (tag === "arraybuffer") return new Uint8Array(buf).buffer;
    }
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decodeValue(x)]));
}

// ---------------------------------------------------------------------------
// Tool names by call id (a tool result's part names its tool; a block does not).

/**
 * Tool names by call id, recording the lookups and additions made while one
 * message is converted. A `probe()` is a scratch layer over the names (its
 * additions stay in the layer, its lookups fall through): converting a part
 * back to check a round trip costs the part's own work, not a copy of every
 * tool-call id seen so far (a copy per part made the conversion quadratic).
 */
export class Names {
  reads: [string, string | undefined][] | undefined;
  writes: [string, string][] | undefined;
  private readonly own = new Map<string, string>();
  constructor(private readonly parent?: Names) {}
  /** A scratch layer that records into the same lists. */
  probe(): Names {
    const n = new Names(this);
    n.reads = this.reads;
    n.writes = this.writes;
    return n;
  }
  private lookup(k: string): string | undefined {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    for (let n: Names | undefined = this; n !== undefined; n = n.parent) {
      const v = n.own.get(k);
      if (v !== undefined || n.own.has(k)) return v;
    }
    return undefined;
  }
  /** The name for `k`, not recorded as a lookup. */
  peek(k: string): string | undefined {
    return this.lookup(k);
  }
  get(k: string): string | undefined {
    const v = this.lookup(k);
    this.reads?.push([k, v]);
    return v;
  }
  set(k: string, v: string): this {
    this.writes?.push([k, v]);
    this.own.set(k, v);
    return this;
  }
}

// ---------------------------------------------------------------------------
// Small helpers.

function without(o: Obj, ...keys: string[]): Obj {
  return Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
}

/** `providerOptions` without compact-safe's namespace; undefined when nothing else is left. */
function foreignOptions(po: unknown): Obj | undefined {
  if (!isObj(po)) return undefined;
  const rest = without(po, CS);
  return Object.keys(rest).length > 0 || !(CS in po) ? rest : undefined;
}

function csOf(po: unknown): Obj | undefined {
  return isObj(po) && isObj(po[CS]) ? po[CS] : undefined;
}

function withCs(part: Obj, cs: Obj): Obj {
  const po = isObj(part.providerOptions) ? part.providerOptions : {};
  return { ...part, providerOptions: { ...po, [CS]: cs } };
}

function b64(data: unknown): string | undefined {
  if (typeof data === "string") return data;
  if (Buffer.isBuffer(data)) return data.toString("base64");
  if (data instanceof Uint8Array)
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("base64");
  return undefined;
}

const URL_LIKE = /^(https?|data|file|gs|s3):/i;

/** The URL an image (or image file) part points to or holds, or undefined (provider references, text). */
function imageUrlOf(data: unknown, mediaType: string | undefined): string | undefined {
  if (data instanceof URL) return data.href;
  if (isObj(data) && typeof data.type === "string") {
    if (data.type === "url" && data.url instanceof URL) return data.url.href;
    if (data.type === "data") return imageUrlOf(data.data, mediaType);
    return undefined;
  }
  if (typeof data === "string" && URL_LIKE.test(data)) return data;
  const s = b64(data);
  if (s === undefined) return undefined;
  const mt = mediaType && mediaType.includes("/") ? mediaType : "image/*";
  return `data:${mt};base64,${s}`;
}

/** A non-text item of a `content` tool output as a block: an image as `image_url`, anything else as given. */
function contentItemBlock(p: Obj): Block {
  let url: string | undefined;
  if (p.type === "file" && typeof p.mediaType === "string" && p.mediaType.startsWith("image"))
    url = imageUrlOf(p.data, p.mediaType);
  else if (p.type === "image-url" && typeof p.url === "string") url = p.url;
  else if (p.type === "image-data" && typeof p.data === "string")
    url = `data:${String(p.mediaType)};base64,${p.data}`;
  return url !== undefined ? { type: "image_url", image_url: { url } } : (encodeValue(p) as Block);
}

/** The `content` output item for a block of `content_blocks`, or undefined when there is none. */
function contentItemOf(b: unknown): Obj | undefined {
  if (!isObj(b) || typeof b.type !== "string") return undefined;
  if (b.type === "image_url") {
    const url = isObj(b.image_url) ? b.image_url.url : undefined;
    return typeof url === "string" ? filePartOfUrl(url) : undefined;
  }
  return decodeValue(b) as Obj;
}

/** An image URL as an AI SDK file part (a data URL by its bytes), or undefined when it is no URL. */
function filePartOfUrl(url: string): Obj | undefined {
  const m = /^data:([^;,]+)?;base64,(.*)$/s.exec(url);
  if (m) return { type: "file", mediaType: m[1] ?? "image", data: { type: "data", data: m[2] } };
  try {
    return { type: "file", mediaType: "image", data: { type: "url", url: new URL(url) } };
  } catch {
    return undefined;
  }
}

function textOfOutput(output: Obj): { content: string; is_error?: true; content_blocks?: Block[] } {
  const v = output.value;
  switch (output.type) {
    case "text":
      return { content: typeof v === "string" ? v : "" };
    case "error-text":
      return { content: typeof v === "string" ? v : "", is_error: true };
    case "json":
      return { content: JSON.stringify(v) ?? "null" };
    case "error-json":
      return { content: JSON.stringify(v) ?? "null", is_error: true };
    case "execution-denied":
      return {
        content: `Tool execution denied${typeof output.reason === "string" ? `: ${output.reason}` : "."}`,
        is_error: true,
      };
    case "content": {
      const items = (Array.isArray(v) ? v : []).filter(isObj);
      const blocks: Block[] = [];
      for (const p of items) if (p.type !== "text") blocks.push(contentItemBlock(p));
      const content = items
        .filter((p) => p.type === "text")
        .map((p) => String(p.text))
        .join("\n");
      return blocks.length > 0 ? { content, content_blocks: blocks } : { content };
    }
    default:
      return { content: JSON.stringify(output) };
  }
}

/** AI SDK part types kept as blocks of their own type (no compact-safe meaning). */
const OWN_TYPES = new Set([
  "custom",
  "reasoning-file",
  "tool-approval-request",
  "tool-approval-response",
  "file",
  "image",
]);

// ---------------------------------------------------------------------------
// One part ⇄ one block.

/** The block a part says, ignoring compact-safe's carried block. */
function nativeBlock(part: Obj, ctx: Ctx, names: Names): Block {
  const po = isObj(part.providerOptions) ? part.providerOptions : {};
  switch (part.type) {
    case "text":
      return { type: "text", text: String(part.text) };
    case "reasoning": {
      const a = isObj(po.anthropic) ? po.anthropic : {};
      if (typeof a.redactedData === "string") return { type: "redacted_thinking", data: a.redactedData };
      return typeof a.signature === "string"
        ? { type: "thinking", thinking: String(part.text), signature: a.signature }
        : { type: "thinking", thinking: String(part.text) };
    }
    case "tool-call": {
      const g = isObj(po.google) ? po.google : {};
      const b: Block = {
        type: part.providerExecuted === true ? "server_tool_use" : "tool_use",
        id: String(part.toolCallId),
        name: String(part.toolName),
        input: part.input,
      };
      if (typeof g.thoughtSignature === "string") b.thought_signature = g.thoughtSignature;
      names.set(String(part.toolCallId), String(part.toolName));
      return b;
    }
    case "tool-result": {
      const out = isObj(part.output) ? textOfOutput(part.output) : { content: "" };
      return {
        type: ctx === "tool" ? "tool_result" : "provider_tool_result",
        tool_use_id: String(part.toolCallId),
        ...out,
      };
    }
    case "image":
    case "file": {
      const data = part.type === "image" ? part.image : part.data;
      const mt = typeof part.mediaType === "string" ? part.mediaType : undefined;
      const isImage = part.type === "image" || (mt !== undefined && mt.startsWith("image"));
      const url = isImage && ctx === "user" ? imageUrlOf(data, mt) : undefined;
      if (url !== undefined) return { type: "image_url", image_url: { url } };
      return encodeValue(part) as Block;
    }
    default:
      return encodeValue(part) as Block;
  }
}

function blockOfPart(part: Obj, ctx: Ctx, names: Names): Block {
  const carried = csOf(part.providerOptions)?.block;
  if (isObj(carried) && typeof carried.type === "string") {
    const b = structuredClone(carried) as Block;
    if (b.type === "tool_use" || b.type === "server_tool_use") names.set(String(b.id), String(b.name));
    return b;
  }
  return nativeBlock(part, ctx, names);
}

/** The part a block says, before compact-safe's carried block is added. */
function nativePart(b: Obj, ctx: Ctx, names: Names): Obj | undefined {
  switch (b.type) {
    case "text":
      return typeof b.text === "string" ? { type: "text", text: b.text } : undefined;
    case "thinking":
    case "redacted_thinking": {
      if (ctx !== "assistant") return undefined;
      if (b.type === "redacted_thinking")
        return typeof b.data === "string"
          ? { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: b.data } } }
          : undefined;
      if (typeof b.thinking !== "string") return undefined;
      return typeof b.signature === "string"
        ? { type: "reasoning", text: b.thinking, providerOptions: { anthropic: { signature: b.signature } } }
        : { type: "reasoning", text: b.thinking };
    }
    case "tool_use":
    case "server_tool_use": {
      if (ctx !== "assistant" || typeof b.id !== "string" || typeof b.name !== "string") return undefined;
      names.set(b.id, b.name);
      const p: Obj = { type: "tool-call", toolCallId: b.id, toolName: b.name, input: b.input };
      if (b.type === "server_tool_use") p.providerExecuted = true;
      if (typeof b.thought_signature === "string")
        p.providerOptions = { google: { thoughtSignature: b.thought_signature } };
      return p;
    }
    case "tool_result":
    case "provider_tool_result": {
      if ((b.type === "tool_result") !== (ctx === "tool")) return undefined;
      if (b.type === "provider_tool_result" && ctx !== "assistant") return undefined;
      if (typeof b.tool_use_id !== "string" || typeof b.content !== "string") return undefined;
      let output: Obj = { type: b.is_error === true ? "error-text" : "text", value: b.content };
      if (Array.isArray(b.content_blocks) && b.is_error !== true) {
        const items = b.content_blocks.map(contentItemOf);
        if (items.every((x) => x !== undefined))
          output = { type: "content", value: [{ type: "text", text: b.content }, ...items] };
      }
      return {
        type: "tool-result",
        toolCallId: b.tool_use_id,
        toolName: names.get(b.tool_use_id) ?? "",
        output,
      };
    }
    case "image_url": {
      const url = isObj(b.image_url) ? b.image_url.url : undefined;
      if (ctx !== "user" || typeof url !== "string") return undefined;
      return filePartOfUrl(url);
    }
    default: {
      if (typeof b.type !== "string" || !OWN_TYPES.has(b.type)) return undefined;
      const ok =
        ctx === "tool"
          ? b.type === "tool-approval-response"
          : ctx === "user"
            ? b.type === "file" || b.type === "image"
            : ctx === "assistant" && b.type !== "tool-approval-response" && b.type !== "image";
      return ok ? (decodeValue(b) as Obj) : undefined;
    }
  }
}

/**
 * The part for a block: the AI SDK part it came from while the block still
 * says the same; else native, with the whole block carried when the part
 * alone would not give it back.
 */
function partOfBlock(b: Block, ctx: Ctx, names: Names): Obj {
  if (!(AI in b)) return freshPart(b, ctx, names);
  const carried = carriedPart(b, ctx, names);
  if (carried !== undefined) {
    if (carried.type === "tool-call") names.set(String(carried.toolCallId), String(carried.toolName));
    return carried;
  }
  // The engine rewrote the block (a bounded result, redacted text): convert what it says now,
  // keeping the original part's provider options and tool name where the kind is the same.
  const fresh = freshPart(without(b, AI) as Block, ctx, names);
  const orig = decodeValue(b[AI]);
  if (isObj(orig) && orig.type === fresh.type && (fresh.type === "text" || fresh.type === "tool-result")) {
    if (typeof orig.toolName === "string" && fresh.type === "tool-result") fresh.toolName = orig.toolName;
    const po = foreignOptions(orig.providerOptions);
    if (po !== undefined)
      fresh.providerOptions = { ...po, ...(isObj(fresh.providerOptions) ? fresh.providerOptions : {}) };
  }
  return fresh;
}

function freshPart(b: Block, ctx: Ctx, names: Names): Obj {
  const probe = names.probe();
  const part = nativePart(b as unknown as Obj, ctx, names);
  if (part !== undefined && isDeepStrictEqual(nativeBlock(part, ctx, probe), b)) return part;
  const cs = { block: b as unknown as Obj };
  if (part !== undefined) return withCs(part, cs);
  if (ctx === "assistant") return withCs({ type: "custom", kind: `${CS}.${b.type}` }, cs);
  return withCs({ type: "text", text: `[${b.type}]` }, cs);
}

// ---------------------------------------------------------------------------
// Messages.

function userCtxOf(m: Message): Ctx {
  if (m.role === "system") return "system";
  if (m.role === "assistant" || m.role === "assistant_interrupted") return "assistant";
  return "user";
}

const isToolBlock = (b: Block): boolean => b.type === "tool_result" || b.type === "tool-approval-response";

/** Converts compact-safe messages to AI SDK `ModelMessage`s. Throws a `ModelError` naming `messages[i]…` on invalid input. */
export function toModelMessages(messages: readonly Message[], path = "messages"): AiModelMessage[] {
  checkPlainData(messages, path); // a cycle, a BigInt, a throwing getter…: a ModelError naming the place
  parseMessages(messages, path);
  const names = new Names();
  const out: AiModelMessage[] = [];
  messages.forEach((m) => out.push(...messageToModel(m, names)));
  return out;
}

function messageCs(m: Message): Obj {
  const cs: Obj = {};
  if (m.meta !== undefined) {
    const rest = without(m.meta, AI);
    if (Object.keys(rest).length > 0 || !(AI in m.meta)) cs.meta = rest;
  }
  if (m.usage !== undefined) cs.usage = m.usage;
  if (m.role === "assistant_interrupted") cs.role = m.role;
  return cs;
}

function messageToModel(m: Message, names: Names): AiModelMessage[] {
  const carrier = isObj(m.meta?.[AI]) ? (m.meta[AI] as Obj) : {};
  const extra = isObj(carrier.extra) ? (decodeValue(carrier.extra) as Obj) : {};
  const cs = messageCs(m);
  const finish = (msg: Obj, first: boolean): AiModelMessage => {
    let po =
      first && isObj(carrier.providerOptions) ? (decodeValue(carrier.providerOptions) as Obj) : undefined;
    const own = first ? cs : { join: true };
    if (Object.keys(own).length > 0) po = { ...(po ?? {}), [CS]: own };
    const r: Obj = first ? { ...extra, ...msg } : msg;
    if (po !== undefined) r.providerOptions = po;
    return r as AiModelMessage;
  };
  const ctx = userCtxOf(m);
  if (ctx === "system") {
    const only = m.content.length === 1 ? m.content[0]! : undefined;
    const plain = only?.type === "text" && Object.keys(only).length === 2 && typeof only.text === "string";
    if (!plain) cs.content = m.content as unknown as Obj[];
    const text = plain
      ? (only as { text: string }).text
      : m.content
          .filter((b) => b.type === "text" && typeof (b as Obj).text === "string")
          .map((b) => (b as Obj).text as string)
          .join("\n\n");
    return [finish({ role: "system", content: text }, true)];
  }
  if (ctx === "assistant") {
    const parts = m.content.map((b) => partOfBlock(b, "assistant", names));
    return [finish({ role: "assistant", content: stringOr(parts, carrier) }, true)];
  }
  // A user message: runs of tool results become tool messages, the rest user messages.
  const asTool = carrier.role === "tool" || (m.content.length > 0 && m.content.every(isToolBlock));
  if (asTool || !m.content.some(isToolBlock)) {
    const c: Ctx = asTool ? "tool" : "user";
    const parts = m.content.map((b) => partOfBlock(b, c, names));
    return [finish({ role: c, content: c === "user" ? stringOr(parts, carrier) : parts }, true)];
  }
  const out: AiModelMessage[] = [];
  let run: Obj[] = [];
  let runCtx: Ctx | undefined;
  const flush = (): void => {
    if (runCtx !== undefined) out.push(finish({ role: runCtx, content: run }, out.length === 0));
    run = [];
  };
  for (const b of m.content) {
    const c: Ctx = isToolBlock(b) ? "tool" : "user";
    if (c !== runCtx) {
      flush();
      runCtx = c;
    }
    run.push(partOfBlock(b, c, names));
  }
  flush();
  return out;
}

function stringOr(parts: Obj[], carrier: Obj): string | Obj[] {
  if (carrier.string === true && parts.length === 1) {
    const p = parts[0]!;
    if (p.type === "text" && Object.keys(p).length === 2) return p.text as string;
  }
  return parts;
}

// ---------------------------------------------------------------------------
// AI SDK → compact-safe.

/** One line naming the first issue of the `ai` schema's verdict, at the input's own path. */
export interface SchemaLike {
  safeParse(v: unknown): { success: boolean; error?: { issues: readonly Issue[] } };
  /**
   * True when the schema accepts every message `quickMessageFromModel`
   * converts (texts, reasoning, tool calls, tool results with a text output,
   * no provider options but an Anthropic signature): such a message is then
   * converted without asking the schema.
   */
  acceptsQuickShapes?: boolean;
}
interface Issue {
  code?: string;
  path: readonly PropertyKey[];
  message: string;
  errors?: readonly (readonly Issue[])[];
}

function pathText(base: string, p: readonly PropertyKey[]): string {
  return p.reduce<string>((s, k) => (typeof k === "number" ? `${s}[${k}]` : `${s}.${String(k)}`), base);
}

/** The issue to report: inside a union, the branch whose kind (role, part type, string or array) matched. */
function pickIssue(
  issue: Issue,
  prefix: readonly PropertyKey[],
  root: unknown,
): { path: PropertyKey[]; message: string } {
  const here = [...prefix, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors && issue.errors.length > 0) {
    const discriminator = (i: Issue): boolean =>
      i.path.length === 1 && (i.path[0] === "type" || i.path[0] === "role") && i.code === "invalid_value";
    const wrongKind = (es: readonly Issue[]): boolean =>
      es.some((i) => discriminator(i) || (i.path.length === 0 && i.code === "invalid_type"));
    const branch = issue.errors.find((es) => es.length > 0 && !wrongKind(es));
    if (branch) return pickIssue(branch[0]!, here, root);
    const keys = issue.errors.flat().filter(discriminator);
    if (keys.length > 0) {
      const field = String(keys[0]!.path[0]);
      const allowed = [...new Set(keys.flatMap((i) => (i as { values?: unknown[] }).values ?? []))];
      const got = valueAt(root, [...here, field]);
      return {
        path: [...here, field],
        message: `unknown ${field} ${JSON.stringify(got) ?? "undefined"} (expected one of ${allowed.map(String).join(", ")})`,
      };
    }
    const kinds = issue.errors.flat().map((i) => i.message);
    return { path: here, message: [...new Set(kinds)].join(" or ") };
  }
  return { path: here, message: issue.message };
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const k of path) v = isObj(v) || Array.isArray(v) ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

export function schemaError(schema: SchemaLike, value: unknown, path: string): ModelError | undefined {
  const r = schema.safeParse(value);
  if (r.success) return undefined;
  const first = r.error?.issues[0];
  if (!first) return new ModelError(path, "not a valid AI SDK ModelMessage");
  const { path: p, message } = pickIssue(first, [], value);
  return new ModelError(pathText(path, p), `${message} (not a valid AI SDK ModelMessage)`);
}

export interface FromResult {
  messages: Message[];
  /** For each input message, the index of the compact-safe message that holds it. */
  indexOf: number[];
}

/**
 * Conversions of AI SDK message objects already seen, with the tool names
 * each one read and added, and the message's fingerprint when it was read.
 */
export type ConversionCache = WeakMap<object, CacheEntry>;

export interface CacheEntry {
  message: Message;
  reads: [string, string | undefined][];
  writes: [string, string][];
  fingerprint: Fingerprint;
}

/**
 * What is compared, cheaply, before a cached conversion is used again: the
 * message's role, `content` and `providerOptions` (the same values), its
 * parts (the same objects, in the same order) and what a host edits in a
 * part: its `text`, its `input`, its output's `value` (the same values; a
 * string compared by identity first, so its characters are not read again;
 * an output array also by its length). A host that edits a message in place
 * (replaces a part, adds or removes one, changes a text, swaps the content
 * or an output) is read again; an edit deep inside a tool call's input
 * object or a part's provider options is not seen: give such a message as a
 * new object.
 *
 * The values in a row: role, content, providerOptions, then for each part
 * (when the content is an array) the part, its text, its input, its
 * output's value and that value's length when it is an array. A loop's
 * conversion keeps every message's values in one array (`Reading.prints`).
 */
export type Fingerprint = readonly unknown[];

/** How many values the fingerprint keeps of each part (see `Fingerprint`). */
const PER_PART = 5;

/** Appends `m`'s fingerprint (see `Fingerprint`) to `to`. */
function pushPrint(to: unknown[], m: Obj): void {
  const c = m.content;
  to.push(m.role, c, m.providerOptions);
  if (!Array.isArray(c)) return;
  for (let i = 0; i < c.length; i++) {
    const p: unknown = c[i];
    if (!isObj(p)) {
      to.push(p, undefined, undefined, undefined, undefined);
      continue;
    }
    const v = isObj(p.output) ? p.output.value : undefined;
    to.push(p, p.text, p.input, v, Array.isArray(v) ? v.length : undefined);
  }
}

export function fingerprintOf(m: Obj): Fingerprint {
  const f: unknown[] = [];
  pushPrint(f, m);
  return f;
}

/** Whether `m` still has the fingerprint held in `f` from `from` to `to`. */
function samePrint(m: Obj, f: Fingerprint, from: number, to: number): boolean {
  const c = m.content;
  if (m.role !== f[from] || c !== f[from + 1] || m.providerOptions !== f[from + 2]) return false;
  if (!Array.isArray(c)) return true;
  if (to - from - 3 !== c.length * PER_PART) return false;
  for (let i = 0, j = from + 3; i < c.length; i++, j += PER_PART) {
    const p: unknown = c[i];
    if (p !== f[j]) return false;
    if (!isObj(p)) continue;
    if (p.text !== f[j + 1] || p.input !== f[j + 2]) return false;
    const v = isObj(p.output) ? p.output.value : undefined;
    if (v !== f[j + 3] || (Array.isArray(v) && v.length !== f[j + 4])) return false;
  }
  return true;
}

/** Test hook: how many AI SDK messages were converted (not taken from a cache) since the process started. */
export const conversionCount = { messages: 0 };

/** In a `Reading`'s log of tool names: a name looked up, a name added. */
const READ = 0;
const WRITE = 1;

/**
 * What a conversion read, and where it stands after it: the tool names, the
 * messages, the indexes, and for a memo or a cache each message object read
 * with its fingerprint and the tool names it read and added. These are kept
 * in flat arrays, by index, not in an object per message: on a long history
 * those objects were most of what the first call left for the collector.
 */
export interface Reading {
  names: Names;
  messages: Message[];
  indexOf: number[];
  /** The message objects read, by index (the host's array may change in place). */
  objects: unknown[];
  /** Their fingerprints' values, one after another: message i's from `printAt[i]` to `printAt[i + 1]`. */
  prints: unknown[];
  printAt: number[];
  /** The tool names each message read and added: (READ or WRITE, id, name), from `logAt[i]` to `logAt[i + 1]`. */
  log: unknown[];
  logAt: number[];
  /** A message as converted before a later message's parts were joined to it, by its index in `messages`. */
  unjoined: Map<number, Message>;
}

function newReading(): Reading {
  return {
    names: new Names(),
    messages: [],
    indexOf: [],
    objects: [],
    prints: [],
    printAt: [0],
    log: [],
    logAt: [0],
    unjoined: new Map(),
  };
}

/** The cache entry of message `i` of a reading (undefined for one whose parts were joined to the one before). */
function entryOf(r: Reading, i: number): CacheEntry | undefined {
  const k = r.indexOf[i]!;
  if (i > 0 && r.indexOf[i - 1] === k) return undefined;
  const reads: [string, string | undefined][] = [];
  const writes: [string, string][] = [];
  for (let j = r.logAt[i]!; j < r.logAt[i + 1]!; j += 3) {
    const id = r.log[j + 1] as string;
    if (r.log[j] === READ) reads.push([id, r.log[j + 2] as string | undefined]);
    else writes.push([id, r.log[j + 2] as string]);
  }
  const message = r.unjoined.get(k) ?? r.messages[k]!;
  return { message, reads, writes, fingerprint: r.prints.slice(r.printAt[i], r.printAt[i + 1]) };
}

function fillCache(cache: ConversionCache, r: Reading): void {
  for (let i = 0; i < r.objects.length; i++) {
    const e = entryOf(r, i);
    if (e !== undefined) cache.set(r.objects[i] as object, e);
  }
}

/**
 * Converts AI SDK `ModelMessage`s to compact-safe messages. `schema` (the
 * `ai` package's `modelMessageSchema`) validates each message first. With a
 * `cache`, a message object seen before in the same context (the same tool
 * names) and still the same by its `Fingerprint` is not validated or
 * converted again: the AI SDK passes the same objects to every step. With a
 * `memo` (see `ConversionMemo`), a call that carries on from the last one
 * reads only its new messages; the cache gets what a memo kept only when a
 * later call does not carry on from it (a loop that only appends never
 * fills it). Without a memo, the cache gets this call's messages at its end.
 */
export function fromModelMessagesIndexed(
  messages: readonly unknown[],
  schema: SchemaLike | undefined,
  path = "messages",
  cache?: ConversionCache,
  memo?: ConversionMemo,
): FromResult {
  if (!Array.isArray(messages)) throw new ModelError(path, "expected an array of AI SDK ModelMessages");
  const last = memo?.last;
  if (memo) memo.last = undefined; // kept again only when this call ends well
  let r: Reading;
  if (last && messagesStartWith(messages, last)) {
    // The last call's messages, unchanged, then new ones: carry on from where it ended, in the
    // same arrays (a copy of a long history per step costs more than the step).
    r = last;
    memo!.resumed++;
  } else {
    if (last && cache) fillCache(cache, last);
    r = newReading();
  }
  const keep = memo !== undefined || cache !== undefined;
  for (let i = r.indexOf.length; i < messages.length; i++) {
    if (!Object.hasOwn(messages, i))
      throw new ModelError(`${path}[${i}]`, "a hole in the array (a sparse array is not a list of messages)");
    const raw: unknown = messages[i];
    if (!fromCache(raw, r, cache, keep) && !readQuickly(raw, r, schema, keep))
      readMessage(raw, `${path}[${i}]`, r, schema, keep);
    r.indexOf.push(r.messages.length - 1);
    if (keep) {
      r.objects.push(raw);
      r.printAt.push(r.prints.length);
      r.logAt.push(r.log.length);
    }
  }
  if (memo) memo.last = r;
  else if (cache) fillCache(cache, r);
  return { messages: r.messages, indexOf: r.indexOf };
}

/** Takes `raw`'s conversion from the cache when it is there, still the same and read in the same context. */
function fromCache(raw: unknown, r: Reading, cache: ConversionCache | undefined, keep: boolean): boolean {
  const hit = cache !== undefined && isObj(raw) ? cache.get(raw) : undefined;
  if (hit === undefined) return false;
  const f = hit.fingerprint;
  if (!samePrint(raw as Obj, f, 0, f.length) || !hit.reads.every(([k, v]) => r.names.get(k) === v))
    return false;
  for (const [k, v] of hit.writes) r.names.set(k, v);
  r.messages.push(hit.message);
  if (keep) {
    for (const x of f) r.prints.push(x);
    for (const [k, v] of hit.reads) r.log.push(READ, k, v);
    for (const [k, v] of hit.writes) r.log.push(WRITE, k, v);
  }
  return true;
}

/** Converts one message into `r` the quick way (see `quickMessageFromModel`), when it can. */
function readQuickly(raw: unknown, r: Reading, schema: SchemaLike | undefined, keep: boolean): boolean {
  if (schema !== undefined && schema.acceptsQuickShapes !== true) return false;
  const message = quickMessageFromModel(raw, r.names, keep ? r.log : undefined, keep ? r.prints : undefined);
  if (message === undefined) return false;
  conversionCount.messages++;
  r.messages.push(message);
  return true;
}

/** Converts one message (`p` its path) into `r`, checked first (a message the quick way did not take). */
function readMessage(
  raw: unknown,
  p: string,
  r: Reading,
  schema: SchemaLike | undefined,
  keep: boolean,
): void {
  const { names } = r;
  // Before anything reads it: a cycle, a BigInt, a throwing getter… is a ModelError naming the place.
  checkPlainData(raw, p, { allow: isAiSdkLeaf });
  if (schema) {
    const err = schemaError(schema, raw, p);
    if (err) throw err;
  } else if (!isObj(raw) || typeof raw.role !== "string") throw new ModelError(p, "not a ModelMessage");
  const mm = raw as AiModelMessage;
  const out = r.messages;
  if (keep) pushPrint(r.prints, mm);
  const cs = csOf(mm.providerOptions);
  if (cs?.join === true && out.length > 0) {
    const k = out.length - 1;
    const prev = out[k]!;
    if (!r.unjoined.has(k)) r.unjoined.set(k, prev);
    const ctx: Ctx = mm.role === "tool" ? "tool" : "user";
    const more = (mm.content as AiPart[]).map((part) => blockFromPart(part, ctx, names));
    // Joined: no new message (its index is the one before's).
    out[k] = { ...prev, content: [...prev.content, ...more] };
    return;
  }
  const reads: [string, string | undefined][] = [];
  const writes: [string, string][] = [];
  if (keep) {
    names.reads = reads;
    names.writes = writes;
  }
  try {
    out.push(messageFromModel(mm, names));
  } finally {
    names.reads = undefined;
    names.writes = undefined;
  }
  conversionCount.messages++;
  for (const [k, v] of reads) r.log.push(READ, k, v);
  for (const [k, v] of writes) r.log.push(WRITE, k, v);
}

/**
 * Where one agent loop's last conversion ended (see `Reading`). A step whose
 * messages start with the very same objects, each still the same by its
 * fingerprint, is converted from there on: the messages before are neither
 * looked up nor read again. The arrays a call with a memo returns are the
 * memo's own: valid until its next call (copy them to keep them across an
 * `await`).
 */
export interface ConversionMemo {
  last: Reading | undefined;
  /** Test hook: how many calls carried on from the last one. */
  resumed: number;
}

export function conversionMemo(): ConversionMemo {
  return { last: undefined, resumed: 0 };
}

function messagesStartWith(messages: readonly unknown[], last: Reading): boolean {
  const prefix = last.objects;
  if (prefix.length > messages.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    const m = messages[i];
    if (m !== prefix[i] || !samePrint(m as Obj, last.prints, last.printAt[i]!, last.printAt[i + 1]!))
      return false;
  }
  return true;
}

/** The non-plain values an AI SDK message may hold (binary data, URLs): leaves of plain data. */
function isAiSdkLeaf(v: object): boolean {
  return v instanceof URL || v instanceof ArrayBuffer || ArrayBuffer.isView(v);
}

/** A block for a part, keeping the whole part when the block alone would not give it back. */
function blockFromPart(part: AiPart, ctx: Ctx, names: Names): Block {
  const quick = plainBlockOfPart(part, ctx, names);
  if (quick !== undefined) return quick;
  const probe = names.probe();
  const b = blockOfPart(part, ctx, names);
  const back = partOfBlock(b, ctx, probe);
  if (isDeepStrictEqual(back, part)) return b;
  return { ...b, [AI]: encodeValue(part) };
}

/**
 * Whether `o` is a plain object whose own enumerable properties (what a deep
 * comparison compares) are exactly the keys of `bits` (a sum of the `K_`
 * constants), with no symbol-keyed one.
 */
const hasExactly = (o: unknown, bits: number): boolean => keyBits(o) === bits && !hasSymbols(o as object);

/**
 * The block of the parts that most messages are made of, when the part is
 * exactly what its block gives back (no other field, no provider options but
 * an Anthropic signature): a text, a reasoning, a tool call, a tool result
 * with a text output and the tool name the call gave. `blockFromPart` would
 * find the same block after converting it back and comparing; this says so
 * from the part's shape. Anything else: undefined (the round trip decides).
 */
function plainBlockOfPart(part: Obj, ctx: Ctx, names: Names): Block | undefined {
  switch (part.type) {
    case "text":
      return plainTextBlock(part);
    case "reasoning":
      return ctx === "assistant" ? quickThinkingBlock(part, keyBits(part)) : undefined;
    case "tool-call": {
      const { toolCallId: id, toolName: name } = part;
      if (ctx !== "assistant" || typeof id !== "string" || typeof name !== "string") return undefined;
      if (!hasExactly(part, K_TYPE + K_CALL_ID + K_TOOL_NAME + K_INPUT)) return undefined;
      names.set(id, name);
      return { type: "tool_use", id, name, input: part.input };
    }
    case "tool-result": {
      const { toolCallId: id, toolName: name, output } = part;
      if (ctx !== "tool" || typeof id !== "string" || typeof name !== "string") return undefined;
      if (
        !hasExactly(part, K_TYPE + K_CALL_ID + K_TOOL_NAME + K_OUTPUT) ||
        !hasExactly(output, K_TYPE + K_VALUE)
      )
        return undefined;
      const { type, value } = output as Obj;
      const error = type === "error-text";
      if (typeof value !== "string" || (!error && type !== "text")) return undefined;
      // The part names the tool that the call before it named (else its name is kept with the block).
      if ((names.get(id) ?? "") !== name) return undefined;
      return error
        ? { type: "tool_result", tool_use_id: id, content: value, is_error: true }
        : { type: "tool_result", tool_use_id: id, content: value };
    }
    default:
      return undefined;
  }
}

/** A text part as its block (see `plainBlockOfPart`). */
function plainTextBlock(part: Obj): Block | undefined {
  return typeof part.text === "string" && hasExactly(part, K_TYPE + K_TEXT)
    ? { type: "text", text: part.text }
    : undefined;
}

/**
 * The messages most histories are made of, converted in one read of each
 * value: `{ role, content }` and nothing else, a string content or parts that
 * `plainBlockOfPart` gives back exactly (text, reasoning, tool calls, tool
 * results with a text output). The result is the one `messageFromModel`
 * gives after `checkPlainData` and the schema (every message taken here is
 * plain data and valid for the `ai` schema: a subset of what
 * `surelyValidModelMessage` accepts), with the same tool names read and
 * added, in the same order; the checks and the conversion each walked the
 * message, most of the first call's cost on a long history. Anything else,
 * or a read that throws: undefined, before any name is added, and the
 * message goes the long way (which names its problem).
 */
export function quickMessageFromModel(
  raw: unknown,
  names: Names,
  log?: unknown[],
  prints?: unknown[],
): Message | undefined {
  let role: unknown;
  let content: unknown;
  try {
    // A symbol-keyed field of the message itself is not read by the long way either (it reads the
    // message's fields by name and its other fields with `Object.keys`): not looked for here.
    if (keyBits(raw) !== K_ROLE + K_CONTENT) return undefined;
    role = (raw as Obj).role;
    content = (raw as Obj).content;
    if (typeof content === "string") {
      if (role !== "system" && role !== "user" && role !== "assistant") return undefined;
      prints?.push(role, content, undefined);
      if (role === "system") return { role: "system", content: [{ type: "text", text: content }] };
      return { role, content: [{ type: "text", text: content }], meta: { [AI]: { string: true } } };
    }
    if (role !== "user" && role !== "assistant" && role !== "tool") return undefined;
    const blocks = quickBlocks(content, role, names, log, prints);
    return blocks && { role: role === "assistant" ? "assistant" : "user", content: blocks };
  } catch {
    return undefined;
  }
}

/** The JSON values of the message around the parts: itself, its role, its content array. */
const MESSAGE_VALUES = 3;

/**
 * The blocks of the message being read quickly, reused by the next message
 * and copied out at their own length: an array grown by `push` had room for
 * 16 (most messages have one to three blocks), garbage on every message.
 */
const scratch: Block[] = [];
/** The parts those blocks were read from, and their types, by index. */
const scratchParts: Obj[] = [];
const scratchTypes: string[] = [];
/** Counts the uses of `scratch`: a read that ran another conversion (a getter) is seen, not trusted. */
let scratchUses = 0;

/**
 * The blocks of a content array of quick parts (see `quickMessageFromModel`),
 * or undefined. Every part is read and checked before a tool name is looked
 * up or added. The tool calls' inputs (any JSON value, or a URL or bytes) are
 * checked as plain data, as deep as they sit in the message, and the values
 * of the whole message are counted against the limit as `checkPlainData`
 * counts them: most inputs are one object of strings and numbers, counted
 * as the walk counts it (`flatSize`); when one is not, all are walked.
 */
function quickBlocks(
  content: unknown,
  role: "user" | "assistant" | "tool",
  names: Names,
  log: unknown[] | undefined,
  prints: unknown[] | undefined,
): Block[] | undefined {
  if (!Array.isArray(content) || Object.getPrototypeOf(content) !== Array.prototype) return undefined;
  const n = content.length;
  if (n === 0) return undefined;
  const use = ++scratchUses;
  let values = MESSAGE_VALUES;
  let inputs = 0;
  let walk = false;
  for (let i = 0; i < n; i++) {
    if (!Object.hasOwn(content, i)) return undefined;
    const p: unknown = content[i];
    if (!isObj(p)) return undefined;
    // Told apart by the part's type from here on (four shapes), not the block's (six).
    const type = p.type;
    const b = quickBlock(p, type, role, names);
    if (b === undefined) return undefined;
    scratch[i] = b;
    scratchParts[i] = p;
    scratchTypes[i] = type as string;
    if (type === "tool-call") {
      const flat = flatValues((b as ToolUseBlock).input);
      if (flat === 0) walk = true;
      inputs += flat;
      values += 4;
    } else
      values += type === "tool-result" ? 7 : (b as { signature?: string }).signature !== undefined ? 6 : 3;
  }
  if (scratchUses !== use) return undefined;
  const blocks = scratch.slice(0, n);
  if (walk) {
    const size = walkedInputsSize(blocks);
    if (size === undefined) return undefined;
    values += size;
  } else values += inputs;
  if (values > CONSTANTS.maxJsonValues) return undefined;
  // Checked: the names now, in the parts' order (recorded as the long way records them).
  for (let i = 0; i < n; i++) {
    const type = scratchTypes[i];
    if (type === "tool-call") {
      const b = blocks[i] as ToolUseBlock;
      names.set(b.id, b.name);
      log?.push(WRITE, b.id, b.name);
    } else if (type === "tool-result") {
      const id = (blocks[i] as ToolResultBlock).tool_use_id;
      log?.push(READ, id, names.get(id));
    }
  }
  if (prints !== undefined) pushQuickPrint(prints, role, content, blocks);
  return blocks;
}

/**
 * Appends a quick message's fingerprint (see `Fingerprint`) to `prints`,
 * from the values read (`scratchParts` and `scratchTypes` hold its parts):
 * each part has its one value (its text, its input or its output's text) and
 * no other field.
 */
function pushQuickPrint(prints: unknown[], role: string, content: unknown, blocks: readonly Block[]): void {
  prints.push(role, content, undefined);
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!;
    const p = scratchParts[i];
    switch (scratchTypes[i]) {
      case "text":
        prints.push(p, (b as TextBlock).text, undefined, undefined, undefined);
        break;
      case "reasoning":
        prints.push(p, (b as ThinkingBlock).thinking, undefined, undefined, undefined);
        break;
      case "tool-call":
        prints.push(p, undefined, (b as ToolUseBlock).input, undefined, undefined);
        break;
      default:
        prints.push(p, undefined, undefined, (b as ToolResultBlock).content, undefined);
    }
  }
}

/** One part of a quick message as its block (see `quickMessageFromModel`), or undefined. */
function quickBlock(
  p: Obj,
  type: unknown,
  role: "user" | "assistant" | "tool",
  names: Names,
): Block | undefined {
  // Its keys read once (see `keyBits`); its symbols looked for once it has the keys of its type.
  const keys = keyBits(p);
  if (type === "text") {
    const text = p.text;
    if (role === "tool" || keys !== K_TYPE + K_TEXT || typeof text !== "string" || hasSymbols(p))
      return undefined;
    return { type: "text", text };
  }
  if (role === "assistant") {
    if (type === "reasoning") return quickThinkingBlock(p, keys);
    if (type !== "tool-call") return undefined;
    const { toolCallId: id, toolName: name } = p;
    if (typeof id !== "string" || typeof name !== "string") return undefined;
    if (keys !== K_TYPE + K_CALL_ID + K_TOOL_NAME + K_INPUT || hasSymbols(p)) return undefined;
    return { type: "tool_use", id, name, input: p.input };
  }
  if (type !== "tool-result" || role !== "tool") return undefined;
  const { toolCallId: id, toolName: name, output } = p;
  if (typeof id !== "string" || typeof name !== "string") return undefined;
  if (keys !== K_TYPE + K_CALL_ID + K_TOOL_NAME + K_OUTPUT || hasSymbols(p)) return undefined;
  if (!hasExactly(output, K_TYPE + K_VALUE)) return undefined;
  const { type: kind, value } = output as Obj;
  if (typeof value !== "string" || (kind !== "text" && kind !== "error-text")) return undefined;
  // The part names the tool that the call before it named (else its name is kept with the block).
  if ((names.peek(id) ?? "") !== name) return undefined;
  return kind === "error-text"
    ? { type: "tool_result", tool_use_id: id, content: value, is_error: true }
    : { type: "tool_result", tool_use_id: id, content: value };
}

/** A reasoning part of an assistant message (`keys` its `keyBits`) as its block (see `plainBlockOfPart`). */
function quickThinkingBlock(p: Obj, keys: number): Block | undefined {
  const text = p.text;
  if (typeof text !== "string" || hasSymbols(p)) return undefined;
  if (keys === K_TYPE + K_TEXT) return { type: "thinking", thinking: text };
  if (keys !== K_TYPE + K_TEXT + K_OPTIONS) return undefined;
  const po = p.providerOptions as Obj;
  if (!hasExactly(po, K_ANTHROPIC)) return undefined;
  const a = po.anthropic as Obj;
  if (!hasExactly(a, K_SIGNATURE)) return undefined;
  const signature = a.signature;
  return typeof signature === "string" ? { type: "thinking", thinking: text, signature } : undefined;
}

/**
 * The keys of the quick shapes, one bit each (`keyBits`): a set of keys is
 * the sum of its bits.
 */
const K_TYPE = 1;
const K_TEXT = 2;
const K_OPTIONS = 4;
const K_CALL_ID = 8;
const K_TOOL_NAME = 16;
const K_INPUT = 32;
const K_OUTPUT = 64;
const K_VALUE = 128;
const K_ANTHROPIC = 256;
const K_SIGNATURE = 512;
const K_ROLE = 1024;
const K_CONTENT = 2048;

/** The bit of a key of the quick shapes; 0 for any other key. */
function keyBit(k: string): number {
  switch (k) {
    case "type":
      return K_TYPE;
    case "text":
      return K_TEXT;
    case "providerOptions":
      return K_OPTIONS;
    case "toolCallId":
      return K_CALL_ID;
    case "toolName":
      return K_TOOL_NAME;
    case "input":
      return K_INPUT;
    case "output":
      return K_OUTPUT;
    case "value":
      return K_VALUE;
    case "anthropic":
      return K_ANTHROPIC;
    case "signature":
      return K_SIGNATURE;
    case "role":
      return K_ROLE;
    case "content":
      return K_CONTENT;
    default:
      return 0;
  }
}

/**
 * The own enumerable string-keyed properties of a plain object, as the sum
 * of their bits (the `K_` constants), read in one `for in` with
 * `Object.hasOwn` (which allocate nothing; an inherited enumerable key is not
 * own); -1 for anything else: not a plain object, or a key of no quick shape.
 * Its symbol-keyed properties are not looked at (`hasSymbols`).
 */
function keyBits(o: unknown): number {
  if (typeof o !== "object" || o === null || Object.getPrototypeOf(o) !== Object.prototype) return -1;
  let bits = 0;
  for (const k in o) {
    const bit = keyBit(k);
    if (bit === 0 || !Object.hasOwn(o, k)) return -1;
    bits += bit;
  }
  return bits;
}

/** Whether `o` has symbol-keyed properties (a deep comparison compares the enumerable ones). */
const hasSymbols = (o: object): boolean => Object.getOwnPropertySymbols(o).length > 0;

/** The JSON values of a tool call's input when it needs no walk (a primitive, a flat object or array), else 0. */
function flatValues(x: unknown): number {
  if (typeof x === "string" || typeof x === "number" || typeof x === "boolean" || x == null) return 1;
  return typeof x === "object" ? flatSize(x) : 0;
}

/**
 * The JSON values of a message's tool-call inputs, walked together as
 * `checkPlainData` walks them (objects they share counted as it counts
 * them), or undefined when they are not plain data.
 */
function walkedInputsSize(blocks: readonly Block[]): number | undefined {
  const inputs: unknown[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!;
    if (b.type === "tool_use") inputs.push((b as ToolUseBlock).input);
  }
  // The inputs sit at the fourth level (message, content, part, input); their array is the third.
  const walked = plainDataSize(inputs, { allow: isAiSdkLeaf, limit: MAX_MESSAGE_DEPTH - 2 });
  return typeof walked === "number" ? walked - 1 : undefined;
}

function messageFromModel(mm: AiModelMessage, names: Names): Message {
  const cs = csOf(mm.providerOptions) ?? {};
  const ctx: Ctx = mm.role === "tool" ? "tool" : mm.role;
  let content: Block[];
  if (mm.role === "system") {
    content = Array.isArray(cs.content)
      ? (structuredClone(cs.content) as Block[])
      : [{ type: "text", text: String(mm.content) }];
  } else if (typeof mm.content === "string") {
    content = [{ type: "text", text: mm.content }];
  } else {
    content = mm.content.map((part) => blockFromPart(part, ctx, names));
  }
  const role: Role =
    mm.role === "assistant"
      ? cs.role === "assistant_interrupted"
        ? "assistant_interrupted"
        : "assistant"
      : mm.role === "system"
        ? "system"
        : "user";
  const m: Message = { role, content };
  if (isObj(cs.usage)) m.usage = structuredClone(cs.usage);
  const carrier: Obj = {};
  if (typeof mm.content === "string" && mm.role !== "system") carrier.string = true;
  if (mm.role === "tool" && !(content.length > 0 && content.every(isToolBlock))) carrier.role = "tool";
  const po = foreignOptions(mm.providerOptions);
  if (po !== undefined) carrier.providerOptions = encodeValue(po);
  // An explicit `providerOptions: undefined` is kept with the other fields the message has.
  const skipOptions = isObj(mm.providerOptions);
  const own = (k: string): boolean =>
    k === "role" || k === "content" || (skipOptions && k === "providerOptions");
  if (!Object.keys(mm).every(own)) {
    const extra = without(mm, "role", "content", ...(skipOptions ? ["providerOptions"] : []));
    if (Object.keys(extra).length > 0) carrier.extra = encodeValue(extra);
  }
  const meta = isObj(cs.meta) ? (structuredClone(cs.meta) as Obj) : undefined;
  if (Object.keys(carrier).length > 0) m.meta = { ...(meta ?? {}), [AI]: carrier };
  else if (meta !== undefined) m.meta = meta;
  return m;
}

/** Reads back the carried part of a block when the block still says what the part said. */
function carriedPart(b: Block, ctx: Ctx, names: Names): Obj | undefined {
  const carried = (b as Obj)[AI];
  if (carried === undefined) return undefined;
  const part = decodeValue(carried) as Obj;
  const bare = without(b as Obj, AI) as Block;
  const probe = names.probe();
  if (!isDeepStrictEqual(blockOfPart(part, ctx, probe), bare)) return undefined;
  return part;
}

// ---------------------------------------------------------------- documents of ModelMessages

const MODEL_MESSAGE_ROLES = new Set(["system", "user", "assistant", "tool"]);
/** Part types only the AI SDK writes (Anthropic's are snake_case, OpenAI's have no parts like these). */
const AI_SDK_PART_TYPES = new Set([
  "tool-call",
  "tool-result",
  "tool-approval-request",
  "tool-approval-response",
  "reasoning-file",
]);

/** The message list of a document (an array, or `{ messages }`), if it is one. */
export function aiSdkMessagesOf(doc: unknown): unknown[] | undefined {
  if (Array.isArray(doc)) return doc;
  if (isRecord(doc) && Array.isArray(doc.messages)) return doc.messages;
  return undefined;
}

function isAiSdkPart(p: unknown): boolean {
  return (
    isRecord(p) &&
    typeof p.type === "string" &&
    (AI_SDK_PART_TYPES.has(p.type) ||
      "toolCallId" in p ||
      (p.type === "file" && typeof p.mediaType === "string") ||
      (p.type === "image" && "image" in p) ||
      (p.type === "reasoning" && typeof p.text === "string"))
  );
}

/**
 * True when a document is AI SDK `ModelMessage`s: a message list whose every
 * item has a role, with at least one AI SDK-only part (`tool-call` /
 * `tool-result` with a `toolCallId`, a `file` with a `mediaType`…) or a
 * `tool` message whose content is a list of parts.
 */
export function looksLikeAiSdk(doc: unknown): boolean {
  const list = aiSdkMessagesOf(doc);
  if (!list || list.length === 0) return false;
  if (!list.every((m) => isRecord(m) && typeof m.role === "string")) return false;
  return list.some(
    (m) =>
      isRecord(m) &&
      Array.isArray(m.content) &&
      (m.content.some(isAiSdkPart) || (m.role === "tool" && m.content.length > 0)),
  );
}

const nonEmpty = (v: unknown): boolean => typeof v === "string" && v !== "";

/** What a part breaks of the AI SDK's rules for its place, or undefined. */
function partProblem(p: unknown, role: string): string | undefined {
  if (!isRecord(p)) return "is not an object";
  if (typeof p.type !== "string") return `has no string "type"`;
  const t = p.type;
  if ((t === "text" || t === "reasoning") && typeof p.text !== "string")
    return `(${t}): "text" must be a string`;
  if (t === "tool-call") {
    if (role !== "assistant") return `(tool-call): a tool call belongs to an assistant message, not ${role}`;
    if (!nonEmpty(p.toolCallId)) return `(tool-call): "toolCallId" must be a non-empty string`;
    if (!nonEmpty(p.toolName)) return `(tool-call): "toolName" must be a non-empty string`;
    if (!("input" in p)) return `(tool-call): "input" is missing`;
  }
  if (t === "tool-result") {
    if (role !== "tool" && role !== "assistant")
      return `(tool-result): a tool result belongs to a tool message, not ${role}`;
    if (!nonEmpty(p.toolCallId)) return `(tool-result): "toolCallId" must be a non-empty string`;
    if (typeof p.toolName !== "string") return `(tool-result): "toolName" must be a string`;
    if (!isRecord(p.output) || typeof p.output.type !== "string")
      return `(tool-result): "output" must be an object with a "type" (text, json, error-text, content…)`;
  }
  if (role === "tool" && t !== "tool-result" && t !== "tool-approval-response")
    return `(${t}): a tool message holds only tool-result and tool-approval-response parts`;
  return undefined;
}

/** What a message breaks of the AI SDK's rules, or undefined. */
export function aiSdkMessageProblem(m: unknown): string | undefined {
  if (!isRecord(m)) return "it is not an object";
  if (typeof m.role !== "string" || !MODEL_MESSAGE_ROLES.has(m.role))
    return `"role" is ${JSON.stringify(m.role)} (expected system, user, assistant or tool)`;
  const { role, content } = m;
  if (role === "system")
    return typeof content === "string" ? undefined : `a system message's "content" must be a string`;
  if (role === "tool" && !Array.isArray(content))
    return `a tool message's "content" must be an array of parts`;
  if (typeof content === "string") return undefined;
  if (!Array.isArray(content)) return `"content" must be a string or an array of parts`;
  for (let i = 0; i < content.length; i++) {
    const why = partProblem(content[i], role);
    if (why !== undefined) return `content[${i}] ${why}`;
  }
  return undefined;
}
