/**
 * A request's history as the guard holds it: canonical messages (what the
 * contract judges), each remembering the raw wire elements it came from, so
 * that a range of canonical messages maps back to the very JSON values the
 * agent sent.
 */
import type { Message } from "../model/types.js";
import type { GuardWire } from "./types.js";

/** Where one canonical message came from: an element of the wire's list, or a block range of it. */
export interface Part {
  /** Index in the request's list (`messages` or `input`). */
  element: number;
  /** A range of the element's content blocks (Anthropic only), when the message holds only part of it. */
  from?: number;
  to?: number;
}

export interface HistoryItem {
  message: Message;
  /** Where it came from in this request; empty for `system` / `instructions`, which are not list elements. */
  parts: Part[];
  /** The raw JSON values it came from (a block range: the element with only those blocks). */
  raw: unknown[];
  /** Compares items across requests: the raw values without what agents vary without meaning a change. */
  key: string;
}

export interface WireHistory {
  wire: GuardWire;
  /** The parsed body. */
  doc: Record<string, unknown>;
  /** The body's history list (`messages` or `input`). */
  listKey: "messages" | "input";
  list: unknown[];
  items: HistoryItem[];
}

/** Fields that agents move between requests without meaning a change (Anthropic prompt-cache markers). */
const VOLATILE = new Set(["cache_control"]);

/** The comparison key of raw values: their JSON without volatile fields. */
export function rawKey(raw: readonly unknown[]): string {
  const plain = JSON.stringify(raw);
  // The replacer is slow: only for the few elements that carry a cache marker.
  if (!plain.includes('"cache_control"')) return plain;
  return JSON.stringify(raw, (k, v: unknown) => (VOLATILE.has(k) ? undefined : v));
}

/** The raw value of one part. */
export function partRaw(list: readonly unknown[], p: Part): unknown {
  const el = list[p.element];
  if (p.from === undefined) return el;
  const content = (el as { content: unknown[] }).content;
  if (p.from === 0 && p.to === content.length) return el;
  return { ...(el as object), content: content.slice(p.from, p.to) };
}

export function makeItem(message: Message, parts: Part[], list: readonly unknown[]): HistoryItem {
  const raw = parts.map((p) => partRaw(list, p));
  return {
    message,
    parts,
    raw,
    key: parts.length === 0 ? `system:${rawKey([message.content])}` : rawKey(raw),
  };
}

/** The history's messages. */
export const messagesOf = (items: readonly HistoryItem[]): Message[] => items.map((i) => i.message);
