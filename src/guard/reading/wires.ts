/** Which wire a request speaks, by method and path, and reading its body. */
import type { GuardWire } from "../types.js";
import type { WireHistory } from "./history.js";
import { readAnthropic } from "./wire-anthropic.js";
import { readResponses } from "./wire-responses.js";
import { readChat } from "./wire-chat.js";
import { listLayout } from "./scan.js";
import { redactQuotedLine } from "../../redact/quoted.js";
import { safeHead } from "../../redact/redact.js";

/** `compactRequest`: Codex's remote compaction (`POST …/responses/compact`), which carries the session's whole history. */
export type Route = { wire: GuardWire; compactRequest?: true } | { passthrough: string };

/** A path with its percent-escapes decoded (as it stands when one is malformed). */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

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
  // Decoded, redacted whole and then each segment as a text of its own (a rule may want a secret to
  // stand alone), then cut (a secret the cut split would no longer match its rule).
  const shown = redactQuotedLine(decodedPath(path).replace(/\s+/g, " "))
    .split("/")
    .map((seg) => redactQuotedLine(seg))
    .join("/");
  return {
    passthrough: `unknown endpoint ${shown.length > 80 ? `${safeHead(shown, 80)}…` : shown}, not judged`,
  };
}

/**
 * What reading request bodies has cost so far in this process: bytes handed
 * to `JSON.parse`, and list elements read into history items. Counted (not
 * timed) so that tests can tell that a request extending the last one is
 * read in proportion to what it adds (`extend.ts`).
 */
export const readWork = { parsedBytes: 0, readElements: 0, leanReads: 0 };

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

/** Bodies from this size on are parsed a list element at a time (`parseBody`). */
const BY_ELEMENT_BYTES = 256 * 1024;

/**
 * The value `JSON.parse` gives for a body whose `listKey` list its bytes show
 * plainly (`listLayout`), parsed an element at a time: no string of the whole
 * body is made, and what parsing leaves behind is small values the young
 * generation collects, not megabytes the old one keeps until a full
 * collection. Undefined when the bytes do not show the list so.
 */
function parseByElement(body: Buffer, listKey: string): unknown {
  const layout = listLayout(body, listKey);
  if (!layout) return undefined;
  const outside = Buffer.concat([
    body.subarray(0, layout.start),
    Buffer.from("[]"),
    body.subarray(layout.end + 1),
  ]);
  const doc = JSON.parse(outside.toString("utf8")) as unknown;
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return doc;
  (doc as Record<string, unknown>)[listKey] = layout.elements.map(([a, b]) =>
    JSON.parse(body.toString("utf8", a, b)),
  );
  return doc;
}

/** The wire's history list. */
export const listKeyOf = (wire: GuardWire): "messages" | "input" =>
  wire === "openai-responses" ? "input" : "messages";

/**
 * Parses a body as a JSON object; throws a one-line Error otherwise. With the
 * wire's `listKey`, a large body is parsed an element of that list at a time
 * (the same value).
 */
export function parseBody(body: Buffer, listKey?: string): Record<string, unknown> {
  let doc: unknown;
  readWork.parsedBytes += body.length;
  try {
    const byElement =
      listKey !== undefined && body.length >= BY_ELEMENT_BYTES ? parseByElement(body, listKey) : undefined;
    doc = byElement ?? JSON.parse(body.toString("utf8"));
  } catch {
    throw new Error("body is not JSON");
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    throw new Error("body is not a JSON object");
  return doc as Record<string, unknown>;
}
