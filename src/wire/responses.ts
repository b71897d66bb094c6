/**
 * OpenAI Responses API input items (`POST /v1/responses` `input`, a response's
 * `output`; what Codex and the OpenAI Agents SDK keep as their history), both
 * ways and without loss. The pure core of the `responses` importer and
 * exporter, of the `compact-safe/responses` adapter and of the guard's
 * Responses reader; at the end of the file, the items of a Codex rollout as
 * the Codex importer reads them and its fork writes new ones.
 *
 * Items become messages grouped as the model saw them (as the Codex importer
 * groups a rollout's response items): a `message` of role user, system or
 * developer is a message of its own; consecutive model-side items (assistant
 * messages, reasoning, calls, server-side tool items, unknown items) form one
 * assistant message; consecutive call outputs one user message of
 * `tool_result` blocks. Each item maps to blocks:
 *
 * - `message`: one block per content part (string content: one text block):
 *   `input_text` / `output_text` / `refusal` are `text`, an `input_image` with
 *   an `image_url` is `image_url`, any other part is `{ type:
 *   "responses_part", part }`; an empty content array is kept as an opaque
 *   item block;
 * - calls (`function_call`, `custom_tool_call`, `local_shell_call`,
 *   `computer_call`, `shell_call`, `apply_patch_call`) are `tool_use` blocks
 *   (id = `call_id`; `function_call.arguments` parsed into `input`, the raw
 *   string kept and written back byte for byte while `input` is unchanged),
 *   and their outputs `tool_result` blocks (`content` = the output string, or
 *   the text of an output array; a `local_shell_call_output` without `call_id`
 *   pairs by its `id`), so the contract sees the pairs;
 * - `reasoning`: with `encrypted_content` a `redacted_thinking` block whose
 *   `data` is the blob byte for byte (`origin: "openai"`); without, a
 *   `thinking` block with the summary text;
 * - `compaction` (the opaque summary of `/responses/compact`, `context_management`
 *   or Codex's remote compaction): a `provider_compaction` block holding the
 *   item whole (`native`), written back as it was, in an assistant message of
 *   its own (the summary of what came before, not part of a turn); the importer makes it a
 *   compaction entry (see `linearImport`);
 * - anything else (`web_search_call`, `file_search_call`, `image_generation_call`,
 *   `code_interpreter_call`, `mcp_*`, `item_reference`, unknown
 *   types): `{ type: "responses_item", item }`, the item kept whole, in order.
 *
 * What compact-safe has no field for (item ids, status, phase, annotations,
 * logprobs, the item type of a call, the raw arguments, an output array, the
 * order of the item's keys) is kept on the block in a `responses` field
 * (`ResponsesSlot`): only where the item's JSON text differs from what the
 * block alone would be written as, so a history that never saw the Responses
 * API carries none. The exporter writes each block back from that field, so
 * an item comes back as the same JSON text; a block the engine changed (a
 * bounded result, a redacted input) is written from its new value, except an
 * output whose shape takes no string (a screenshot, shell streams), which
 * stays as it was. Nothing is repaired: a call without its output stays so.
 *
 * The other way, what the Responses API has no place for (message
 * boundaries and roles, `meta`, `usage`, Anthropic thinking, `is_error`,
 * nested result blocks, provider blocks) is left out by default, so that the
 * items are what the API accepts. With `carry: true` it is kept in a
 * `compact_safe` field on the items (and `{ type: "compact_safe" }` items for
 * blocks with no item at all): a storage form that reads back deepEqual, not
 * for sending.
 */
import { isDeepStrictEqual } from "node:util";
import type { Block, Message, Role, ToolResultBlock, ToolUseBlock } from "../model/index.js";
import {
  ModelError,
  fromResponsesCompaction,
  isProviderCompaction,
  nativeOf,
  refuseForeignCompaction,
} from "../model/index.js";
import { parseMessages } from "../model/schema.js";
import { isRecord, parseArguments } from "./common.js";

type Item = Record<string, unknown>;

/** The per-block record of what the Responses item had beyond the block (see the module comment). */
export interface ResponsesSlot {
  /** The item without what the block holds; on the block that opens the item. */
  item?: Item;
  /** A message's content was a string, not parts. */
  string?: true;
  /** A content part without its text or image URL, when it is not the default part. */
  part?: Item;
  /** The position of a content part after the first (the block continues the item before it). */
  index?: number;
  /** A call or output item's raw field: `arguments` of a function call, `output` when not a string. */
  arguments?: string;
  output?: unknown;
  /** The item had no such field: `output` of an output, the input field of a call. */
  no_output?: true;
  no_input?: true;
  /** The field that held the pair id, when not `call_id` (`id` of a local shell output). */
  key?: string;
  /** The item's keys in their order, when the other fields alone would write them in another. */
  keys?: string[];
  /** The same for a content part. */
  part_keys?: string[];
}

/** Calls: item type → the field of the name (or the fixed tool name) and the field of the input. */
const CALLS: Record<string, { name?: string; fixed?: string; input: string; output: string }> = {
  function_call: { name: "name", input: "arguments", output: "function_call_output" },
  custom_tool_call: { name: "name", input: "input", output: "custom_tool_call_output" },
  local_shell_call: { fixed: "local_shell", input: "action", output: "local_shell_call_output" },
  computer_call: { fixed: "computer", input: "action", output: "computer_call_output" },
  shell_call: { fixed: "shell", input: "action", output: "shell_call_output" },
  apply_patch_call: { fixed: "apply_patch", input: "operation", output: "apply_patch_call_output" },
};

/** Outputs, and whether their `output` may be a plain string. */
const OUTPUTS: Record<string, { stringOutput: boolean }> = {
  function_call_output: { stringOutput: true },
  custom_tool_call_output: { stringOutput: true },
  local_shell_call_output: { stringOutput: true },
  computer_call_output: { stringOutput: false },
  shell_call_output: { stringOutput: false },
  apply_patch_call_output: { stringOutput: true },
};

/** Every item type of the Responses API (openai 6.49 and 7.59), for format detection. */
export const RESPONSES_ITEM_TYPES: ReadonlySet<string> = new Set([
  "message",
  "reasoning",
  "compaction",
  "compaction_trigger",
  "item_reference",
  "file_search_call",
  "web_search_call",
  "image_generation_call",
  "code_interpreter_call",
  "tool_search_call",
  "tool_search_output",
  "additional_tools",
  "mcp_list_tools",
  "mcp_approval_request",
  "mcp_approval_response",
  "mcp_call",
  "program",
  "program_output",
  "configuration_update", // openai 7
  ...Object.keys(CALLS),
  ...Object.keys(OUTPUTS),
]);

const SLOT = "responses";
const CARRY = "compact_safe";

function without(o: Item, keys: readonly string[]): Item {
  const out: Item = {};
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k)) out[k] = v;
  return out;
}

function slotOf(b: Block): ResponsesSlot | undefined {
  const s = (b as Record<string, unknown>)[SLOT];
  return isRecord(s) ? (s as ResponsesSlot) : undefined;
}

function stripSlot(b: Block): Block {
  if (!(SLOT in b)) return b;
  const { [SLOT]: _slot, ...rest } = b as Record<string, unknown>;
  return rest as Block;
}

function withSlot(b: Block, slot: ResponsesSlot): Block {
  return Object.keys(slot).length === 0 ? b : ({ ...b, [SLOT]: slot } as Block);
}

/** The text compact-safe reads from an output: the string, the text of its parts, else its JSON. */
export function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (output === undefined || output === null) return "";
  if (Array.isArray(output)) {
    const pieces: string[] = [];
    for (const p of output) {
      if (!isRecord(p)) continue;
      if (typeof p.text === "string") pieces.push(p.text);
      else if (typeof p.stdout === "string" || typeof p.stderr === "string")
        pieces.push([p.stdout, p.stderr].filter((s) => typeof s === "string" && s !== "").join("\n"));
    }
    if (pieces.length > 0) return pieces.join("\n");
  }
  return JSON.stringify(output);
}

function reasoningText(item: Item): string {
  const texts = (v: unknown): string[] =>
    Array.isArray(v) ? v.filter(isRecord).map((s) => (typeof s.text === "string" ? s.text : "")) : [];
  const summary = texts(item.summary);
  return (summary.length > 0 ? summary : texts(item.content)).join("\n\n");
}

const itemRole = (role: Role): string => (role === "assistant_interrupted" ? "assistant" : role);
const isAssistantRole = (role: string): boolean => role === "assistant" || role === "assistant_interrupted";

function defaultPart(kind: "text" | "image", role: string): Item {
  if (kind === "image") return { type: "input_image", detail: "auto" };
  return isAssistantRole(role) ? { type: "output_text", annotations: [] } : { type: "input_text" };
}

// ---------------------------------------------------------------- export

/** The item with its keys in the given order (keys it does not have are skipped; new ones go last). */
function inOrder(item: Item, keys: readonly string[]): Item {
  const out: Item = {};
  for (const k of keys) if (k in item) out[k] = item[k];
  for (const [k, v] of Object.entries(item)) if (!(k in out)) out[k] = v;
  return out;
}

/** A content part for a text, image or kept part block, or undefined when the block is none of them. */
function partOf(b: Block, role: string): Item | undefined {
  const part = partFields(b, role);
  const keys = slotOf(b)?.part_keys;
  return part !== undefined && keys ? inOrder(part, keys) : part;
}

function partFields(b: Block, role: string): Item | undefined {
  const slot = slotOf(b);
  if (b.type === "text") {
    const base = slot?.part ?? defaultPart("text", role);
    const text = (b as { text: string }).text;
    return base.type === "refusal" ? { ...base, refusal: text } : { ...base, text };
  }
  if (b.type === "image_url") {
    const url = (b as { image_url?: { url?: unknown } }).image_url?.url;
    if (typeof url !== "string") return undefined;
    return { ...(slot?.part ?? defaultPart("image", role)), image_url: url };
  }
  if (b.type === "responses_part" && isRecord((b as { part?: unknown }).part))
    return (b as unknown as { part: Item }).part;
  return undefined;
}

function callItem(b: Block, kinds: Map<string, string>): Item {
  const u = b as { id: string; name: string; input: unknown };
  const slot = slotOf(b);
  const type =
    typeof slot?.item?.type === "string" && CALLS[slot.item.type] ? slot.item.type : "function_call";
  const spec = CALLS[type]!;
  const item: Item = slot?.item ? { ...slot.item } : { type };
  item.call_id = u.id;
  if (spec.name) item.name = u.name;
  if (type === "function_call") {
    item.arguments =
      slot?.arguments !== undefined && isDeepStrictEqual(parseArguments(slot.arguments), u.input)
        ? slot.arguments
        : typeof u.input === "string"
          ? u.input
          : (JSON.stringify(u.input) ?? "{}");
  } else if (!(slot?.no_input && isDeepStrictEqual(u.input, {}))) item[spec.input] = u.input;
  kinds.set(u.id, type);
  return item;
}

function outputItem(b: Block, kinds: Map<string, string>): Item {
  const r = b as { tool_use_id: string; content: string };
  const slot = slotOf(b);
  const slotType = slot?.item?.type;
  const fromCall = CALLS[kinds.get(r.tool_use_id) ?? ""]?.output;
  const type =
    typeof slotType === "string" && OUTPUTS[slotType] ? slotType : (fromCall ?? "function_call_output");
  const item: Item = slot?.item ? { ...slot.item } : { type };
  item[slot?.key ?? "call_id"] = r.tool_use_id;
  if (slot?.no_output && r.content === "") return item;
  if ("output" in (slot ?? {}) && outputText(slot!.output) === r.content) item.output = slot!.output;
  else if (OUTPUTS[type]!.stringOutput || !("output" in (slot ?? {}))) item.output = r.content;
  else item.output = slot!.output; // a structured output (a screenshot, shell streams) cannot take a string
  return item;
}

function reasoningItem(b: Block): Item | undefined {
  const slot = slotOf(b);
  if (b.type === "thinking") {
    if (!slot?.item) return undefined;
    const thinking = (b as { thinking: string }).thinking;
    const item: Item = { ...slot.item };
    if (reasoningText(item) !== thinking) {
      item.summary = thinking === "" ? [] : [{ type: "summary_text", text: thinking }];
      delete item.content;
    }
    return item;
  }
  const data = (b as { data: string }).data;
  if (slot?.item) return { ...slot.item, encrypted_content: data };
  if ((b as { origin?: unknown }).origin === "openai")
    return { type: "reasoning", summary: [], encrypted_content: data };
  return undefined;
}

/**
 * The items of one message's blocks, each with the indexes of the blocks it
 * stands for. Blocks the API has no place for stand for no item.
 */
function messageItems(
  m: Message,
  kinds: Map<string, string>,
): { items: Item[]; sources: number[][]; dropped: number[] } {
  const role = itemRole(m.role);
  const items: Item[] = [];
  const sources: number[][] = [];
  const dropped: number[] = [];
  /** The open message item that later parts may join: its content, and whether it is a default item. */
  let open: { content: Item[]; plain: boolean } | undefined;
  const push = (item: Item, j: number): void => {
    const keys = slotOf(m.content[j]!)?.keys;
    items.push(keys ? inOrder(item, keys) : item);
    sources.push([j]);
  };
  m.content.forEach((b, j) => {
    const slot = slotOf(b);
    const part = partOf(b, role);
    if (part !== undefined) {
      if (slot?.item) {
        if (slot.string && b.type === "text") {
          push({ ...slot.item, content: (b as { text: string }).text }, j);
          open = undefined;
        } else {
          const content = [part];
          push({ ...slot.item, content }, j);
          open = { content, plain: false };
        }
        return;
      }
      if (slot?.index !== undefined && open && !open.plain && open.content.length === slot.index) {
        open.content.push(part);
        sources[sources.length - 1]!.push(j);
        return;
      }
      if (isAssistantRole(role)) {
        if (b.type === "image_url")
          dropped.push(j); // an assistant message takes no image (the API refuses it)
        else if (b.type === "text" && slot === undefined)
          push({ type: "message", role: "assistant", content: (b as { text: string }).text }, j);
        // A part whose item's first part is gone (or not a text): a message of its own.
        else push({ type: "message", role: "assistant", content: [part] }, j);
        open = undefined;
        return;
      }
      if (open?.plain) {
        open.content.push(part);
        sources[sources.length - 1]!.push(j);
        return;
      }
      const content = [part];
      push({ type: "message", role: role === "system" ? "system" : "user", content }, j);
      open = { content, plain: true };
      return;
    }
    open = undefined;
    let item: Item | undefined;
    if (b.type === "tool_use") item = callItem(b, kinds);
    else if (b.type === "tool_result") item = outputItem(b, kinds);
    else if (b.type === "thinking" || b.type === "redacted_thinking") item = reasoningItem(b);
    else if (isProviderCompaction(b) && b.provider === "openai") item = nativeOf(b);
    else if (b.type === "responses_item" && isRecord((b as { item?: unknown }).item))
      item = (b as unknown as { item: Item }).item;
    if (item) push(item, j);
    else dropped.push(j);
  });
  return { items, sources, dropped };
}

export interface ToResponsesOptions {
  /**
   * Keep what the Responses API has no place for in a `compact_safe` field on
   * the items (and `{ type: "compact_safe" }` items for blocks with no item),
   * so that the items read back deepEqual. Not for sending: the API refuses
   * unknown fields. Default false: the items are what the API accepts.
   */
  carry?: boolean;
}

/** The blocks an item reads back as (undefined when it does not read). */
function readBack(item: Item): Block[] | undefined {
  try {
    return itemBlocks(item, "item").blocks;
  } catch {
    return undefined;
  }
}

/** Canonical messages as Responses input items (see the module comment). */
export function messagesToItems(messages: readonly Message[], options: ToResponsesOptions = {}): Item[] {
  // Items to send: an Anthropic compaction block has no item (refused, never dropped); carried, it is kept.
  if (!options.carry) refuseForeignCompaction(messages, "responses");
  const kinds = new Map<string, string>();
  const out: Item[] = [];
  for (const m of messages) {
    const { items, sources, dropped } = messageItems(m, kinds);
    if (!options.carry) {
      out.push(...items);
      continue;
    }
    // Each item stands for its blocks exactly, or carries them; a block with no item gets a carrier.
    const entries: { at: number; item: Item }[] = [];
    items.forEach((item, k) => {
      const blocks = sources[k]!.map((j) => m.content[j]!);
      entries.push({
        at: sources[k]![0]!,
        item: isDeepStrictEqual(readBack(item), blocks) ? item : { ...item, [CARRY]: { blocks } },
      });
    });
    for (const j of dropped)
      entries.push({ at: j, item: { type: CARRY, [CARRY]: { blocks: [m.content[j]] } } });
    entries.sort((a, b) => a.at - b.at);
    const message: Item = { role: m.role };
    if (m.meta !== undefined) message.meta = m.meta;
    if (m.usage !== undefined) message.usage = m.usage;
    if (entries.length === 0) entries.push({ at: 0, item: { type: CARRY, [CARRY]: { blocks: [] } } });
    entries.forEach(({ item }, k) => {
      const carried = isRecord(item[CARRY]) ? item[CARRY] : {};
      out.push({ ...item, [CARRY]: k === 0 ? { ...carried, message } : { ...carried, continue: true } });
    });
  }
  return out;
}

// ---------------------------------------------------------------- import

type Side = "user" | "system" | "assistant" | "results";

function fail(path: string, detail: string): never {
  throw new ModelError(path, detail);
}

function str(item: Item, key: string, path: string): string {
  const v = item[key];
  if (typeof v !== "string") fail(`${path}.${key}`, `expected a string, got ${describe(v)}`);
  return v;
}

function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `${typeof v} ${JSON.stringify(v)}`.slice(0, 60);
}

function partBlock(part: unknown, role: string, path: string): Block {
  if (!isRecord(part)) fail(path, `expected a content part object, got ${describe(part)}`);
  if (typeof part.type !== "string") fail(`${path}.type`, `expected a string, got ${describe(part.type)}`);
  let block: Block;
  let rest: Item | undefined;
  if (part.type === "input_text" || part.type === "output_text") {
    block = { type: "text", text: str(part, "text", path) };
    rest = without(part, ["text"]);
  } else if (part.type === "refusal") {
    block = { type: "text", text: str(part, "refusal", path) };
    rest = without(part, ["refusal"]);
  } else if (part.type === "input_image" && typeof part.image_url === "string") {
    block = { type: "image_url", image_url: { url: part.image_url } };
    rest = without(part, ["image_url"]);
  } else return { type: "responses_part", part };
  const dflt = defaultPart(block.type === "text" ? "text" : "image", role);
  const slotted = !isDeepStrictEqual(rest, dflt) ? withSlot(block, { part: rest }) : block;
  const written = partOf(slotted, role);
  return written !== undefined && !sameKeyOrder(written, part)
    ? withSlot(stripSlot(slotted), { ...slotOf(slotted), part_keys: Object.keys(part) })
    : slotted;
}

/** The side an item is on and the blocks it becomes (with `responses` fields where the item needs them). */
export function itemBlocks(raw: Item, path: string): { side: Side; role?: Role; blocks: Block[] } {
  const item = CARRY in raw ? without(raw, [CARRY]) : raw;
  const type = item.type;
  if (type === "message" || (type === undefined && "role" in item)) {
    const role = item.role;
    if (role !== "user" && role !== "assistant" && role !== "system" && role !== "developer")
      fail(`${path}.role`, `expected "user", "assistant", "system" or "developer", got ${describe(role)}`);
    const side: Side = role === "assistant" ? "assistant" : role === "user" ? "user" : "system";
    const msgRole: Role = role === "developer" ? "system" : role;
    const env = without(item, ["content"]);
    let blocks: Block[];
    if (typeof item.content === "string") {
      blocks = [withSlot({ type: "text", text: item.content }, { item: env, string: true })];
    } else if (Array.isArray(item.content)) {
      if (item.content.length === 0)
        return { side, role: msgRole, blocks: [{ type: "responses_item", item }] };
      blocks = item.content.map((p, k) => {
        const b = partBlock(p, role, `${path}.content[${k}]`);
        const s = slotOf(b) ?? {};
        return withSlot(stripSlot(b), k === 0 ? { item: env, ...s } : { ...s, index: k });
      });
    } else
      fail(
        `${path}.content`,
        `expected a string or an array of content parts, got ${describe(item.content)}`,
      );
    return { side, role: msgRole, blocks: canonical(item, blocks, msgRole) };
  }
  if (type === undefined || type === null) {
    if (typeof item.id === "string") return { side: "assistant", blocks: [{ type: "responses_item", item }] }; // an item_reference
    fail(path, 'not a Responses input item (no "type", "role" or "id")');
  }
  if (typeof type !== "string") fail(`${path}.type`, `expected a string, got ${describe(type)}`);
  const call = CALLS[type];
  if (call) {
    const id = str(item, "call_id", path);
    const name = call.name ? str(item, call.name, path) : call.fixed!;
    const slot: ResponsesSlot = {
      item: without(item, ["call_id", call.input, ...(call.name ? [call.name] : [])]),
    };
    let input: unknown;
    if (type === "function_call") {
      slot.arguments = str(item, "arguments", path);
      input = parseArguments(slot.arguments);
    } else if (type === "custom_tool_call") input = str(item, "input", path);
    else if (call.input in item) input = item[call.input];
    else {
      input = {};
      slot.no_input = true;
    }
    return {
      side: "assistant",
      blocks: canonical(item, [withSlot({ type: "tool_use", id, name, input }, slot)], "assistant"),
    };
  }
  if (OUTPUTS[type]) {
    const key = typeof item.call_id === "string" || type !== "local_shell_call_output" ? "call_id" : "id";
    const id = str(item, key, path);
    const slot: ResponsesSlot = { item: without(item, [key, "output"]) };
    if (key !== "call_id") slot.key = key;
    if (!("output" in item)) slot.no_output = true;
    else if (typeof item.output !== "string") slot.output = item.output;
    const block: Block = { type: "tool_result", tool_use_id: id, content: outputText(item.output) };
    return { side: "results", blocks: canonical(item, [withSlot(block, slot)], "user") };
  }
  if (type === "compaction") return { side: "assistant", blocks: [fromResponsesCompaction({ ...item })] };
  if (type === "reasoning") {
    if ("summary" in item && !Array.isArray(item.summary))
      fail(`${path}.summary`, `expected an array, got ${describe(item.summary)}`);
    const enc = item.encrypted_content;
    if (enc !== undefined && enc !== null && typeof enc !== "string")
      fail(`${path}.encrypted_content`, `expected a string or null, got ${describe(enc)}`);
    const block: Block =
      typeof enc === "string"
        ? withSlot(
            { type: "redacted_thinking", data: enc, origin: "openai" },
            { item: without(item, ["encrypted_content"]) },
          )
        : withSlot({ type: "thinking", thinking: reasoningText(item) }, { item });
    return { side: "assistant", blocks: canonical(item, [block], "assistant") };
  }
  return { side: "assistant", blocks: [{ type: "responses_item", item }] };
}

/** True when two items have their keys in the same order (what JSON text of them shows). */
function sameKeyOrder(a: Item, b: Item): boolean {
  return isDeepStrictEqual(Object.keys(a), Object.keys(b));
}

/**
 * The blocks without their `responses` fields when those fields add nothing
 * (the blocks alone write back the item, keys in the same order); else the
 * blocks, with the item's key order recorded when the fields alone would not
 * write it back in that order, so that the item's JSON text comes back as it was.
 */
function canonical(item: Item, blocks: Block[], role: Role): Block[] {
  if (!blocks.some((b) => slotOf(b) !== undefined)) return blocks;
  const plain = blocks.map(stripSlot);
  const back = messageItems({ role, content: plain }, new Map()).items;
  if (back.length === 1 && JSON.stringify(back[0]) === JSON.stringify(item)) return plain;
  const written = messageItems({ role, content: blocks }, new Map()).items;
  if (written.length === 1 && !sameKeyOrder(written[0]!, item)) {
    const first = blocks[0]!;
    return [withSlot(stripSlot(first), { ...slotOf(first), keys: Object.keys(item) }), ...blocks.slice(1)];
  }
  return blocks;
}

/** Reads items into messages; `onItem` learns which message each item went to (or that it failed). */
export interface ItemsToMessagesOptions {
  /** The path of the items in errors (default `items`). */
  path?: string;
  /** Called for an item that is not valid instead of throwing; the item is left out. */
  onInvalid?: (index: number, error: ModelError) => void;
  /** Called for each item read, with the message it went into. */
  onItem?: (index: number, message: Message, blocks: readonly Block[]) => void;
}

/** Responses items as canonical messages (see the module comment). Throws a ModelError naming the item's path. */
export function itemsToMessages(items: readonly unknown[], options: ItemsToMessagesOptions = {}): Message[] {
  const base = options.path ?? "items";
  const out: Message[] = [];
  let side: Side | undefined;
  let carried = false;
  // A `compaction` item is a message of its own: the provider's summary of the history before it, not
  // part of the model's turn around it (the contract counts it as the checkpoint).
  let alone = false;
  items.forEach((raw, i) => {
    const path = `${base}[${i}]`;
    let read: { side: Side; role?: Role; blocks: Block[] };
    let cs: Item | undefined;
    try {
      if (!isRecord(raw)) fail(path, `expected an item object, got ${describe(raw)}`);
      cs = isRecord(raw[CARRY]) ? raw[CARRY] : undefined;
      if (cs && Array.isArray(cs.blocks)) {
        const native = raw.type === CARRY ? undefined : itemBlocks(raw, path);
        read = { side: native?.side ?? "assistant", blocks: cs.blocks as Block[] };
      } else read = itemBlocks(raw, path);
    } catch (e) {
      if (e instanceof ModelError && options.onInvalid) {
        options.onInvalid(i, e);
        return;
      }
      throw e;
    }
    const message = cs?.message;
    let target: Message;
    if (isRecord(message) && typeof message.role === "string") {
      target = { role: message.role as Role, content: [] };
      if (message.meta !== undefined) target.meta = message.meta as Record<string, unknown>;
      if (message.usage !== undefined) target.usage = message.usage as Message["usage"];
      out.push(target);
      carried = true;
    } else if (cs?.continue === true && carried && out.length > 0) {
      target = out[out.length - 1]!;
    } else if (
      out.length > 0 &&
      side === read.side &&
      (read.side === "assistant" || read.side === "results") &&
      !alone &&
      !read.blocks.some(isProviderCompaction)
    ) {
      target = out[out.length - 1]!;
      carried = false;
    } else {
      target = {
        role: read.side === "assistant" ? "assistant" : read.side === "system" ? "system" : "user",
        content: [],
      };
      out.push(target);
      carried = false;
    }
    target.content.push(...read.blocks);
    side = read.side;
    alone = read.blocks.some(isProviderCompaction);
    options.onItem?.(i, target, read.blocks);
  });
  return out;
}

// ---------------------------------------------------------------- single elements

/** True for a call item type (its `call_id` pairs it with an output). */
export const isResponsesCall = (type: string): boolean => Object.hasOwn(CALLS, type);

/** True for an output item type whose `output` may be a plain string. */
export const isStringOutput = (type: string): boolean =>
  Object.hasOwn(OUTPUTS, type) && OUTPUTS[type]!.stringOutput;

/** A user input text part. */
export const inputTextPart = (text: string): Item => ({ type: "input_text", text });

/** An assistant output text part. */
export const outputTextPart = (text: string): Item => ({ type: "output_text", text, annotations: [] });

/** A user message item of one input text part. */
export const userTextItem = (text: string): Item => ({
  type: "message",
  role: "user",
  content: [inputTextPart(text)],
});

/** The text of a response's `output`: the output text parts of its message items, joined. */
export function responseOutputText(output: readonly unknown[]): string {
  return output
    .map((item) =>
      isRecord(item) && item.type === "message" && Array.isArray(item.content)
        ? item.content
            .map((c) => (isRecord(c) && c.type === "output_text" && typeof c.text === "string" ? c.text : ""))
            .join("")
        : "",
    )
    .join("");
}

// ---------------------------------------------------------------- documents of items

/** The items of a document: an item array, a request body `{ input }`, or a response `{ output }`. */
export function responsesItemsOf(doc: unknown): { items: unknown[]; path: string } | undefined {
  if (Array.isArray(doc)) return { items: doc, path: "items" };
  if (!isRecord(doc)) return undefined;
  if (Array.isArray(doc.input)) return { items: doc.input, path: "input" };
  if (typeof doc.input === "string") return { items: [{ role: "user", content: doc.input }], path: "input" };
  if (Array.isArray(doc.output)) return { items: doc.output, path: "output" };
  return undefined;
}

/** True when a document reads as Responses items: an item array (or `input` / `output`) with an item-only type or part. */
export function looksLikeResponses(doc: unknown): boolean {
  const found = responsesItemsOf(doc);
  if (!found || found.items.length === 0) return false;
  // A request body with a string input: only with its model, or it could be anything.
  if (!Array.isArray(doc) && typeof (doc as Item).input === "string")
    return typeof (doc as Item).model === "string";
  // `type: "message"` alone is no evidence: an Anthropic response object has it too.
  return found.items.some(
    (it) =>
      isRecord(it) &&
      ((typeof it.type === "string" && it.type !== "message" && RESPONSES_ITEM_TYPES.has(it.type)) ||
        (Array.isArray(it.content) &&
          it.content.some(
            (p) =>
              isRecord(p) &&
              (p.type === "input_text" ||
                p.type === "output_text" ||
                p.type === "input_image" ||
                p.type === "input_file"),
          ))),
  );
}

/** Canonical messages as a Responses request body `{ input }` (the items the API accepts). */
export function toResponsesRequest(messages: readonly Message[]): { input: Item[] } {
  parseMessages(messages, "messages"); // a malformed or over-deep message: a ModelError naming its path
  return { input: messagesToItems(messages) };
}

// ---------------------------------------------------------------- Codex rollouts' response items

/*
 * The response items a Codex rollout stores (its `response_item` lines, a compaction's
 * `replacement_history`), read as the Codex importer and its write-back group them: text parts as
 * plain text blocks, nothing kept for writing the item back (the write-back keeps the original items).
 */

/** The call item types a Codex rollout writes: every line that makes a call names one. */
export const ROLLOUT_CALL_TYPES = ["function_call", "custom_tool_call", "local_shell_call"] as const;

/** Message content parts as blocks: text, refusals and images; any other typed part kept as it is. */
export function contentBlocks(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  const out: Block[] = [];
  for (const c of content) {
    if (!isRecord(c)) continue;
    if (
      (c.type === "input_text" || c.type === "output_text" || c.type === "text") &&
      typeof c.text === "string"
    ) {
      out.push({ type: "text", text: c.text });
    } else if (c.type === "input_image" && typeof c.image_url === "string") {
      out.push({ type: "image_url", image_url: { url: c.image_url } });
    } else if (c.type === "refusal" && typeof c.refusal === "string") {
      out.push({ type: "text", text: c.refusal });
    } else if (typeof c.type === "string") {
      out.push({ ...c } as Block);
    }
  }
  return out;
}

/**
 * The exit code a Codex shell output reports, if any: the `metadata.exit_code`
 * of its `{"output": ..., "metadata": {...}}` wrapper (read from the tail,
 * without parsing a large output), or a leading `Exit code: N` line (newer
 * versions).
 */
export function codexExitCode(output: string): number | undefined {
  if (output.startsWith('{"output"')) {
    const at = output.lastIndexOf('"exit_code":');
    const m = at === -1 ? null : /^"exit_code":\s*(-?\d+)/.exec(output.slice(at, at + 32));
    return m ? Number(m[1]) : undefined;
  }
  const m = /^Exit code: (-?\d+)\b/.exec(output);
  return m ? Number(m[1]) : undefined;
}

function outputContent(output: unknown): { content: string; is_error?: boolean } {
  if (typeof output === "string") {
    // A command that exited non-zero is an error result, as other agents record it.
    const code = codexExitCode(output);
    return code !== undefined && code !== 0 ? { content: output, is_error: true } : { content: output };
  }
  if (isRecord(output)) {
    const content = typeof output.content === "string" ? output.content : JSON.stringify(output);
    return output.success === false ? { content, is_error: true } : { content };
  }
  return { content: output === undefined ? "" : JSON.stringify(output) };
}

type RolloutSide = "assistant" | "results";

/** Blocks of one model-side response item, or undefined when the item is not model-side. */
export function modelSideBlocks(p: Record<string, unknown>): Block[] | undefined {
  switch (p.type) {
    case "reasoning": {
      const blocks: Block[] = [];
      const summary = Array.isArray(p.summary)
        ? p.summary.filter(isRecord).map((s) => String(s.text ?? ""))
        : [];
      const content = Array.isArray(p.content)
        ? p.content.filter(isRecord).map((s) => String(s.text ?? ""))
        : [];
      const text = (summary.length > 0 ? summary : content).join("\n\n");
      if (text.length > 0) blocks.push({ type: "thinking", thinking: text });
      if (typeof p.encrypted_content === "string")
        blocks.push({ type: "redacted_thinking", data: p.encrypted_content, origin: "openai" });
      return blocks;
    }
    case "function_call":
      return [
        {
          type: "tool_use",
          id: String(p.call_id ?? p.id ?? ""),
          name: String(p.name ?? ""),
          input: parseArguments(p.arguments),
        },
      ];
    case "custom_tool_call":
      return [
        {
          type: "tool_use",
          id: String(p.call_id ?? p.id ?? ""),
          name: String(p.name ?? ""),
          input: typeof p.input === "string" ? p.input : (p.input ?? ""),
        },
      ];
    case "local_shell_call":
      return [
        { type: "tool_use", id: String(p.call_id ?? p.id ?? ""), name: "local_shell", input: p.action ?? {} },
      ];
    case "web_search_call":
      return [{ ...p } as Block];
    case "compaction": // remote compaction (v1 and v2): the encrypted item, kept whole
      return [fromResponsesCompaction({ ...p })];
    case "message":
      return p.role === "assistant" ? contentBlocks(p.content) : undefined;
    default:
      return undefined;
  }
}

export function resultBlock(p: Record<string, unknown>): Block | undefined {
  if (
    p.type === "function_call_output" ||
    p.type === "custom_tool_call_output" ||
    p.type === "local_shell_call_output"
  ) {
    return { type: "tool_result", tool_use_id: String(p.call_id ?? ""), ...outputContent(p.output) };
  }
  return undefined;
}

/** Converts a list of response items (e.g. a `replacement_history`) into messages. */
export function responseItemsToMessages(items: readonly unknown[]): Message[] {
  const out: Message[] = [];
  let side: RolloutSide | undefined;
  // A `compaction` item is a message of its own (as `itemsToMessages` reads it): the summary of what came before.
  let alone = false;
  for (const it of items) {
    if (!isRecord(it)) continue;
    const ms = modelSideBlocks(it);
    const rs = resultBlock(it);
    if (ms) {
      const summary = ms.some(isProviderCompaction);
      if (side === "assistant" && !alone && !summary) out[out.length - 1]!.content.push(...ms);
      else out.push({ role: "assistant", content: ms });
      side = "assistant";
      alone = summary;
    } else if (rs) {
      if (side === "results") out[out.length - 1]!.content.push(rs);
      else out.push({ role: "user", content: [rs] });
      side = "results";
    } else if (it.type === "message") {
      const role = it.role === "developer" || it.role === "system" ? "system" : "user";
      out.push({ role, content: contentBlocks(it.content) });
      side = undefined;
    }
  }
  return out;
}

/** A new rollout item for one tool call, of the call type `kind` the original gave it where known. */
export function rolloutCallItem(b: ToolUseBlock, kind: string | undefined): Item {
  if (kind === "custom_tool_call")
    return {
      type: "custom_tool_call",
      status: "completed",
      call_id: b.id,
      name: b.name,
      input: typeof b.input === "string" ? b.input : JSON.stringify(b.input),
    };
  if (kind === "local_shell_call")
    return { type: "local_shell_call", call_id: b.id, status: "completed", action: b.input };
  return {
    type: "function_call",
    name: b.name,
    arguments: typeof b.input === "string" ? b.input : JSON.stringify(b.input),
    call_id: b.id,
  };
}

/** A new rollout output item for one tool result (bounded, stubbed or synthetic) of a call of type `callKind`. */
export function rolloutOutputItem(b: ToolResultBlock, callKind: string | undefined): Item {
  return {
    type: callKind === "custom_tool_call" ? "custom_tool_call_output" : "function_call_output",
    call_id: b.tool_use_id,
    output: b.content,
  };
}

/** A rollout message item of `role` holding the text and image blocks `run`. */
export function rolloutMessageItem(role: "assistant" | "user" | "developer", run: readonly Block[]): Item {
  const content = run.map((b): unknown => {
    if (b.type === "text")
      return {
        type: role === "assistant" ? "output_text" : "input_text",
        text: (b as { text: string }).text,
      };
    if (b.type === "image_url")
      return { type: "input_image", image_url: (b as { image_url: { url: string } }).image_url.url };
    return { ...b };
  });
  return { type: "message", role, content };
}
