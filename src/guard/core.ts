/**
 * The guard's core: for every request the proxy hands it, read the wire,
 * find the agent's session, recognise the agent's compaction, judge it with
 * the survival contract, and (mode `repair`) splice back what it lost into
 * this and every later request of the session, until the agent's next
 * compaction. Anything it cannot read, or a splice that would not keep the
 * contract or that the provider would refuse, goes out untouched with a
 * one-line note. It never throws out of `handle`.
 */
import type { Message } from "../model/types.js";
import { allText, isCheckpoint } from "../contract/classify.js";
import { validateSurvivalContract } from "../contract/validate.js";
import { estimateTokens } from "../engine/tokens.js";
import { liveStateSection } from "../engine/replacement.js";
import { protectedLosses } from "../route/audit.js";
import { readLiveState } from "../workspace/live-state.js";
import type {
  GuardCore,
  GuardCoreOptions,
  GuardOutcome,
  GuardVerdict,
  GuardWire,
  WireRequest,
} from "./types.js";
import { messagesOf, type HistoryItem, type WireHistory } from "./history.js";
import { parseBody, readWire, routeOf } from "./wires.js";
import { headerSession, sessionOf, type SessionIdentity } from "./session.js";
import type { ListLayout } from "./scan.js";
import { extendHistory, fastExtension, fastInfoOf, type Extension, type FastInfo } from "./extend.js";
import { conversation, relation, summarizationRequestOf, trailingNewTurns } from "./detect.js";
import { extractiveAnswer } from "./answer.js";
import { buildSplice, insertAfter, wireCheck, type Restated } from "./splice.js";
import { FollowedSessions, SessionJournal } from "./state.js";
import { providerEdits } from "./provider-edits.js";

/** Lets the caller of an answered request go on (the request is sent upstream) before more work is done. */
const offPath = (): Promise<void> => new Promise((r) => setImmediate(r));

/** The longest the work left for after an answer waits for that answer to end. */
const AFTER_ANSWER_MAX_MS = 1_000;

/** Resolves once the answer to `request` has gone out (see `WireRequest.answered`), at most AFTER_ANSWER_MAX_MS. */
function afterAnswer(request: WireRequest): Promise<void> {
  if (!request.answered) return offPath();
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<void>((r) => (timer = setTimeout(r, AFTER_ANSWER_MAX_MS)));
  return Promise.race([request.answered.catch(() => undefined), cap]).finally(() => clearTimeout(timer));
}

/** Sessions held in memory at once (the others are read back from the state folder when they return). */
const MAX_SESSIONS = 64;

interface Splice {
  /** The key of the agent's summary the splice follows. */
  checkpointKey: string;
  /** The raw elements inserted after it. */
  raw: unknown[];
  /** The same, as history items. */
  items: HistoryItem[];
}

interface Session {
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
}

const hasTools = (doc: Record<string, unknown>): boolean => Array.isArray(doc.tools) && doc.tools.length > 0;

/** The summary an item carries: a checkpoint, or a Responses `compaction` item. */
function isSummaryItem(it: HistoryItem): boolean {
  return (
    isCheckpoint(it.message) ||
    it.message.content.some(
      (b) => b.type === "responses_item" && (b as { item?: { type?: unknown } }).item?.type === "compaction",
    )
  );
}

function lastSummary(items: readonly HistoryItem[]): number {
  for (let i = items.length - 1; i >= 0; i--) if (isSummaryItem(items[i]!)) return i;
  return -1;
}

/** The history sent: the agent's items with the splice after its summary. */
function sentOf(s: Session): HistoryItem[] {
  if (!s.splice) return s.agent_items;
  const at = s.agent_items.findIndex((i) => i.key === s.splice!.checkpointKey);
  if (at < 0) return s.agent_items;
  return [...s.agent_items.slice(0, at + 1), ...s.splice.items, ...s.agent_items.slice(at + 1)];
}

function tokensOf(messages: readonly Message[]): number {
  try {
    return estimateTokens(messages);
  } catch {
    return 0;
  }
}

const oneLine = (e: unknown): string =>
  (e instanceof Error ? e.message : String(e)).replace(/\s+/g, " ").slice(0, 200);

export function createGuardCore(options: GuardCoreOptions = {}): GuardCore {
  const mode = options.mode ?? "repair";
  const sessions = new Map<string, Session>();
  const locks = new Map<string, Promise<unknown>>();
  /** The latest session keyed by a hash, per system prompt, to follow it when the first user message changes (kept in the state folder for a restart). */
  const hashedBySystem = new FollowedSessions(options.stateDir);
  const followedRead = hashedBySystem.load();
  /** Session keys by header fingerprint (`headerSession`), for the fast path of agents other than Claude Code. */
  const headerKeys = new Map<string, string>();

  /** Runs `fn` after the session's earlier requests (requests of one session are judged in order). */
  function serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = locks.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    locks.set(key, tail);
    void tail.then(() => {
      if (locks.get(key) === tail) locks.delete(key);
    });
    return run;
  }

  /** Journals of sessions let go of, until their queued writes are done. */
  const flushing = new Map<string, Promise<void>>();

  function remember(s: Session): void {
    sessions.delete(s.key);
    sessions.set(s.key, s);
    while (sessions.size > MAX_SESSIONS) {
      const oldest = sessions.values().next().value!;
      sessions.delete(oldest.key);
      if (oldest.fp !== undefined && headerKeys.get(oldest.fp) === oldest.key) headerKeys.delete(oldest.fp);
      const done = oldest.journal?.flush();
      if (done) {
        flushing.set(oldest.key, done);
        void done.then(() => {
          if (flushing.get(oldest.key) === done) flushing.delete(oldest.key);
        });
      }
    }
  }

  async function loadSession(id: SessionIdentity, wire: GuardWire): Promise<Session | undefined> {
    const known = sessions.get(id.key);
    if (known) return known;
    if (!options.stateDir) return undefined;
    await flushing.get(id.key);
    const journal = new SessionJournal(options.stateDir, id.key);
    const loaded = await journal.load();
    if (!loaded) return undefined;
    let agentItems = loaded.sent;
    let entryIds = loaded.entryIds;
    let splice: Splice | undefined;
    if (loaded.splice) {
      const { from, count, checkpointKey } = loaded.splice;
      const items = loaded.sent.slice(from, from + count);
      splice = { checkpointKey, items, raw: items.flatMap((i) => i.raw) };
      agentItems = [...loaded.sent.slice(0, from), ...loaded.sent.slice(from + count)];
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
    remember(s);
    return s;
  }

  type Prepared =
    | { outcome: GuardOutcome }
    | { history: WireHistory; id: SessionIdentity; onMain: () => void; fp?: string };

  /** The layout of each history read from the last body (`extendHistory`), for `fastInfoOf`. */
  const extended = new WeakMap<WireHistory, { layout: ListLayout; noMarkerBefore: number }>();

  /**
   * Reads the request (parse, session, summarization request): the
   * synchronous path's work before judging. With `from` (a request the fast
   * path let through), the body is read from the session's last one, in
   * proportion to what it adds; whole when that does not apply.
   */
  function prepare(
    request: WireRequest,
    wire: GuardWire,
    hs: ReturnType<typeof headerSession>,
    from?: { last: FastInfo; ext: Extension },
  ): Prepared {
    const untouched = (note: string, extra: Partial<GuardOutcome> = {}): GuardOutcome => ({
      body: request.body,
      changed: false,
      note,
      ...extra,
    });
    let history: WireHistory;
    try {
      const read =
        from && !options.readWhole && from.last.history.wire === wire
          ? extendHistory(from.last, request.body, from.ext)
          : undefined;
      if (read) extended.set(read.history, { layout: read.layout, noMarkerBefore: from!.last.tailFrom });
      history = read?.history ?? readWire(wire, parseBody(request.body));
    } catch (e) {
      return { outcome: untouched(`not judged: ${oneLine(e)}`, { wire }) };
    }
    let id = sessionOf(request.headers, history);
    const summarizer = summarizationRequestOf(history.items);
    if (summarizer && options.summarizer === "extractive") {
      try {
        const a = extractiveAnswer(history, summarizer);
        return {
          outcome: untouched(
            `answered ${summarizer}'s summarization request itself (extractive, ${a.text.length} chars)`,
            { wire, session: id.key, respond: a.response },
          ),
        };
      } catch (e) {
        return {
          outcome: untouched(
            `the agent's own summarization request (${summarizer}); not answered (${oneLine(e)}), passed through`,
            { wire, session: id.key },
          ),
        };
      }
    }
    if (summarizer)
      return {
        outcome: untouched(
          `the agent's own summarization request (${summarizer}); passed through, not its history`,
          { wire, session: id.key },
        ),
      };
    let onMain = (): void => {};
    if (id.source === "hash") {
      const sys = systemSeed(history);
      const followed = hashedBySystem.get(sys);
      if (followed && !sessions.has(id.key) && history.items.some(isSummaryItem))
        id = { ...id, key: followed };
      const key = id.key;
      onMain = () => hashedBySystem.set(sys, key);
    }
    const fp = hs && "fp" in hs && id.source === "header" ? hs.fp : undefined;
    return { history, id, onMain, fp };
  }

  /**
   * Judges a prepared request (inside its session's queue), hands the outcome
   * to `deliver`, then, off the answer's path, scans the body for the next
   * request's fast path.
   */
  async function judgeNow(
    request: WireRequest,
    p: Extract<Prepared, { history: WireHistory }>,
    deliver: (o: GuardOutcome) => void,
  ): Promise<void> {
    let out: GuardOutcome;
    try {
      out = await judge(request, p.history, p.id, p.onMain);
      const failed = sessions.get(p.id.key)?.journal?.failed;
      if (failed && !out.note) out = { ...out, note: `state not written: ${failed}` };
    } catch (e) {
      out = {
        body: request.body,
        changed: false,
        wire: p.history.wire,
        session: p.id.key,
        note: `not judged: ${oneLine(e)}`,
      };
    }
    deliver(out);
    const s = sessions.get(p.id.key);
    if (!s) return;
    if (p.fp !== undefined) {
      s.fp = p.fp;
      headerKeys.set(p.fp, s.key);
    }
    if (s.toScan) {
      await offPath();
      const t = s.toScan;
      s.toScan = undefined;
      if (t) s.fast = fastInfoOf(t.body, t.history, t.known);
    }
  }

  /** What a request answered on the fast path comes to once judged, when there is something to tell. */
  function late(out: GuardOutcome): void {
    if (!out.verdict && !out.note && !out.changed) return;
    const told: GuardOutcome = { ...out, deferred: true };
    if (out.changed)
      told.note = `${out.note ? `${out.note}; ` : ""}judged after the request went out untouched: the repair goes into the next request`;
    try {
      options.onLate?.(told);
    } catch {
      // the host's logger failing is not the request's business
    }
  }

  async function handle(request: WireRequest): Promise<GuardOutcome> {
    const route = routeOf(request.method, request.url);
    if ("passthrough" in route) return { body: request.body, changed: false, note: route.passthrough };
    const wire = route.wire;
    const hs = headerSession(wire, request.headers);
    const known = hs === undefined ? undefined : "key" in hs ? hs.key : headerKeys.get(hs.fp);
    let answer!: (o: GuardOutcome) => void;
    const answered = new Promise<GuardOutcome>((r) => (answer = r));
    const failed = (e: unknown): void =>
      answer({ body: request.body, changed: false, wire, note: `not judged: ${oneLine(e)}` });

    if (known === undefined || !sessions.has(known)) {
      // A new session, or one keyed by its body: the synchronous path.
      const p = prepare(request, wire, hs);
      if ("outcome" in p) return p.outcome;
      serial(p.id.key, () => judgeNow(request, p, answer)).catch(failed);
      return answered;
    }

    // A session known from its headers: decided in its queue, after its earlier requests' work.
    serial(known, async () => {
      const s = sessions.get(known);
      const last = s?.fast !== undefined && !(s.splice && mode === "repair") ? s.fast : undefined;
      const ext = last && fastExtension(last, request.body);
      const deliver = ext ? late : answer;
      if (ext) {
        answer({ body: request.body, changed: false, wire, session: known, deferred: true });
        await afterAnswer(request);
      }
      const p = prepare(request, wire, hs, last && ext ? { last, ext } : undefined);
      if ("outcome" in p) return deliver(p.outcome);
      if (p.id.key === known) return judgeNow(request, p, deliver);
      // Another session after all (never waited for here: queues do not wait on each other).
      serial(p.id.key, () => judgeNow(request, p, deliver)).catch(failed);
    }).catch(failed);
    return answered;
  }

  function systemSeed(h: WireHistory): string {
    return `${h.wire}\u0000${h.items
      .filter((i) => i.message.role === "system")
      .map((i) => i.key)
      .join("\u0000")}`;
  }

  async function judge(
    request: WireRequest,
    history: WireHistory,
    id: SessionIdentity,
    onMain: () => void,
  ): Promise<GuardOutcome> {
    const wire = history.wire;
    const base = { wire, session: id.key };
    const same = (note?: string): GuardOutcome => ({
      body: request.body,
      changed: false,
      ...base,
      ...(note ? { note } : {}),
    });

    const session = await loadSession(id, wire);
    const items = history.items;
    if (!session) {
      const s: Session = {
        key: id.key,
        agent: id.agent,
        wire,
        agent_items: items,
        conv_ids: conversation(items).map(() => undefined),
        had_tools: hasTools(history.doc),
      };
      if (options.stateDir) {
        s.journal = new SessionJournal(options.stateDir, id.key);
        const ids = s.journal.start(options.stateDir, id.key, id.agent, wire, items);
        s.conv_ids = items.flatMap((it, i) => (it.message.role === "system" ? [] : [ids[i]]));
      }
      s.toScan = { body: request.body, history, known: extended.get(history) };
      remember(s);
      onMain();
      return same();
    }
    if (session.agent === "unknown" && id.agent !== "unknown") session.agent = id.agent;

    const lastConv = conversation(session.agent_items);
    const nextConv = conversation(items);
    const rel = relation(lastConv, nextConv, session.had_tools, hasTools(history.doc));
    if (rel.kind !== "side") onMain();
    switch (rel.kind) {
      case "side":
        return same(`not the session's history (${rel.why}); passed through`);
      case "extension": {
        const added = nextConv.slice(lastConv.length);
        const ids = session.journal ? session.journal.append(added) : added.map(() => undefined);
        session.conv_ids = [...session.conv_ids.slice(0, lastConv.length), ...ids];
        session.agent_items = items;
        mainIs(session, request, history);
        session.had_tools = hasTools(history.doc);
        return applySplice(session, history, same);
      }
      case "rewrite": {
        const ids = session.conv_ids;
        const parent = ids[rel.common - 1];
        if (parent !== undefined || !session.journal) {
          const added = nextConv.slice(rel.common);
          const newIds = session.journal ? session.journal.append(added, parent) : added.map(() => undefined);
          session.conv_ids = [...ids.slice(0, rel.common), ...newIds];
          session.agent_items = items;
          mainIs(session, request, history);
          session.had_tools = hasTools(history.doc);
          const out = applySplice(session, history, same);
          return {
            ...out,
            note: out.note ?? "history rewritten by the agent (no new summary): not a compaction",
          };
        }
        // A rewrite inside the last compaction's replacement: judged as a compaction.
        mainIs(session, request, history);
        return compaction(session, history, id, same);
      }
      case "compaction":
        mainIs(session, request, history);
        return compaction(session, history, id, same);
    }
  }

  /** The request is now the session's last main history: the fast path waits for its bytes to be scanned. */
  function mainIs(s: Session, request: WireRequest, history: WireHistory): void {
    s.fast = undefined;
    s.toScan = { body: request.body, history, known: extended.get(history) };
  }

  /** The session's splice in this request (an extension of the repaired history), or the request untouched. */
  function applySplice(s: Session, h: WireHistory, same: (note?: string) => GuardOutcome): GuardOutcome {
    if (!s.splice || mode !== "repair") return same();
    const at = h.items.findIndex((i) => i.key === s.splice!.checkpointKey);
    if (at < 0) {
      s.splice = undefined;
      return same("the summary the repair followed is gone; repair dropped");
    }
    const doc = insertAfter(h, at, s.splice.raw);
    const bad = wireCheck(h.wire, doc[h.listKey] as unknown[]);
    if (bad) return same(`repair not sent: ${bad}`);
    return { ...same(), body: Buffer.from(JSON.stringify(doc), "utf8"), changed: true };
  }

  async function compaction(
    s: Session,
    h: WireHistory,
    id: SessionIdentity,
    same: (note?: string) => GuardOutcome,
  ): Promise<GuardOutcome> {
    const before = sentOf(s);
    const afterAll = h.items;
    const newTurns = trailingNewTurns(before, afterAll);
    const after = afterAll.slice(0, afterAll.length - newTurns);
    const beforeMsgs = messagesOf(before);
    const afterMsgs = messagesOf(after);
    const v = validateSurvivalContract(beforeMsgs, afterMsgs, { path: "summary" });
    const agent = s.agent !== "unknown" ? s.agent : id.agent;
    const verdict: GuardVerdict = {
      session: s.key,
      agent,
      wire: h.wire,
      at: new Date().toISOString(),
      kept: v.valid,
      reason: v.valid ? null : (v.reason ?? "violation"),
      losses: protectedLosses(beforeMsgs, afterMsgs),
      repaired: false,
      repair_refused: null,
      provider_edits:
        h.wire === "anthropic-messages"
          ? providerEdits(h.doc, beforeMsgs, messagesOf(afterAll.slice(after.length)))
          : null,
      messages_before: before.length,
      messages_after: after.length,
    };

    let out: GuardOutcome = { ...same(), verdict };
    let splice: Splice | undefined;
    let spliced: HistoryItem[] | undefined;
    let spliceFrom = 0;
    if (!v.valid && mode === "repair") {
      // The live state is read here, once, at the compaction: the splice is then the same bytes in every later request.
      const restated: Restated = { anchors: options.anchors };
      if (options.workspace !== undefined)
        restated.liveState = liveStateSection(await readLiveState(options.workspace));
      const r = repair(h, before, after, newTurns, restated);
      if ("refused" in r) verdict.repair_refused = r.refused;
      else {
        verdict.repaired = true;
        splice = r.splice;
        spliced = r.spliced;
        spliceFrom = r.from;
        out = { ...out, body: r.body, changed: true };
      }
    }

    if (s.journal) {
      const summaryAt = lastSummary(after);
      const summary = summaryAt >= 0 ? allText(after[summaryAt]!.message) : "";
      const model = typeof h.doc.model === "string" ? h.doc.model : "unknown";
      s.journal.compaction(after, {
        summary,
        tokens_before: tokensOf(beforeMsgs),
        tokens_after: tokensOf(afterMsgs),
        model,
        path: "summary",
        coverage: null,
        trigger: "auto",
        source_agent: agent,
        guard_verdict: { kept: verdict.kept, reason: verdict.reason, losses: verdict.losses },
      });
      if (splice && spliced) {
        const replacement = spliced.slice(0, spliced.length - newTurns);
        s.journal.compaction(replacement, {
          summary,
          tokens_before: tokensOf(afterMsgs),
          tokens_after: tokensOf(messagesOf(replacement)),
          model,
          path: "summary",
          coverage: null,
          trigger: "auto",
          source_agent: "compact-safe-guard",
          guard: {
            checkpoint_key: splice.checkpointKey,
            splice_from: spliceFrom,
            splice_count: splice.items.length,
          },
        });
      }
    }
    const turns = afterAll.slice(afterAll.length - newTurns);
    const ids = s.journal ? s.journal.append(turns) : turns.map(() => undefined);
    s.agent_items = afterAll;
    s.conv_ids = [...conversation(after).map(() => undefined), ...ids];
    s.splice = splice;
    s.had_tools = hasTools(h.doc);
    if (s.agent === "unknown") s.agent = agent;
    return out;
  }

  /** The spliced body, checked; or why it is not sent. */
  function repair(
    h: WireHistory,
    before: readonly HistoryItem[],
    after: readonly HistoryItem[],
    newTurns: number,
    restated: Restated,
  ): { body: Buffer; splice: Splice; spliced: HistoryItem[]; from: number } | { refused: string } {
    const at = lastSummary(after);
    if (at < 0) return { refused: "no summary in the request to place the repair after" };
    const raw = buildSplice(h.wire, before, after, restated);
    if (raw.length === 0) return { refused: "nothing of the last round left to splice" };
    const doc = insertAfter(h, at, raw);
    const list = doc[h.listKey] as unknown[];
    const bad = wireCheck(h.wire, list);
    if (bad) return { refused: bad };
    const h2 = readWire(h.wire, doc);
    // The inserted elements, in the new list.
    const lastPart = h.items[at]!.parts[h.items[at]!.parts.length - 1]!;
    const start = lastPart.element + 1;
    const end = start + raw.length;
    const inside = (it: HistoryItem): boolean =>
      it.parts.length > 0 && it.parts.every((p) => p.element >= start && p.element < end);
    const straddles = h2.items.some(
      (it) => it.parts.some((p) => p.element >= start && p.element < end) && !inside(it),
    );
    if (straddles) return { refused: "the repair would merge with the messages around it" };
    const from = h2.items.findIndex(inside);
    const spliceItems = h2.items.filter(inside);
    const spliced = h2.items;
    const judged = messagesOf(spliced.slice(0, spliced.length - newTurns));
    const v = validateSurvivalContract(messagesOf(before), judged, { path: "summary" });
    if (!v.valid)
      return { refused: `the spliced request would not keep the contract: ${v.reason ?? "violation"}` };
    const checkpointKey = after[at]!.key;
    return {
      body: Buffer.from(JSON.stringify(doc), "utf8"),
      splice: { checkpointKey, raw, items: spliceItems },
      spliced,
      from,
    };
  }

  return {
    handle: async (request) => {
      try {
        await followedRead;
        return await handle(request);
      } catch (e) {
        return { body: request.body, changed: false, note: `not judged: ${oneLine(e)}` };
      }
    },
    async idle(): Promise<void> {
      while (locks.size > 0) await Promise.all([...locks.values()]);
      // The journal writes queued by that work too: a write that failed is then known to the next request.
      await Promise.all([...sessions.values()].map((s) => s.journal?.flush()));
    },
    async close(): Promise<void> {
      while (locks.size > 0) await Promise.all([...locks.values()]);
      await Promise.all([...sessions.values()].map((s) => s.journal?.flush()));
      await hashedBySystem.flush();
    },
  };
}
