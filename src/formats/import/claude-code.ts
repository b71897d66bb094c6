/**
 * Claude Code JSONL (`~/.claude/projects/<project>/<session>.jsonl`).
 *
 * - `user` / `assistant` lines carry Anthropic messages; `uuid` / `parentUuid`
 *   become the tree. Lines that are not imported (progress, hook and system
 *   events) still take part in the tree: a child of a skipped line hangs off
 *   the nearest imported ancestor.
 * - An assistant message streamed over several lines (same `message.id`) is
 *   joined into one entry (id = the first line's uuid); the tool results that
 *   Claude Code interleaves between those lines are joined into one
 *   `tool_result` entry after it. Every later line that points at any of the
 *   joined lines hangs off the joined entry.
 * - `isSidechain` lines (sub-agent transcripts) form their own branches under
 *   the header; they are written before the main line so that the journal's
 *   leaf (its last entry) is the main conversation's last entry. Their usage
 *   has scope `child`.
 * - `system` / `compact_boundary` plus the `isCompactSummary` user message that
 *   follows it become one `compaction` entry whose replacement is the summary
 *   (Claude Code's checkpoint). Its parent is the boundary's `logicalParentUuid`.
 */
import type { Block, JournalEntry, Message, MessageEntry, Usage } from "../../model/index.js";
import { kindForMessage } from "../../model/index.js";
import { fromAnthropicContent, textOf } from "../shared/convert.js";
import { isRecord, objectLines } from "../shared/lines.js";
import { finishImport, nearestImported } from "../shared/source-tree.js";
import { ReportBuilder } from "../shared/report.js";
import { SourceLines, type ToolIdOptions } from "../shared/tool-ids.js";
import type { ImportResult } from "../shared/types.js";
import { importedCompactionEntry } from "../shared/imported-compaction.js";

const BY_DESIGN: Record<string, string> = {
  progress: "progress event (hook/tool progress, not part of the conversation)",
  "file-history-snapshot": "file-history snapshot (undo data, not part of the conversation)",
  "queue-operation": "queue operation (a prompt queued in the UI; the prompt itself is a user line)",
  summary: "session title summary (UI label, not part of the conversation)",
  "pr-link": "pull-request link (UI metadata)",
  "custom-title": "session title (UI metadata)",
  tag: "session tag (UI metadata)",
};

export const HEADER_ID = "header";

function usageFrom(u: unknown, sidechain: boolean): Usage | undefined {
  if (!isRecord(u)) return undefined;
  const out: Usage = { scope: sidechain ? "child" : "parent" };
  for (const k of [
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
  ] as const) {
    if (typeof u[k] === "number") out[k] = u[k] as number;
  }
  return out;
}

interface Group {
  entry: MessageEntry;
  callIds: Set<string>;
  results?: MessageEntry;
}

/** Detection: a record only a Claude Code transcript writes. */
export function isClaudeCodeRecord(o: Record<string, unknown>): boolean {
  const t = o.type;
  if (
    (t === "user" || t === "assistant" || t === "system" || t === "progress") &&
    ("uuid" in o || "sessionId" in o || "parentUuid" in o)
  )
    return true;
  return t === "file-history-snapshot" || t === "queue-operation" || (t === "summary" && "leafUuid" in o);
}

export function importClaudeCode(text: string, file: string, options: ToolIdOptions = {}): ImportResult {
  const rb = new ReportBuilder("claude-code", file);
  const parsed: { line: number; o: Record<string, unknown>; kind: string }[] = [];
  // Pass 1: parse every line and record every uuid's parent (including lines we skip).
  const parentOf = new Map<string, string | null>();
  for (const { raw, o } of objectLines(text, rb)) {
    const kind =
      String(o.type ?? "?") + (o.type === "system" && typeof o.subtype === "string" ? `:${o.subtype}` : "");
    rb.line(kind);
    parsed.push({ line: raw.line, o, kind });
    if (typeof o.uuid === "string" && !parentOf.has(o.uuid)) {
      // A repeated uuid (a resumed session repeats earlier lines) keeps its first parent.
      const parent =
        o.subtype === "compact_boundary" && typeof o.logicalParentUuid === "string"
          ? o.logicalParentUuid
          : o.parentUuid;
      parentOf.set(o.uuid, typeof parent === "string" ? parent : null);
    }
  }

  const header: JournalEntry = {
    id: HEADER_ID,
    parent_id: null,
    kind: "header",
    created_at: "",
    payload: { session_id: "", created_at: "", schema_version: 2, source_format: "claude-code" },
  };
  const main: JournalEntry[] = [];
  const side: JournalEntry[] = [];
  const entryFor = new Map<string, string>();
  const entryById = new Map<string, JournalEntry>();
  const groups = new Map<string, Group>(); // by message.id
  const groupOfEntry = new Map<string, Group>(); // entry id (assistant or its results) -> group
  const pendingBoundaries = new Map<string, { o: Record<string, unknown>; line: number }>();
  let lastModel = "unknown";
  const lines = new SourceLines();
  /** The first user/assistant line of each uuid, with its message as read. */
  const firstRead = new Map<string, { line: number; message: string }>();

  const resolve = (uuid: unknown): string | null => nearestImported(uuid, entryFor, parentOf);
  const add = (e: JournalEntry, sidechain: boolean) => {
    (sidechain ? side : main).push(e);
    entryById.set(e.id, e);
  };

  for (const { line, o, kind } of parsed) {
    const hp = header.payload as Record<string, unknown>;
    if (!hp.session_id && typeof o.sessionId === "string") hp.session_id = o.sessionId;
    if (!hp.cwd && typeof o.cwd === "string") hp.cwd = o.cwd;
    if (!hp.created_at && typeof o.timestamp === "string") hp.created_at = o.timestamp;
    if (!hp.version && typeof o.version === "string") hp.version = o.version;
    if (!hp.git_branch && typeof o.gitBranch === "string") hp.git_branch = o.gitBranch;
    const ts = typeof o.timestamp === "string" ? o.timestamp : String(hp.created_at ?? "");
    const uuid = typeof o.uuid === "string" ? o.uuid : undefined;
    const sidechain = o.isSidechain === true;

    if (o.type === "system" && o.subtype === "compact_boundary" && uuid) {
      pendingBoundaries.set(uuid, { o, line });
      continue;
    }
    if (o.type !== "user" && o.type !== "assistant") {
      const reason = BY_DESIGN[String(o.type)];
      if (o.type === "system")
        rb.skip(line, `system event (${String(o.subtype ?? "no subtype")}), not sent to the model`, true);
      else if (reason) rb.skip(line, reason, true);
      else rb.skip(line, `unknown entry type ${JSON.stringify(o.type)}`, false);
      continue;
    }
    const msg = o.message;
    if (!isRecord(msg) || !uuid) {
      rb.skip(line, `${kind} line without ${uuid ? "a message" : "a uuid"}`, false);
      continue;
    }
    const read = firstRead.get(uuid);
    const asRead = JSON.stringify([o.type, msg]);
    if (read !== undefined) {
      // A resumed session repeats earlier lines: the same message is read once (its tool ids are not repeats).
      if (read.message === asRead)
        rb.skip(line, `repeated line: uuid ${uuid} was read at line ${read.line} (same message)`, true);
      else
        rb.skip(
          line,
          `uuid ${uuid} was read at line ${read.line} with another message; the first is kept`,
          false,
        );
      continue;
    }
    firstRead.set(uuid, { line, message: asRead });
    const content: Block[] = fromAnthropicContent(msg.content);
    lines.blocks(content, line);
    const meta: Record<string, unknown> = { source_uuid: uuid, timestamp: ts };
    if (sidechain) meta.is_sidechain = true;
    if (o.isMeta === true) meta.is_meta = true;
    let parentEntry = resolve(o.parentUuid) ?? HEADER_ID;
    if (typeof o.parentUuid === "string" && parentEntry === HEADER_ID) {
      // The parent line is missing (e.g. it was broken): hang the entry off the previous entry of its chain.
      const prevEntry = (sidechain ? side : main).at(-1);
      if (prevEntry) {
        parentEntry = prevEntry.id;
        rb.note(
          `line ${line}: parent ${o.parentUuid} is not in the file; attached to the previous entry ${prevEntry.id}`,
        );
      }
    }

    if (o.type === "user" && o.isCompactSummary === true) {
      const boundary = typeof o.parentUuid === "string" ? pendingBoundaries.get(o.parentUuid) : undefined;
      const checkpoint: Message = { role: "user", content, meta: { ...meta, is_compact_summary: true } };
      const cm = boundary && isRecord(boundary.o.compactMetadata) ? boundary.o.compactMetadata : {};
      const id = boundary ? String(boundary.o.uuid) : uuid;
      const parent = boundary ? (resolve(boundary.o.logicalParentUuid) ?? HEADER_ID) : parentEntry;
      const replacement = [checkpoint];
      const entry = importedCompactionEntry({
        id,
        parentId: parent,
        createdAt: boundary && typeof boundary.o.timestamp === "string" ? boundary.o.timestamp : ts,
        sourceAgent: "claude-code",
        summary: textOf(content),
        tokensBefore: typeof cm.preTokens === "number" ? cm.preTokens : 0,
        model: lastModel,
        trigger: cm.trigger === "manual" ? "manual" : "auto",
        triggerRecorded: cm.trigger === "manual" || cm.trigger === "auto",
        replacement,
      });
      add(entry, sidechain);
      lines.entry(id, boundary ? boundary.line : line);
      entryFor.set(uuid, id);
      rb.imported();
      if (boundary) {
        entryFor.set(id, id);
        pendingBoundaries.delete(String(boundary.o.uuid));
        rb.imported();
      } else {
        rb.note(
          `line ${line}: compact summary without a preceding compact_boundary; imported as a compaction`,
        );
      }
      continue;
    }

    if (o.type === "assistant") {
      if (typeof msg.model === "string" && msg.model !== "<synthetic>") lastModel = msg.model;
      const msgId = typeof msg.id === "string" ? msg.id : undefined;
      const group = msgId ? groups.get(msgId) : undefined;
      const usage = usageFrom(msg.usage, sidechain);
      if (
        group &&
        (parentEntry === group.entry.id || parentEntry === group.results?.id) &&
        (group.entry.payload.meta?.is_sidechain === true) === sidechain
      ) {
        group.entry.payload.content.push(...content);
        if (usage) group.entry.payload.usage = usage;
        (group.entry.payload.meta!.source_uuids as string[]).push(uuid);
        for (const b of content)
          if (b.type === "tool_use") group.callIds.add(String((b as { id: unknown }).id));
        entryFor.set(uuid, group.entry.id);
        rb.imported();
        continue;
      }
      Object.assign(meta, { message_id: msgId, model: msg.model, source_uuids: [uuid] });
      if (typeof o.requestId === "string") meta.request_id = o.requestId;
      const payload: Message = { role: "assistant", content, meta };
      if (usage) payload.usage = usage;
      const entry: MessageEntry = {
        id: uuid,
        parent_id: parentEntry,
        kind: "assistant",
        created_at: ts,
        payload,
      };
      add(entry, sidechain);
      entryFor.set(uuid, uuid);
      if (msgId) {
        const g: Group = { entry, callIds: new Set() };
        for (const b of content) if (b.type === "tool_use") g.callIds.add(String((b as { id: unknown }).id));
        groups.set(msgId, g);
        groupOfEntry.set(entry.id, g);
      }
      rb.imported();
      continue;
    }

    // user
    const allResults = content.length > 0 && content.every((b) => b.type === "tool_result");
    const group = groupOfEntry.get(parentEntry);
    if (
      allResults &&
      group &&
      content.every((b) => group.callIds.has(String((b as { tool_use_id: unknown }).tool_use_id)))
    ) {
      if (group.results && (parentEntry === group.entry.id || parentEntry === group.results.id)) {
        group.results.payload.content.push(...content);
        (group.results.payload.meta!.source_uuids as string[]).push(uuid);
        entryFor.set(uuid, group.results.id);
        rb.imported();
        continue;
      }
    }
    meta.source_uuids = [uuid];
    const payload: Message = { role: "user", content, meta };
    const entry: MessageEntry = {
      id: uuid,
      parent_id: parentEntry,
      kind: kindForMessage(payload),
      created_at: ts,
      payload,
    };
    add(entry, sidechain);
    entryFor.set(uuid, uuid);
    if (allResults && group && parentEntry === group.entry.id && !group.results) {
      group.results = entry;
      groupOfEntry.set(entry.id, group);
    }
    rb.imported();
  }
  for (const { o, line } of pendingBoundaries.values()) {
    rb.skip(
      line,
      `compact_boundary ${String(o.uuid)} without the summary message that should follow it`,
      false,
    );
  }
  const hp = header.payload as Record<string, unknown>;
  if (!hp.session_id) hp.session_id = file;
  if (!hp.created_at) hp.created_at = new Date(0).toISOString();
  header.created_at = String(hp.created_at);
  for (const e of side) if (e.parent_id === HEADER_ID || e.parent_id === null) e.parent_id = HEADER_ID;
  return finishImport([header, ...side, ...main], rb, lines, options);
}
