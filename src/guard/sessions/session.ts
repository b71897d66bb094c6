/**
 * Which agent sent a request, and the session it belongs to: Claude Code's
 * session id (the `x-claude-code-session-id` header, or `metadata.user_id`),
 * Codex's conversation id (the `session_id` / `thread-id` /
 * `conversation_id` headers, or the body's `prompt_cache_key`), otherwise a
 * hash of the history's first messages (system and first user message).
 */
import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { isText } from "../../model/blocks.js";
import type { WireHistory } from "../reading/history.js";

export type GuardAgent = "claude-code" | "codex" | "pi" | "unknown";

export interface SessionIdentity {
  key: string;
  agent: GuardAgent;
  /** Where the key came from: `header`, `metadata`, `prompt_cache_key` or `hash`. */
  source: string;
  /** The agent's own session id the key is made of (none for a key made of a hash). */
  own?: string;
  /** The agent's version, as its headers give it (`agentVersion`). */
  version?: string;
}

export const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name];
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === "string" && s.trim() !== "" ? s.trim() : undefined;
};

/** The session id inside Claude Code's `metadata.user_id`: a JSON string, or the older `..._session_<id>`. */
export function claudeMetadataSession(doc: Record<string, unknown>): string | undefined {
  const md = doc.metadata;
  if (typeof md !== "object" || md === null) return undefined;
  const uid = (md as { user_id?: unknown }).user_id;
  if (typeof uid !== "string") return undefined;
  try {
    const parsed = JSON.parse(uid) as unknown;
    if (typeof parsed === "object" && parsed !== null) {
      const sid = (parsed as { session_id?: unknown }).session_id;
      if (typeof sid === "string" && sid !== "") return sid;
    }
  } catch {
    // not JSON: the older form
  }
  return /_session_([0-9A-Za-z-]+)$/.exec(uid)?.[1];
}

function systemText(h: WireHistory): string {
  return h.items
    .filter((i) => i.message.role === "system")
    .flatMap((i) => i.message.content.filter(isText).map((b) => b.text))
    .join("\n");
}

/** The agent, from the signals each one sends. */
export function agentOf(headers: IncomingHttpHeaders, h: WireHistory): GuardAgent {
  const ua = header(headers, "user-agent") ?? "";
  const originator = header(headers, "originator") ?? "";
  if (header(headers, "x-claude-code-session-id") || /claude-cli|claude-code/i.test(ua)) return "claude-code";
  if (h.wire === "anthropic-messages" && claudeMetadataSession(h.doc)) return "claude-code";
  if (/codex/i.test(originator) || /codex/i.test(ua) || header(headers, "x-openai-subagent")) return "codex";
  const sys = systemText(h);
  if (/operating inside pi, a coding agent harness/i.test(sys)) return "pi";
  if (/\bpi-coding-agent\b|\bpi\/\d/i.test(ua)) return "pi";
  if (h.wire === "openai-responses" && (header(headers, "session_id") || header(headers, "thread-id")))
    return "codex";
  return "unknown";
}

/**
 * The agent's version from its headers: Claude Code's `user-agent` (`claude-cli/2.1.328 (external, cli)`),
 * Codex's `version` header or its `user-agent` (`codex_cli_rs/0.46.0 (...)`), pi's `user-agent`
 * (`pi/1.0`, `pi-coding-agent/0.73.1`). Undefined for an agent it does not know, or when none is sent.
 */
export function agentVersion(headers: IncomingHttpHeaders, agent: GuardAgent): string | undefined {
  const ua = header(headers, "user-agent") ?? "";
  const product: Record<GuardAgent, RegExp | undefined> = {
    "claude-code": /(?:^|\s)claude-(?:cli|code)\/([0-9][\w.+-]*)/i,
    codex: /(?:^|\s)codex[\w-]*\/([0-9][\w.+-]*)/i,
    pi: /(?:^|\s)pi(?:-coding-agent)?\/([0-9][\w.+-]*)/i,
    unknown: undefined,
  };
  const fromUa = product[agent]?.exec(ua)?.[1];
  const v = agent === "codex" ? (header(headers, "version") ?? fromUa) : fromUa;
  return v !== undefined && /^[0-9][\w.+-]{0,63}$/.test(v) ? v : undefined;
}

const sha = (s: string): string => createHash("sha256").update(s).digest("hex").slice(0, 24);

/** The header names that carry a non-Claude session id, in the order `sessionOf` reads them. */
export const SESSION_HEADERS = [
  "session_id",
  "thread-id",
  "conversation_id",
  "x-codex-session-id",
  "session-id",
];

/**
 * What the headers alone say of the session (no body read): Claude Code's
 * session key itself, or for the other agents a fingerprint of the headers
 * `sessionOf` and `agentOf` read, which the core maps to the key it found
 * for them before. Undefined when the key depends on the body.
 */
export function headerSession(
  wire: string,
  headers: IncomingHttpHeaders,
): { key: string } | { fp: string } | undefined {
  const cc = header(headers, "x-claude-code-session-id");
  if (cc) return { key: `claude-code:${cc}` };
  // Without the header, an Anthropic request's session is in its metadata, which comes first.
  if (wire === "anthropic-messages") return undefined;
  for (const name of SESSION_HEADERS) {
    const v = header(headers, name);
    if (v) {
      const seen = ["user-agent", "originator", "x-openai-subagent"].map((n) => header(headers, n) ?? "");
      return { fp: [wire, name, v, ...seen].join("\u0000") };
    }
  }
  return undefined;
}

export function sessionOf(headers: IncomingHttpHeaders, h: WireHistory): SessionIdentity {
  const agent = agentOf(headers, h);
  const version = agentVersion(headers, agent);
  const id = (key: string, source: string, own?: string): SessionIdentity => ({
    key,
    agent,
    source,
    ...(own !== undefined ? { own } : {}),
    ...(version !== undefined ? { version } : {}),
  });
  const cc = header(headers, "x-claude-code-session-id");
  if (cc) return id(`claude-code:${cc}`, "header", cc);
  if (h.wire === "anthropic-messages") {
    const md = claudeMetadataSession(h.doc);
    if (md) return id(`claude-code:${md}`, "metadata", md);
  }
  for (const name of SESSION_HEADERS) {
    const v = header(headers, name);
    if (v) return id(`${agent}:${v}`, "header", v);
  }
  const pck = h.doc.prompt_cache_key;
  if (typeof pck === "string" && pck !== "") return id(`${agent}:${pck}`, "prompt_cache_key", pck);
  const firstUser = h.items.find((i) => i.message.role === "user");
  const seed = `${h.wire}\u0000${systemText(h)}\u0000${firstUser?.key ?? ""}`;
  return id(`${agent}:h-${sha(seed)}`, "hash");
}

/** A file name for a session key: its readable part sanitized, and a hash so two keys never share a file. */
export function sessionFileName(key: string): string {
  const readable = key
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^[._]+/, "")
    .slice(0, 60);
  return `${readable || "session"}-${sha(key).slice(0, 12)}.jsonl`;
}
