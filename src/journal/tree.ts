/**
 * The journal as a tree: the active path from root to leaf, moving the leaf,
 * and the live-context projection (what is sent to the model).
 *
 * All functions here are pure: they never mutate their input. The messages
 * they return are the entries' own payload objects (not copies); callers that
 * want to edit them must clone first (see `cloneMessages` in the model).
 */
import { BRANCH_SUMMARY_MARKER } from "../contract/markers.js";
import type {
  BranchSummaryEntry,
  CompactionEntry,
  CompactionPayload,
  JournalEntry,
  Message,
} from "../model/index.js";
import { isMessageKind } from "../model/index.js";
import { CompactSafeError } from "../model/errors.js";

/**
 * A fresh random entry id. Node's global Web Crypto, not `node:crypto`: that
 * module loads about twenty others, which every reader of a journal tree (an
 * agent's hook on each compaction) would pay for at start-up.
 */
export function newEntryId(): string {
  return globalThis.crypto.randomUUID();
}

/** The current time as an ISO-8601 string (the `created_at` of new entries). */
export function nowIso(): string {
  return new Date().toISOString();
}

/**
 * The journal entry of a compaction: the engine's ready payload
 * (`CompactSuccess.payload`) under a fresh id, child of `parentId` (the leaf
 * it compacts). The one place a `compaction` entry is built from a payload.
 */
export function compactionEntry(payload: CompactionPayload, parentId: string): CompactionEntry {
  return { id: newEntryId(), parent_id: parentId, kind: "compaction", created_at: nowIso(), payload };
}

/**
 * Entries by id. When an id occurs twice the first entry wins (the reader
 * reports the later duplicate and does not return it).
 */
export function indexEntries(entries: readonly JournalEntry[]): Map<string, JournalEntry> {
  const byId = new Map<string, JournalEntry>();
  for (const e of entries) if (!byId.has(e.id)) byId.set(e.id, e);
  return byId;
}

/** Thrown when a requested leaf id is not in the journal. */
export class UnknownLeafError extends CompactSafeError {
  readonly leafId: string;
  constructor(leafId: string) {
    super("unknown_leaf", `leaf ${JSON.stringify(leafId)} is not an entry of this journal`);
    this.name = "UnknownLeafError";
    this.leafId = leafId;
  }
}

/**
 * The active path, root first. The leaf is the last entry of the array
 * unless `leafId` is given. The walk follows `parent_id` up to a root (an
 * entry whose `parent_id` is null or absent). If a parent is missing or the
 * links form a cycle (both reported by the reader), the walk stops there, so
 * the path starts at the highest entry it could reach.
 */
export function activePath(entries: readonly JournalEntry[], leafId?: string): JournalEntry[] {
  if (entries.length === 0) {
    if (leafId !== undefined) throw new UnknownLeafError(leafId);
    return [];
  }
  const byId = indexEntries(entries);
  let leaf: JournalEntry | undefined;
  if (leafId === undefined) {
    leaf = entries[entries.length - 1];
  } else {
    leaf = byId.get(leafId);
    if (leaf === undefined) throw new UnknownLeafError(leafId);
  }
  const path: JournalEntry[] = [];
  const seen = new Set<string>();
  let cur: JournalEntry | undefined = leaf;
  while (cur !== undefined && !seen.has(cur.id)) {
    seen.add(cur.id);
    path.push(cur);
    const parent: string | null | undefined = cur.parent_id;
    cur = parent === null || parent === undefined ? undefined : byId.get(parent);
  }
  return path.reverse();
}

/** The latest `compaction` entry on a path, if any. */
export function latestCompaction(path: readonly JournalEntry[]): CompactionEntry | undefined {
  for (let i = path.length - 1; i >= 0; i--) {
    const e = path[i]!;
    if (e.kind === "compaction") return e;
  }
  return undefined;
}

/** How a `branch_summary` entry appears in the live context. */
export function branchSummaryMessage(summary: string): Message {
  return { role: "user", content: [{ type: "text", text: `${BRANCH_SUMMARY_MARKER}\n${summary}` }] };
}

/** What one entry contributes to the live context (nothing for headers, leaf moves and compactions). */
function contribution(e: JournalEntry): Message | undefined {
  if (isMessageKind(e.kind)) return e.payload as Message;
  if (e.kind === "branch_summary") {
    return e.payload.leaf_only === true ? undefined : branchSummaryMessage(e.payload.summary);
  }
  return undefined;
}

/**
 * The live context of the active path: every message on it when it holds no
 * compaction; otherwise the `replacement` of the latest compaction on the
 * path followed by what was appended after that compaction.
 */
export function liveContext(entries: readonly JournalEntry[], leafId?: string): Message[] {
  return projectPath(activePath(entries, leafId));
}

/** The live-context projection of an already computed path (root first). */
export function projectPath(path: readonly JournalEntry[]): Message[] {
  let start = 0;
  const out: Message[] = [];
  for (let i = path.length - 1; i >= 0; i--) {
    const e = path[i]!;
    if (e.kind === "compaction") {
      out.push(...e.payload.replacement);
      start = i + 1;
      break;
    }
  }
  for (let i = start; i < path.length; i++) {
    const m = contribution(path[i]!);
    if (m !== undefined) out.push(m);
  }
  return out;
}

/**
 * A `branch_summary` entry that only moves the leaf: appended to the
 * journal, it makes the subtree of `targetParentId` the active path again
 * (e.g. `restore` to an entry before a compaction). `reason` is recorded as
 * its summary; it adds nothing to the live context.
 */
export function leafMoveEntry(
  targetParentId: string,
  reason: string,
  branchId: string,
  parentBranchId: string | null = null,
): BranchSummaryEntry {
  return {
    id: newEntryId(),
    parent_id: targetParentId,
    kind: "branch_summary",
    created_at: nowIso(),
    payload: { branch_id: branchId, summary: reason, parent_branch_id: parentBranchId, leaf_only: true },
  };
}

/** The ids of the children of each entry (in append order). Roots are listed under `null`. */
export function childrenIndex(entries: readonly JournalEntry[]): Map<string | null, string[]> {
  const out = new Map<string | null, string[]>();
  for (const e of entries) {
    const key = e.parent_id ?? null;
    let list = out.get(key);
    if (list === undefined) out.set(key, (list = []));
    list.push(e.id);
  }
  return out;
}
