/** Which wire a request speaks, by method and path, and reading its body. */
import type { GuardWire } from "./types.js";
import type { WireHistory } from "./history.js";
import { readAnthropic } from "./wire-anthropic.js";
import { readResponses } from "./wire-responses.js";
import { readChat } from "./wire-chat.js";

/** `compactRequest`: Codex's remote compaction (`POST …/responses/compact`), which carries the session's whole history. */
export type Route = { wire: GuardWire; compactRequest?: true } | { passthrough: string };

/** The wire of a request, or why it is passed through without being read. */
export function routeOf(method: string, url: string): Route {
  const path = (url.split("?")[0] ?? "").replace(/\/+$/, "");
  // No history in it (Codex's WebSocket attempt is such a GET: forwarded without its upgrade, it falls back to HTTPS).
  if (method.toUpperCase() !== "POST")
    return { passthrough: `${method} request (no history in it), passed through` };
  if (/\/messages\/count_tokens$/.test(path)) return { passthrough: "count_tokens, not judged" };
  if (/(^|\/)v1\/messages$/.test(path) || /(^|\/)messages$/.test(path)) return { wire: "anthropic-messages" };
  if (/(^|\/)responses$/.test(path)) return { wire: "openai-responses" };
  if (/(^|\/)responses\/compact$/.test(path)) return { wire: "openai-responses", compactRequest: true };
  if (/(^|\/)chat\/completions$/.test(path)) return { wire: "openai-chat" };
  return { passthrough: `unknown endpoint ${path.slice(0, 80)}, not judged` };
}

/**
 * What reading request bodies has cost so far in this process: bytes handed
 * to `JSON.parse`, and list elements read into history items. Counted (not
 * timed) so that tests can tell that a request extending the last one is
 * read in proportion to what it adds (`extend.ts`).
 */
export const readWork = { parsedBytes: 0, readElements: 0 };

export function readWire(wire: GuardWire, doc: Record<string, unknown>): WireHistory {
  const h = readWhole(wire, doc);
  readWork.readElements += h.list.length;
  return h;
}

function readWhole(wire: GuardWire, doc: Record<string, unknown>): WireHistory {
  switch (wire) {
    case "anthropic-messages":
      return readAnthropic(doc);
    case "openai-responses":
      return readResponses(doc);
    case "openai-chat":
      return readChat(doc);
  }
}

/** Parses a body as a JSON object; throws a one-line Error otherwise. */
export function parseBody(body: Buffer): Record<string, unknown> {
  let doc: unknown;
  readWork.parsedBytes += body.length;
  try {
    doc = JSON.parse(body.toString("utf8"));
  } catch {
    throw new Error("body is not JSON");
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    throw new Error("body is not a JSON object");
  return doc as Record<string, unknown>;
}
