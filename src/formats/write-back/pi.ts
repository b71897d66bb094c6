/**
 * Write-back for pi (`@mariozechner/pi-coding-agent`, checked against
 * 0.73.1): a compacted history as a NEW pi session file, in the tree format
 * pi writes today (session version 3) and in the shape pi itself leaves after
 * its own compaction, so that `pi --session FILE` loads it as a compacted
 * session and can compact it again:
 *
 * 1. the `session` header: `version: 3`, a new id (a UUIDv7, as pi makes
 *    them), the original's `cwd`, and `parentSession` naming the original;
 * 2. the original's model and thinking level as pi's own `model_change` and
 *    `thinking_level_change` entries (pi restores them on resume; they are
 *    not part of the model's context);
 * 3. one `message` entry per message of the replacement after the checkpoint,
 *    chained by `parentId` (8 hex digits, as pi makes them): retained user
 *    messages, then the protected last round, every tool call followed by
 *    its `toolResult`, thinking with its `thinkingSignature` byte for byte;
 * 4. a `compaction` entry, the leaf, whose `summary` is compact-safe's
 *    checkpoint and whose `firstKeptEntryId` is the first message of 3.
 *
 * pi builds the model's context from that as: the compaction summary (in
 * pi's own framing, "The conversation history before this point was
 * compacted into the following summary: <summary>…</summary>"), then the
 * kept messages from `firstKeptEntryId` on. So the model sees the checkpoint
 * first, then the rest of the replacement in order (pi has no place for a
 * message before its summary). Results an importer wrote to close an
 * abandoned call are not written: pi closes such calls itself when it sends
 * them, exactly as it does for the original. A prune-only replacement keeps
 * the checkpoint it already had (as the compaction summary) or, with none,
 * is a plain session of the pruned messages.
 */
import { randomBytes } from "node:crypto";
import type { Message } from "../../model/index.js";
import { isCheckpoint } from "../../contract/classify.js";
import { isRecord, recordsOf } from "../common/lines.js";
import { PI_COMPACTION_PREFIX, PI_COMPACTION_SUFFIX, toPiSessionMessages } from "../../wire/pi.js";

/** The session format version pi 0.73.1 writes (`CURRENT_SESSION_VERSION`). */
export const PI_SESSION_VERSION = 3;

/** What the fork takes from the original pi session file. */
export interface PiOrigin {
  cwd: string;
  /** The model on the original's active path (latest `model_change` or assistant message). */
  model?: { provider: string; modelId: string };
  /** The thinking level on the original's active path (latest change, else the header's). */
  thinkingLevel?: string;
}

export interface PiFork {
  sessionId: string;
  /** The session file's text (JSONL, one entry per line, ending with a newline). */
  text: string;
  /** The header's timestamp; pi names a session file `<timestamp with : and . as ->_<id>.jsonl`. */
  timestamp: string;
}

/** A UUIDv7 (time-ordered), the kind of id pi 0.73.1 gives a new session. */
export function uuidv7(now: number = Date.now()): string {
  const b = randomBytes(16);
  b.writeUIntBE(now, 0, 6);
  b[6] = 0x70 | (b[6]! & 0x0f);
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** pi's file name for a session started at `timestamp` (ISO) with `id`. */
export function piSessionFileName(timestamp: string, id: string): string {
  return `${timestamp.replace(/[:.]/g, "-")}_${id}.jsonl`;
}

/**
 * Reads what the fork carries over from the original session's text: its
 * `cwd`, and the model and thinking level on its active path (the path from
 * the last entry up by `parentId` in a tree file; every entry of a linear v1
 * file). Broken lines carry nothing (the importer reports them).
 */
export function piOrigin(text: string): PiOrigin {
  const records = [...recordsOf(text)];
  const header = records.find((r) => r.type === "session");
  const origin: PiOrigin = {
    cwd: typeof header?.cwd === "string" ? header.cwd : process.cwd(),
  };
  if (typeof header?.provider === "string" && typeof header.modelId === "string")
    origin.model = { provider: header.provider, modelId: header.modelId };
  if (typeof header?.thinkingLevel === "string") origin.thinkingLevel = header.thinkingLevel;
  const entries = records.filter((r) => r.type !== "session");
  let path = entries;
  if (entries.some((e) => typeof e.id === "string" && "parentId" in e)) {
    const byId = new Map<string, Record<string, unknown>>();
    for (const e of entries) if (typeof e.id === "string" && !byId.has(e.id)) byId.set(e.id, e);
    path = [];
    const seen = new Set<string>();
    for (
      let cur = entries.at(-1);
      cur && typeof cur.id === "string" && !seen.has(cur.id);
      cur = typeof cur.parentId === "string" ? byId.get(cur.parentId) : undefined
    ) {
      seen.add(cur.id);
      path.unshift(cur);
    }
  }
  for (const e of path) {
    if (e.type === "thinking_level_change" && typeof e.thinkingLevel === "string")
      origin.thinkingLevel = e.thinkingLevel;
    else if (e.type === "model_change" && typeof e.provider === "string" && typeof e.modelId === "string")
      origin.model = { provider: e.provider, modelId: e.modelId };
    else if (e.type === "message" && isRecord(e.message) && e.message.role === "assistant") {
      const m = e.message;
      if (typeof m.provider === "string" && typeof m.model === "string")
        origin.model = { provider: m.provider, modelId: m.model };
    }
  }
  return origin;
}

/** The summary pi should hold for a checkpoint: its text, unwrapped when it is already pi's framing. */
export function piCompactionSummary(checkpoint: Message): string {
  const text = checkpoint.content
    .filter((b) => b.type === "text")
    .map((b) => (b as { text: string }).text)
    .join("\n");
  if (text.startsWith(PI_COMPACTION_PREFIX) && text.endsWith(PI_COMPACTION_SUFFIX))
    return text.slice(PI_COMPACTION_PREFIX.length, text.length - PI_COMPACTION_SUFFIX.length);
  return text;
}

/** The checkpoint as pi sends it to the model: its summary in pi's compaction framing. */
export function piFramedCheckpoint(checkpoint: Message): Message {
  return {
    role: "user",
    content: [
      { type: "text", text: PI_COMPACTION_PREFIX + piCompactionSummary(checkpoint) + PI_COMPACTION_SUFFIX },
    ],
  };
}

/**
 * The model's context pi builds from a fork of `replacement`: the checkpoint
 * first, in pi's framing, then every other message in order (system messages
 * aside: pi sends its own system prompt), importer-closed calls as they were.
 */
export function piForkContext(replacement: readonly Message[]): Message[] {
  const checkpoint = replacement.find(isCheckpoint);
  const rest = replacement.filter((m) => m !== checkpoint && m.role !== "system");
  return checkpoint ? [piFramedCheckpoint(checkpoint), ...rest] : rest;
}

/**
 * The fork's session file for `replacement`. With a checkpoint (the summary
 * path, or prune-only over an earlier checkpoint) the session ends with a
 * `compaction` entry holding it; without one it is a plain session of the
 * pruned history.
 */
export function toPiFork(
  replacement: readonly Message[],
  origin: PiOrigin,
  options: { tokensBefore: number; originalPath?: string; now?: Date; sessionId?: string } = {
    tokensBefore: 0,
  },
): PiFork {
  const now = options.now ?? new Date();
  const at = now.toISOString();
  const sessionId = options.sessionId ?? uuidv7(now.getTime());
  const used = new Set<string>();
  const newId = () => {
    for (;;) {
      const id = randomBytes(4).toString("hex");
      if (!used.has(id)) {
        used.add(id);
        return id;
      }
    }
  };
  const toolNames = new Map<string, string>();
  for (const m of replacement)
    for (const b of m.content)
      if (b.type === "tool_use") toolNames.set((b as { id: string }).id, (b as { name: string }).name);

  const lines: Record<string, unknown>[] = [
    {
      type: "session",
      version: PI_SESSION_VERSION,
      id: sessionId,
      timestamp: at,
      cwd: origin.cwd,
      ...(options.originalPath !== undefined ? { parentSession: options.originalPath } : {}),
    },
  ];
  let parent: string | null = null;
  const append = (entry: Record<string, unknown>): string => {
    const id = newId();
    lines.push({ type: entry.type, id, parentId: parent, timestamp: at, ...entry });
    parent = id;
    return id;
  };
  if (origin.model)
    append({ type: "model_change", provider: origin.model.provider, modelId: origin.model.modelId });
  if (origin.thinkingLevel !== undefined)
    append({ type: "thinking_level_change", thinkingLevel: origin.thinkingLevel });

  const checkpoint = replacement.find(isCheckpoint);
  let firstKept: string | undefined;
  for (const m of replacement) {
    if (m === checkpoint || m.role === "system") continue;
    const ts = Date.parse(String((m.meta as { timestamp?: unknown } | undefined)?.timestamp ?? ""));
    for (const message of toPiSessionMessages(m, Number.isFinite(ts) ? ts : now.getTime(), toolNames)) {
      const id = append({ type: "message", message });
      firstKept ??= id;
    }
  }
  if (checkpoint) {
    append({
      type: "compaction",
      summary: piCompactionSummary(checkpoint),
      // pi needs a kept entry; with none kept it is the compaction's own parent (nothing before it is sent).
      firstKeptEntryId: firstKept ?? parent,
      tokensBefore: options.tokensBefore,
      // Not pi's own summary: `fromHook` (pi's name for an extension's compaction) keeps pi from reading
      // file lists out of `details`.
      details: { generator: "compact-safe" },
      fromHook: true,
    });
  }
  return { sessionId, text: lines.map((l) => JSON.stringify(l)).join("\n") + "\n", timestamp: at };
}
