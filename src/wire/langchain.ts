/**
 * LangChain.js messages in their stored form (`{ type, data }`, what
 * `mapChatMessagesToStoredMessages` writes and `mapStoredMessagesToChatMessages`
 * reads) converted to compact-safe messages and back, without loss. Pure: no
 * `@langchain/*` import, so the CLI reads LangChain dumps without the peer
 * installed; the `compact-safe/langchain` adapter turns `BaseMessage`
 * instances into this form and back.
 *
 * LangChain → compact-safe:
 * - `human` → `user`, `system` → `system`, `ai` → `assistant` (its
 *   `tool_calls` become `tool_use` blocks after the content, unless the
 *   content already holds a `tool_use` block with that id, as Anthropic's
 *   messages do; `usage_metadata` becomes `usage`), `tool` → a `user` message
 *   with one `tool_result` (`tool_call_id`, `status: "error"` as `is_error`,
 *   text content as `content`, other content parts as `content_blocks`);
 *   `generic` and `function` messages by their role.
 * - Content blocks are kept as they are (`text`, `thinking` with its
 *   `signature`, `redacted_thinking`, `image_url`, provider blocks). A
 *   `reasoning` block becomes a `thinking` block marked `lc_type: "reasoning"`;
 *   a string `image_url` becomes `{ url }` marked `lc_image_url: "string"`; a
 *   `tool_use` block in an AI message's content is marked `lc_in_content`; a
 *   part compact-safe cannot hold as a block becomes `{ type: "langchain",
 *   block }`.
 * - Everything else of the message (`id`, `name`, `additional_kwargs`,
 *   `response_metadata`, `usage_metadata`, `invalid_tool_calls`, `artifact`,
 *   a `status` of `success`, the content's array form, tool calls that the
 *   blocks do not reproduce exactly) is kept on `meta.langchain`.
 *
 * compact-safe → LangChain: the reverse. A `user` message's `tool_result`
 * blocks each become a `tool` message (its other blocks a `human` one); when
 * one message becomes several, each carries `additional_kwargs.compact_safe.part
 * = [k, n]` so that they are read back as one. What LangChain has no place
 * for (the message's `meta`, a `usage` the `usage_metadata` does not
 * reproduce, the role `assistant_interrupted`, extra fields of a
 * `tool_result` or `tool_use`, the place of a `tool_use` between other
 * blocks) is carried in `additional_kwargs.compact_safe`, which LangChain's
 * provider integrations do not send.
 */
import type { Block, Message, Role, Usage } from "../model/index.js";
import { ModelError } from "../model/schema.js";
import { isRecord } from "./common.js";

/** One message as LangChain stores it (`BaseMessage.toDict()`). */
export interface LangChainStoredMessage {
  type: string;
  data: Record<string, unknown>;
}

/**
 * A LangChain message that cannot be read: a `ModelError` (code
 * `invalid_message`) whose `path` is the input's own place
 * (`messages[3].data.content`).
 */
export class LangChainMessageError extends ModelError {
  constructor(
    path: string,
    readonly reason: string,
  ) {
    super(path, reason);
    this.name = "LangChainMessageError";
  }
}

/** The stored-message types this converter reads. */
export const LANGCHAIN_MESSAGE_TYPES = ["human", "ai", "system", "tool", "generic", "function"] as const;

/** The key in `additional_kwargs` that carries what LangChain has no place for. */
export const COMPACT_SAFE_KWARG = "compact_safe";

type Rec = Record<string, unknown>;

/** True for a stored LangChain message (`{ type, data }` with a known type). */
export function isLangChainStored(v: unknown): v is LangChainStoredMessage {
  return (
    isRecord(v) &&
    typeof v.type === "string" &&
    (LANGCHAIN_MESSAGE_TYPES as readonly string[]).includes(v.type) &&
    isRecord(v.data)
  );
}

const json = (v: unknown): string => JSON.stringify(v);
const same = (a: unknown, b: unknown): boolean => json(a) === json(b);
const isEmptyRecord = (v: unknown): boolean => isRecord(v) && Object.keys(v).length === 0;

function without(o: Rec, ...keys: string[]): Rec {
  const out: Rec = {};
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k) && v !== undefined) out[k] = v;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Content blocks

/** True when `b` has the fields compact-safe requires of a block of its type. */
function fitsBlock(b: Rec): boolean {
  switch (b.type) {
    case "text":
      return typeof b.text === "string";
    case "thinking":
      return typeof b.thinking === "string" && (b.signature === undefined || typeof b.signature === "string");
    case "redacted_thinking":
      return typeof b.data === "string";
    case "tool_use":
      return typeof b.id === "string" && typeof b.name === "string" && "input" in b;
    case "tool_result":
      return (
        typeof b.tool_use_id === "string" &&
        typeof b.content === "string" &&
        (b.content_blocks === undefined || Array.isArray(b.content_blocks))
      );
    case "image_url":
      return isRecord(b.image_url) && typeof b.image_url.url === "string";
    default:
      return typeof b.type === "string";
  }
}

/** One LangChain content part as a compact-safe block. */
function partToBlock(part: unknown, inAi: boolean): Block {
  if (isRecord(part)) {
    if (part.type === "reasoning" && typeof part.reasoning === "string" && !("thinking" in part)) {
      const { reasoning, ...rest } = part;
      return { ...rest, type: "thinking", thinking: reasoning, lc_type: "reasoning" };
    }
    if (part.type === "image_url" && typeof part.image_url === "string") {
      return { ...part, type: "image_url", image_url: { url: part.image_url }, lc_image_url: "string" };
    }
    if (fitsBlock(part) && !("lc_type" in part) && !("lc_image_url" in part) && !("lc_in_content" in part)) {
      if (part.type === "langchain") return { type: "langchain", block: part };
      if (inAi && part.type === "tool_use") return { ...(part as Block), lc_in_content: true };
      return part as Block;
    }
  }
  return { type: "langchain", block: part };
}

/** A compact-safe block as a LangChain content part. */
function blockToPart(b: Block): unknown {
  const r = b as Rec;
  if (b.type === "langchain" && "block" in r) return r.block;
  if (b.type === "thinking" && r.lc_type === "reasoning") {
    const { thinking, ...rest } = r;
    return { ...without(rest, "lc_type"), type: "reasoning", reasoning: thinking };
  }
  if (b.type === "image_url" && r.lc_image_url === "string" && isRecord(r.image_url)) {
    return { ...without(r, "lc_image_url"), image_url: r.image_url.url };
  }
  if (b.type === "tool_use" && r.lc_in_content === true) return without(r, "lc_in_content");
  return b;
}

/** True when a message's blocks become a plain string content: one text block with nothing else. */
function isStringForm(blocks: readonly Block[]): boolean {
  if (blocks.length === 0) return true;
  if (blocks.length !== 1) return false;
  const b = blocks[0] as Rec;
  return b.type === "text" && Object.keys(b).length === 2 && typeof b.text === "string";
}

function contentToBlocks(content: unknown, inAi: boolean, path: string): { blocks: Block[]; array: boolean } {
  if (typeof content === "string")
    return { blocks: content === "" ? [] : [{ type: "text", text: content }], array: false };
  if (Array.isArray(content)) return { blocks: content.map((p) => partToBlock(p, inAi)), array: true };
  throw new LangChainMessageError(`${path}.content`, "must be a string or an array of content parts");
}

function blocksToContent(blocks: readonly Block[], arrayForm: boolean): unknown {
  if (!arrayForm && isStringForm(blocks))
    return blocks.length === 0 ? "" : (blocks[0] as { text: string }).text;
  return blocks.map(blockToPart);
}

// ---------------------------------------------------------------------------------------------
// Usage

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** compact-safe usage from LangChain's `usage_metadata` (its `input_tokens` include cached tokens). */
export function usageFromMetadata(um: unknown): Usage | undefined {
  if (!isRecord(um)) return undefined;
  const input = num(um.input_tokens);
  const output = num(um.output_tokens);
  const details = isRecord(um.input_token_details) ? um.input_token_details : {};
  const read = num(details.cache_read);
  const creation = num(details.cache_creation);
  const u: Usage = {};
  if (input !== undefined) u.input_tokens = Math.max(0, input - (read ?? 0) - (creation ?? 0));
  if (output !== undefined) u.output_tokens = output;
  if (creation !== undefined) u.cache_creation_input_tokens = creation;
  if (read !== undefined) u.cache_read_input_tokens = read;
  return Object.keys(u).length > 0 ? u : undefined;
}

/** LangChain's `usage_metadata` from compact-safe usage. */
function metadataFromUsage(u: Usage): Rec {
  const input =
    (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
  const output = u.output_tokens ?? 0;
  const um: Rec = { input_tokens: input, output_tokens: output, total_tokens: input + output };
  const details: Rec = {};
  if (u.cache_read_input_tokens !== undefined) details.cache_read = u.cache_read_input_tokens;
  if (u.cache_creation_input_tokens !== undefined) details.cache_creation = u.cache_creation_input_tokens;
  if (Object.keys(details).length > 0) um.input_token_details = details;
  return um;
}

// ---------------------------------------------------------------------------------------------
// LangChain → compact-safe

export interface Read {
  message: Message;
  /** `[k, n]` when this message is part k of n of one compact-safe message. */
  part?: [number, number];
  /** This part's LangChain-only fields (kept per part when parts are joined). */
  lc: Rec;
}

function derivedToolCalls(blocks: readonly Block[], typed: boolean): Rec[] {
  const out: Rec[] = [];
  for (const b of blocks) {
    if (b.type !== "tool_use") continue;
    const r = b as Rec;
    out.push(
      typed
        ? { name: r.name, args: r.input, id: r.id, type: "tool_call" }
        : { name: r.name, args: r.input, id: r.id },
    );
  }
  return out;
}

function roleOfGeneric(role: unknown): Role {
  if (role === "assistant" || role === "ai") return "assistant";
  if (role === "system" || role === "developer") return "system";
  return "user";
}

/** Test hook: how many stored LangChain messages were read since the process started. */
export const langChainReadCount = { messages: 0 };

/** A stored `tool` message's content as one `tool_result` block (what LangChain does not say kept on `lc`). */
function storedToolResult(data: Rec, dpath: string, lc: Rec, cs: Rec): Block {
  if (typeof data.tool_call_id !== "string")
    throw new LangChainMessageError(
      `${dpath}.tool_call_id`,
      "a tool message needs its tool_call_id (a string)",
    );
  const result: Rec = { type: "tool_result", tool_use_id: data.tool_call_id, content: "" };
  if (typeof data.content === "string") result.content = data.content;
  else if (Array.isArray(data.content)) {
    const parts = data.content.map((p) => partToBlock(p, false));
    const first = parts[0] as Rec | undefined;
    if (first && first.type === "text" && Object.keys(first).length === 2 && typeof first.text === "string") {
      result.content = first.text;
      result.content_blocks = parts.slice(1);
    } else {
      result.content_blocks = parts;
      lc.tool_text = false;
    }
  } else throw new LangChainMessageError(`${dpath}.content`, "must be a string or an array of content parts");
  if (data.status === "error") result.is_error = true;
  else if (data.status !== undefined) lc.status = data.status;
  if (isRecord(cs.block)) Object.assign(result, cs.block);
  return result as Block;
}

/** A stored `ai` message's `tool_calls` as `tool_use` blocks (where they sat), and its usage. */
function readAiCalls(
  data: Rec,
  blocks: Block[],
  lc: Rec,
  cs: Rec,
): { content: Block[]; usage: Usage | undefined } {
  let content = blocks;
  let usage: Usage | undefined;
  const calls = Array.isArray(data.tool_calls) ? data.tool_calls : [];
  const inContent = new Set(blocks.filter((b) => b.type === "tool_use").map((b) => (b as Rec).id));
  const extras = isRecord(cs.tool_use) ? cs.tool_use : {};
  const before = content.length;
  calls.forEach((tc, j) => {
    if (!isRecord(tc)) return;
    const id = typeof tc.id === "string" && tc.id !== "" ? tc.id : `lc_call_${j}`;
    if (inContent.has(id)) return;
    const use: Rec = {
      type: "tool_use",
      id,
      name: typeof tc.name === "string" ? tc.name : "",
      input: tc.args ?? {},
    };
    if (isRecord(extras[id])) Object.assign(use, extras[id]);
    content.push(use as Block);
  });
  // Places of tool_use blocks that sat between other blocks.
  if (Array.isArray(cs.tool_use_at))
    content = placeToolUses(content, content.length - before, cs.tool_use_at as unknown[]);
  if (!same(derivedToolCalls(content, true), calls)) {
    if (same(derivedToolCalls(content, false), calls)) lc.tool_calls_untyped = true;
    else if (data.tool_calls !== undefined) lc.tool_calls = data.tool_calls;
  }
  if (data.tool_calls === undefined && calls.length === 0) lc.no_tool_calls = true;
  // A usage_metadata written from a carried usage is that usage's, not LangChain's own.
  const written = isRecord(cs.usage) && same(metadataFromUsage(cs.usage as Usage), data.usage_metadata);
  if (data.usage_metadata !== undefined && !written) {
    lc.usage_metadata = data.usage_metadata;
    usage = usageFromMetadata(data.usage_metadata);
  }
  return { content, usage };
}

/** One stored LangChain message as one compact-safe message (its part marker read, not yet joined). */
function readStored(entry: unknown, path: string): Read {
  langChainReadCount.messages++;
  if (!isRecord(entry) || typeof entry.type !== "string" || !isRecord(entry.data))
    throw new LangChainMessageError(path, 'not a LangChain stored message ({ "type", "data" })');
  const type = entry.type;
  if (!(LANGCHAIN_MESSAGE_TYPES as readonly string[]).includes(type))
    throw new LangChainMessageError(
      `${path}.type`,
      `unknown LangChain message type ${JSON.stringify(type)} (expected one of ${LANGCHAIN_MESSAGE_TYPES.join(", ")})`,
    );
  const data = entry.data;
  const dpath = `${path}.data`;
  const kwargs = isRecord(data.additional_kwargs) ? { ...data.additional_kwargs } : undefined;
  const cs = kwargs && isRecord(kwargs[COMPACT_SAFE_KWARG]) ? kwargs[COMPACT_SAFE_KWARG] : {};
  if (kwargs) delete kwargs[COMPACT_SAFE_KWARG];
  // Fields read natively below are dropped from what is kept on meta.langchain.
  const lc: Rec = without(
    data,
    "content",
    "additional_kwargs",
    "tool_calls",
    "tool_call_id",
    "status",
    "usage_metadata",
  );
  if (data.additional_kwargs !== undefined && !(kwargs && isEmptyRecord(kwargs)))
    lc.additional_kwargs = kwargs ?? data.additional_kwargs;
  if (isEmptyRecord(lc.response_metadata)) delete lc.response_metadata;
  if (Array.isArray(lc.invalid_tool_calls) && lc.invalid_tool_calls.length === 0)
    delete lc.invalid_tool_calls;

  let role: Role;
  let content: Block[];
  let usage: Usage | undefined;
  if (type === "tool") {
    role = "user";
    content = [storedToolResult(data, dpath, lc, cs)];
  } else {
    const inAi = type === "ai" || (type === "generic" && roleOfGeneric(data.role) === "assistant");
    const { blocks, array } = contentToBlocks(data.content, inAi, dpath);
    content = blocks;
    if (array && isStringForm(blocks)) lc.content_form = "array";
    role =
      type === "ai"
        ? "assistant"
        : type === "system"
          ? "system"
          : type === "generic"
            ? roleOfGeneric(data.role)
            : "user";
    if (type === "ai") ({ content, usage } = readAiCalls(data, content, lc, cs));
  }
  if (type !== "tool" && type !== "ai") {
    // Fields of tool and AI messages on another type: kept as they are.
    if (data.tool_calls !== undefined) lc.tool_calls = data.tool_calls;
    if (data.tool_call_id !== undefined) lc.tool_call_id = data.tool_call_id;
    if (data.status !== undefined) lc.status = data.status;
    if (data.usage_metadata !== undefined) lc.usage_metadata = data.usage_metadata;
  }
  if (!(LANGCHAIN_DEFAULT_TYPE[role] === type || (role === "user" && type === "tool"))) lc.type = type;

  const message: Message = {
    role: cs.role === "assistant_interrupted" && role === "assistant" ? "assistant_interrupted" : role,
    content,
  };
  if (isRecord(cs.usage)) message.usage = cs.usage as Usage;
  else if (usage) message.usage = usage;
  if (isRecord(cs.meta)) message.meta = { ...cs.meta };
  const part =
    Array.isArray(cs.part) &&
    cs.part.length === 2 &&
    Number.isInteger(cs.part[0]) &&
    Number.isInteger(cs.part[1])
      ? ([cs.part[0], cs.part[1]] as [number, number])
      : undefined;
  return { message, part, lc };
}

const LANGCHAIN_DEFAULT_TYPE: Record<Role, string> = {
  user: "human",
  assistant: "ai",
  assistant_interrupted: "ai",
  system: "system",
};

/** Moves the `appended` tool_use blocks at the end of `content` back to the places recorded for them. */
function placeToolUses(content: Block[], appended: number, at: unknown[]): Block[] {
  const places = at.filter((n): n is number => Number.isInteger(n));
  if (places.length !== appended || appended === 0 || places.some((p) => p < 0 || p >= content.length))
    return content;
  const uses = content.slice(content.length - appended);
  const others = content.slice(0, content.length - appended);
  const out: (Block | undefined)[] = new Array<Block | undefined>(content.length).fill(undefined);
  places.forEach((p, i) => (out[p] = uses[i]));
  let o = 0;
  for (let i = 0; i < out.length; i++) if (out[i] === undefined) out[i] = others[o++];
  return out.every((b) => b !== undefined) ? (out as Block[]) : content;
}

/**
 * Stored LangChain messages as compact-safe messages. Messages written as
 * parts of one compact-safe message are joined back. Throws a
 * `LangChainMessageError` naming the message (`label(i)`) and field.
 */
export function langChainStoredToMessages(
  stored: readonly unknown[],
  label: (i: number) => string = (i) => `messages[${i}]`,
): Message[] {
  return joinParts(stored.map((s, i) => readStored(s, label(i)))).map((g) => g.message);
}

/** Messages already joined, by the first read of their group (`joinParts` uses one again for the same reads). */
export type JoinMemo = WeakMap<Read, { group: readonly Read[]; message: Message }>;

/**
 * Joins parts `[0, n] … [n-1, n]` in a row into one message; returns each
 * result with its first index. With a `memo`, a group of the very same reads
 * as before gives the very same message object.
 */
export function joinParts(
  reads: readonly Read[],
  memo?: JoinMemo,
): { message: Message; first: number; count: number }[] {
  const out: { message: Message; first: number; count: number }[] = [];
  let i = 0;
  while (i < reads.length) {
    const r = reads[i]!;
    const n = r.part && r.part[0] === 0 && r.part[1] > 1 ? r.part[1] : 1;
    let k = 1;
    while (k < n && i + k < reads.length) {
      const p = reads[i + k]!.part;
      if (!p || p[0] !== k || p[1] !== n) break;
      k++;
    }
    const group = k === n ? reads.slice(i, i + n) : [r];
    const seen = memo?.get(r);
    if (seen && seen.group.length === group.length && seen.group.every((g, j) => g === group[j])) {
      out.push({ message: seen.message, first: i, count: group.length });
      i += group.length;
      continue;
    }
    const message: Message = { ...group[0]!.message, content: group.flatMap((g) => g.message.content) };
    if (group.length > 1) {
      if (group.some((g) => Object.keys(g.lc).length > 0))
        message.meta = { ...message.meta, langchain: { parts: group.map((g) => g.lc) } };
    } else {
      // A lone part whose siblings are gone keeps its marker, to be written back as it was.
      const lc = r.part ? { ...r.lc, part: r.part } : r.lc;
      if (Object.keys(lc).length > 0) message.meta = { ...message.meta, langchain: lc };
    }
    memo?.set(r, { group, message });
    out.push({ message, first: i, count: group.length });
    i += group.length;
  }
  return out;
}

/** Reads each stored message on its own (for importers that account for every input message). */
export function readLangChainStored(entry: unknown, path: string): Read {
  return readStored(entry, path);
}

/** The message classes of LangChain's serialized form (`JSON.stringify(message)`), by stored type. */
const SERIALIZED_CLASSES: Record<string, string> = {
  HumanMessage: "human",
  HumanMessageChunk: "human",
  AIMessage: "ai",
  AIMessageChunk: "ai",
  SystemMessage: "system",
  SystemMessageChunk: "system",
  ToolMessage: "tool",
  ToolMessageChunk: "tool",
  ChatMessage: "generic",
  ChatMessageChunk: "generic",
  FunctionMessage: "function",
  FunctionMessageChunk: "function",
};

/**
 * True for a message as `JSON.stringify` writes a LangChain `BaseMessage`
 * (its `toJSON`): `{ lc: 1, type: "constructor", id: [..., "HumanMessage"],
 * kwargs: { content, … } }`, of a message class this converter reads.
 */
export function isLangChainSerialized(v: unknown): boolean {
  if (!isRecord(v) || v.lc !== 1 || v.type !== "constructor" || !isRecord(v.kwargs)) return false;
  const id = v.id;
  if (!Array.isArray(id) || id.length === 0) return false;
  const cls = id[id.length - 1];
  return typeof cls === "string" && Object.hasOwn(SERIALIZED_CLASSES, cls);
}

/**
 * The stored form (`{ type, data }`) of a serialized LangChain message (the
 * kwargs are the stored data, field for field); anything else as it is.
 */
export function storedOfSerialized(v: unknown): unknown {
  if (!isLangChainSerialized(v)) return v;
  const s = v as { id: string[]; kwargs: Rec };
  return { type: SERIALIZED_CLASSES[s.id[s.id.length - 1]!], data: s.kwargs };
}

// ---------------------------------------------------------------------------------------------
// compact-safe → LangChain

function splitMeta(m: Message): { lcParts: Rec[] | undefined; lc: Rec; rest: Rec | undefined } {
  const meta = m.meta;
  if (!meta) return { lcParts: undefined, lc: {}, rest: undefined };
  const { langchain, ...rest } = meta;
  const lc = isRecord(langchain) ? langchain : {};
  const lcParts = Array.isArray(lc.parts) && lc.parts.every(isRecord) ? (lc.parts as Rec[]) : undefined;
  return { lcParts, lc, rest: Object.keys(rest).length > 0 ? rest : undefined };
}

/** The LangChain fields kept on meta that go back on the message as they are. */
const LC_CONTROL = [
  "type",
  "content_form",
  "tool_text",
  "tool_calls_untyped",
  "no_tool_calls",
  "parts",
  "part",
  "additional_kwargs",
  "usage_metadata",
  "tool_calls",
  "status",
];

function baseData(lc: Rec, content: unknown, cs: Rec): Rec {
  const data: Rec = { content, ...without(lc, ...LC_CONTROL) };
  const kwargs: Rec = isRecord(lc.additional_kwargs) ? { ...lc.additional_kwargs } : {};
  if (Object.keys(cs).length > 0) kwargs[COMPACT_SAFE_KWARG] = cs;
  data.additional_kwargs = kwargs;
  if (data.response_metadata === undefined) data.response_metadata = {};
  return data;
}

function aiData(m: Message, lc: Rec, cs: Rec): LangChainStoredMessage {
  const uses = m.content.filter((b) => b.type === "tool_use" && (b as Rec).lc_in_content !== true);
  const kept = m.content.filter((b) => !(b.type === "tool_use" && (b as Rec).lc_in_content !== true));
  // Places of appended tool_use blocks when one is followed by another block (they are read back at the end).
  const at: number[] = [];
  const lastOther = m.content.reduce((acc, b, i) => (uses.includes(b) ? acc : i), -1);
  if (m.content.findIndex((b) => uses.includes(b)) < lastOther)
    m.content.forEach((b, i) => (uses.includes(b) ? at.push(i) : undefined));
  const ownCs: Rec = { ...cs };
  if (at.length > 0) ownCs.tool_use_at = at;
  const extras: Rec = {};
  for (const u of uses) {
    const r = u as Rec;
    const extra = without(r, "type", "id", "name", "input");
    if (Object.keys(extra).length > 0) extras[String(r.id)] = extra;
  }
  if (Object.keys(extras).length > 0) ownCs.tool_use = extras;
  if (m.role === "assistant_interrupted") ownCs.role = "assistant_interrupted";
  const data = baseData(lc, blocksToContent(kept, lc.content_form === "array"), ownCs);
  const calls = derivedToolCalls(m.content, lc.tool_calls_untyped !== true);
  if (lc.tool_calls !== undefined && Array.isArray(lc.tool_calls)) data.tool_calls = lc.tool_calls;
  else if (!(lc.no_tool_calls === true && calls.length === 0)) data.tool_calls = calls;
  if (data.invalid_tool_calls === undefined) data.invalid_tool_calls = [];
  if (m.usage === undefined) {
    // A usage_metadata that says nothing compact-safe reads goes back as it was; a cleared usage is not restored.
    if (lc.usage_metadata !== undefined && usageFromMetadata(lc.usage_metadata) === undefined)
      data.usage_metadata = lc.usage_metadata;
  } else {
    if (lc.usage_metadata !== undefined && same(usageFromMetadata(lc.usage_metadata), m.usage))
      data.usage_metadata = lc.usage_metadata;
    else {
      data.usage_metadata = metadataFromUsage(m.usage);
      if (!same(usageFromMetadata(data.usage_metadata), m.usage)) {
        const kw = data.additional_kwargs as Rec;
        kw[COMPACT_SAFE_KWARG] = { ...(kw[COMPACT_SAFE_KWARG] as Rec | undefined), usage: m.usage };
      }
    }
  }
  return { type: typeof lc.type === "string" ? lc.type : "ai", data };
}

function toolData(b: Rec, lc: Rec, cs: Rec): LangChainStoredMessage {
  const extra = without(
    b,
    "type",
    "tool_use_id",
    "content",
    "content_blocks",
    ...(b.is_error === true ? ["is_error"] : []),
  );
  const own: Rec = { ...cs };
  if (Object.keys(extra).length > 0) own.block = extra;
  const blocks = Array.isArray(b.content_blocks) ? (b.content_blocks as Block[]) : undefined;
  const content =
    blocks === undefined
      ? b.content
      : lc.tool_text === false && b.content === ""
        ? blocks.map(blockToPart)
        : [{ type: "text", text: b.content }, ...blocks.map(blockToPart)];
  const data = baseData(lc, content, own);
  data.tool_call_id = b.tool_use_id;
  const status = b.is_error === true ? "error" : lc.status;
  if (status !== undefined) data.status = status;
  return { type: "tool", data };
}

/** A user or system message, or a run of its non-tool_result blocks, as one LangChain message. */
function plainData(m: Message, blocks: readonly Block[], lc: Rec, cs: Rec): LangChainStoredMessage {
  const type = typeof lc.type === "string" ? lc.type : m.role === "system" ? "system" : "human";
  const data = baseData(lc, blocksToContent(blocks, lc.content_form === "array"), cs);
  for (const k of ["tool_calls", "status", "usage_metadata"]) if (lc[k] !== undefined) data[k] = lc[k];
  return { type, data };
}

/** One compact-safe message as one or more stored LangChain messages. */
function writeMessage(m: Message): LangChainStoredMessage[] {
  const { lcParts, lc, rest } = splitMeta(m);
  const cs: Rec = {};
  if (rest) cs.meta = rest;
  if (m.role === "assistant" || m.role === "assistant_interrupted") {
    const lcOne = lcParts?.[0] ?? lc;
    if (lcOne.type === undefined || lcOne.type === "ai") return [aiData(m, lcOne, cs)];
  }
  // user / system (and an assistant that was read from another type): tool_result blocks become tool messages.
  const groups: { tool?: Rec; blocks: Block[] }[] = [];
  for (const b of m.content) {
    if (m.role === "user" && b.type === "tool_result" && fitsBlock(b as Rec))
      groups.push({ tool: b as Rec, blocks: [] });
    else {
      const last = groups[groups.length - 1];
      if (last && !last.tool) last.blocks.push(b);
      else groups.push({ blocks: [b] });
    }
  }
  if (groups.length === 0) groups.push({ blocks: [] });
  const n = groups.length;
  const lcOf = (k: number): Rec =>
    lcParts && lcParts.length === n ? lcParts[k]! : k === 0 ? without(lc, "parts", "part") : {};
  return groups.map((g, k) => {
    const own: Rec = k === 0 ? { ...cs } : {};
    if (n > 1) own.part = [k, n];
    else if (Array.isArray(lc.part)) own.part = lc.part;
    if (k === 0 && m.usage !== undefined) own.usage = m.usage;
    if (k === 0 && m.role === "assistant_interrupted") own.role = "assistant_interrupted";
    const partLc = lcOf(k);
    return g.tool ? toolData(g.tool, partLc, own) : plainData(m, g.blocks, partLc, own);
  });
}

/** compact-safe messages as stored LangChain messages (`mapStoredMessagesToChatMessages` reads them). */
export function messagesToLangChainStored(messages: readonly Message[]): LangChainStoredMessage[] {
  return messages.flatMap(writeMessage);
}

/**
 * The fields of a BaseMessage that its stored form has, by its type (what a
 * conversion reads). The LangChain adapter's reader (`sameFields`) reads them by name, in this order.
 */
export const LANGCHAIN_COMMON_FIELDS = [
  "content",
  "id",
  "name",
  "additional_kwargs",
  "response_metadata",
] as const;
const FIELDS: Record<string, readonly string[]> = {
  ai: [...LANGCHAIN_COMMON_FIELDS, "tool_calls", "invalid_tool_calls", "usage_metadata"],
  tool: [...LANGCHAIN_COMMON_FIELDS, "tool_call_id", "status", "artifact", "metadata"],
  generic: [...LANGCHAIN_COMMON_FIELDS, "role"],
};
export const langChainFieldsOf = (type: string): readonly string[] =>
  Object.hasOwn(FIELDS, type) ? FIELDS[type]! : LANGCHAIN_COMMON_FIELDS;
