/**
 * The guard's state on disk: one append-only journal per session in the
 * state folder, written with the journal layer, so that `context`, `audit`,
 * `report` and `restore` read it like any session. Messages carry the raw
 * wire elements they came from in `meta.wire_raw` (provenance, never sent by
 * the exporters), so that a guard restarted on the folder splices the same
 * bytes. Requests' headers are never written: only the history.
 *
 * The state holds the conversation verbatim, so it is the owner's alone: a
 * folder the guard creates is 0700, every file it creates 0600 (also in a
 * folder that existed before), as Claude Code keeps its own transcripts.
 */
import { join } from "node:path";
import { mkdir, readdir, stat } from "node:fs/promises";
import type { CompactionPayload, JournalEntry, Message } from "../../model/index.js";
import { kindForMessage } from "../../model/index.js";
import { appendEntries, createJournal, headerEntry } from "../../journal/write.js";
import { readJournal } from "../../journal/read.js";
import { activePath, newEntryId, nowIso, projectPath } from "../../journal/tree.js";
import { currentKey, rawKey, type HistoryItem } from "../reading/history.js";
import { sessionFileName } from "./session.js";
import type { GuardWire } from "../types.js";
import { CONSTANTS } from "../../model/constants.js";
import { oneLine } from "../context.js";

/** The modes of what the guard creates in its state folder: the owner's alone. */
export const STATE_DIR_MODE = 0o700;
export const STATE_FILE_MODE = 0o600;

/** What the guard writes in its repair's compaction entry (`payload.guard`). */
export interface GuardRepairRecord {
  /** The key of the agent's summary the splice follows. */
  checkpoint_key: string;
  /** Where the spliced elements start in the replacement, and how many messages they are. */
  splice_from: number;
  splice_count: number;
  /** The guard's restatement, carried on the summary's own message (absent: none, or in a message of its own). */
  restated?: string;
  /** The summary's raw elements as the agent sent them (the replacement holds them with the restatement on). */
  checkpoint_raw?: unknown[];
}

/** A message as journaled: the canonical message, its raw wire elements in meta. */
export function journalMessage(it: HistoryItem): Message {
  return { role: it.message.role, content: it.message.content, meta: { wire_raw: it.raw } };
}

/** A journaled message back as a history item (no parts: it is not an element of the current request). */
export function itemFromJournal(m: Message): HistoryItem {
  const raw = Array.isArray(m.meta?.wire_raw) ? (m.meta.wire_raw as unknown[]) : [];
  const message: Message = { role: m.role, content: m.content };
  const key = raw.length === 0 ? `system:${rawKey([m.content])}` : rawKey(raw);
  return { message, parts: [], raw, key };
}

export interface LoadedSession {
  agent: string;
  wire: GuardWire;
  /** The history last sent (with the splice, when there is one). */
  sent: HistoryItem[];
  /** Entry id of each sent message (undefined inside a compaction's replacement). */
  entryIds: (string | undefined)[];
  leaf: string;
  splice?: {
    checkpointKey: string;
    from: number;
    count: number;
    restated?: string;
    checkpointRaw?: unknown[];
  };
}

export class SessionJournal {
  readonly file: string;
  private leaf: string | undefined;
  private root: string | undefined;
  /** The writes, in order: each request's entries are queued, so that no request waits for the disk. */
  private pending: Promise<void> = Promise.resolve();
  /** The first write that failed (later writes are not attempted: the journal would have a gap). */
  failed: string | undefined;

  private queue(write: () => Promise<unknown>): void {
    this.pending = this.pending.then(async () => {
      if (this.failed !== undefined) return;
      try {
        await write();
      } catch (e) {
        this.failed = oneLine(e);
      }
    });
  }

  /** Waits for the queued writes. */
  flush(): Promise<void> {
    return this.pending;
  }

  constructor(dir: string, key: string) {
    this.file = join(dir, sessionFileName(key));
  }

  get leafId(): string | undefined {
    return this.leaf;
  }

  /** The header entry's id: a branch that goes on from nothing of the session's starts under it. */
  get rootId(): string | undefined {
    return this.root;
  }

  /** Appends from now on under `leaf` (another branch of the session). */
  moveTo(leaf: string): void {
    this.leaf = leaf;
  }

  /** Reads the session back, or undefined when it has no journal yet. */
  async load(): Promise<LoadedSession | undefined> {
    try {
      await stat(this.file);
    } catch {
      return undefined;
    }
    const { entries } = await readJournal(this.file);
    const header = entries.find((e) => e.kind === "header");
    if (!header || entries.length === 0) return undefined;
    const path = activePath(entries);
    const live = projectPath(path);
    let last = -1;
    for (let i = path.length - 1; i >= 0 && last < 0; i--) if (path[i]!.kind === "compaction") last = i;
    const ids: (string | undefined)[] = [];
    if (last >= 0) {
      const c = path[last]! as JournalEntry & { payload: CompactionPayload };
      for (let k = 0; k < c.payload.replacement.length; k++) ids.push(undefined);
    }
    for (let i = last + 1; i < path.length; i++) {
      const e = path[i]!;
      if (e.kind !== "header" && e.kind !== "compaction" && e.kind !== "branch_summary") ids.push(e.id);
    }
    this.leaf = entries[entries.length - 1]!.id;
    this.root = header.id;
    const hp = header.payload as Record<string, unknown>;
    const out: LoadedSession = {
      agent: typeof hp.agent === "string" ? hp.agent : "unknown",
      wire: hp.wire as GuardWire,
      sent: live.map(itemFromJournal),
      entryIds: ids,
      leaf: this.leaf,
    };
    if (last >= 0) {
      const g = (path[last]!.payload as Record<string, unknown>).guard as
        Partial<GuardRepairRecord> | undefined;
      if (
        g &&
        typeof g.checkpoint_key === "string" &&
        typeof g.splice_from === "number" &&
        typeof g.splice_count === "number"
      )
        out.splice = {
          checkpointKey: currentKey(g.checkpoint_key),
          from: g.splice_from,
          count: g.splice_count,
          ...(typeof g.restated === "string" && Array.isArray(g.checkpoint_raw)
            ? { restated: g.restated, checkpointRaw: g.checkpoint_raw }
            : {}),
        };
    }
    return out;
  }

  /** Starts the journal (header and the first history), queued. Returns the messages' entry ids. */
  start(dir: string, key: string, agent: string, wire: GuardWire, items: readonly HistoryItem[]): string[] {
    const created = nowIso();
    const header = headerEntry({
      session_id: key,
      created_at: created,
      schema_version: CONSTANTS.schemaVersion,
      source_format: `guard:${wire}`,
      agent,
      wire,
    });
    const { entries, ids } = this.chain(header.id, items);
    this.root = header.id;
    this.leaf = entries.length > 0 ? entries[entries.length - 1]!.id : header.id;
    this.queue(async () => {
      await mkdir(dir, { recursive: true, mode: STATE_DIR_MODE });
      await createJournal(this.file, header, entries, { mode: STATE_FILE_MODE });
    });
    return ids;
  }

  private chain(parent: string, items: readonly HistoryItem[]): { entries: JournalEntry[]; ids: string[] } {
    const entries: JournalEntry[] = [];
    const ids: string[] = [];
    let p = parent;
    for (const it of items) {
      const m = journalMessage(it);
      const e: JournalEntry = {
        id: newEntryId(),
        parent_id: p,
        kind: kindForMessage(m),
        created_at: nowIso(),
        payload: m,
      };
      entries.push(e);
      ids.push(e.id);
      p = e.id;
    }
    return { entries, ids };
  }

  /** Appends messages under `parent` (default: the leaf), queued. Returns their entry ids. */
  append(items: readonly HistoryItem[], parent?: string): string[] {
    if (items.length === 0) return [];
    const { entries, ids } = this.chain(parent ?? this.leaf!, items);
    this.leaf = ids[ids.length - 1];
    this.queue(() => appendEntries(this.file, entries, { mode: STATE_FILE_MODE }));
    return ids;
  }

  /** Appends a compaction entry whose replacement is `replacement`, queued. Returns its id. */
  compaction(replacement: readonly HistoryItem[], fields: Omit<CompactionPayload, "replacement">): string {
    const e: JournalEntry = {
      id: newEntryId(),
      parent_id: this.leaf ?? null,
      kind: "compaction",
      created_at: nowIso(),
      payload: { ...fields, replacement: replacement.map(journalMessage) } as CompactionPayload,
    };
    this.leaf = e.id;
    this.queue(() => appendEntries(this.file, [e], { mode: STATE_FILE_MODE }));
    return e.id;
  }
}

/** One session of a state folder, as `compact-safe guard status` lists it (read from its journal). */
export interface StateSessionSummary {
  /** The session key the guard gave it (the journal header's `session_id`). */
  session: string;
  agent: string;
  wire: string;
  /** The journal's file name in the state folder. */
  file: string;
  /** When its journal was started, and when the guard last wrote to it (entry times, ISO 8601). */
  first_seen: string;
  last_seen: string;
  /** The agent's compactions the guard judged, and its verdicts on them. */
  compactions: number;
  kept: number;
  violations: number;
  /** The guard's repairs recorded after those compactions. */
  repairs: number;
}

/** Who writes the guard's repair entries (see `journalCompaction` in `compaction.ts`). */
const REPAIR_SOURCE = "compact-safe-guard";

/** What a guard journal's entries tell of its session (null when they hold no header). */
export function summarizeStateJournal(
  file: string,
  entries: readonly JournalEntry[],
): StateSessionSummary | null {
  const header = entries.find((e) => e.kind === "header");
  if (header === undefined) return null;
  const hp = header.payload as Record<string, unknown>;
  const out: StateSessionSummary = {
    session: typeof hp.session_id === "string" ? hp.session_id : "unknown",
    agent: typeof hp.agent === "string" ? hp.agent : "unknown",
    wire: typeof hp.wire === "string" ? hp.wire : "unknown",
    file,
    first_seen: header.created_at,
    last_seen: header.created_at,
    compactions: 0,
    kept: 0,
    violations: 0,
    repairs: 0,
  };
  for (const e of entries) {
    if (e.created_at > out.last_seen) out.last_seen = e.created_at;
    if (e.kind !== "compaction") continue;
    const p = e.payload as unknown as Record<string, unknown>;
    if (p.source_agent === REPAIR_SOURCE) {
      out.repairs++;
      continue;
    }
    out.compactions++;
    const v = p.guard_verdict as { kept?: unknown } | undefined;
    if (v?.kept === true) out.kept++;
    else if (v?.kept === false) out.violations++;
  }
  return out;
}

/**
 * The sessions of a guard state folder, the most recently seen first: every journal in it (not
 * an older guard's `followed-sessions.jsonl`) read with the journal reader. A file that cannot be read as a guard
 * journal is named in `unreadable`. A folder that does not exist has no session.
 */
export async function listStateSessions(
  dir: string,
): Promise<{ sessions: StateSessionSummary[]; unreadable: string[] }> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { sessions: [], unreadable: [] };
    throw e;
  }
  const sessions: StateSessionSummary[] = [];
  const unreadable: string[] = [];
  for (const name of names.sort()) {
    if (!name.endsWith(".jsonl") || name === "followed-sessions.jsonl") continue;
    try {
      const { entries } = await readJournal(join(dir, name));
      const s = summarizeStateJournal(name, entries);
      if (s === null) unreadable.push(name);
      else sessions.push(s);
    } catch {
      unreadable.push(name);
    }
  }
  // The most recently seen first; at the same time, by session key.
  sessions.sort((a, b) =>
    a.last_seen !== b.last_seen
      ? a.last_seen < b.last_seen
        ? 1
        : -1
      : a.session < b.session
        ? -1
        : a.session > b.session
          ? 1
          : 0,
  );
  return { sessions, unreadable };
}
