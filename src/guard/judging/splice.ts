/**
 * The repair: what the contract says must survive of the history before a
 * compaction (its protected last round, and the current instructions before
 * it), as the raw wire elements the agent sent, byte for byte (thinking and
 * signatures untouched; tool results over 8 KiB bounded head and tail),
 * less what the request after the compaction already carries; inserted
 * right after the agent's own summary. And the check that a spliced request
 * is one the provider takes and that keeps the contract.
 */
import type { Message } from "../../model/types.js";
import { isCheckpoint, isGuardRestatement } from "../../contract/classify.js";
import { isSummaryItem } from "../reading/detect.js";
import { protectedRound } from "../../contract/rounds.js";
import { boundedResultContent, boundResultContent } from "../../contract/bounds.js";
import { fromAnthropicContent } from "../../wire/anthropic.js";
import {
  inputTextPart,
  isResponsesCall,
  isStringOutput,
  outputText,
  userTextItem,
} from "../../wire/responses.js";
import { chatCallIds, chatResultId } from "../../wire/openai-chat.js";
import type { GuardWire } from "../types.js";
import { rawKey, messagesOf, type HistoryItem, type WireHistory } from "../reading/history.js";
import { CHAT_ROLES } from "../reading/wire-chat.js";

type Raw = Record<string, unknown>;
const isRecord = (v: unknown): v is Raw => typeof v === "object" && v !== null && !Array.isArray(v);

/** The text of the anchors element. */
export const ANCHORS_HEADING = "[compact-safe guard] Pinned anchors, restated after the compaction:";

/** What the request after the compaction already carries: raw element keys and tool ids. */
interface Carried {
  keys: Set<string>;
  calls: Set<string>;
  results: Set<string>;
}

function carriedBy(after: readonly HistoryItem[]): Carried {
  const c: Carried = { keys: new Set(), calls: new Set(), results: new Set() };
  for (const it of after) {
    for (const r of it.raw) c.keys.add(rawKey([r]));
    for (const b of it.message.content) {
      if (b.type === "tool_use") c.calls.add((b as { id: string }).id);
      else if (b.type === "tool_result") c.results.add((b as { tool_use_id: string }).tool_use_id);
    }
  }
  return c;
}

/** An Anthropic tool_result block bounded as the contract says (unchanged when it fits). */
function boundAnthropicResult(block: Raw): Raw {
  const [canon] = fromAnthropicContent([block]);
  if (!canon || canon.type !== "tool_result") return block;
  const r = canon as { content: string; content_blocks?: unknown[] };
  const bounded = boundedResultContent(r);
  return bounded === undefined ? block : { ...block, content: bounded.content };
}

/** An Anthropic raw message less the blocks already carried, bounded; undefined when nothing is left. */
function anthropicElement(el: unknown, c: Carried, textOnly: boolean): unknown {
  if (!isRecord(el)) return undefined;
  if (c.keys.has(rawKey([el]))) return undefined;
  if (!Array.isArray(el.content)) return textOnly || typeof el.content === "string" ? el : undefined;
  let changed = false;
  const out: unknown[] = [];
  for (const b of el.content) {
    if (!isRecord(b)) {
      out.push(b);
      continue;
    }
    if (textOnly && b.type !== "text") {
      changed = true;
      continue;
    }
    if (b.type === "tool_use" && c.calls.has(String(b.id))) changed = true;
    else if (b.type === "tool_result" && c.results.has(String(b.tool_use_id))) changed = true;
    else if (b.type === "tool_result") {
      const bounded = boundAnthropicResult(b);
      if (bounded !== b) changed = true;
      out.push(bounded);
    } else out.push(b);
  }
  if (!out.some((b) => !isRecord(b) || (b.type !== "thinking" && b.type !== "redacted_thinking")))
    return undefined;
  return changed ? { ...el, content: out } : el;
}

function responsesElement(el: unknown, c: Carried): unknown {
  if (!isRecord(el) || c.keys.has(rawKey([el]))) return undefined;
  const type = typeof el.type === "string" ? el.type : "";
  if (isResponsesCall(type) && c.calls.has(String(el.call_id))) return undefined;
  if ((isStringOutput(type) || type.endsWith("_call_output")) && c.results.has(String(el.call_id ?? el.id)))
    return undefined;
  if (isStringOutput(type) && typeof el.output === "string") {
    const b = boundResultContent(el.output);
    if (b.truncated) return { ...el, output: b.content };
  } else if (type.endsWith("_call_output") && el.output !== undefined && typeof el.output !== "string") {
    const text = outputText(el.output);
    const bounded = boundedResultContent({ content: text });
    if (bounded !== undefined) return { ...el, output: bounded.content };
  }
  return el;
}

function chatElement(el: unknown, c: Carried): unknown {
  if (!isRecord(el) || c.keys.has(rawKey([el]))) return undefined;
  const answers = chatResultId(el);
  if (answers !== undefined) {
    if (c.results.has(answers)) return undefined;
    if (typeof el.content === "string") {
      const b = boundResultContent(el.content);
      if (b.truncated) return { ...el, content: b.content };
    }
    return el;
  }
  const ids = chatCallIds(el);
  if (ids.length > 0) {
    if (ids.every((id) => c.calls.has(id))) return undefined;
    if (ids.some((id) => c.calls.has(id))) return undefined; // partly carried: the check refuses what is left unpaired
  }
  return el;
}

/**
 * The heading of the restated element when it carries the live state (with
 * or without anchors): the lines that follow are the state as read when the
 * guard saw the compaction, the same bytes in every later request.
 */
export const RESTATED_HEADING =
  "[compact-safe guard] Restated after the compaction (the live state is as read when the compaction was seen, not since):";

/** What the repair restates after the protected round: the pinned anchors, and the live state read at the compaction. */
export interface Restated {
  anchors?: string;
  /** The `## Live state` section as a checkpoint carries it (`liveStateSection`). */
  liveState?: string;
}

/**
 * The text of the restated element: the anchors alone keep their own
 * heading (the bytes guards have always sent); with the live state, one
 * heading and the checkpoint's `## Anchors` and `## Live state` sections.
 * Undefined when there is nothing to restate.
 */
export function restatedText(r: Restated): string | undefined {
  const anchors = r.anchors?.trim() ?? "";
  const live = r.liveState?.trim() ?? "";
  if (live === "") return anchors === "" ? undefined : `${ANCHORS_HEADING}\n${anchors}`;
  return `${RESTATED_HEADING}\n\n${anchors === "" ? "" : `## Anchors\n${anchors}\n\n`}${live}`;
}

/** One user element of the wire carrying `text`. */
export function userTextElement(wire: GuardWire, text: string): unknown {
  if (wire === "openai-responses") return userTextItem(text);
  if (wire === "openai-chat") return { role: "user", content: text };
  return { role: "user", content: [{ type: "text", text }] };
}

/** The anchors as one user element of the wire. */
export function anchorsElement(wire: GuardWire, anchors: string): unknown {
  return userTextElement(wire, `${ANCHORS_HEADING}\n${anchors}`);
}

/**
 * The raw elements to splice: the protected last round of `before` (and the
 * current instructions before it, their text only), mapped back to the raw
 * elements they came from, less what `after` already carries. An earlier
 * summary in the round (and the guard's own restatement beside it) is
 * folded into the agent's new one, never spliced back: one checkpoint.
 */
export function buildSplice(
  wire: GuardWire,
  before: readonly HistoryItem[],
  after: readonly HistoryItem[],
): unknown[] {
  const round = protectedRound(messagesOf(before));
  const carried = carriedBy(after);
  const instructionsBefore = new Set(round.instructionIndices.filter((i) => i < round.regionStart));
  const out: unknown[] = [];
  for (let i = 0; i < before.length; i++) {
    if (i < round.regionStart && !instructionsBefore.has(i)) continue;
    const it = before[i]!;
    if (it.message.role === "system" && it.parts.length === 0) continue;
    if (isSummaryItem(it) || isGuardRestatement(it.message)) continue;
    const textOnly = i < round.regionStart;
    for (const raw of it.raw) {
      const el =
        wire === "anthropic-messages"
          ? anthropicElement(raw, carried, textOnly)
          : wire === "openai-responses"
            ? responsesElement(raw, carried)
            : chatElement(raw, carried);
      if (el !== undefined) out.push(el);
    }
  }
  return out;
}

/** Index of the last checkpoint among the request's items (-1: none). */
export function lastCheckpointIndex(items: readonly HistoryItem[]): number {
  for (let i = items.length - 1; i >= 0; i--) if (isCheckpoint(items[i]!.message)) return i;
  return -1;
}

/** What a repair puts into a request: the guard's restatement on the summary's message, the round after it. */
export interface SpliceParts {
  /** The raw elements inserted after the summary (its message and the opaque elements right after it). */
  raw: readonly unknown[];
  /** The guard's restated text, carried as further content of the summary's own message. */
  restated?: string;
}

/** An element of the wire that the reader keeps in place without reading it (see the wire readers). */
function isOpaqueElement(wire: GuardWire, el: unknown): boolean {
  if (!isRecord(el)) return false;
  if (wire === "anthropic-messages") return el.role !== "user" && el.role !== "assistant";
  if (wire === "openai-chat") return !CHAT_ROLES.has(el.role);
  return false;
}

/**
 * The summary's raw element with `text` as further content after the
 * summary's blocks (`to`: where the summary's blocks end in the element), or
 * undefined when the element cannot take content (an opaque provider summary:
 * a Responses `compaction` item, an Anthropic `compaction` block).
 */
function withRestated(wire: GuardWire, el: unknown, to: number | undefined, text: string): unknown {
  if (!isRecord(el)) return undefined;
  if (wire === "openai-responses") {
    if (el.type !== undefined && el.type !== "message") return undefined;
    if (el.role !== "user") return undefined;
    const part = inputTextPart(text);
    if (typeof el.content === "string") return { ...el, content: [inputTextPart(el.content), part] };
    return Array.isArray(el.content) ? { ...el, content: [...el.content, part] } : undefined;
  }
  if (el.role !== "user") return undefined;
  const part = { type: "text", text };
  if (typeof el.content === "string") {
    // Chat: the summary's text stays as it is, the restatement follows it in the same message.
    if (wire === "openai-chat") return { ...el, content: `${el.content}\n\n${text}` };
    return { ...el, content: [{ type: "text", text: el.content }, part] };
  }
  if (!Array.isArray(el.content)) return undefined;
  if (el.content.some((b) => isRecord(b) && b.type === "compaction")) return undefined;
  const at = to ?? el.content.length;
  return { ...el, content: [...el.content.slice(0, at), part, ...el.content.slice(at)] };
}

/** Whether the summary item `at` of `h` can carry the guard's restatement as further content. */
export function summaryTakesContent(h: WireHistory, at: number): boolean {
  const item = h.items[at]!;
  const part = item.parts[item.parts.length - 1]!;
  return withRestated(h.wire, h.list[part.element], part.to, "x") !== undefined;
}

/**
 * The request's body with the repair in it: the guard's restatement as
 * further content of the summary's message (item `at`), and `splice.raw`
 * right after it (after the opaque elements that follow it, which stay next
 * to it); the summary's raw element split when the summary is only part of
 * it. `start` is where the inserted elements begin in the new list.
 */
export function insertAfter(
  h: WireHistory,
  at: number,
  splice: SpliceParts,
): { doc: Record<string, unknown>; start: number } {
  const item = h.items[at]!;
  const part = item.parts[item.parts.length - 1]!;
  const list = h.list;
  const el = list[part.element];
  const content = isRecord(el) && Array.isArray(el.content) ? el.content : undefined;
  const carried =
    splice.restated === undefined ? el : (withRestated(h.wire, el, part.to, splice.restated) ?? el);
  const split = part.to !== undefined && content !== undefined && part.to < content.length;
  let next: unknown[];
  let start: number;
  if (!split) {
    let after = part.element + 1;
    while (after < list.length && isOpaqueElement(h.wire, list[after])) after++;
    next = [
      ...list.slice(0, part.element),
      carried,
      ...list.slice(part.element + 1, after),
      ...splice.raw,
      ...list.slice(after),
    ];
    start = after;
  } else {
    const grown = (carried as Raw).content as unknown[];
    const extra = grown.length - content.length;
    const head = { ...(el as Raw), content: grown.slice(0, part.to! + extra) };
    const tail = { ...(el as Raw), content: content.slice(part.to) };
    next = [...list.slice(0, part.element), head, ...splice.raw, tail, ...list.slice(part.element + 1)];
    start = part.element + 1;
  }
  return { doc: { ...h.doc, [h.listKey]: next }, start };
}

/** The elements of a list that are turns (records for which `isTurn` holds), with their indices in the list. */
function turnsOf(all: readonly unknown[], isTurn: (m: Raw) => boolean): { list: unknown[]; at: number[] } {
  const list: unknown[] = [];
  const at: number[] = [];
  all.forEach((m, j) => {
    if (isRecord(m) && !isTurn(m)) return;
    list.push(m);
    at.push(j);
  });
  return { list, at };
}

/** Why a spliced Anthropic messages array would be refused by the API (tool_result not right after its tool_use), or undefined. */
export function anthropicAdjacency(all: readonly unknown[]): string | undefined {
  const blocks = (m: unknown): Raw[] =>
    isRecord(m) && Array.isArray(m.content) ? (m.content.filter(isRecord) as Raw[]) : [];
  // Opaque elements (a role other than user or assistant, which the reader keeps in place) are not turns.
  const { list, at } = turnsOf(all, (m) => m.role === "user" || m.role === "assistant");
  for (let j = 0; j < list.length; j++) {
    const m = list[j];
    const results = blocks(m)
      .filter((b) => b.type === "tool_result")
      .map((b) => String(b.tool_use_id));
    if (results.length > 0) {
      const prev = list[j - 1];
      const calls = new Set(
        isRecord(prev) && prev.role === "assistant"
          ? blocks(prev)
              .filter((b) => b.type === "tool_use")
              .map((b) => String(b.id))
          : [],
      );
      const missing = results.find((id) => !calls.has(id));
      if (missing !== undefined)
        return `tool_result ${JSON.stringify(missing)} does not directly follow its tool_use (message ${at[j]})`;
    }
    if (isRecord(m) && m.role === "assistant" && j + 1 < list.length) {
      const calls = blocks(m)
        .filter((b) => b.type === "tool_use")
        .map((b) => String(b.id));
      if (calls.length === 0) continue;
      const next = new Set(
        blocks(list[j + 1])
          .filter((b) => b.type === "tool_result")
          .map((b) => String(b.tool_use_id)),
      );
      const missing = calls.find((id) => !next.has(id));
      if (missing !== undefined)
        return `tool_use ${JSON.stringify(missing)} is not answered in the next message (message ${at[j]})`;
    }
  }
  return undefined;
}

/** Why a spliced Chat Completions messages array would be refused (a tool message not after its call), or undefined. */
export function chatAdjacency(all: readonly unknown[]): string | undefined {
  const { list, at } = turnsOf(all, (m) => CHAT_ROLES.has(m.role));
  let open = new Set<string>();
  for (let j = 0; j < list.length; j++) {
    const m = list[j];
    if (!isRecord(m)) continue;
    const id = chatResultId(m);
    if (id !== undefined) {
      if (!open.has(id))
        return `tool message ${JSON.stringify(id)} does not follow its call (message ${at[j]})`;
      open.delete(id);
      continue;
    }
    if (open.size > 0 && j > 0)
      return `tool call ${JSON.stringify([...open][0])} is not answered before message ${at[j]}`;
    open = new Set(chatCallIds(m));
  }
  return undefined;
}

/** The wire's own structural check of a spliced history list. */
export function wireCheck(wire: GuardWire, list: readonly unknown[]): string | undefined {
  if (wire === "anthropic-messages") return anthropicAdjacency(list);
  if (wire === "openai-chat") return chatAdjacency(list);
  return undefined;
}

export type { Message };
