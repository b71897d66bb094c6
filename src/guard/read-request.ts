/**
 * The guard core's reading of one request before it is judged: the body
 * parsed (or read from the session's last one, in proportion to what it
 * adds), the session found, and the agent's own summarization request
 * recognised (answered, with `summarizer: "extractive"`, or passed through).
 */
import type { GuardOutcome, GuardWire, WireRequest } from "./types.js";
import type { HeldHead, WireHistory } from "./history.js";
import { listKeyOf, parseBody, readWire, readWork } from "./wires.js";
import { sessionOf, type headerSession, type SessionIdentity } from "./session.js";
import { extendHistory, leanExtension, type Extension, type FastInfo } from "./extend.js";
import { commonPrefix, conversation, summarizationRequestOf } from "./detect.js";
import { extractiveAnswer } from "./answer.js";
import { oneLine, type CoreContext } from "./context.js";
import { absorbHistory } from "./judge.js";
import { isText } from "../model/blocks.js";
import type { Summarizing } from "./proofs.js";

/** A request read: its outcome already (not to be judged; an agent's summarization request with what finding its session takes), or what judging it takes. */
export type Prepared =
  | { outcome: GuardOutcome; summarizing?: Summarizing }
  | { history: WireHistory; id: SessionIdentity; fp?: string };

/**
 * The history a summarization request carries before its prompt (its last
 * user message, when that message holds the prompt's text alone), read into
 * the session after the session's earlier requests (`absorbHistory`).
 */
function absorbLater(ctx: CoreContext, history: WireHistory, id: SessionIdentity, body: Buffer): void {
  const items = history.items;
  let at = items.length - 1;
  if (summarizationRequestOf(items) === undefined) {
    // A compaction request without a prompt (Codex's /responses/compact): the whole history.
    ctx.held.serial(id.key, () => absorbHistory(ctx, history, id, items.length, body)).catch(() => undefined);
    return;
  }
  while (at >= 0 && items[at]!.message.role !== "user") at--;
  if (at < 0 || !items[at]!.message.content.every(isText)) return;
  ctx.held.serial(id.key, () => absorbHistory(ctx, history, id, at, body)).catch(() => undefined);
}

/**
 * Codex's remote compaction request (`/responses/compact`): passed through
 * untouched (the provider answers it with its own `compaction` item), its
 * history read into the session as the history before the compaction.
 */
export function compactRequest(ctx: CoreContext, request: WireRequest): GuardOutcome {
  const wire = "openai-responses";
  const untouched = { body: request.body, changed: false, wire } as const;
  let history: WireHistory;
  try {
    history = readWire(wire, parseBody(request.body, listKeyOf(wire)));
  } catch (e) {
    return { ...untouched, note: `compaction request not read: ${oneLine(e)}` };
  }
  const id = sessionOf(request.headers, history);
  absorbLater(ctx, history, id, request.body);
  return {
    ...untouched,
    session: id.key,
    note: "the agent's remote compaction request (/responses/compact); passed through, its history read",
  };
}

/** What a request the fast path let through is read from: the session's last body, its heads, and what the bytes showed. */
export interface FromLast {
  last: FastInfo;
  heads: readonly HeldHead[];
  ext: Extension;
}

/**
 * The history of a request the fast path let through, read from the
 * session's last body (`extendHistory` where its parsed history is held,
 * else `leanExtension`, kept only when it extends the heads held); undefined
 * when it is to be read whole.
 */
function fromLast(ctx: CoreContext, body: Buffer, from: FromLast | undefined): WireHistory | undefined {
  if (!from || ctx.options.readWhole) return undefined;
  const { last, heads, ext } = from;
  const read = last.history
    ? extendHistory({ ...last, history: last.history }, body, ext)
    : leanExtension(last, heads, body, ext);
  if (!read) return undefined;
  if (read.history.partial) {
    const held = conversation(heads);
    const now = conversation(read.history.items);
    if (commonPrefix(held, now) !== held.length) return undefined;
    readWork.leanReads++;
  }
  ctx.extended.set(read.history, { layout: read.layout, noMarkerBefore: last.tailFrom });
  return read.history;
}

/**
 * Reads the request (parse, session, summarization request): the
 * synchronous path's work before judging. With `from` (a request the fast
 * path let through), the body is read from the session's last one, in
 * proportion to what it adds; whole when that does not apply.
 */
export function prepare(
  ctx: CoreContext,
  request: WireRequest,
  wire: GuardWire,
  hs: ReturnType<typeof headerSession>,
  from?: FromLast,
): Prepared {
  const untouched = (note: string, extra: Partial<GuardOutcome> = {}): GuardOutcome => ({
    body: request.body,
    changed: false,
    note,
    ...extra,
  });
  let history: WireHistory;
  try {
    history = fromLast(ctx, request.body, from) ?? readWire(wire, parseBody(request.body, listKeyOf(wire)));
  } catch (e) {
    return { outcome: untouched(`not judged: ${oneLine(e)}`, { wire, notJudged: true }) };
  }
  const id = sessionOf(request.headers, history);
  // A partial history is an extension on its bytes, with no summarization request in what it adds.
  const summarizer = history.partial ? undefined : summarizationRequestOf(history.items);
  if (summarizer) absorbLater(ctx, history, id, request.body);
  if (summarizer && ctx.options.summarizer === "extractive") {
    try {
      const a = extractiveAnswer(history, summarizer);
      return {
        outcome: untouched(
          `answered ${summarizer}'s summarization request itself (extractive, ${a.text.length} chars)`,
          { wire, session: id.key, respond: a.response },
        ),
        summarizing: { history, id, agent: summarizer, answered: a.text },
      };
    } catch (e) {
      return {
        outcome: untouched(
          `the agent's own summarization request (${summarizer}); not answered (${oneLine(e)}), passed through`,
          { wire, session: id.key },
        ),
        summarizing: { history, id, agent: summarizer },
      };
    }
  }
  if (summarizer)
    return {
      outcome: untouched(
        `the agent's own summarization request (${summarizer}); passed through, not its history`,
        { wire, session: id.key },
      ),
      summarizing: { history, id, agent: summarizer },
    };
  const fp = hs && "fp" in hs && id.source === "header" ? hs.fp : undefined;
  return { history, id, fp };
}
