/**
 * The sessions the guard core holds: at most MAX_SESSIONS in memory, and at
 * most `maxHeldBytes` of their last request bodies (DEFAULT_MAX_HELD_BYTES),
 * each with its queue of requests, judged in order. Beyond either bound the
 * least recently used sessions are let go of (never one with a request in
 * its queue, and never the last one used): one comes back from the state
 * folder when it returns, or, without a state folder, as after a restart (a
 * new session). A session let go of has no last body, so its next request
 * takes the synchronous path (read whole, judged before it goes out).
 */
import type { GuardCoreOptions, GuardWire } from "./types.js";
import { rawKey, type HistoryItem, type WireHistory } from "./history.js";
import { readWire } from "./wires.js";
import type { SessionIdentity } from "./session.js";
import type { ListLayout } from "./scan.js";
import type { FastInfo } from "./extend.js";
import type { Branch } from "./proofs.js";
import { SessionJournal } from "./state.js";

/** Sessions held in memory at once (the others are read back from the state folder when they return). */
const MAX_SESSIONS = 64;

/** The request bodies held at once, in bytes (each also holds the history parsed from it, of the same order). */
export const DEFAULT_MAX_HELD_BYTES = 256 * 1024 * 1024;

/** The bytes of the request bodies a session holds (its last main body, before and after it is scanned). */
export function heldBytes(s: Session): number {
  const a = s.toScan?.body;
  const b = s.fast?.body;
  return (a?.length ?? 0) + (b !== undefined && b !== a ? b.length : 0);
}

export interface Splice {
  /** The key of the agent's summary the splice follows. */
  checkpointKey: string;
  /** The raw elements inserted after it. */
  raw: unknown[];
  /** The same, as history items. */
  items: HistoryItem[];
  /** The guard's restatement, carried as further content of the summary's own message. */
  restated?: string;
  /** The summary as sent (with the restatement on it), when it differs from the agent's. */
  checkpoint?: HistoryItem;
}

export interface Session {
  key: string;
  agent: string;
  wire: GuardWire;
  /** The agent's last main history, as it sent it (system included). */
  agent_items: HistoryItem[];
  /** Entry id of each conversation (non-system) item of those (undefined inside a compaction's replacement, or without state). */
  conv_ids: (string | undefined)[];
  splice?: Splice;
  had_tools: boolean;
  journal?: SessionJournal;
  /** What the fast path compares the next request's bytes with (see `fastExtension`). */
  fast?: FastInfo;
  /** The last main request, until its bytes are scanned into `fast` (after its answer). */
  toScan?: { body: Buffer; history: WireHistory; known?: { layout: ListLayout; noMarkerBefore: number } };
  /** The header fingerprint that led to this session (see `headerSession`). */
  fp?: string;
  /** The session's other branches (a second client on its id, the history before a rewind), the latest last. */
  branches?: Branch[];
}

/** The history sent: the agent's items with the splice after its summary. */
export function sentOf(s: Session): HistoryItem[] {
  if (!s.splice) return s.agent_items;
  const at = s.agent_items.findIndex((i) => i.key === s.splice!.checkpointKey);
  if (at < 0) return s.agent_items;
  const summary = s.splice.checkpoint ?? s.agent_items[at]!;
  return [...s.agent_items.slice(0, at), summary, ...s.splice.items, ...s.agent_items.slice(at + 1)];
}

/** The agent's summary item read back from its raw elements, when they are the summary the splice follows. */
function summaryItem(wire: GuardWire, raw: unknown[], key: string): HistoryItem | undefined {
  try {
    const doc = wire === "openai-responses" ? { input: raw } : { messages: raw };
    const items = readWire(wire, doc).items;
    const it = items.length === 1 ? items[0] : undefined;
    if (!it || rawKey(raw) !== key) return undefined;
    return { message: it.message, parts: [], raw, key };
  } catch {
    return undefined;
  }
}

export class HeldSessions {
  /** In the order they were last remembered, the oldest first. */
  readonly sessions = new Map<string, Session>();
  /** Session keys by header fingerprint (`headerSession`), for the fast path of agents other than Claude Code. */
  readonly headerKeys = new Map<string, string>();
  private readonly locks = new Map<string, Promise<unknown>>();
  /** Journals of sessions let go of, until their queued writes are done. */
  private readonly flushing = new Map<string, Promise<void>>();

  private readonly maxHeldBytes: number;

  constructor(private readonly options: GuardCoreOptions) {
    this.maxHeldBytes = options.maxHeldBytes ?? DEFAULT_MAX_HELD_BYTES;
  }

  /** Whether work of the session is queued or running (its requests not all judged yet). */
  queued(key: string): boolean {
    return this.locks.has(key);
  }

  /** Runs `fn` after the session's earlier requests (requests of one session are judged in order). */
  serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const locks = this.locks;
    const prev = locks.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    locks.set(key, tail);
    void tail.then(() => {
      if (locks.get(key) !== tail) return;
      locks.delete(key);
      // The session's work is done (its new body held and scanned): the bound on bytes is kept now.
      this.bound();
    });
    return run;
  }

  /** Holds `s` as the most recent session, letting go of the least recent beyond the bounds. */
  remember(s: Session): void {
    const { sessions } = this;
    sessions.delete(s.key);
    sessions.set(s.key, s);
    while (sessions.size > MAX_SESSIONS) this.letGo(sessions.values().next().value!);
    this.bound();
  }

  /** The bytes of the bodies held by all the sessions. */
  heldBytes(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += heldBytes(s);
    return n;
  }

  /**
   * Lets go of the least recently used sessions while their bodies pass
   * `maxHeldBytes`, but for those with a request in their queue (let go of
   * once it is done) and the most recent one.
   */
  private bound(): void {
    let total = this.heldBytes();
    if (total <= this.maxHeldBytes) return;
    const newest = [...this.sessions.keys()].at(-1);
    for (const s of [...this.sessions.values()]) {
      if (total <= this.maxHeldBytes) break;
      if (s.key === newest || this.locks.has(s.key)) continue;
      total -= heldBytes(s);
      this.letGo(s);
    }
  }

  /** Stops holding `s`: its journal's queued writes are waited for before it is read back. */
  private letGo(s: Session): void {
    const { sessions, headerKeys, flushing } = this;
    sessions.delete(s.key);
    if (s.fp !== undefined && headerKeys.get(s.fp) === s.key) headerKeys.delete(s.fp);
    const done = s.journal?.flush();
    if (done) {
      flushing.set(s.key, done);
      void done.then(() => {
        if (flushing.get(s.key) === done) flushing.delete(s.key);
      });
    }
  }

  /** The session held in memory (now the most recently used), or read back from the state folder; undefined when it is new. */
  async load(id: SessionIdentity, wire: GuardWire): Promise<Session | undefined> {
    const known = this.sessions.get(id.key);
    if (known) {
      this.sessions.delete(id.key);
      this.sessions.set(id.key, known);
      return known;
    }
    if (!this.options.stateDir) return undefined;
    await this.flushing.get(id.key);
    const journal = new SessionJournal(this.options.stateDir, id.key);
    const loaded = await journal.load();
    if (!loaded) return undefined;
    let agentItems = loaded.sent;
    let entryIds = loaded.entryIds;
    let splice: Splice | undefined;
    if (loaded.splice) {
      const { from, count, checkpointKey, restated, checkpointRaw } = loaded.splice;
      const items = loaded.sent.slice(from, from + count);
      splice = { checkpointKey, items, raw: items.flatMap((i) => i.raw) };
      agentItems = [...loaded.sent.slice(0, from), ...loaded.sent.slice(from + count)];
      const sentSummary = loaded.sent[from - 1];
      if (restated !== undefined && checkpointRaw !== undefined && sentSummary) {
        // The summary as the agent sent it (the journal holds it with the restatement on it).
        const agentSummary = summaryItem(loaded.wire ?? wire, checkpointRaw, checkpointKey);
        if (agentSummary) {
          splice = { ...splice, restated, checkpoint: sentSummary };
          agentItems[from - 1] = agentSummary;
        }
      }
      entryIds = [...entryIds.slice(0, from), ...entryIds.slice(from + count)];
    }
    const s: Session = {
      key: id.key,
      agent: loaded.agent,
      wire: loaded.wire ?? wire,
      agent_items: agentItems,
      conv_ids: agentItems.flatMap((it, i) => (it.message.role === "system" ? [] : [entryIds[i]])),
      splice,
      had_tools: true,
      journal,
    };
    this.remember(s);
    return s;
  }

  /** Resolves once no session has queued work left (work queued meanwhile included). */
  async drain(): Promise<void> {
    while (this.locks.size > 0) await Promise.all([...this.locks.values()]);
  }

  /** Resolves once the journal writes queued by the sessions held are done. */
  async flushJournals(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.journal?.flush()));
  }
}
