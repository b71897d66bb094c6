/**
 * pi session JSONL (pi-mono coding-agent, and pi-derived agents such as GJC).
 *
 * Two layouts: the linear v1 files (no entry ids: entry ids become `L<line>`,
 * each entry's parent is the previous imported entry) and the tree files
 * (`id` / `parentId`, kept as they are; a child of a skipped entry such as a
 * `model_change` hangs off the nearest imported ancestor).
 *
 * - `message` entries, read by the one pi reader (`src/wire/pi.ts`, as the pi
 *   adapter reads them): `user`, `assistant` (`toolCall` → `tool_use` with its
 *   `thoughtSignature`, `thinking` with its `thinkingSignature` when non-empty,
 *   a `redacted` one → `redacted_thinking`; an `aborted` turn becomes
 *   `assistant_interrupted`), `toolResult` (→ `tool_result`, text parts joined,
 *   images in `content_blocks`), `bashExecution` (a user-run `!` command: a user
 *   text message with exactly the text pi sends the model, via pi's own
 *   `bashExecutionToText` layout; `excludeFromContext` ones are skipped).
 * - `compaction` → a `compaction` entry whose replacement is pi's checkpoint
 *   (pi's compaction-summary framing) followed by the kept messages, from
 *   `firstKeptEntryId` (tree) or `firstKeptEntryIndex` (v1: index into the
 *   parsed entries, the session line being 0) up to the compaction, through
 *   any earlier compaction on the way (as pi 0.73.1 builds its context).
 * - `branch_summary` → a `branch_summary` entry; `custom_message` (sent to the
 *   model as a user message by pi) → a user message.
 * - `context_edit` (pi 1.x: an append-only edit of an earlier entry's
 *   contribution to the context; its retries omit a failed attempt and its
 *   tool results this way): as pi's `buildSessionProjection` applies it, the
 *   latest edit of each target on the active path (the path up from the last
 *   entry) wins; `replacement: null` omits the target from the context (the
 *   target is skipped by design, its children hang off its parent), a
 *   replacement `{ content }` replaces only the content of a user, assistant,
 *   tool-result or custom message (a string one is one text block). The edit
 *   is applied to the imported target itself, so every context after it (a
 *   later compaction's kept messages, the leaf's context) holds it, as pi's
 *   does; the context before the edit shows it too (the journal has one
 *   payload per entry), and an edit on another branch than the active one is
 *   not applied (both noted). The edit line itself is skipped by design.
 * - `model_change`, `thinking_level_change`, `custom`, `label`, `session_info`
 *   and `usage` are accounted as skipped by design.
 */
import type { JournalEntry, Message, MessageEntry } from "../../model/index.js";
import { isMessageKind, kindForMessage } from "../../model/index.js";
import { branchSummaryMessage } from "../../journal/tree.js";
import { importedCompactionEntry } from "../common/imported-compaction.js";
import { isRecord, objectLines, type JsonlInput, type ParsedHead } from "../common/lines.js";
import {
  attachToPrevious,
  completeHeader,
  finishImport,
  nearestImported,
  ReadOnce,
  startHeader,
} from "../common/source-tree.js";
import { ReportBuilder } from "../common/report.js";
import { SourceLines, type ToolIdOptions } from "../../model/tool-ids.js";
import type { ImportResult } from "../common/types.js";
import {
  PI_CALL_ROLES,
  PI_COMPACTION_PREFIX,
  PI_COMPACTION_SUFFIX,
  PI_EDITABLE_ROLES,
  piContent,
  piProvenance,
  readPiMessage,
} from "../../wire/pi.js";

const BY_DESIGN: Record<string, string> = {
  model_change: "model change (recorded in the following messages' meta)",
  thinking_level_change: "thinking-level change (agent setting, not sent to the model)",
  custom: "custom extension state (not sent to the model)",
  label: "label (UI bookmark)",
  session_info: "session info (UI metadata)",
  usage: "usage entry (billed work outside the context, pi 1.x)",
};

/**
 * One pi message as a canonical message with the importer's provenance in
 * `meta` (the reader's `piProvenance`), or a skip reason for what pi does not
 * send the model as conversation.
 */
export function convertMessage(
  m: Record<string, unknown>,
  meta: Record<string, unknown>,
): Message | { skip: string; byDesign: boolean } {
  const { message, outside } = readPiMessage(m);
  if (outside) return { skip: outside.reason, byDesign: outside.byDesign };
  message.meta = { ...meta, ...piProvenance(m) };
  return message;
}

/** Detection: a record only a pi session writes. */
export function isPiRecord(o: Record<string, unknown>): boolean {
  const t = o.type;
  if (
    t === "session" ||
    t === "model_change" ||
    t === "thinking_level_change" ||
    t === "custom_message" ||
    t === "branch_summary" ||
    t === "context_edit"
  )
    return true;
  if (t === "compaction" && typeof o.summary === "string") return true;
  return t === "message" && isRecord(o.message) && ("parentId" in o || typeof o.timestamp === "string");
}

/** A `context_edit` that applies: the latest on the active path for its target. */
interface PiEdit {
  line: number;
  id: string;
  /** Null omits the target; else its new content (a string for an assistant or tool result already one text part). */
  replacement: null | { content: unknown };
}

/** What the `context_edit` lines of a session do, worked out before the records are imported. */
export interface PiContextEdits {
  /** The edit that applies to each target (by the target's entry id). */
  byTarget: Map<string, PiEdit>;
  /** Why each `context_edit` line is skipped, by line. */
  reasons: Map<number, string>;
  notes: string[];
}

/** The roles whose content a non-null replacement replaces (pi's `projectContextEntry`). */

function editedRole(o: Record<string, unknown>): string | undefined {
  if (o.type === "custom_message") return "custom";
  if (o.type === "message" && isRecord(o.message)) return String(o.message.role);
  return undefined;
}

/**
 * The context edits of a session as pi 1.x applies them (`buildSessionProjection`): on the active path
 * (up from the last entry), the latest edit of each target that lies before it on that path. Edits
 * elsewhere are not applied, and an applied edit whose target is shared with another branch (one that
 * leaves the path between the target and the edit) is noted: that branch shows it edited as well.
 */
export function piContextEdits(
  records: readonly { line: number; o: Record<string, unknown> }[],
): PiContextEdits {
  const out: PiContextEdits = { byTarget: new Map(), reasons: new Map(), notes: [] };
  if (!records.some((r) => r.o.type === "context_edit")) return out;
  const byId = new Map<string, { line: number; o: Record<string, unknown> }>();
  let leaf: string | undefined;
  for (const r of records) {
    if (r.o.type === "session" || typeof r.o.id !== "string") continue;
    if (!byId.has(r.o.id)) byId.set(r.o.id, r);
    leaf = r.o.id;
  }
  const parent = (id: string): string | undefined => {
    const p = byId.get(id)?.o.parentId;
    return typeof p === "string" ? p : undefined;
  };
  const path: string[] = [];
  const index = new Map<string, number>();
  for (let cur = leaf; cur !== undefined && byId.has(cur) && !index.has(cur); cur = parent(cur)) {
    index.set(cur, -1);
    path.push(cur);
  }
  path.reverse();
  path.forEach((id, i) => index.set(id, i));
  const applied = new Map<string, { edit: PiEdit; target: number; at: number }>();
  for (const r of records) {
    if (r.o.type !== "context_edit") continue;
    const target = typeof r.o.targetId === "string" ? r.o.targetId : undefined;
    const what = `context edit of ${JSON.stringify(r.o.targetId ?? null)}`;
    const at = typeof r.o.id === "string" && byId.get(r.o.id) === r ? index.get(r.o.id) : undefined;
    const t = target !== undefined ? index.get(target) : undefined;
    const rep = r.o.replacement;
    let why: string | undefined;
    if (at === undefined) why = "on another branch than the active one (pi applies it only there)";
    else if (t === undefined || t >= at) why = "its target is not before it on the active path";
    else if (
      rep !== null &&
      !(isRecord(rep) && (typeof rep.content === "string" || Array.isArray(rep.content)))
    )
      why = "its replacement is neither null nor { content } (pi refuses such an edit)";
    else {
      const role = editedRole(byId.get(target!)!.o);
      const type = String(byId.get(target!)!.o.type);
      if (rep === null && role === undefined && type !== "branch_summary")
        why = `its target is a ${JSON.stringify(type)} entry, which an edit does not omit here`;
      else if (rep !== null && (role === undefined || !PI_EDITABLE_ROLES.has(role)))
        why = `its target (${role ?? type}) has no content an edit replaces (pi leaves it as it is)`;
    }
    if (why !== undefined) {
      out.reasons.set(r.line, `${what}: not applied, ${why}`);
      out.notes.push(`line ${r.line}: ${what} not applied: ${why}`);
      continue;
    }
    const role = editedRole(byId.get(target!)!.o);
    const replacement =
      rep === null
        ? null
        : {
            content:
              role !== undefined &&
              PI_CALL_ROLES.has(role) &&
              typeof (rep as { content: unknown }).content === "string"
                ? [{ type: "text", text: (rep as { content: string }).content }]
                : (rep as { content: unknown }).content,
          };
    const earlier = applied.get(target!);
    if (earlier)
      out.reasons.set(earlier.edit.line, `${what}: superseded by the later edit at line ${r.line}`);
    applied.set(target!, { edit: { line: r.line, id: String(r.o.id), replacement }, target: t!, at: at! });
    out.reasons.set(
      r.line,
      `${what}: ${replacement === null ? "omits it from the context" : "replaces its content"} (applied to the imported entry)`,
    );
  }
  // Where each other branch leaves the active path (the index of its last entry on the path).
  const joins = new Set<number>();
  const joinOf = new Map<string, number>();
  for (const id of byId.keys()) {
    if (index.has(id)) continue;
    const walked: string[] = [];
    let cur: string | undefined = id;
    let j = -1;
    while (cur !== undefined && byId.has(cur)) {
      const known = index.get(cur) ?? joinOf.get(cur);
      if (known !== undefined) {
        j = known;
        break;
      }
      if (walked.includes(cur)) break;
      walked.push(cur);
      cur = parent(cur);
    }
    for (const w of walked) joinOf.set(w, j);
    if (j >= 0) joins.add(j);
  }
  for (const [target, a] of applied) {
    out.byTarget.set(target, a.edit);
    if ([...joins].some((j) => j >= a.target && j < a.at))
      out.notes.push(
        `line ${a.edit.line}: the context edit of ${JSON.stringify(target)} is applied to the entry itself; a branch that leaves the active path before the edit shows it edited too (pi shows it there unedited)`,
      );
  }
  return out;
}

/** One pi record about to become an entry: its id, parent, time, meta and where it stands among the records. */
interface PiRecord {
  line: number;
  o: Record<string, unknown>;
  type: string;
  treeId: string | undefined;
  id: string;
  parent: string;
  ts: string;
  meta: Record<string, unknown>;
  recordIndex: number;
}

/** The session's records in order, as a journal tree. */
class PiImport {
  readonly header: JournalEntry = startHeader("pi");
  readonly entries: JournalEntry[] = [this.header];
  readonly byId = new Map<string, JournalEntry>([[this.header.id, this.header]]);
  readonly parentOf = new Map<string, string | null>();
  readonly entryFor = new Map<string, string>();
  /** Parsed records in order (pi's entry index: the session line is 0). */
  readonly recordIds: (string | undefined)[] = [];
  lastEntry = this.header.id;
  model = "unknown";
  readonly lines = new SourceLines();
  currentLine = 0;
  /** The first line of each entry id, with its record as read. */
  readonly once = new ReadOnce("id", "entry");

  constructor(
    readonly rb: ReportBuilder,
    readonly edits: PiContextEdits = piContextEdits([]),
  ) {}

  resolve(id: unknown): string | null {
    return nearestImported(id, this.entryFor, this.parentOf);
  }

  add(e: JournalEntry, sourceId: string | undefined): void {
    this.entries.push(e);
    this.byId.set(e.id, e);
    this.lines.entry(e.id, this.currentLine);
    if (isMessageKind(e.kind)) this.lines.blocks((e.payload as Message).content, this.currentLine);
    if (sourceId) this.entryFor.set(sourceId, e.id);
    this.lastEntry = e.id;
  }

  /** Counts the record, places it in the tree; undefined when it is a repeat (skipped). */
  place(line: number, o: Record<string, unknown>): PiRecord | undefined {
    const { rb } = this;
    const type = String(o.type ?? "?");
    const role = isRecord(o.message) ? String(o.message.role) : "";
    rb.line(type === "message" ? `message:${role}` : type);
    this.currentLine = line;
    const treeId = typeof o.id === "string" && type !== "session" ? o.id : undefined;
    // A repeated id (a line written twice) keeps its first parent.
    if (treeId && !this.parentOf.has(treeId))
      this.parentOf.set(treeId, typeof o.parentId === "string" ? o.parentId : null);
    const recordIndex = this.recordIds.length;
    this.recordIds.push(treeId);
    if (treeId && !this.once.read(treeId, () => JSON.stringify(o), line, rb)) return undefined;
    const ts =
      typeof o.timestamp === "string"
        ? o.timestamp
        : String((this.header.payload as { created_at: string }).created_at);
    const id = treeId ?? `L${line}`;
    if (!treeId) this.parentOf.set(id, this.lastEntry);
    this.recordIds[recordIndex] = id;
    let parent = treeId ? (this.resolve(o.parentId) ?? this.header.id) : this.lastEntry;
    if (
      treeId &&
      typeof o.parentId === "string" &&
      parent === this.header.id &&
      this.lastEntry !== this.header.id
    )
      // The parent entry is missing (e.g. its line was broken): hang this one off the previous entry.
      parent = attachToPrevious(rb, line, o.parentId, this.lastEntry);
    const meta: Record<string, unknown> = { timestamp: ts };
    if (treeId) meta.source_id = treeId;
    else meta.source_line = line;
    return { line, o, type, treeId, id, parent, ts, meta, recordIndex };
  }

  readLine(line: number, o: Record<string, unknown>): void {
    const r = this.place(line, o);
    if (r === undefined) return;
    const { rb } = this;
    const { type, treeId, id, parent, ts, meta } = r;
    if (type === "session") return this.session(r);
    if (type === "model_change" && (typeof o.modelId === "string" || typeof o.model === "string"))
      this.model = String(o.modelId ?? o.model);
    if (BY_DESIGN[type]) return rb.skip(line, BY_DESIGN[type]!, true);
    if (type === "context_edit") return rb.skip(line, this.edits.reasons.get(line) ?? "context edit", true);
    const edit = treeId !== undefined ? this.edits.byTarget.get(treeId) : undefined;
    if (edit?.replacement === null)
      return rb.skip(line, `omitted from the model's context by the context edit at line ${edit.line}`, true);
    if (edit) meta.context_edit = edit.id;
    if (type === "message" && isRecord(o.message)) {
      const m = convertMessage(edit ? { ...o.message, content: edit.replacement!.content } : o.message, meta);
      if ("skip" in m) return rb.skip(line, m.skip, m.byDesign);
      this.add(
        { id, parent_id: parent, kind: kindForMessage(m), created_at: ts, payload: m } as MessageEntry,
        treeId ?? id,
      );
    } else if (type === "custom_message") {
      const m: Message = {
        role: "user",
        content: piContent(edit ? edit.replacement!.content : o.content),
        meta: { ...meta, custom_type: o.customType, display: o.display },
      };
      this.add({ id, parent_id: parent, kind: "user", created_at: ts, payload: m }, treeId ?? id);
    } else if (type === "branch_summary") {
      const payload = {
        branch_id: String(o.fromId ?? id),
        summary: String(o.summary ?? ""),
        parent_branch_id: null,
        from_id: o.fromId ?? null,
      };
      this.add({ id, parent_id: parent, kind: "branch_summary", created_at: ts, payload }, treeId ?? id);
    } else if (type === "compaction") this.compaction(r);
    else return rb.skip(line, `unknown entry type ${JSON.stringify(type)}`, false);
    rb.imported();
  }

  /** The `session` line: the header's identity. */
  session({ o, id }: PiRecord): void {
    const hp = this.header.payload as Record<string, unknown>;
    hp.session_id = String(o.id ?? "");
    hp.created_at = String(o.timestamp ?? "");
    if (typeof o.cwd === "string") hp.cwd = o.cwd;
    for (const k of ["version", "provider", "modelId", "thinkingLevel", "branchedFrom", "parentSession"])
      if (o[k] !== undefined) hp[k] = o[k];
    if (typeof o.modelId === "string") this.model = o.modelId;
    this.header.created_at = String(hp.created_at);
    this.entryFor.set(id, this.header.id);
    this.rb.imported();
  }

  /** The message an entry contributes to pi's context. */
  contribution(e: JournalEntry): Message | undefined {
    // As the live-context projection renders it, so that a kept branch summary reads the same before
    // and after the compaction.
    if (e.kind === "branch_summary") return branchSummaryMessage(e.payload.summary);
    if (e.kind === "header" || e.kind === "compaction") return undefined;
    return e.payload as Message;
  }

  /**
   * The entry a compaction keeps from: by id (v2, v3) or by record index (v1); a skipped record (a
   * `model_change`, a message a context edit omits) stands for the next imported one on the path. Null
   * when nothing from there up to the compaction was imported (it keeps nothing), undefined when the
   * first kept record is not found.
   */
  firstKept(o: Record<string, unknown>, recordIndex: number): string | null | undefined {
    if (typeof o.firstKeptEntryId === "string") {
      const direct = this.entryFor.get(o.firstKeptEntryId);
      if (direct !== undefined) return direct;
      // Up the records' own path from the compaction's parent to the first kept record, then forward.
      const ids: string[] = [];
      const seen = new Set<string>();
      for (
        let cur: unknown = o.parentId;
        typeof cur === "string" && !seen.has(cur);
        cur = this.parentOf.get(cur) ?? undefined
      ) {
        seen.add(cur);
        ids.push(cur);
        if (cur === o.firstKeptEntryId) {
          for (const rid of ids.reverse()) if (this.entryFor.has(rid)) return this.entryFor.get(rid);
          return null;
        }
      }
      return this.resolve(o.firstKeptEntryId) ?? undefined;
    }
    if (typeof o.firstKeptEntryIndex !== "number") return undefined;
    for (let i = o.firstKeptEntryIndex; i < recordIndex; i++) {
      const rid = this.recordIds[i];
      if (rid !== undefined && this.entryFor.has(rid)) return this.entryFor.get(rid);
    }
    return undefined;
  }

  /**
   * The kept messages: walk the path up from the compaction's parent to the first kept entry. An
   * earlier compaction on the way is walked through (pi keeps from a first kept entry before it, and
   * the earlier compaction entry itself contributes nothing). Undefined when it is not on the path.
   */
  kept(parent: string, firstKept: string | undefined): Message[] | undefined {
    const path: JournalEntry[] = [];
    const seen = new Set<string>();
    for (
      let cur: JournalEntry | undefined = this.byId.get(parent);
      cur && !seen.has(cur.id);
      cur = cur.parent_id ? this.byId.get(cur.parent_id) : undefined
    ) {
      seen.add(cur.id);
      path.push(cur);
      if (cur.id === firstKept)
        return path
          .reverse()
          .map((e) => this.contribution(e))
          .filter((m): m is Message => m !== undefined);
    }
    return undefined;
  }

  /** A `compaction` record: the summary as pi's checkpoint, then the messages it keeps. */
  compaction({ line, o, treeId, id, parent, ts, recordIndex }: PiRecord): void {
    // pi 1.x: a compaction that keeps nothing names itself as its first kept entry.
    const retainNone = treeId !== undefined && o.firstKeptEntryId === treeId;
    const firstKept = retainNone ? null : this.firstKept(o, recordIndex);
    const kept = firstKept === null ? [] : this.kept(parent, firstKept);
    if (kept === undefined && (o.firstKeptEntryId !== undefined || o.firstKeptEntryIndex !== undefined)) {
      this.rb.note(
        `line ${line}: first kept entry ${JSON.stringify(o.firstKeptEntryId ?? o.firstKeptEntryIndex)} not found on the compaction's path; replacement holds only the summary`,
      );
    }
    const summary = String(o.summary ?? "");
    const checkpoint: Message = {
      role: "user",
      content: [{ type: "text", text: PI_COMPACTION_PREFIX + summary + PI_COMPACTION_SUFFIX }],
      meta: { timestamp: ts, is_compact_summary: true },
    };
    const replacement = [checkpoint, ...(kept ?? [])];
    const entry = importedCompactionEntry({
      id,
      parentId: parent,
      createdAt: ts,
      sourceAgent: "pi",
      summary,
      tokensBefore: typeof o.tokensBefore === "number" ? o.tokensBefore : 0,
      model: this.model,
      trigger: "auto",
      triggerRecorded: false,
      replacement,
      extra: { first_kept_entry_id: firstKept ?? null },
    });
    this.add(entry, treeId ?? id);
  }
}

export function importPi(
  text: JsonlInput,
  file: string,
  options: ToolIdOptions = {},
  head?: ParsedHead,
): ImportResult {
  const rb = new ReportBuilder("pi", file);
  const records = [...objectLines(text, rb, head)].map(({ raw, o }) => ({ line: raw.line, o }));
  const state = new PiImport(rb, piContextEdits(records));
  for (const n of state.edits.notes) rb.note(n);
  for (const { line, o } of records) state.readLine(line, o);
  completeHeader(state.header, state.entries, file);
  return finishImport(state.entries, rb, state.lines, options);
}
