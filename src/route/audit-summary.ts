/**
 * The aggregate of many sessions' audit records (`compact-safe audit PATH…`): sessions, compactions,
 * kept / lost / not judgeable, lost by kind, by agent and version, tokens before and after, the
 * files skipped, and the sessions that lost the most. One run and the merge of its shards' JSON Lines
 * build it with the same `addRecord`, in the same order (records sorted by root and path), so they
 * give the same aggregate.
 */
import {
  AUDIT_SCHEMA,
  LOST_KINDS,
  type LostKind,
  type SessionCounts,
  type SessionRecord,
  type SkippedRecord,
  zeroCounts,
  zeroKinds,
} from "./audit-schema.js";

export interface AgentRow extends SessionCounts {
  agent: string;
  version: string | null;
  sessions: number;
  tokens_before: number;
  tokens_after: number;
}

/** A session in the ranking of what was lost. */
export interface RankedSession {
  root: string;
  path: string;
  agent: string;
  version: string | null;
  session_id: string | null;
  counts: SessionCounts;
  lost_kinds: Record<LostKind, number>;
  /** Lost pieces over its compactions: user texts, tool calls and results, assistant texts. */
  lost_items: { user_texts: number; tool_calls: number; tool_results: number; assistant_texts: number };
}

export interface AuditSummary {
  schema: typeof AUDIT_SCHEMA;
  type: "summary";
  sessions: number;
  bytes: number;
  counts: SessionCounts;
  lost_kinds: Record<LostKind, number>;
  tokens: { before: number; after: number };
  /** One row per agent and version, sorted by agent then version. */
  by_agent: AgentRow[];
  /** Files that could not be read or imported (`unreadable`), in path order. */
  skipped: { root: string; path: string; reason: string }[];
  /** Files found in folders that no format compact-safe reads recognises. */
  not_sessions: number;
  /** The sessions that lost the most (at most `WORST`), worst first. */
  worst: RankedSession[];
  /** How the run was made: its shard, or the shards merged. Not part of the aggregate. */
  run: { shard: string | null; merged: string[] | null };
}

/** How many sessions the aggregate ranks. */
export const WORST = 10;

function addCounts(into: SessionCounts, c: SessionCounts): void {
  for (const k of Object.keys(c) as (keyof SessionCounts)[]) into[k] += c[k];
}

/** A session's place in the ranking: what it lost and did not repair first, then lost pieces. */
export function rankedOf(r: SessionRecord): RankedSession {
  const items = { user_texts: 0, tool_calls: 0, tool_results: 0, assistant_texts: 0 };
  for (const c of r.compactions) {
    if (c.repair_of !== null || c.kept !== false) continue;
    items.user_texts += c.losses.user_texts.length;
    items.tool_calls += c.losses.tool_calls.length;
    items.tool_results += c.losses.tool_results.length;
    items.assistant_texts += c.losses.assistant_texts.length;
  }
  return {
    root: r.root,
    path: r.path,
    agent: r.agent,
    version: r.version,
    session_id: r.session_id,
    counts: r.counts,
    lost_kinds: r.lost_kinds,
    lost_items: items,
  };
}

/** Orders sessions worst first: unrepaired losses, losses, lost user texts, lost pieces; then path. */
export function compareRanked(a: RankedSession, b: RankedSession): number {
  const pieces = (s: RankedSession) =>
    s.lost_items.user_texts +
    s.lost_items.tool_calls +
    s.lost_items.tool_results +
    s.lost_items.assistant_texts;
  return (
    b.counts.unrepaired - a.counts.unrepaired ||
    b.counts.lost - a.counts.lost ||
    b.lost_items.user_texts - a.lost_items.user_texts ||
    pieces(b) - pieces(a) ||
    (a.root < b.root ? -1 : a.root > b.root ? 1 : 0) ||
    (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
}

/** An empty aggregate. */
export function emptySummary(): AuditSummary {
  return {
    schema: AUDIT_SCHEMA,
    type: "summary",
    sessions: 0,
    bytes: 0,
    counts: zeroCounts(),
    lost_kinds: zeroKinds(),
    tokens: { before: 0, after: 0 },
    by_agent: [],
    skipped: [],
    not_sessions: 0,
    worst: [],
    run: { shard: null, merged: null },
  };
}

/** Adds one record (a session or a skipped file) to the aggregate. */
export function addRecord(s: AuditSummary, r: SessionRecord | SkippedRecord): void {
  if (r.type === "skipped") {
    if (r.why === "not_a_session") s.not_sessions++;
    else s.skipped.push({ root: r.root, path: r.path, reason: r.reason });
    return;
  }
  s.sessions++;
  s.bytes += r.bytes;
  addCounts(s.counts, r.counts);
  for (const k of LOST_KINDS) s.lost_kinds[k] += r.lost_kinds[k];
  s.tokens.before += r.tokens.before;
  s.tokens.after += r.tokens.after;
  // A session is counted under the version that began it; each compaction under the version that wrote it.
  rowFor(s, r.agent, r.version).sessions++;
  for (const c of r.compactions) {
    if (c.repair_of !== null) continue;
    const row = rowFor(s, r.agent, c.version ?? r.version);
    row.compactions++;
    row.tokens_before += c.tokens_before;
    row.tokens_after += c.tokens_after;
    if (!c.judgeable) {
      row.not_judgeable++;
      continue;
    }
    row.judged++;
    if (c.kept === true) row.kept++;
    else {
      row.lost++;
      if (c.repaired) row.repaired++;
      else row.unrepaired++;
    }
  }
  if (r.counts.lost > 0) {
    s.worst.push(rankedOf(r));
    s.worst.sort(compareRanked);
    if (s.worst.length > WORST) s.worst.length = WORST;
  }
}

/** The aggregate's row of an agent and version (made when first needed). */
function rowFor(s: AuditSummary, agent: string, version: string | null): AgentRow {
  let row = s.by_agent.find((a) => a.agent === agent && a.version === version);
  if (row === undefined) {
    row = { agent, version, sessions: 0, ...zeroCounts(), tokens_before: 0, tokens_after: 0 };
    s.by_agent.push(row);
    s.by_agent.sort(compareAgentRows);
  }
  return row;
}

/** Agents by name, their versions newest first as numbers compare (`2.1.10` after `2.1.9`), unknown last. */
function compareAgentRows(a: AgentRow, b: AgentRow): number {
  if (a.agent !== b.agent) return a.agent < b.agent ? -1 : 1;
  if (a.version === b.version) return 0;
  if (a.version === null) return 1;
  if (b.version === null) return -1;
  return b.version.localeCompare(a.version, "en", { numeric: true });
}

/** The order records are added in, so that a run and a merge of its shards agree: root, then path. */
export function compareRecords(
  a: Pick<SessionRecord, "root" | "path">,
  b: Pick<SessionRecord, "root" | "path">,
): number {
  return a.root < b.root ? -1 : a.root > b.root ? 1 : a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/** Sorts what the aggregate lists (the skipped files by root and path): call once all records are added. */
export function finishSummary(s: AuditSummary): AuditSummary {
  s.skipped.sort(compareRecords);
  return s;
}

/** Whether any compaction lost what must survive and was not repaired (what makes `audit` exit 1). */
export function anyUnrepaired(s: AuditSummary): boolean {
  return s.counts.unrepaired > 0;
}
