/**
 * The guard's core: for every request the proxy hands it, read the wire,
 * find the agent's session, recognise the agent's compaction, judge it with
 * the survival contract, and (mode `repair`) splice back what it lost into
 * this and every later request of the session, until the agent's next
 * compaction. Anything it cannot read, or a splice that would not keep the
 * contract or that the provider would refuse, goes out untouched with a
 * one-line note. It never throws out of `handle`.
 *
 * This file routes each request (the fast path included); its parts are the
 * sessions held (`held-sessions.ts`), the reading of a request
 * (`read-request.ts`), its judging (`judge.ts`), a compaction's verdict and
 * record (`compaction.ts`), the repair (`repair.ts`), and which session a
 * request provably continues (`proofs.ts`).
 */
import type { GuardCore, GuardCoreOptions, GuardOutcome, WireRequest } from "./types.js";
import type { WireHistory } from "./reading/history.js";
import { routeOf } from "./reading/wires.js";
import { headerSession, sessionFileName } from "./sessions/session.js";
import { SUMMARIZATION_BYTES } from "./reading/detect.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fastExtension, fastInfoOf } from "./reading/extend.js";
import { resolveHashed, SessionIndex, summarizationOutcome } from "./sessions/proofs.js";
import { HeldSessions } from "./sessions/held-sessions.js";
import { compactRequest, prepare, type Prepared } from "./reading/read-request.js";
import { judge } from "./judging/judge.js";
import { oneLine, type CoreContext } from "./context.js";
import { Background } from "./background.js";

/** Lets the caller of an answered request go on (the request is sent upstream) before more work is done. */
const offPath = (): Promise<void> => new Promise((r) => setImmediate(r));

/** The longest the work left for after an answer waits for that answer to end. */
const AFTER_ANSWER_MAX_MS = 1_000;

/** The longest that work then waits for a moment with no request on its way (see `background.ts`). */
const QUIET_MAX_WAIT_MS = 250;

/** Resolves once the answer to `request` has gone out (see `WireRequest.answered`), at most AFTER_ANSWER_MAX_MS. */
function afterAnswer(request: WireRequest): Promise<void> {
  if (!request.answered) return offPath();
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<void>((r) => (timer = setTimeout(r, AFTER_ANSWER_MAX_MS)));
  return Promise.race([request.answered.catch(() => undefined), cap]).finally(() => clearTimeout(timer));
}

/**
 * Judges a prepared request (inside its session's queue), hands the outcome
 * to `deliver`, then, off the answer's path, scans the body for the next
 * request's fast path.
 */
async function judgeNow(
  ctx: CoreContext,
  request: WireRequest,
  p: Extract<Prepared, { history: WireHistory }>,
  deliver: (o: GuardOutcome) => void,
): Promise<void> {
  const { sessions, headerKeys } = ctx.held;
  let out: GuardOutcome;
  try {
    out = await judge(ctx, request, p.history, p.id);
    const failed = sessions.get(p.id.key)?.journal?.failed;
    if (failed && !out.note) out = { ...out, note: `state not written: ${failed}` };
  } catch (e) {
    out = {
      body: request.body,
      changed: false,
      wire: p.history.wire,
      session: p.id.key,
      note: `not judged: ${oneLine(e)}`,
      notJudged: true,
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
    const f = t && fastInfoOf(t.body, t.history, t.known);
    // A partial history is never held (its items before the ones read are stubs).
    s.fast = f && t.history.partial ? { ...f, history: undefined } : f;
  }
}

/** What a request answered on the fast path comes to once judged, when there is something to tell. */
function late(options: GuardCoreOptions, out: GuardOutcome): void {
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

/**
 * One request: a new session, or one keyed by its body, is read at once
 * and judged in its queue; a session known from its headers is decided in
 * its queue, and a request that only extends its last history (the fast
 * path) goes out untouched at once and is judged after its answer.
 */
async function handle(ctx: CoreContext, request: WireRequest): Promise<GuardOutcome> {
  const { held, mode } = ctx;
  const route = routeOf(request.method, request.url);
  if ("passthrough" in route) return { body: request.body, changed: false, note: route.passthrough };
  const wire = route.wire;
  if (route.compactRequest) {
    const c = compactRequest(ctx, request);
    return c.summarizing ? summarizationOutcome(ctx, c.outcome, c.summarizing) : c.outcome;
  }
  const hs = headerSession(wire, request.headers);
  const known = hs === undefined ? undefined : "key" in hs ? hs.key : held.headerKeys.get(hs.fp);
  let answer!: (o: GuardOutcome) => void;
  const answered = new Promise<GuardOutcome>((r) => (answer = r));
  const failed = (e: unknown): void =>
    answer({ body: request.body, changed: false, wire, note: `not judged: ${oneLine(e)}`, notJudged: true });

  if (hs !== undefined && "key" in hs && newForSure(ctx, hs.key, request.body)) {
    // A session its header names that the guard never held: nothing of it can be repaired, so its first
    // request goes out untouched at once, and is read after its answer (in the session's queue, before
    // its next request is decided), as the fast path does.
    const key = hs.key;
    answer({ body: request.body, changed: false, wire, session: key, deferred: true });
    const told = (o: GuardOutcome): void => late(ctx.options, ctx.tally(request, o));
    held
      .serial(key, async () => {
        await afterAnswer(request);
        const release = await ctx.background.turn(key);
        try {
          const read = prepare(ctx, request, wire, hs);
          if ("outcome" in read) return told(read.outcome);
          await judgeNow(ctx, request, read, told);
        } finally {
          release();
        }
      })
      .catch((e: unknown) =>
        told({
          body: request.body,
          changed: false,
          wire,
          note: `not judged: ${oneLine(e)}`,
          notJudged: true,
        }),
      );
    return answered;
  }

  if (known === undefined || (!held.sessions.has(known) && !held.queued(known))) {
    // A new session, or one keyed by its body: the synchronous path.
    const read = prepare(ctx, request, wire, hs);
    if ("outcome" in read)
      return read.summarizing ? summarizationOutcome(ctx, read.outcome, read.summarizing) : read.outcome;
    // A session keyed by a hash of its first messages is found by what it proves (see `proofs.ts`).
    const p = { ...read, id: await resolveHashed(ctx, read.history, read.id) };
    held.serial(p.id.key, () => judgeNow(ctx, request, p, answer)).catch(failed);
    return answered;
  }

  // A session known from its headers: decided in its queue, after its earlier requests' work (which
  // goes first now, without waiting for a quiet moment).
  ctx.background.hurry(known);
  held
    .serial(known, async () => {
      const s = held.sessions.get(known);
      const last = s?.fast !== undefined && !(s.splice && mode === "repair") ? s.fast : undefined;
      const ext = last && fastExtension(last, request.body);
      const deliver = ext ? (o: GuardOutcome) => late(ctx.options, o) : answer;
      let release: (() => void) | undefined;
      if (ext) {
        answer({ body: request.body, changed: false, wire, session: known, deferred: true });
        await afterAnswer(request);
        release = await ctx.background.turn(known);
      }
      try {
        const p = prepare(
          ctx,
          request,
          wire,
          hs,
          last && ext ? { last, heads: s!.hist.heads, ext } : undefined,
        );
        if ("outcome" in p)
          return deliver(
            p.summarizing ? await summarizationOutcome(ctx, p.outcome, p.summarizing) : p.outcome,
          );
        if (p.id.key === known) return await judgeNow(ctx, request, p, deliver);
        // Another session after all (never waited for here: queues do not wait on each other).
        held.serial(p.id.key, () => judgeNow(ctx, request, p, deliver)).catch(failed);
      } finally {
        release?.();
      }
    })
    .catch(failed);
  return answered;
}

/**
 * Whether a request whose header names session `key` is surely a new
 * session's: not held, no journal of it in the state folder, and not an
 * agent's summarization request (whose answer the guard may give or relay).
 */
function newForSure(ctx: CoreContext, key: string, body: Buffer): boolean {
  if (ctx.held.sessions.has(key) || ctx.held.queued(key)) return false;
  const dir = ctx.options.stateDir;
  if (dir !== undefined && existsSync(join(dir, sessionFileName(key)))) return false;
  return !SUMMARIZATION_BYTES.some((p) => body.indexOf(p, 0, "utf8") >= 0);
}

/** Sessions whose unreadable request was logged, at most this many remembered (then forgotten all at once). */
const MAX_LOGGED = 10_000;

/**
 * The note of a request that could not be read, given once per session (by
 * its header id, else per wire): later ones go untouched without a note, and
 * are counted.
 */
function oncePerSession(logged: Set<string>, request: WireRequest, out: GuardOutcome): GuardOutcome {
  const hs = out.wire === undefined ? undefined : headerSession(out.wire, request.headers);
  const key = out.session ?? (hs === undefined ? `wire:${out.wire ?? ""}` : "key" in hs ? hs.key : hs.fp);
  if (logged.has(key)) {
    const { note: _note, ...quiet } = out;
    return quiet;
  }
  if (logged.size >= MAX_LOGGED) logged.clear();
  logged.add(key);
  return { ...out, note: `${out.note ?? "not judged"} (said once for this session; later ones are counted)` };
}

export function createGuardCore(options: GuardCoreOptions = {}): GuardCore {
  const index = new SessionIndex(options.stateDir);
  const indexRead = index.load();
  const counts = { requests: 0, notJudged: 0 };
  const logged = new Set<string>();
  const ctx: CoreContext = {
    options,
    mode: options.mode ?? "repair",
    held: new HeldSessions(options),
    index,
    extended: new WeakMap(),
    background: new Background(QUIET_MAX_WAIT_MS),
    tally: (request, out) => {
      if (!out.notJudged) return out;
      counts.notJudged++;
      return oncePerSession(logged, request, out);
    },
  };
  const { held } = ctx;

  return {
    counts: () => ({ ...counts }),
    handle: async (request) => {
      counts.requests++;
      ctx.background.track(request.answered);
      try {
        await indexRead;
        return ctx.tally(request, await handle(ctx, request));
      } catch (e) {
        return { body: request.body, changed: false, note: `not judged: ${oneLine(e)}`, notJudged: true };
      }
    },
    async idle(): Promise<void> {
      await held.drain();
      // The journal writes queued by that work too: a write that failed is then known to the next request.
      await held.flushJournals();
      await index.flush();
    },
    async close(): Promise<void> {
      await held.drain();
      await held.flushJournals();
      await index.flush();
    },
  };
}
