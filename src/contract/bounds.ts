/**
 * The 8 KiB bound on tool results in the protected round: head and tail kept,
 * with a marker giving the original size. The cut never splits a character.
 */
import { CONSTANTS } from "../model/constants.js";

export const RESULT_BOUND_BYTES = CONSTANTS.resultBoundBytes;

export function utf8Length(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

export function truncationMarker(originalBytes: number): string {
  return `\n[compact-safe: tool result truncated; original ${originalBytes} bytes of UTF-8, kept head and tail]\n`;
}

const MARKER_RE =
  /\n\[compact-safe: tool result truncated; original (\d+) bytes of UTF-8, kept head and tail\]\n/;

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}
function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** UTF-8 size of the code unit at `c` when it is not part of a surrogate pair. */
function unitBytes(c: number): number {
  return c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
}

/** The longest prefix of `s` (whole code points) whose UTF-8 size is ≤ budget. */
export function utf8Head(s: string, budget: number): string {
  let bytes = 0;
  let i = 0;
  while (i < s.length) {
    const pair = isHigh(s.charCodeAt(i)) && i + 1 < s.length && isLow(s.charCodeAt(i + 1));
    const n = pair ? 4 : unitBytes(s.charCodeAt(i));
    if (bytes + n > budget) break;
    bytes += n;
    i += pair ? 2 : 1;
  }
  return s.slice(0, i);
}

/** The longest suffix of `s` (whole code points) whose UTF-8 size is ≤ budget. */
export function utf8Tail(s: string, budget: number): string {
  let bytes = 0;
  let i = s.length;
  while (i > 0) {
    const pair = isLow(s.charCodeAt(i - 1)) && i >= 2 && isHigh(s.charCodeAt(i - 2));
    const n = pair ? 4 : unitBytes(s.charCodeAt(i - 1));
    if (bytes + n > budget) break;
    bytes += n;
    i -= pair ? 2 : 1;
  }
  return s.slice(i);
}

/** Bounds a tool result's content to 8 KiB of UTF-8 (head and tail). Returns it unchanged when it fits. */
export function boundResultContent(
  content: string,
  limit: number = RESULT_BOUND_BYTES,
): { content: string; truncated: boolean } {
  return boundContentOfSize(content, utf8Length(content), limit);
}

/**
 * A tool result's content as the protected round keeps it, or undefined when the result is within the
 * bound (`resultOverBound` false: kept as it is, nested blocks too). Over the bound, its content is
 * `boundResultContent`'s and its nested blocks are dropped. The content's UTF-8 size is counted once
 * for both steps (a pass over a large result each).
 */
export function boundedResultContent(
  r: { content: string; content_blocks?: readonly unknown[] },
  limit: number = RESULT_BOUND_BYTES,
): { content: string; truncated: boolean } | undefined {
  const size = utf8Length(r.content);
  if (size <= limit && size + nestedBlocksBytes(r) <= limit) return undefined;
  return boundContentOfSize(r.content, size, limit);
}

/** `boundResultContent` of content whose UTF-8 size is `size`. */
function boundContentOfSize(
  content: string,
  size: number,
  limit: number,
): { content: string; truncated: boolean } {
  if (size <= limit || boundedCopy(content, size, limit)) return { content, truncated: false };
  const headBudget = Math.floor(limit * 0.75);
  // All ASCII (as many bytes as characters): the cuts fall where the byte counts say, no character to split.
  const ascii = size === content.length;
  const head = ascii ? content.slice(0, headBudget) : utf8Head(content, headBudget);
  const tailBudget = limit - (ascii ? head.length : utf8Length(head));
  const tail = ascii ? content.slice(content.length - tailBudget) : utf8Tail(content, tailBudget);
  return { content: head + truncationMarker(size) + tail, truncated: true };
}

/** The largest marker (an original size of 16 digits), in UTF-8 bytes: a bounded copy is at most this over the limit. */
const MAX_MARKER_BYTES = truncationMarker(Number.MAX_SAFE_INTEGER).length;

/** True when the content is itself a bounded copy (head + marker + tail ≤ limit), so bounding again is a no-op. */
export function isAlreadyBounded(content: string, limit: number = RESULT_BOUND_BYTES): boolean {
  return boundedCopy(content, utf8Length(content), limit);
}

/**
 * `isAlreadyBounded` of content whose UTF-8 size is `size`. Content more than the largest marker over the
 * limit cannot be a bounded copy: it is not searched for a marker (a search through a large result).
 */
function boundedCopy(content: string, size: number, limit: number): boolean {
  if (size > limit + MAX_MARKER_BYTES) return false;
  const m = MARKER_RE.exec(content);
  if (!m) return false;
  return size - utf8Length(m[0]) <= limit;
}

/**
 * True when `candidate` is `original` or a correctly bounded copy of it:
 * head (a prefix) + marker(original size) + tail (a suffix), at most 8 KiB
 * kept, no character split at either cut.
 */
export function isValidBoundedResult(
  original: string,
  candidate: string,
  limit: number = RESULT_BOUND_BYTES,
): boolean {
  if (candidate === original) return true;
  const size = utf8Length(original);
  if (size <= limit) return false;
  const m = MARKER_RE.exec(candidate);
  if (!m) return false;
  if (Number(m[1]) !== size) return false;
  const head = candidate.slice(0, m.index);
  const tail = candidate.slice(m.index + m[0].length);
  if (!original.startsWith(head) || !original.endsWith(tail)) return false;
  if (head.length + tail.length > original.length) return false;
  if (head.length > 0 && isHigh(head.charCodeAt(head.length - 1))) return false;
  if (tail.length > 0 && isLow(tail.charCodeAt(0))) return false;
  return utf8Length(head) + utf8Length(tail) <= limit;
}

/** UTF-8 size of a result's nested blocks (serialized), 0 when it has none. */
export function nestedBlocksBytes(r: { content_blocks?: readonly unknown[] }): number {
  return r.content_blocks && r.content_blocks.length > 0 ? utf8Length(JSON.stringify(r.content_blocks)) : 0;
}

/**
 * True when a tool result is over the bound: its content and its nested
 * blocks together exceed 8 KiB of UTF-8. Such a result keeps its content
 * bounded (head and tail when the content alone is over) and loses its
 * nested blocks.
 */
export function resultOverBound(
  r: { content: string; content_blocks?: readonly unknown[] },
  limit: number = RESULT_BOUND_BYTES,
): boolean {
  const content = utf8Length(r.content);
  return content > limit || content + nestedBlocksBytes(r) > limit;
}
