/**
 * The guard core's judging of one request read (inside its session's
 * queue): a new session is started; otherwise what the request is to the
 * session's last history decides. A side request passes through; an
 * extension or a rewrite without a summary carries the session's splice
 * (mode `repair`); a compaction is judged (`compaction.ts`).
 */
import type { GuardOutcome, WireRequest } from "../types.js";
import type { WireHistory } from "../reading/history.js";
import type { SessionIdentity } from "../sessions/session.js";
import { commonPrefix, conversation, hasTools } from "../reading/detect.js";
import { insertAfter, wireCheck } from "./splice.js";
import { SessionJournal } from "../sessions/state.js";
import { heldHistory, type Session } from "../sessions/held-sessions.js";
import { compaction } from "./compaction.js";
import type { CoreContext, Same } from "../context.js";
import { chooseBranch, keepCurrent } from "../sessions/proofs.js";

export async function judge(
  ctx: CoreContext,
  request: WireRequest,
  history: WireHistory,
  id: SessionIdentity,
): Promise<GuardOutcome> {
  const wire = history.wire;
  const base = { wire, session: id.key };
  const same: Same = (note) => ({
    body: request.body,
    changed: false,
    ...base,
    ...(note ? { note } : {}),
  });

  const session = await ctx.held.load(id, wire);
  if (!session) return startSession(ctx, request, history, id, same);
  if (session.agent === "unknown" && id.agent !== "unknown") session.agent = id.agent;

  const items = history.items;
  // The branch it continues (made the session's current one), or none: a compaction that proves none.
  const rel = chooseBranch(ctx, session, history);
  if (rel === "unproven") return newBranch(ctx, session, request, history, same);
  const lastConv = conversation(session.hist.heads);
  const nextConv = conversation(items);
  switch (rel.kind) {
    case "side":
      return same(`not the session's history (${rel.why}); passed through`);
    case "extension": {
      const added = nextConv.slice(lastConv.length);
      const ids = session.journal ? session.journal.append(added) : added.map(() => undefined);
      session.conv_ids = [...session.conv_ids.slice(0, lastConv.length), ...ids];
      session.hist = heldHistory(items, request.body, wire, history.partial);
      mainIs(ctx, session, request, history);
      session.had_tools = hasTools(history.doc);
      return applySplice(ctx, session, history, same);
    }
    case "rewrite": {
      const ids = session.conv_ids;
      const parent = ids[rel.common - 1];
      if (parent !== undefined || !session.journal) {
        // A rewind, or a second client on the session's id: the history before it is kept beside.
        keepCurrent(session);
        const added = nextConv.slice(rel.common);
        const newIds = session.journal ? session.journal.append(added, parent) : added.map(() => undefined);
        session.conv_ids = [...ids.slice(0, rel.common), ...newIds];
        session.hist = heldHistory(items, request.body, wire, history.partial);
        mainIs(ctx, session, request, history);
        session.had_tools = hasTools(history.doc);
        const out = applySplice(ctx, session, history, same);
        return {
          ...out,
          note: out.note ?? "history rewritten by the agent (no new summary): not a compaction",
        };
      }
      // A rewrite inside the last compaction's replacement: judged as a compaction.
      mainIs(ctx, session, request, history);
      return compaction(ctx, session, history, id, same, request.body);
    }
    case "compaction":
      mainIs(ctx, session, request, history);
      return compaction(ctx, session, history, id, same, request.body);
  }
}

/** The first request of a session: its history is held (and journaled, with a state folder), the request untouched. */
function startSession(
  ctx: CoreContext,
  request: WireRequest,
  history: WireHistory,
  id: SessionIdentity,
  same: Same,
): GuardOutcome {
  const { options } = ctx;
  const wire = history.wire;
  const items = history.items;
  const s: Session = {
    key: id.key,
    agent: id.agent,
    wire,
    hist: heldHistory(items, request.body, wire),
    conv_ids: conversation(items).map(() => undefined),
    had_tools: hasTools(history.doc),
  };
  if (options.stateDir) {
    s.journal = new SessionJournal(options.stateDir, id.key);
    const ids = s.journal.start(options.stateDir, id.key, id.agent, wire, items);
    s.conv_ids = items.flatMap((it, i) => (it.message.role === "system" ? [] : [ids[i]]));
  }
  s.toScan = { body: request.body, history, known: ctx.extended.get(history) };
  ctx.held.remember(s);
  if (id.source === "hash") ctx.index.noteHashed(id.key, wire);
  return same();
}

/**
 * A compaction that proves none of the session's branches (see `proofs.ts`):
 * a new branch of the session, held and journaled (under the journal's
 * header), not judged, the request untouched; the other branches kept beside.
 */
function newBranch(
  ctx: CoreContext,
  s: Session,
  request: WireRequest,
  history: WireHistory,
  same: Same,
): GuardOutcome {
  keepCurrent(s);
  const items = history.items;
  s.hist = heldHistory(items, request.body, history.wire);
  s.splice = undefined;
  s.had_tools = hasTools(history.doc);
  if (s.journal) {
    const ids = s.journal.append(items, s.journal.rootId);
    s.conv_ids = items.flatMap((it, i) => (it.message.role === "system" ? [] : [ids[i]]));
  } else s.conv_ids = conversation(items).map(() => undefined);
  mainIs(ctx, s, request, history);
  return same(
    "a compaction that proves no history of the session (no summary relayed to it, no run of its last history): a new branch, not judged",
  );
}

/** The request is now the session's last main history: the fast path waits for its bytes to be scanned. */
function mainIs(ctx: CoreContext, s: Session, request: WireRequest, history: WireHistory): void {
  s.fast = undefined;
  s.toScan = { body: request.body, history, known: ctx.extended.get(history) };
}

/** The session's splice in this request (an extension of the repaired history), or the request untouched. */
function applySplice(ctx: CoreContext, s: Session, h: WireHistory, same: Same): GuardOutcome {
  if (!s.splice || ctx.mode !== "repair") return same();
  const at = h.items.findIndex((i) => i.key === s.splice!.checkpointKey);
  if (at < 0) {
    s.splice = undefined;
    return same("the summary the repair followed is gone; repair dropped");
  }
  const { doc } = insertAfter(h, at, s.splice);
  const bad = wireCheck(h.wire, doc[h.listKey] as unknown[]);
  if (bad) return same(`repair not sent: ${bad}`);
  return { ...same(), body: Buffer.from(JSON.stringify(doc), "utf8"), changed: true };
}

/**
 * The agent's compaction request carries the session's whole history before
 * the compaction (the model's answer to the last turn, the newest call and
 * its result included), which the last ordinary request may lack: where it
 * extends the session's last history, it becomes that history, so that the
 * compaction that follows is judged (and repaired) against it. `upTo` is
 * where the history ends in `history.items` (the summarization prompt and
 * what follows it are not the session's). Returns how many conversation
 * items it added.
 */
export async function absorbHistory(
  ctx: CoreContext,
  history: WireHistory,
  id: SessionIdentity,
  upTo: number,
  body: Buffer,
): Promise<number> {
  const session = await ctx.held.load(id, history.wire);
  if (!session) return 0;
  const items = history.items.slice(0, upTo);
  const lastConv = conversation(session.hist.heads);
  const nextConv = conversation(items);
  if (commonPrefix(lastConv, nextConv) !== lastConv.length) return 0;
  const added = nextConv.slice(lastConv.length);
  if (added.length === 0) return 0;
  const ids = session.journal ? session.journal.append(added) : added.map(() => undefined);
  session.conv_ids = [...session.conv_ids.slice(0, lastConv.length), ...ids];
  session.hist = heldHistory(items, body, history.wire);
  // The next request is compared with this history, not the last body's bytes.
  session.fast = undefined;
  session.toScan = undefined;
  return added.length;
}
