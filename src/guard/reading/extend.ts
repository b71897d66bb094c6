/**
 * Reading a request that extends the session's last one, in proportion to
 * what it adds. The fast path (`fastExtension` in `core.ts`) has found, on
 * bytes, that the body repeats the last main body up to its first element
 * with a cache marker (`stableEnd`), then carries the same elements but for
 * their markers, then more elements. Those repeated bytes parse to the very
 * values the last request's did, so the history read from it is kept: its
 * list elements before the first one that may differ, the items read from
 * them, and (when the bytes outside the list are the same too) its other
 * top-level fields. Only the elements from there on are parsed and read.
 * The result is the history `readWire(wire, parseBody(body))` gives (the
 * tests check it on generated histories); anything unexpected returns
 * undefined, and the caller reads the body whole.
 */
import { headOf, rawKey, stubOf, type HeldHead, type HistoryItem, type WireHistory } from "./history.js";
import { SUMMARIZATION_BYTES } from "./detect.js";
import { elementsFrom, hasCacheMarker, listLayout, restFrom, type ListLayout } from "./scan.js";
import type { GuardWire } from "../types.js";
import { anthropicItems, anthropicSystem } from "./wire-anthropic.js";
import { chatItems } from "./wire-chat.js";
import { responsesItems, responsesSystem } from "./wire-responses.js";
import { readWork } from "./wires.js";

/** `"compaction"` as JSON writes it as a key or a whole string value (never inside another string). */
const COMPACTION_KEY = '"compaction"';

/** The last main body as the fast path keeps it: its bytes, where its list sits, and the history read from it. */
export interface LastBody {
  body: Buffer;
  wire: GuardWire;
  listKey: WireHistory["listKey"];
  layout: ListLayout;
  /** The first element that may come back with other bytes (its first with a cache marker; the list's length when none). */
  tailFrom: number;
  /** The history read from it, while the session holds it parsed (see `DEFAULT_MAX_PARSED_BYTES`). */
  history?: WireHistory;
}

/** What the fast path found in the new body: the elements from `tailFrom` on, parsed, and the offsets of all elements from there. */
export interface Extension {
  /** The values of the elements from `tailFrom` to the last body's length (parsed on the request path). */
  tail: unknown[];
  /** Offsets of those elements, then of the added ones, in the new body. */
  elements: [number, number][];
  /** The offset of the new list's `]`. */
  end: number;
}

function listItems(wire: GuardWire, list: readonly unknown[], from: number): HistoryItem[] {
  switch (wire) {
    case "anthropic-messages":
      return anthropicItems(list, from);
    case "openai-chat":
      return chatItems(list, from);
    case "openai-responses":
      return responsesItems(list, from);
  }
}

function systemItems(wire: GuardWire, doc: Record<string, unknown>, list: readonly unknown[]): HistoryItem[] {
  switch (wire) {
    case "anthropic-messages":
      return anthropicSystem(doc, list);
    case "openai-chat":
      return [];
    case "openai-responses":
      return responsesSystem(doc, list);
  }
}

/**
 * Where reading can start again (an element index no later than `tailFrom`)
 * and how many of the last history's list items come before it. Anthropic
 * elements are read each on its own: `tailFrom` itself. Chat groups
 * consecutive tool messages and Responses groups items into messages: the
 * start of the last item that starts at or before `tailFrom` (and before the
 * end of the last list), where the reading of the last list started a new
 * item, as it does on a list read from there.
 */
function restart(wire: GuardWire, heads: readonly HeldHead[], listLength: number, tailFrom: number) {
  let firstList = 0;
  while (firstList < heads.length && heads[firstList]!.el < 0) firstList++;
  if (wire === "anthropic-messages") {
    let k = heads.length;
    while (k > firstList && heads[k - 1]!.el >= tailFrom) k--;
    return { from: tailFrom, kept: k, firstList };
  }
  const limit = Math.min(tailFrom, listLength - 1);
  for (let k = heads.length - 1; k >= firstList; k--) {
    const h = heads[k]!;
    if (h.el <= limit && h.whole) return { from: h.el, kept: k, firstList };
  }
  return { from: 0, kept: firstList, firstList };
}

const parse = (b: Buffer, start: number, end: number): unknown => {
  readWork.parsedBytes += end - start;
  return JSON.parse(b.toString("utf8", start, end));
};

/** The history of `body` read from the last one (see the module comment), with its list's layout; undefined when not. */
export function extendHistory(
  last: LastBody & { history: WireHistory },
  body: Buffer,
  ext: Extension,
): { history: WireHistory; layout: ListLayout } | undefined {
  try {
    const h = last.history;
    const n = h.list.length;
    const m = last.tailFrom;
    if (ext.tail.length !== n - m || ext.elements.length < ext.tail.length) return undefined;
    const added = ext.elements.slice(ext.tail.length).map(([a, b]) => parse(body, a, b));
    const list = [...h.list.slice(0, m), ...ext.tail, ...added];

    // The top-level fields other than the list: the last ones when their bytes are the same.
    const lastAfter = last.layout.end + 1;
    const after = ext.end + 1;
    const sameOutside =
      body.length - after === last.body.length - lastAfter &&
      body.compare(last.body, lastAfter, last.body.length, after, body.length) === 0;
    let doc: Record<string, unknown>;
    if (sameOutside) doc = { ...h.doc, [h.listKey]: list };
    else {
      // The bytes before the list are the last body's (they come before `stableEnd`); the rest is parsed.
      const outside = Buffer.concat([
        body.subarray(0, last.layout.start),
        Buffer.from("[]"),
        body.subarray(after),
      ]);
      // The list's key once, unescaped, where it was (JSON.parse would keep a second one).
      const where = listLayout(outside, h.listKey);
      if (!where || where.start !== last.layout.start || where.elements.length > 0) return undefined;
      const parsed = parse(outside, 0, outside.length);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
      doc = parsed as Record<string, unknown>;
      doc[h.listKey] = list;
    }

    const { from, kept, firstList } = restart(h.wire, h.items.map(headOf), h.list.length, m);
    const system = sameOutside ? h.items.slice(0, firstList) : systemItems(h.wire, doc, list);
    const keptItems = h.items.slice(firstList, kept);
    const read = listItems(h.wire, list, from);
    readWork.readElements += list.length - from;
    const history: WireHistory = {
      wire: h.wire,
      doc,
      listKey: h.listKey,
      list,
      items: [...system, ...keptItems, ...read],
    };
    const layout: ListLayout = {
      start: last.layout.start,
      end: ext.end,
      elements: [...last.layout.elements.slice(0, m), ...ext.elements],
    };
    return { history, layout };
  } catch {
    return undefined;
  }
}

/**
 * The history of `body` read from the last one when the session no longer
 * holds that one's parsed history, only its body and item heads: the
 * elements that body repeats are not parsed (but for those the reading
 * starts again at), the fields outside the list are, and the items before
 * the first one read again are the heads' stubs (`WireHistory.partial`).
 * Undefined when anything is unexpected (the caller reads the body whole).
 */
export function leanExtension(
  last: LastBody,
  heads: readonly HeldHead[],
  body: Buffer,
  ext: Extension,
): { history: WireHistory; layout: ListLayout } | undefined {
  try {
    const n = last.layout.elements.length;
    const m = last.tailFrom;
    if (ext.tail.length !== n - m || ext.elements.length < ext.tail.length) return undefined;
    const { from, kept, firstList } = restart(last.wire, heads, n, m);
    if (from > m) return undefined;
    const list: unknown[] = new Array<unknown>(m);
    // The elements the reading starts again at, before the tail: the same bytes at the same offsets.
    for (let i = from; i < m; i++) {
      const [a, b] = last.layout.elements[i]!;
      list[i] = parse(body, a, b);
    }
    list.push(...ext.tail, ...ext.elements.slice(ext.tail.length).map(([a, b]) => parse(body, a, b)));
    const outside = Buffer.concat([
      body.subarray(0, last.layout.start),
      Buffer.from("[]"),
      body.subarray(ext.end + 1),
    ]);
    const where = listLayout(outside, last.listKey);
    if (!where || where.start !== last.layout.start || where.elements.length > 0) return undefined;
    const doc = parse(outside, 0, outside.length);
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return undefined;
    const d = doc as Record<string, unknown>;
    d[last.listKey] = list;
    const read = listItems(last.wire, list, from);
    readWork.readElements += list.length - from;
    const history: WireHistory = {
      wire: last.wire,
      doc: d,
      listKey: last.listKey,
      list,
      items: [...systemItems(last.wire, d, list), ...heads.slice(firstList, kept).map(stubOf), ...read],
      partial: true,
    };
    const layout: ListLayout = {
      start: last.layout.start,
      end: ext.end,
      elements: [...last.layout.elements.slice(0, m), ...ext.elements],
    };
    return { history, layout };
  } catch {
    return undefined;
  }
}

/**
 * The last main body of a session, as bytes: everything before `stableEnd`
 * (the start of its first list element with a cache marker, or its list's
 * closing bracket) must come back byte for byte, and the elements from there
 * (the ones whose cache markers move) must come back equal but for those.
 * With the history read from it, so that an extension is read from it
 * (`extend.ts`).
 */
export interface FastInfo extends LastBody {
  stableEnd: number;
  tailKeys: string[];
}

/**
 * The fast-path record of a main body, or undefined when its bytes do not
 * show its list plainly. `known` is its layout when it was read from the last
 * body (`extendHistory`), whose elements before `noMarkerBefore` carry no
 * cache marker: only the bytes from there are scanned.
 */
export function fastInfoOf(
  body: Buffer,
  h: WireHistory,
  known?: { layout: ListLayout; noMarkerBefore: number },
): (FastInfo & { history: WireHistory }) | undefined {
  const layout = known?.layout ?? listLayout(body, h.listKey);
  if (!layout || layout.elements.length !== h.list.length) return undefined;
  const n = layout.elements.length;
  let m = known?.noMarkerBefore ?? 0;
  while (m < n && !hasCacheMarker(body, layout.elements[m]![0], layout.elements[m]![1])) m++;
  return {
    body,
    wire: h.wire,
    listKey: h.listKey,
    layout,
    tailFrom: m,
    history: h,
    stableEnd: m < n ? layout.elements[m]![0] : layout.end,
    tailKeys: h.list.slice(m).map((el) => rawKey([el])),
  };
}

/**
 * Whether `body` is, by its bytes, an extension of the session's last main
 * history: the same bytes up to `stableEnd`, then the same elements but for
 * cache markers (parsed one by one: only the few the markers touch), then
 * the list goes on or ends. Such a request is one the full path would find
 * an extension; without an active splice it goes out untouched. Returns what
 * it found (the parsed tail, the offsets of the elements from there), which
 * `extendHistory` reads the body from; undefined when it is not an extension.
 */
export function fastExtension(f: FastInfo, body: Buffer): Extension | undefined {
  if (body.length < f.stableEnd) return undefined;
  if (body.compare(f.body, 0, f.stableEnd, 0, f.stableEnd) !== 0) return undefined;
  const tail = elementsFrom(body, f.stableEnd, f.tailKeys.length);
  if (!tail) return undefined;
  const values: unknown[] = [];
  for (let k = 0; k < tail.elements.length; k++) {
    const [a, b] = tail.elements[k]!;
    let el: unknown;
    readWork.parsedBytes += b - a;
    try {
      el = JSON.parse(body.toString("utf8", a, b));
    } catch {
      return undefined;
    }
    if (rawKey([el]) !== f.tailKeys[k]) return undefined;
    values.push(el);
  }
  // What the request adds must not be an agent's summarization request (answered on the full path).
  const rest = restFrom(body, tail.end);
  if (!rest) return undefined;
  const added = body.subarray(f.stableEnd, rest.end);
  if (SUMMARIZATION_BYTES.some((p) => added.indexOf(p, 0, "utf8") >= 0)) return undefined;
  // Nor a request for the provider's own compaction in a field after the list (Anthropic's `compaction`).
  if (body.indexOf(COMPACTION_KEY, rest.end, "utf8") >= 0) return undefined;
  return { tail: values, elements: [...tail.elements, ...rest.elements], end: rest.end };
}
