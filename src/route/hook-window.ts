/**
 * Whether a tail window of a session holds everything an agent hook's answer
 * depends on (see `TailWindow` and `importAgentTail`). The answer is read
 * from the window's import; it is the whole file's answer when:
 *
 * - the live context it judges (`before`: the active path to the compaction's
 *   parent, or to the leaf) is the end of the whole file's: the path in the
 *   window is linked by the source's own parents (no entry hung off a previous
 *   one because its parent is before the window), and either it starts at a
 *   compaction read whole in the window (the context restarts there), or the
 *   protected last round of `before` (contract/rounds.ts) starts after its
 *   first message (the one message a cut can leave partial: an assistant
 *   message streamed over lines, results joined to their call) with two
 *   complete exchanges in the window (else an older exchange, or a walk back
 *   to an earlier instruction, could reach before it);
 * - no id the window reads (entry, message, tool call and result ids) is
 *   written before the window: a result there whose call is before it, a
 *   repeated line, a repeated tool id would each be read otherwise by the
 *   whole import (Codex: a repeated call id is renamed as the whole import
 *   renames it, from the calls before the window, `codexPriorCalls`);
 * - the compaction's replacement is read whole in the window (pi: its first
 *   kept entry found there; Codex: its `replacement_history` recorded), and
 *   neither a pi branch summary nor a pi branch point is before the window
 *   (the contract keeps every branch summary; a branch can leave a call of
 *   the path without its result).
 *
 * Messages are named from the end (`SurvivalOptions.fromEnd`): their index in
 * the whole context is not in the window. Anything not shown is not assumed:
 * the window grows.
 */
import { CONSTANTS } from "../model/constants.js";
import { protectedRound } from "../contract/rounds.js";
import type { CompactionEntry, JournalEntry, Message } from "../model/types.js";
import type { ImportResult } from "../formats/common/types.js";
import type { TailWindow } from "../formats/tail-read.js";
import type { AgentFormat } from "../formats/import-agent.js";

/** What a hook's answer read of an import. */
export interface Dependence {
  /** The active path it projected (root first). */
  path: readonly JournalEntry[];
  /** Its live context. */
  before: readonly Message[];
  /** The compaction judged, if any. */
  compaction?: CompactionEntry;
}

const ATTACHED = /^line \d+: parent .* is not in the file; attached to the previous entry (.*)$/;
const KEPT_NOT_FOUND = /^line \d+: first kept entry .* not found on the compaction's path/;
const DUP = /_dup\d+$/;

/** Whether the replacement of compaction `c` is read whole in the window. */
function replacementWhole(format: AgentFormat, c: CompactionEntry, notes: readonly string[]): boolean {
  if (format === "codex") return c.payload.replacement_history_recorded === true;
  if (format === "pi") return !/^L\d+$/.test(c.id) && !notes.some((n) => KEPT_NOT_FOUND.test(n));
  return true;
}

/** The source ids of the entries on `path` (Claude Code's line uuids, pi's entry ids). */
function entryIds(path: readonly JournalEntry[]): Set<string> {
  const ids = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v === "string") ids.add(v);
  };
  for (const e of path) {
    if (e.kind === "header") continue;
    add(e.id);
    if (e.kind === "compaction" || e.kind === "branch_summary") continue;
    const meta = (e.payload as Message).meta ?? {};
    add(meta.source_uuid);
    add(meta.source_id);
    if (Array.isArray(meta.source_uuids)) meta.source_uuids.forEach(add);
  }
  return ids;
}

/** Tool ids of `messages` (as written: a renamed one also without its suffix). */
function toolIds(messages: readonly Message[]): Set<string> {
  const ids = new Set<string>();
  for (const m of messages)
    for (const b of m.content) {
      const x = b as { id?: unknown; tool_use_id?: unknown };
      const v = b.type === "tool_use" ? x.id : b.type === "tool_result" ? x.tool_use_id : undefined;
      if (typeof v !== "string") continue;
      ids.add(v);
      if (DUP.test(v)) ids.add(v.replace(DUP, ""));
    }
  return ids;
}

/**
 * The keys under which each agent writes the ids its importer reads: Claude
 * Code's line `uuid`, its tool calls' `id` and results' `tool_use_id`; pi's
 * entry and tool call `id` and results' `toolCallId`; Codex's `call_id` (and
 * `id`, which a call without one is read by).
 */
const ID_KEYS: Record<AgentFormat, string[]> = {
  "claude-code": ["uuid", "id", "tool_use_id"],
  pi: ["id", "toolCallId"],
  codex: ["call_id", "id"],
};

/** None of `ids` is written before the window. */
function noneBefore(format: AgentFormat, ids: ReadonlySet<string>, w: TailWindow): boolean {
  return ids.size === 0 || !w.anyIdBefore(ids, ID_KEYS[format]);
}

/** Whether window `w`, imported as `result`, holds all that an answer reading `d` depends on. */
export function windowHolds(
  format: AgentFormat,
  result: ImportResult,
  w: TailWindow,
  d: Dependence,
): boolean {
  if (w.whole) return true;
  const { path, before, compaction } = d;
  const notes = result.report.notes;
  if (compaction && !replacementWhole(format, compaction, notes)) return false;

  // Where the context starts: the last compaction on the path read whole, else the path's root.
  let from = path.findLastIndex((e) => e.kind === "compaction");
  const restarts = from >= 0 && replacementWhole(format, path[from] as CompactionEntry, notes);
  if (!restarts) from = 0;
  // pi keeps entries from before its compaction: they are on the path too.
  const kept = compaction?.payload.first_kept_entry_id;
  if (typeof kept === "string") {
    const k = path.findIndex((e) => e.id === kept);
    if (k < 0) return false;
    from = Math.min(from, k);
  }
  // Linked by the source's parents, from there on.
  const onPath = new Set(path.slice(from).map((e) => e.id));
  for (const n of notes) {
    const m = ATTACHED.exec(n);
    if (m && onPath.has(m[1]!)) return false;
  }
  if (before.length === 0) return false;
  const r = protectedRound(before);
  const round = Math.min(r.roundStart, r.regionStart);
  if (!restarts) {
    if (round < 1) return false;
    if (r.protectedExchangeIndices.length < CONSTANTS.protectedExchanges) return false;
    if (compaction?.payload.path === "prune-only") return false; // it counts the checkpoints before it
    if (format === "pi" && (w.branchSummaryBefore() || w.branchesBefore())) return false;
  }

  // Ids: none of the round's and the replacement's tool ids, and of the round's entries, written before
  // the window (Codex: the round's repeated call ids are renamed from the calls before the window). An
  // entry before the round read otherwise by the whole import (a repeated line kept from before the
  // window) changes no answer: only a tool id can tie it to the round, and those are checked.
  if (w.dupBefore()) {
    if (format === "codex" || result.report.warnings.some((x) => /tool call id/.test(x.message)))
      return false;
  }
  if (format === "codex") return noneBefore(format, toolIds(compaction?.payload.replacement ?? []), w);
  const region = before.slice(round);
  const ids = toolIds([...region, ...(compaction?.payload.replacement ?? [])]);
  const inRegion = new Set<unknown>(region);
  for (const id of entryIds(path.slice(from).filter((e) => inRegion.has(e.payload)))) ids.add(id);
  return noneBefore(format, ids, w);
}
