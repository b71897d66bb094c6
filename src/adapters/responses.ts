/**
 * `compact-safe/responses`: OpenAI Responses API input items (the history
 * Codex and the OpenAI Agents SDK keep) as compact-safe messages and back,
 * without loss, and a compaction of an item list that returns items.
 *
 * The conversion is the pure core of the `responses` import format
 * (src/wire/responses.ts); see its comment for what goes where.
 */
import { isDeepStrictEqual } from "node:util";
import type {
  ResponseInputItem,
  ResponseItem,
  ResponseOutputItem,
} from "openai/resources/responses/responses";
import type { Message } from "../model/index.js";
import { ModelError, parseMessages } from "../model/schema.js";
import { checkPlainData } from "../model/plain.js";
import type { CompactError, CompactOptions, CompactSuccess } from "../engine/compact.js";
import { shouldCompact, type CompactDecision } from "../engine/pressure.js";
import { belowThreshold, compactHostStep, type BelowThreshold } from "./host-step.js";
import { itemsToMessages, messagesToItems, type ToResponsesOptions } from "../wire/responses.js";

export type { ResponseInputItem } from "openai/resources/responses/responses";

/*
 * The types are the host's: `openai` is a peer dependency (6.49 to 7.x), so
 * these declarations name the copy the host installed, and items pass both
 * ways without a second copy's types in between.
 */

/** What the functions read: input items, and the items a response returns (`output`) or lists (`ResponseItem`). */
export type ResponsesItemLike = ResponseInputItem | ResponseOutputItem | ResponseItem;

/**
 * A history as a Responses loop keeps it: the input items sent, with each
 * response's `output` appended (`history.push(...response.output)`). It is an
 * input item list (`client.responses.create({ input: history })` takes it)
 * whose `push` also takes output items: the API takes them back as input,
 * though openai's types do not say so for all of them (an output
 * `computer_call_output` may be `"failed"`, an input one may not).
 */
export interface ResponsesHistory extends Array<ResponseInputItem> {
  push(...items: ResponsesItemLike[]): number;
}
export type { ResponsesSlot, ToResponsesOptions } from "../wire/responses.js";

/**
 * Responses input items (or a response's `output` items) as compact-safe
 * messages. Throws a `ModelError` (`code: "invalid_message"`) naming the
 * item's path, e.g. `items[4].arguments: expected a string, got an object`.
 */
export function fromResponsesItems(items: readonly ResponsesItemLike[]): Message[] {
  if (!Array.isArray(items)) throw new ModelError("items", "expected an array of Responses input items");
  checkPlainData(items, "items"); // a hole, a cycle, a BigInt, a throwing getter…: a ModelError naming the place
  return itemsToMessages(items, { path: "items" });
}

/**
 * Compact-safe messages as Responses input items, ready for
 * `client.responses.create({ input })`. Items read by `fromResponsesItems`
 * come back as they were. What the API has no place for is left out, unless
 * `carry: true` (then kept in `compact_safe` fields, for storage, not for
 * sending). Throws a `ModelError` naming `messages[i]…` for a malformed message.
 */
export function toResponsesItems(
  messages: readonly Message[],
  options: ToResponsesOptions = {},
): ResponseInputItem[] {
  checkPlainData(messages, "messages");
  parseMessages(messages, "messages");
  return messagesToItems(messages, options) as unknown as ResponseInputItem[];
}

export interface CompactResponsesOptions extends CompactOptions {
  /**
   * With `window`, the items are compacted only under pressure, as the engine
   * decides it (`shouldCompact`): when the estimate of the items, or the
   * latest billed prompt plus what came after it, reaches `threshold` of the
   * window (default the engine's, 0.8). Below it the result is
   * `{ ok: false, error: { kind: "below_threshold" }, decision }` and nothing
   * else is done.
   */
  threshold?: number;
  /**
   * The latest response's billed prompt: its `usage.input_tokens`, and how
   * many items at the end of `items` are that response's `output` (the
   * prompt it billed is everything before them).
   */
  billed?: { inputTokens: number; outputItems: number };
  /** Compact whatever the pressure (the check is skipped). */
  force?: boolean;
}

/** Why nothing was done: the items are under the threshold. */
export type { BelowThreshold };

export type CompactResponsesResult =
  | { ok: true; items: ResponsesHistory; result: CompactSuccess; decision?: CompactDecision }
  | { ok: false; error: CompactError | BelowThreshold; decision?: CompactDecision };

/** The billed prompt as the pressure check takes it: tokens, and the message its answer starts. */
function billedAt(
  items: readonly ResponsesItemLike[],
  messages: readonly Message[],
  billed: CompactResponsesOptions["billed"],
): { tokens: number; index: number } | undefined {
  if (billed === undefined) return undefined;
  const { inputTokens, outputItems: k } = billed;
  if (!(inputTokens > 0) || !Number.isInteger(k) || k <= 0 || k > items.length) return undefined;
  const index = messages.length - itemsToMessages(items.slice(items.length - k), { path: "items" }).length;
  return index >= 0 ? { tokens: inputTokens, index } : undefined;
}

/** A JSON form of a value with sorted keys: equal for deepEqual values. */
function stableKey(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : x,
  );
}

/**
 * Compacts an item list: `fromResponsesItems`, `compactMessagesSafe` (the
 * options are its options), `toResponsesItems`; with `window`, only when the
 * items are under pressure (see `CompactResponsesOptions.threshold`). On success `items` is the
 * replacement, validated as items (read back and judged with the contract), in which every item the compaction did not change is
 * the original item object itself; on failure the items are left as they are
 * and `error` says why (nothing to compact, the summarizer failed, …).
 * Invalid items throw, as `fromResponsesItems` does.
 */
export async function compactResponsesItems(
  items: readonly ResponsesItemLike[],
  options: CompactResponsesOptions = {},
): Promise<CompactResponsesResult> {
  const { threshold, billed, force, ...compact } = options;
  const messages = fromResponsesItems(items);
  let decision: CompactDecision | undefined;
  if (options.window !== undefined && force !== true) {
    decision = shouldCompact(
      { messages, billed: billedAt(items, messages, billed), estimator: options.estimator },
      { window: options.window, threshold },
    );
    if (!decision.compact) return { ok: false, error: belowThreshold(decision), decision };
  }
  const step = await compactHostStep(messages, compact, {
    name: "Responses items",
    toHost: (replacement) => asTheCallersItems(items, toResponsesItems(replacement)),
    fromHost: (out) => fromResponsesItems(out),
  });
  if (!step.ok) return { ok: false, error: step.error, decision };
  return { ok: true, items: step.out, result: step.result, decision };
}

/** `out`, where every item equal to one of the caller's is the caller's own object (an output item the API also takes as input). */
function asTheCallersItems(
  items: readonly ResponsesItemLike[],
  out: ResponseInputItem[],
): ResponseInputItem[] {
  const originals = new Map<string, ResponsesItemLike[]>();
  for (const it of items) {
    const k = stableKey(it);
    const list = originals.get(k) ?? [];
    list.push(it);
    originals.set(k, list);
  }
  return out.map((it) => {
    const list = originals.get(stableKey(it));
    const hit = list?.[0];
    if (hit !== undefined && isDeepStrictEqual(hit, it)) return list!.shift() as ResponseInputItem;
    return it;
  });
}
