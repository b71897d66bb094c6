/**
 * Recall references: the short names a checkpoint cites for what it stubbed,
 * cut or summarized, and that `compact-safe mcp`'s `recall` tool gives back
 * whole from the saved history. Each is derived from what identifies the
 * original, never from where it sits, so it still resolves after a second
 * compaction (the journal is append-only and keeps every original):
 *
 * - `tool:ID`: the result of the tool call `ID` (its tool-use id);
 * - `msg:HASH`: a message by the first 12 hex digits of the SHA-256 of its
 *   text blocks (joined by a line break), as written before any redaction;
 * - `compaction:ID`: the live context a compaction (entry `ID`) replaced.
 */
import { createHash } from "node:crypto";
import type { Message } from "./types.js";

export type RecallRef =
  { kind: "tool"; id: string } | { kind: "msg"; hash: string } | { kind: "compaction"; id: string };

/** The ref of a tool call's result. */
export function toolRef(toolUseId: string): string {
  return `tool:${toolUseId}`;
}

/** The text of a message that its `msg:` ref hashes: its text blocks, joined by a line break. */
export function refText(m: Message): string {
  const texts: string[] = [];
  for (const b of m.content) if (b.type === "text" && typeof b.text === "string") texts.push(b.text);
  return texts.join("\n");
}

/** The ref of a message with this text (`refText`). */
export function messageRefOfText(text: string): string {
  return `msg:${createHash("sha256").update(text, "utf8").digest("hex").slice(0, 12)}`;
}

/** The ref of a message. */
export function messageRef(m: Message): string {
  return messageRefOfText(refText(m));
}

/** The ref of a compaction's summarized span. */
export function compactionRef(entryId: string): string {
  return `compaction:${entryId}`;
}

/** A ref as written (surrounding spaces, quotes and backticks ignored); undefined when it is none. */
export function parseRecallRef(text: string): RecallRef | undefined {
  const t = text.trim().replace(/^[`"']+|[`"']+$/g, "");
  const m = /^(tool|msg|compaction):(.+)$/s.exec(t);
  if (m === null) return undefined;
  const [, kind, rest] = m as unknown as [string, string, string];
  if (kind === "msg") return /^[0-9a-f]{12}$/i.test(rest) ? { kind, hash: rest.toLowerCase() } : undefined;
  if (/\s/.test(rest)) return undefined;
  return kind === "tool" ? { kind, id: rest } : { kind: "compaction", id: rest };
}

/** How a checkpoint tells the model to fetch a ref (`recall REF`). */
export function recallHint(ref: string): string {
  return `recall ${ref}`;
}
