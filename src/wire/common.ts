/**
 * What every wire module shares: the record test, a tool call's arguments as
 * JSON, the text of text blocks, `data:` URLs.
 */
import type { Block } from "../model/index.js";
import { MAX_MESSAGE_DEPTH, parseJsonLimited } from "../model/index.js";

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** A call's arguments: a JSON string parsed (kept as the string when it is not JSON or too deep), else as given. */
export function parseArguments(args: unknown): unknown {
  if (typeof args !== "string") return args ?? {};
  try {
    // Too deep to parse safely: kept as the string it is, like any arguments that are not JSON.
    return parseJsonLimited(args, MAX_MESSAGE_DEPTH - 8);
  } catch {
    return args;
  }
}

/** The text of a message's text blocks joined by newlines. */
export function textOf(blocks: readonly Block[]): string {
  return blocks
    .filter((b) => b.type === "text" && typeof (b as { text?: unknown }).text === "string")
    .map((b) => (b as { text: string }).text)
    .join("\n");
}

/** A base64 `data:` URL's media type and data. */
export const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;
