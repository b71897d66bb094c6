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
import type { GuardCoreOptions, GuardWire } from "../types.js";
import { headOf, rawKey, type HeldHead, type HistoryItem, type WireHistory } from "../reading/history.js";
import { listKeyOf, parseBody, readWire } from "../reading/wires.js";
import type { SessionIdentity } from "./session.js";
import type { ListLayout } from "../reading/scan.js";
import type { FastInfo } from "../reading/extend.js";
import type { Branch } from "./proofs.js";
import { SessionJournal } from "./state.js";

/** Sessions held in memory at once (the others are read back from the state folder when they return). */
const MAX_SESSIONS = 64;

/** The request bodies held at once, in bytes. */
export const DEFAULT_MAX_HELD_BYTES = 256 * 1024 * 1024;

/**
 * The bodies whose parsed history is held at once, in bytes (the most
 * recently used sessions'; a parsed history takes about 3.5 times its body).
 * Beyond it a session is held lean: its last body and a head per item; it
 * reads the body again when a compaction is judged against it, and its next
 * extension from the heads and the new body (`leanExtension`), about as
 * cheaply as from a parsed history (`extendHistory`). By default none.
 */
export const DEFAULT_MAX_PARSED_BYTES = 0;

/**
 * A session's last history: the head (key, role) of each item, always; the
 * items themselves while they are parsed; and the request body they are
 * read again from (the first `upTo` items of its history).
 */
export interface HeldHistory {
  heads: HeldHead[];
  items?: HistoryItem[];
  source?: { body: Buffer; wire: GuardWire; upTo: number };
}

/**
 * A history held: `items`, with the body they were read from (none: they
 * are held as they are). Of a partial history (`WireHistory.partial`), the
 * heads alone: its items are read again from the body when needed.
 */
export function heldHistory(
  items: HistoryItem[],
  body?: Buffer,
  wire?: GuardWire,
  partial?: true,
): HeldHistory {
  const source =
    body !== undefined && wire !== undefined ? { source: { body, wire, upTo: items.length } } : {};
  if (partial && !("source" in source)) throw new Error("a partial history is held only with its body");
  return { heads: items.map(headOf), ...(partial ? {} : { items }), ...source };
}

/** The items of a held history, read again from its body when they were let go of (kept until then). */
export function itemsOf(h: HeldHistory): HistoryItem[] {
  if (h.items) return h.items;
  const src = h.source!;
  const items = readWire(src.wire, parseBody(src.body, listKeyOf(src.wire))).items.slice(0, src.upTo);
  if (items.length !== h.heads.length || items.some((it, i) => it.key !== h.heads[i]!.key))
    throw new Error("the session's last history read again from its body is not the one held");
  h.items = items;
  return items;
}

/** Lets go of a held history's parsed items where its body can give them again. */
function lighten(h: HeldHistory): void {
  if (h.source) h.items = undefined;
}

/** The request bodies a session holds, each once. */
function bodiesOf(s: Session): Set<Buffer> {
  const out = new Set<Buffer>();
  const add = (b: Buffer | undefined) => void (b !== undefined && out.add(b));
  add(s.toScan?.body);
  add(s.fast?.body);
  add(s.hist.source?.body);
  for (const b of s.branches ?? []) add(b.hist.source?.body);
  return out;
}

/** The bytes of the request bodies a session holds (its last main body, its branches', each once). */
export function heldBytes(s: Session): number {
  let n = 0;
  for (const b of bodiesOf(s)) n += b.length;
  return n;
}

/** Lets go of what a session holds parsed (kept: its bodies, and its items that no body gives again). */
function lightenSession(s: Session): void {
  lighten(s.hist);
  for (const b of s.branches ?? []) lighten(b.hist);
  if (s.fast) s.fast = { ...s.fast, history: undefined };
}

/** The bytes of the bodies whose parsed history the session holds. */
function parsedBytes(s: Session): number {
  const parsed = new Set<Buffer>();
  if (s.toScan) parsed.add(s.toScan.body);
  if (s.fast?.history) parsed.add(s.fast.body);
  if (s.hist.items && s.hist.source) parsed.add(s.hist.source.body);
  for (const b of s.branches ?? []) if (b.hist.items && b.hist.source) parsed.add(b.hist.source.body);
  let n = 0;
  for (const b of parsed) n += b.length;
  return n;
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
  /** The agent's last main history, as it sent it (system included): read its items with `itemsOf`. */
  hist: HeldHistory;
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
  const items = itemsOf(s.hist);
  if (!s.splice) return items;
  const at = items.findIndex((i) => i.key === s.splice!.checkpointKey);
  if (at < 0) return items;
  const summary = s.splice.checkpoint ?? items[at]!;
  return [...items.slice(0, at), summary, ...s.splice.items, ...items.slice(at + 1)];
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
  private readonly maxParsedBytes: number;

  constructor(private readonly options: GuardCoreOptions) {
    this.maxHeldBytes = options.maxHeldBytes ?? DEFAULT_MAX_HELD_BYTES;
    this.maxParsedBytes = options.maxParsedBytes ?? DEFAULT_MAX_PARSED_BYTES;
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
    const newest = [...this.sessions.keys()].at(-1);
    const idle = (s: Session) => s.key !== newest && !this.locks.has(s.key);
    let total = this.heldBytes();
    for (const s of [...this.sessions.values()]) {
      if (total <= this.maxHeldBytes) break;
      if (!idle(s)) continue;
      total -= heldBytes(s);
      this.letGo(s);
    }
    let parsed = 0;
    for (const s of this.sessions.values()) parsed += parsedBytes(s);
    for (const s of this.sessions.values()) {
      if (parsed <= this.maxParsedBytes) break;
      if (this.locks.has(s.key)) continue;
      parsed -= parsedBytes(s);
      lightenSession(s);
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
      hist: heldHistory(agentItems),
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
