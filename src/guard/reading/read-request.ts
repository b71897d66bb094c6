/**
 * The guard core's reading of one request before it is judged: the body
 * parsed (or read from the session's last one, in proportion to what it
 * adds), the session found, and the agent's own summarization request
 * recognised (answered, with `summarizer: "extractive"`, or passed through).
 */
import type { GuardOutcome, GuardWire, WireRequest } from "../types.js";
import type { HeldHead, WireHistory } from "./history.js";
import { listKeyOf, parseBody, readWire, readWork } from "./wires.js";
import { sessionOf, type headerSession, type SessionIdentity } from "../sessions/session.js";
import { extendHistory, leanExtension, type Extension, type FastInfo } from "./extend.js";
import { commonPrefix, conversation, summarizationRequestOf } from "./detect.js";
import { extractiveAnswer } from "../judging/answer.js";
import { oneLine, type CoreContext } from "../context.js";
import { absorbHistory } from "../judging/judge.js";
import { isText } from "../../model/blocks.js";
import type { Summarizing } from "../sessions/proofs.js";

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
    // A compaction request without a prompt (a provider's compaction): the whole history.
    ctx.held.serial(id.key, () => absorbHistory(ctx, history, id, items.length, body)).catch(() => undefined);
    return;
  }
  while (at >= 0 && items[at]!.message.role !== "user") at--;
  if (at < 0 || !items[at]!.message.content.every(isText)) return;
  ctx.held.serial(id.key, () => absorbHistory(ctx, history, id, at, body)).catch(() => undefined);
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * What asks the provider, in a request's body, to compact the history the
 * request carries and to answer with its own summary alone: Codex's remote
 * compaction (its built-in `openai` provider) sent as an ordinary Responses
 * request whose last input item is `{"type":"compaction_trigger"}`, and
 * Anthropic's on-demand compaction (a Messages request with the `compaction`
 * parameter). Codex's `POST …/responses/compact` is known by its path.
 */
export function providerCompactionAsk(wire: GuardWire, doc: Record<string, unknown>): string | undefined {
  if (wire === "openai-responses") {
    const input = doc.input;
    const last = Array.isArray(input) ? input[input.length - 1] : undefined;
    return isRecord(last) && last.type === "compaction_trigger" ? "compaction_trigger" : undefined;
  }
  if (wire === "anthropic-messages") return isRecord(doc.compaction) ? "the compaction parameter" : undefined;
  return undefined;
}

/**
 * A request that asks the provider for its own compaction (`/responses/compact`,
 * or `providerCompactionAsk`): passed through untouched (the provider answers
 * it with its `compaction` item or block), its history (the trigger item
 * aside) read into the session as the history before the compaction, and,
 * like an agent's summarization request, its answer relayed: the provider's
 * summary in it proves the compaction in the request that carries it.
 */
function providerCompaction(
  ctx: CoreContext,
  request: WireRequest,
  history: WireHistory,
  ask: string,
): { outcome: GuardOutcome; summarizing: Summarizing } {
  const doc = history.doc;
  const trimmed =
    ask === "compaction_trigger" ? { ...doc, input: (doc.input as unknown[]).slice(0, -1) } : undefined;
  const before = trimmed === undefined ? history : readWire(history.wire, trimmed);
  const id = sessionOf(request.headers, before);
  // Held, the history is read again from its body: the body it was read from, without the trigger.
  absorbLater(
    ctx,
    before,
    id,
    trimmed === undefined ? request.body : Buffer.from(JSON.stringify(trimmed), "utf8"),
  );
  return {
    outcome: {
      body: request.body,
      changed: false,
      wire: history.wire,
      session: id.key,
      note: `the agent's request for the provider's own compaction (${ask}); passed through, its history read`,
    },
    summarizing: { history: before, id, agent: id.agent },
  };
}

/** Codex's remote compaction request (`POST …/responses/compact`): see `providerCompaction`. */
export function compactRequest(
  ctx: CoreContext,
  request: WireRequest,
): { outcome: GuardOutcome; summarizing?: Summarizing } {
  const wire = "openai-responses";
  let history: WireHistory;
  try {
    history = readWire(wire, parseBody(request.body, listKeyOf(wire)));
  } catch (e) {
    return {
      outcome: {
        body: request.body,
        changed: false,
        wire,
        note: `compaction request not read: ${oneLine(e)}`,
      },
    };
  }
  return providerCompaction(ctx, request, history, "/responses/compact");
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
  // (Never a partial history: such a request's bytes keep it off the fast path.)
  const ask = history.partial ? undefined : providerCompactionAsk(wire, history.doc);
  if (ask !== undefined) return providerCompaction(ctx, request, history, ask);
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
