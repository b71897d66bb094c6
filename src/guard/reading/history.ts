/**
 * A request's history as the guard holds it: canonical messages (what the
 * contract judges), each remembering the raw wire elements it came from, so
 * that a range of canonical messages maps back to the very JSON values the
 * agent sent.
 */
import { createHash } from "node:crypto";
import type { Message } from "../../model/types.js";
import type { GuardWire } from "../types.js";

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
  /**
   * Read from the session's last body without parsing what it repeats
   * (`leanExtension`): the items before the first one read again are that
   * body's keys and roles alone (no content), and `list` has no values before
   * the first element read again. Such a history is judged only as the
   * extension of the session's history that its bytes showed, and never held.
   */
  partial?: true;
}

/** Fields that agents move between requests without meaning a change (Anthropic prompt-cache markers). */
const VOLATILE = new Set(["cache_control"]);

/** The prefix of a key made by `keyOfJson` (a key written by an earlier version is the JSON itself). */
const KEY_PREFIX = "k:";

/**
 * A key for the JSON of raw values: its SHA-256 (a session holds a key per
 * message of its last history, tens of bytes each, however long the message).
 */
export const keyOfJson = (json: string): string =>
  `${KEY_PREFIX}${createHash("sha256").update(json).digest("base64url")}`;

/** The comparison key of raw values: a digest of their JSON without volatile fields. */
export function rawKey(raw: readonly unknown[]): string {
  const plain = JSON.stringify(raw);
  // The replacer is slow: only for the few elements that carry a cache marker.
  if (!plain.includes('"cache_control"')) return keyOfJson(plain);
  return keyOfJson(JSON.stringify(raw, (k, v: unknown) => (VOLATILE.has(k) ? undefined : v)));
}

/** A key read from a state folder as this version makes it (an earlier version wrote the JSON itself). */
export function currentKey(key: string): string {
  if (key.startsWith(KEY_PREFIX) || key.startsWith(`system:${KEY_PREFIX}`)) return key;
  if (key.startsWith("system:")) return `system:${keyOfJson(key.slice("system:".length))}`;
  return keyOfJson(key);
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

/** What the comparisons of histories read of an item (`conversation`, `commonPrefix`, `relation`): its key and role. */
export interface ItemHead {
  key: string;
  message: { role: Message["role"] };
}

/** An item head as a session holds it: with where its first part starts (`restart` in `extend.ts` reads it). */
export interface HeldHead extends ItemHead {
  /** The list element its first part is in; -1 for `system` / `instructions`. */
  el: number;
  /** Whether its first part starts at that element's first block. */
  whole: boolean;
}

/** The head of an item as a session holds it. */
export const headOf = (i: HistoryItem): HeldHead => ({
  key: i.key,
  message: { role: i.message.role },
  el: i.parts[0]?.element ?? -1,
  whole: (i.parts[0]?.from ?? 0) === 0,
});

/** An item of a partial history (see `WireHistory.partial`): its head, with no content and no raw values. */
export const stubOf = (h: HeldHead): HistoryItem => ({
  message: { role: h.message.role, content: [] },
  parts: h.el < 0 ? [] : [{ element: h.el, ...(h.whole ? {} : { from: 1 }) }],
  raw: [],
  key: h.key,
});

/** The history's messages. */
export const messagesOf = (items: readonly HistoryItem[]): Message[] => items.map((i) => i.message);
