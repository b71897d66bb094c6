/** Small pure helpers over blocks and messages. */
import type { Block, Message, TextBlock, ToolResultBlock, ToolUseBlock } from "./types.js";

export const isText = (b: Block): b is TextBlock =>
  b.type === "text" && typeof (b as TextBlock).text === "string";
export const isToolUse = (b: Block): b is ToolUseBlock => b.type === "tool_use";
export const isToolResult = (b: Block): b is ToolResultBlock => b.type === "tool_result";

export function isAssistantRole(m: Message): boolean {
  return m.role === "assistant" || m.role === "assistant_interrupted";
}

/** Concatenated text of a message's text blocks. */
export function messageText(m: Message): string {
  return m.content
    .filter(isText)
    .map((b) => b.text)
    .join("\n");
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

/** Canonical JSON (sorted keys) for comparing tool inputs and payloads. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "undefined";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value as object).sort();
  return `{${keys
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
    .join(",")}}`;
}
