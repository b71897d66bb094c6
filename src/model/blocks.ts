/** Small pure helpers over blocks and messages. */
import type { Block, Message, TextBlock, ToolResultBlock, ToolUseBlock } from "./types.js";
import { MAX_MESSAGE_DEPTH } from "./depth.js";
import { checkDepth } from "./schema.js";

export const isText = (b: Block): b is TextBlock =>
  b.type === "text" && typeof (b as TextBlock).text === "string";
export const isToolUse = (b: Block): b is ToolUseBlock => b.type === "tool_use";
export const isToolResult = (b: Block): b is ToolResultBlock => b.type === "tool_result";

export function isAssistantRole(m: Message): boolean {
  return m.role === "assistant" || m.role === "assistant_interrupted";
}

export function toolUses(m: Message): ToolUseBlock[] {
  return m.content.filter(isToolUse);
}

export function toolResults(m: Message): ToolResultBlock[] {
  return m.content.filter(isToolResult);
}

/** A deep copy made with structuredClone (the engine never mutates its input). */
export function cloneMessages(messages: readonly Message[]): Message[] {
  return structuredClone(messages) as Message[];
}

/**
 * Canonical JSON (sorted keys) for comparing tool inputs and payloads. The
 * walk is bounded: a value nested deeper than `MAX_MESSAGE_DEPTH` levels (or
 * cyclic) is refused with a `ModelError` naming `path`, never a stack overflow.
 */
export function canonicalJson(value: unknown, path = "value"): string {
  try {
    return canonical(value, 0);
  } catch (e) {
    if (e !== TOO_DEEP) throw e;
    checkDepth(value, path, MAX_MESSAGE_DEPTH); // throws the error naming the path
    throw e;
  }
}

/** Thrown (and caught above) when the walk reaches the limit; the error naming the path is built then. */
const TOO_DEEP = new Error("nested too deep");

function canonical(value: unknown, level: number): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "undefined";
  if (level >= MAX_MESSAGE_DEPTH) throw TOO_DEEP;
  if (Array.isArray(value)) return `[${value.map((v) => canonical(v, level + 1)).join(",")}]`;
  const keys = Object.keys(value as object).sort();
  return `{${keys
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k], level + 1)}`)
    .join(",")}}`;
}
