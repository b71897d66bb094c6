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
 * - A prompt typed while the agent worked (`queue-operation` lines, a
 *   `queued_command` attachment) is a user message where the model read it
 *   (see claude-code-queue.ts); one withdrawn unread is not read.
 */
import type { Block, JournalEntry, Message, MessageEntry, Usage } from "../../model/index.js";
import { kindForMessage } from "../../model/index.js";
import { fromAnthropicContent } from "../../wire/anthropic.js";
import { textOf } from "../../wire/common.js";
import { isRecord, objectLines, type JsonlInput, type ParsedHead } from "../common/lines.js";
import {
  attachToPrevious,
  finishImport,
  nearestImported,
  ReadOnce,
  startHeader,
} from "../common/source-tree.js";
import { ReportBuilder } from "../common/report.js";
import { SourceLines, type ToolIdOptions } from "../../model/tool-ids.js";
import type { ImportResult } from "../common/types.js";
import { importedCompactionEntry } from "../common/imported-compaction.js";
import { isHarnessElement, PromptQueue, queuedContent, type QueuedPrompt } from "./claude-code-queue.js";

const BY_DESIGN: Record<string, string> = {
  progress: "progress event (hook/tool progress, not part of the conversation)",
  "file-history-snapshot": "file-history snapshot (undo data, not part of the conversation)",
  summary: "session title summary (UI label, not part of the conversation)",
  "pr-link": "pull-request link (UI metadata)",
  "custom-title": "session title (UI metadata)",
  tag: "session tag (UI metadata)",
  // Claude Code 2.1.33x: its own bookkeeping beside the conversation.
  "last-prompt": "last prompt pointer (UI metadata; the prompt itself is a user line)",
  "cost-state": "cost and duration counters (UI metadata)",
  mode: "permission mode (UI metadata)",
  "atis-latch": "client state latch (UI metadata)",
  "api-request": "request log entry (what was sent; the conversation is in the user and assistant lines)",
  "api-request-shape": "request log: the request's shape (a copy of what was sent, not a turn)",
  "api-request-blob": "request log: a piece of a request's content (a copy of what was sent, not a turn)",
  "api-request-resumed": "request log: a resumed request (a copy of what was sent, not a turn)",
  // The other entry types Claude Code 2.1.332's own table lists beside its transcript types (user,
  // assistant, system, attachment, progress): session metadata, none of them a turn.
  "tools-used": "names of the tools used so far (session metadata)",
  "file-history-delta": "file-history change (undo data, not part of the conversation)",
  "content-replacement":
    "what a tool result was shortened to in later requests (the full result is read from its user line)",
  "continued-in": "pointer to the session this one continues in (session metadata)",
  "resume-head-vouch": "resume bookkeeping (session metadata)",
  "derived-from": "the session this one was derived from (session metadata)",
  "fork-context-ref": "reference to a forked context (session metadata)",
  "frame-link": "link to a UI frame (session metadata)",
  "observer-ref": "reference to an observer (session metadata)",
  "data-flow-records": "data-flow records (session metadata)",
  "data-flow-incomplete": "data-flow marker (session metadata)",
  "ended-by-model": "the model ended the session (session metadata)",
  "ai-title": "session title (UI metadata)",
  relocated: "the session's working directory moved (session metadata)",
  "agent-name": "agent name (UI metadata)",
  "agent-color": "agent colour (UI metadata)",
  "agent-setting": "agent setting (UI metadata)",
  "artifact-comment-monitor": "artifact comment monitor state (UI metadata)",
  "artifact-autoreact-ledger": "artifact auto-react ledger (UI metadata)",
  "bridge-session": "bridge session state (session metadata)",
  "history-suppression": "prompt-history suppression (UI metadata)",
  "attribution-snapshot": "attribution snapshot (session metadata)",
  "permission-mode": "permission mode (UI metadata)",
  "isolation-latch": "client state latch (UI metadata)",
  "session-owner": "session owner (session metadata)",
  "dev-mods": "developer modifications (client state)",
  "memory-mode": "memory mode (client state)",
  "worktree-state": "worktree state (session metadata)",
  "host-row": "host bookkeeping (session metadata)",
  "repl-mode": "REPL mode (client state)",
  "hybrid-organization": "organization state (client state)",
};

/**
 * `attachment` lines Claude Code 2.1.33x writes for the harness's own context,
 * which it renders into each request (the environment, the date, the model's
 * identity, tool, agent and skill listings, a snapshot of its system prompt):
 * not the user's words nor a turn. An attachment of another type is skipped
 * as not known.
 */
const HARNESS_ATTACHMENTS: ReadonlySet<string> = new Set([
  "environment",
  "model",
  "date",
  "deferred_tools_delta",
  "agent_listing_delta",
  "skill_listing",
  "session_context",
  "remote_session_change",
  "prompt_snapshot",
]);

/** Why a line that is not a user or assistant message is skipped by design, or undefined when it is not known. */
function byDesign(o: Record<string, unknown>): string | undefined {
  if (o.type !== "attachment") return BY_DESIGN[String(o.type)];
  const kind = isRecord(o.attachment) ? o.attachment.type : undefined;
  return typeof kind === "string" && HARNESS_ATTACHMENTS.has(kind)
    ? `harness context attachment (${kind}), rendered into the request by Claude Code, not a turn`
    : undefined;
}

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

/** A Claude Code line as pass 1 read it. */
interface ParsedLine {
  line: number;
  o: Record<string, unknown>;
  kind: string;
}

/** Pass 1: every line parsed, and every uuid's parent (including lines that are skipped later). */
function readLines(
  text: JsonlInput,
  rb: ReportBuilder,
  head?: ParsedHead,
): { parsed: ParsedLine[]; parentOf: Map<string, string | null> } {
  const parsed: ParsedLine[] = [];
  const parentOf = new Map<string, string | null>();
  for (const { raw, o } of objectLines(text, rb, head)) {
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
  return { parsed, parentOf };
}

/** The session's identity from the first line that records each field. */
function fillHeader(hp: Record<string, unknown>, o: Record<string, unknown>): void {
  if (!hp.session_id && typeof o.sessionId === "string") hp.session_id = o.sessionId;
  if (!hp.cwd && typeof o.cwd === "string") hp.cwd = o.cwd;
  if (!hp.created_at && typeof o.timestamp === "string") hp.created_at = o.timestamp;
  if (!hp.version && typeof o.version === "string") hp.version = o.version;
  if (!hp.git_branch && typeof o.gitBranch === "string") hp.git_branch = o.gitBranch;
}

/** The Claude Code version that wrote a line (a session resumed under a newer version records both), for the compaction's payload. */
function agentVersion(o: Record<string, unknown>): { agent_version: string } | undefined {
  return typeof o.version === "string" && o.version !== "" ? { agent_version: o.version } : undefined;
}

/** One user or assistant line about to become (part of) an entry. */
interface MessageLine {
  line: number;
  o: Record<string, unknown>;
  msg: Record<string, unknown>;
  uuid: string;
  ts: string;
  sidechain: boolean;
  content: Block[];
  meta: Record<string, unknown>;
  parentEntry: string;
}

/** Pass 2: the lines in order, as entries of the main line and of the sidechains. */
class ClaudeCodeImport {
  readonly rb: ReportBuilder;
  readonly header: JournalEntry = startHeader("claude-code");
  readonly main: JournalEntry[] = [];
  readonly side: JournalEntry[] = [];
  readonly entryFor = new Map<string, string>();
  readonly groups = new Map<string, Group>(); // by message.id
  readonly groupOfEntry = new Map<string, Group>(); // entry id (assistant or its results) -> group
  readonly pendingBoundaries = new Map<string, { o: Record<string, unknown>; line: number }>();
  lastModel = "unknown";
  readonly lines = new SourceLines();
  /** The first user/assistant line of each uuid, with its message as read. */
  readonly once = new ReadOnce("uuid", "message");
  /** Prompts queued while the agent worked (`queue-operation` lines). */
  readonly queue = new PromptQueue();

  constructor(
    rb: ReportBuilder,
    readonly parentOf: ReadonlyMap<string, string | null>,
  ) {
    this.rb = rb;
  }

  resolve(uuid: unknown): string | null {
    return nearestImported(uuid, this.entryFor, this.parentOf);
  }

  add(e: JournalEntry, sidechain: boolean): void {
    (sidechain ? this.side : this.main).push(e);
  }

  readLine({ line, o, kind }: ParsedLine): void {
    const { rb } = this;
    const hp = this.header.payload as Record<string, unknown>;
    fillHeader(hp, o);
    const ts = typeof o.timestamp === "string" ? o.timestamp : String(hp.created_at ?? "");
    const uuid = typeof o.uuid === "string" ? o.uuid : undefined;
    const sidechain = o.isSidechain === true;

    if (o.type === "system" && o.subtype === "compact_boundary" && uuid) {
      this.pendingBoundaries.set(uuid, { o, line });
      return;
    }
    if (o.type === "queue-operation") {
      const { reason, known } = this.queue.operation(o, line, ts);
      rb.skip(line, reason, known);
      return;
    }
    if (o.type === "attachment" && isRecord(o.attachment) && o.attachment.type === "queued_command" && uuid) {
      this.queuedCommand(line, o, o.attachment, uuid, ts);
      return;
    }
    if (o.type !== "user" && o.type !== "assistant") {
      const reason = byDesign(o);
      if (o.type === "system")
        rb.skip(line, `system event (${String(o.subtype ?? "no subtype")}), not sent to the model`, true);
      else if (reason) rb.skip(line, reason, true);
      else if (o.type === "attachment")
        rb.skip(
          line,
          `unknown attachment type ${JSON.stringify((o.attachment as { type?: unknown })?.type)}`,
          false,
        );
      else rb.skip(line, `unknown entry type ${JSON.stringify(o.type)}`, false);
      return;
    }
    const msg = o.message;
    if (!isRecord(msg) || !uuid) {
      rb.skip(line, `${kind} line without ${uuid ? "a message" : "a uuid"}`, false);
      return;
    }
    if (!this.once.read(uuid, () => JSON.stringify([o.type, msg]), line, rb)) return;
    const content: Block[] = fromAnthropicContent(msg.content);
    this.lines.blocks(content, line);
    const meta: Record<string, unknown> = { source_uuid: uuid, timestamp: ts };
    if (sidechain) meta.is_sidechain = true;
    if (o.isMeta === true) meta.is_meta = true;
    let parentEntry = this.resolve(o.parentUuid) ?? HEADER_ID;
    if (typeof o.parentUuid === "string" && parentEntry === HEADER_ID) {
      // The parent line is missing (e.g. it was broken): hang the entry off the previous entry of its chain.
      const prevEntry = (sidechain ? this.side : this.main).at(-1);
      if (prevEntry) parentEntry = attachToPrevious(rb, line, o.parentUuid, prevEntry.id);
    }
    const m: MessageLine = { line, o, msg, uuid, ts, sidechain, content, meta, parentEntry };
    if (o.type === "user" && o.isCompactSummary === true) this.compactSummary(m);
    else if (o.type === "assistant") this.assistant(m);
    else this.user(m);
  }

  /** The `isCompactSummary` user line (and the `compact_boundary` before it): one `compaction` entry. */
  compactSummary({ line, o, uuid, ts, sidechain, content, meta, parentEntry }: MessageLine): void {
    const { rb } = this;
    const boundary = typeof o.parentUuid === "string" ? this.pendingBoundaries.get(o.parentUuid) : undefined;
    const checkpoint: Message = { role: "user", content, meta: { ...meta, is_compact_summary: true } };
    const cm = boundary && isRecord(boundary.o.compactMetadata) ? boundary.o.compactMetadata : {};
    const id = boundary ? String(boundary.o.uuid) : uuid;
    const parent = boundary ? (this.resolve(boundary.o.logicalParentUuid) ?? HEADER_ID) : parentEntry;
    const replacement = [checkpoint];
    const entry = importedCompactionEntry({
      id,
      parentId: parent,
      createdAt: boundary && typeof boundary.o.timestamp === "string" ? boundary.o.timestamp : ts,
      sourceAgent: "claude-code",
      summary: textOf(content),
      tokensBefore: typeof cm.preTokens === "number" ? cm.preTokens : 0,
      model: this.lastModel,
      trigger: cm.trigger === "manual" ? "manual" : "auto",
      triggerRecorded: cm.trigger === "manual" || cm.trigger === "auto",
      replacement,
      extra: agentVersion(boundary?.o ?? o),
    });
    this.add(entry, sidechain);
    this.lines.entry(id, boundary ? boundary.line : line);
    this.entryFor.set(uuid, id);
    rb.imported();
    if (boundary) {
      this.entryFor.set(id, id);
      this.pendingBoundaries.delete(String(boundary.o.uuid));
      rb.imported();
    } else {
      rb.note(`line ${line}: compact summary without a preceding compact_boundary; imported as a compaction`);
    }
  }

  /** An assistant line: a new entry, or a part of the message streamed over several lines (same `message.id`). */
  assistant({ o, msg, uuid, ts, sidechain, content, meta, parentEntry: parentIn }: MessageLine): void {
    let parentEntry = parentIn;
    if (typeof msg.model === "string" && msg.model !== "<synthetic>") this.lastModel = msg.model;
    const msgId = typeof msg.id === "string" ? msg.id : undefined;
    const group = msgId ? this.groups.get(msgId) : undefined;
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
      this.entryFor.set(uuid, group.entry.id);
      this.rb.imported();
      return;
    }
    if (!sidechain) parentEntry = this.placeDelivered(parentEntry);
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
    this.add(entry, sidechain);
    this.entryFor.set(uuid, uuid);
    if (msgId) {
      const g: Group = { entry, callIds: new Set() };
      for (const b of content) if (b.type === "tool_use") g.callIds.add(String((b as { id: unknown }).id));
      this.groups.set(msgId, g);
      this.groupOfEntry.set(entry.id, g);
    }
    this.rb.imported();
  }

  /** A user line: a new entry, or tool results joined to the results of the assistant message they answer. */
  user({ uuid, ts, sidechain, content, meta, parentEntry }: MessageLine): void {
    const allResults = content.length > 0 && content.every((b) => b.type === "tool_result");
    const group = this.groupOfEntry.get(parentEntry);
    if (
      allResults &&
      group &&
      content.every((b) => group.callIds.has(String((b as { tool_use_id: unknown }).tool_use_id)))
    ) {
      if (group.results && (parentEntry === group.entry.id || parentEntry === group.results.id)) {
        group.results.payload.content.push(...content);
        (group.results.payload.meta!.source_uuids as string[]).push(uuid);
        this.entryFor.set(uuid, group.results.id);
        this.rb.imported();
        return;
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
    this.add(entry, sidechain);
    this.entryFor.set(uuid, uuid);
    if (allResults && group && parentEntry === group.entry.id && !group.results) {
      group.results = entry;
      this.groupOfEntry.set(entry.id, group);
    }
    this.rb.imported();
  }

  /**
   * A `queued_command` attachment (Claude Code 2.1.33x): the queued prompt as
   * it was delivered mid-turn, a user message where the attachment stands.
   * Its queue operations then add nothing more.
   */
  queuedCommand(
    line: number,
    o: Record<string, unknown>,
    a: Record<string, unknown>,
    uuid: string,
    ts: string,
  ): void {
    const content = queuedContent(a.prompt);
    const text = textOf(content);
    this.queue.claim(text);
    if (content.length === 0 || o.isSidechain === true) {
      this.rb.skip(line, "queued command attachment without a prompt of this conversation", true);
      return;
    }
    const origin = isRecord(a.origin) ? a.origin.kind : undefined;
    const meta: Record<string, unknown> = { source_uuid: uuid, timestamp: ts, queued: true };
    if ((origin !== undefined && origin !== "human") || isHarnessElement(text)) meta.is_meta = true;
    this.lines.blocks(content, line);
    this.userEntry(uuid, this.resolve(o.parentUuid) ?? this.main.at(-1)?.id ?? HEADER_ID, content, ts, meta);
    this.entryFor.set(uuid, uuid);
    this.lines.entry(uuid, line);
    this.rb.imported();
  }

  /** A user entry of the main line (a queued prompt; its line is counted by the caller). */
  userEntry(id: string, parent: string, content: Block[], ts: string, meta: Record<string, unknown>): void {
    const payload: Message = { role: "user", content, meta };
    this.add({ id, parent_id: parent, kind: kindForMessage(payload), created_at: ts, payload }, false);
  }

  /**
   * The prompts delivered mid-turn since the last assistant message, as user
   * messages after `parent` (where the model read them, before its next
   * message); returns the entry the next message hangs off.
   */
  placeDelivered(parent: string): string {
    let at = parent;
    for (const p of this.queue.takeDelivered()) at = this.placePrompt(p, at);
    return at;
  }

  placePrompt(p: QueuedPrompt, parent: string): string {
    const id = `queued-${p.line}`;
    const meta: Record<string, unknown> = {
      timestamp: p.deliveredAt,
      queued: true,
      queued_line: p.line,
    };
    if (p.notification) meta.is_meta = true;
    const ts = p.deliveredAt ?? String((this.header.payload as Record<string, unknown>).created_at ?? "");
    this.lines.blocks(p.content, p.line);
    this.lines.entry(id, p.deliveredLine ?? p.line);
    this.userEntry(id, parent, p.content, ts, meta);
    return id;
  }

  /** The entries: header, sidechains, main line; a boundary without its summary is a broken line. */
  finish(file: string, options: ToolIdOptions): ImportResult {
    // Delivered at the end of the file (no answer recorded yet): the model was sent them last.
    this.placeDelivered(this.main.at(-1)?.id ?? HEADER_ID);

    for (const { o, line } of this.pendingBoundaries.values()) {
      this.rb.skip(
        line,
        `compact_boundary ${String(o.uuid)} without the summary message that should follow it`,
        false,
      );
    }
    const hp = this.header.payload as Record<string, unknown>;
    if (!hp.session_id) hp.session_id = file;
    if (!hp.created_at) hp.created_at = new Date(0).toISOString();
    this.header.created_at = String(hp.created_at);
    for (const e of this.side) if (e.parent_id === HEADER_ID || e.parent_id === null) e.parent_id = HEADER_ID;
    return finishImport([this.header, ...this.side, ...this.main], this.rb, this.lines, options);
  }
}

export function importClaudeCode(
  text: JsonlInput,
  file: string,
  options: ToolIdOptions = {},
  head?: ParsedHead,
): ImportResult {
  const rb = new ReportBuilder("claude-code", file);
  const { parsed, parentOf } = readLines(text, rb, head);
  const state = new ClaudeCodeImport(rb, parentOf);
  for (const p of parsed) state.readLine(p);
  return state.finish(file, options);
}
