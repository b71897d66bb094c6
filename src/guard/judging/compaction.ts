/**
 * The guard core's judging of an agent's compaction seen on the wire: the
 * survival contract's verdict on the request after against the history
 * before (the turns typed after the compaction left out), the repair (mode
 * `repair`, when the contract was not kept), the compaction (and the
 * repair's) in the session's journal, and the session's history moved on.
 */
import type { Message } from "../../model/types.js";
import { allText } from "../../contract/classify.js";
import { validateSurvivalContract } from "../../contract/validate.js";
import { estimateTokens } from "../../engine/tokens.js";
import { liveStateSection } from "../../engine/replacement.js";
import { protectedLosses, withoutSystemReminders } from "../../route/audit.js";
import { readLiveState } from "../../workspace/live-state.js";
import type { GuardCoreOptions, GuardOutcome, GuardVerdict } from "../types.js";
import { readAnchors } from "../../workspace/anchors.js";
import { requestWorkspace } from "./workspace.js";
import { messagesOf, type HistoryItem, type WireHistory } from "../reading/history.js";
import type { SessionIdentity } from "../sessions/session.js";
import { conversation, hasTools, lastSummary, trailingNewTurns } from "../reading/detect.js";
import type { Restated } from "./splice.js";
import type { SessionJournal } from "../sessions/state.js";
import { providerEdits } from "./provider-edits.js";
import { heldHistory, sentOf, type Session } from "../sessions/held-sessions.js";
import { repair, type Repaired } from "./repair.js";
import type { CoreContext, Same } from "../context.js";

function tokensOf(messages: readonly Message[]): number {
  try {
    return estimateTokens(messages);
  } catch {
    return 0;
  }
}

/**
 * What the repair restates, read here, once, at the compaction (the splice is
 * then the same bytes in every later request): the pinned anchors (given, or
 * with `anchorsFromWorkspace` the workspace's) and, with a workspace, its live
 * state. The workspace is the folder the request names as the agent's working
 * directory, else `options.workspace`.
 */
async function restatement(options: GuardCoreOptions, h: WireHistory): Promise<Restated> {
  const named =
    options.workspace !== undefined || options.anchorsFromWorkspace ? await requestWorkspace(h) : undefined;
  const ws = named ?? options.workspace;
  let anchors = options.anchors;
  if (anchors === undefined && options.anchorsFromWorkspace && ws !== undefined) {
    try {
      anchors = (await readAnchors(ws))?.text;
    } catch {
      anchors = undefined; // an unreadable anchors file is not the request's business: nothing restated
    }
  }
  const restated: Restated = { anchors };
  if (options.workspace !== undefined && ws !== undefined)
    restated.liveState = liveStateSection(await readLiveState(ws));
  return restated;
}

/** A compaction judged: the histories compared, the contract's result, and the verdict. */
interface Judged {
  before: HistoryItem[];
  /** The request's whole history, the turns typed after the compaction included. */
  afterAll: HistoryItem[];
  /** The same without those turns: what is judged. */
  after: HistoryItem[];
  /** How many turns were typed after the compaction. */
  newTurns: number;
  beforeMsgs: Message[];
  afterMsgs: Message[];
  valid: boolean;
  agent: string;
  verdict: GuardVerdict;
}

/** The survival contract's verdict on the compaction in `h`, against the history the session last sent. */
function judgeCompaction(s: Session, h: WireHistory, id: SessionIdentity): Judged {
  const before = sentOf(s);
  const afterAll = h.items;
  const newTurns = trailingNewTurns(before, afterAll);
  const after = afterAll.slice(0, afterAll.length - newTurns);
  const beforeMsgs = messagesOf(before);
  const afterMsgs = messagesOf(after);
  // Claude Code's <system-reminder> blocks are the harness's, not the user's words (as `audit` reads them).
  const v = validateSurvivalContract(withoutSystemReminders(beforeMsgs), afterMsgs, { path: "summary" });
  const agent = s.agent !== "unknown" ? s.agent : id.agent;
  const verdict: GuardVerdict = {
    session: s.key,
    agent,
    agent_version: id.version ?? null,
    agent_session_id: id.key === s.key ? (id.own ?? null) : null,
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
    tokens_before: tokensOf(beforeMsgs),
    tokens_after: tokensOf(afterMsgs),
  };
  return { before, afterAll, after, newTurns, beforeMsgs, afterMsgs, valid: v.valid, agent, verdict };
}

/** The agent's compaction in the session's journal, and the guard's repair after it when one is sent. */
function journalCompaction(
  journal: SessionJournal,
  h: WireHistory,
  j: Judged,
  r: Repaired | undefined,
): void {
  const { after, verdict } = j;
  const summaryAt = lastSummary(after);
  const summary = summaryAt >= 0 ? allText(after[summaryAt]!.message) : "";
  const model = typeof h.doc.model === "string" ? h.doc.model : "unknown";
  journal.compaction(after, {
    summary,
    tokens_before: verdict.tokens_before,
    tokens_after: verdict.tokens_after,
    model,
    path: "summary",
    coverage: null,
    trigger: "auto",
    source_agent: j.agent,
    guard_verdict: { kept: verdict.kept, reason: verdict.reason, losses: verdict.losses },
  });
  if (r) {
    const replacement = r.spliced.slice(0, r.spliced.length - j.newTurns);
    journal.compaction(replacement, {
      summary,
      tokens_before: verdict.tokens_after,
      tokens_after: tokensOf(messagesOf(replacement)),
      model,
      path: "summary",
      coverage: null,
      trigger: "auto",
      source_agent: "compact-safe-guard",
      guard: {
        checkpoint_key: r.splice.checkpointKey,
        splice_from: r.from,
        splice_count: r.splice.items.length,
        ...(r.splice.restated !== undefined
          ? { restated: r.splice.restated, checkpoint_raw: after[summaryAt]!.raw }
          : {}),
      },
    });
  }
}

/**
 * Judges the agent's compaction in `h`, repairs it (mode `repair`, when the
 * contract was not kept), records both, and moves the session on to `h`.
 */
export async function compaction(
  ctx: CoreContext,
  s: Session,
  h: WireHistory,
  id: SessionIdentity,
  same: Same,
  body: Buffer,
): Promise<GuardOutcome> {
  const { options } = ctx;
  const j = judgeCompaction(s, h, id);
  const { afterAll, after, newTurns, verdict } = j;
  let out: GuardOutcome = { ...same(), verdict };
  let repaired: Repaired | undefined;
  if (!j.valid && ctx.mode === "repair") {
    const r = repair(h, j.before, after, newTurns, await restatement(options, h));
    if ("refused" in r) verdict.repair_refused = r.refused;
    else {
      verdict.repaired = true;
      repaired = r;
      out = { ...out, body: r.body, changed: true };
    }
  }

  if (s.journal) journalCompaction(s.journal, h, j, repaired);
  const turns = afterAll.slice(afterAll.length - newTurns);
  const ids = s.journal ? s.journal.append(turns) : turns.map(() => undefined);
  s.hist = heldHistory(afterAll, body, h.wire);
  s.conv_ids = [...conversation(after).map(() => undefined), ...ids];
  s.splice = repaired?.splice;
  s.had_tools = hasTools(h.doc);
  if (s.agent === "unknown") s.agent = j.agent;
  // The repair is on disk before the spliced request goes out: a guard killed right after (SIGKILL, a
  // crash) and restarted on the same state folder sends the same splice. A compaction is rare; the
  // ordinary turns' writes stay off the request path.
  if (repaired && s.journal) await s.journal.flush();
  return out;
}
