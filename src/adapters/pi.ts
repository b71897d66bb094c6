/**
 * `compact-safe/pi`: a pi coding-agent extension (pi 0.73, `@mariozechner/pi-coding-agent`, and pi 1.x,
 * `@earendil-works/pi-coding-agent`: the same extension API) that makes pi's
 * compaction keep the survival contract, and audits every compaction pi
 * commits.
 *
 * - `session_before_compact`: the live context of the branch (pi's own
 *   projection: the latest compaction's summary, the entries it kept, what
 *   came after) goes through `compactMessagesSafe`; the extension answers
 *   with compact-safe's checkpoint as pi's summary and a cut point
 *   (`firstKeptEntryId`) at the start of the protected last round, so that
 *   pi's next context is the checkpoint followed by the last round's user
 *   instructions and its latest calls with their results, verbatim. Before
 *   answering, the context pi will build from that answer is checked against
 *   the contract (with the anchors) and must be smaller than the live one.
 * - When that fails (the summarizer fails or writes an unusable summary,
 *   nothing can shrink, the check refuses), nothing is committed: by default
 *   the compaction is cancelled, with a notice and a `compact-safe` custom
 *   entry saying why (`onFailure: "pi"` lets pi's own compaction go ahead
 *   instead, and it is then audited like any other).
 * - `session_compact`: the compaction pi just committed (ours, pi's own or
 *   another extension's) is audited with `auditEntries` over the session as
 *   compact-safe imports it; the verdict is shown (`ctx.ui.notify`, or
 *   stderr without a UI) and kept as a `compact-safe-audit` custom entry.
 *
 * The conversions `fromPiMessages` / `toPiMessages` are lossless both ways.
 */
import type {
  ExtensionAPI,
  ExtensionContext,
  SessionBeforeCompactEvent,
  SessionEntry,
} from "@mariozechner/pi-coding-agent";
import type { Message } from "../model/types.js";
import type { Summarizer } from "../summarizers/types.js";
import { compactMessagesSafe } from "../engine/compact.js";
import { CONSTANTS } from "../model/constants.js";
import { estimateTokens } from "../engine/tokens.js";
import { protectedRound } from "../contract/rounds.js";
import { allText, isBranchSummary, isCheckpoint, isPlainUser } from "../contract/classify.js";
import { validateSurvivalContract } from "../contract/validate.js";
import {
  isPiCompactionSummary,
  PI_COMPACTION_PREFIX,
  PI_COMPACTION_SUFFIX,
  piCompactionSummaryMessage,
  piEntryMessage,
  piSendsAsConversation,
} from "../wire/pi.js";
import { importPi } from "../formats/import/pi.js";
import { auditEntries, NOT_JUDGEABLE, type CompactionAudit } from "../route/audit.js";
import { readAnchors } from "../workspace/anchors.js";
import { readLiveState, type LiveState } from "../workspace/live-state.js";
import { fromPiMessage, type PiAgentMessage } from "./pi-convert.js";
import { ModelError } from "../model/schema.js";
import { checkPlainData } from "../model/plain.js";
import type { CompactError } from "../engine/result.js";

export {
  fromPiMessage,
  fromPiMessages,
  toPiMessages,
  PI_SYSTEM_CUSTOM_TYPE,
  type PiAgentMessage,
} from "./pi-convert.js";

/** The `customType` of the entry a refused compaction leaves in the session. */
export const PI_REFUSAL_ENTRY = "compact-safe";
/** The `customType` of the entry holding an audit verdict. */
export const PI_AUDIT_ENTRY = "compact-safe-audit";

export interface CompactSafePiOptions {
  /** The summarizer (default: compact-safe's extractive summarizer, offline). */
  summarizer?: Summarizer;
  /**
   * The pinned anchors restated in every checkpoint. Default: read from the
   * workspace (`.codewhale/anchors.md`, else `.deepseek/anchors.md`).
   */
  anchors?: string;
  /** Where anchors and the live state (git) are read: default pi's cwd; `false` reads neither. */
  workspace?: string | false;
  /** The live state to restate instead of reading it (git branch, worktree, HEAD, background work). */
  liveState?: LiveState;
  /** Token budget of older user messages restated verbatim in the summary (default 20,000). */
  retainedUserTokens?: number;
  /** Size bound of the summary, in tokens (default 2,000). */
  summaryMaxTokens?: number;
  /**
   * The recent messages kept verbatim before the protected round, in tokens (the two together at most
   * this much). Default: pi's own `keepRecentTokens` setting (20,000 unless set); 0 keeps the protected
   * round only.
   */
  keepRecentTokens?: number;
  /** Time budget of the summary ladder, in ms (default 5 minutes). */
  budgetMs?: number;
  /** What a failed compaction does: `"cancel"` (default: nothing is committed) or `"pi"` (pi's own compaction goes ahead). */
  onFailure?: "cancel" | "pi";
  /** Audit every compaction pi commits (default true). */
  audit?: boolean;
  /** Where notices go (default: `ctx.ui.notify` with a UI, stderr without). */
  notify?: (text: string, level: "info" | "warning" | "error") => void;
}

/** One message of pi's live context and the session entry it comes from. */
export interface PiContextMessage {
  message: PiAgentMessage;
  entryId: string;
}

type Rec = Record<string, unknown>;
const ts = (t: unknown): number => new Date(String(t)).getTime();

/** What one entry puts into pi's context (pi 0.73.1 `buildSessionContext`). */
const entryMessage = (e: SessionEntry): PiAgentMessage | undefined =>
  piEntryMessage(e as unknown as Rec, ts(e.timestamp)) as PiAgentMessage | undefined;

/**
 * pi's live context for a branch (root first), as pi 0.73.1 builds it, with
 * the entry each message comes from (a compaction's summary: the compaction).
 */
export function piLiveContext(branch: readonly SessionEntry[]): PiContextMessage[] {
  checkBranch(branch, "branch");
  const out: PiContextMessage[] = [];
  const push = (e: SessionEntry) => {
    const message = entryMessage(e);
    if (message) out.push({ message, entryId: e.id });
  };
  let ci = -1;
  for (let i = branch.length - 1; i >= 0 && ci < 0; i--) if (branch[i]!.type === "compaction") ci = i;
  if (ci < 0) {
    branch.forEach(push);
    return out;
  }
  const c = branch[ci] as unknown as Rec & SessionEntry;
  out.push({
    message: piCompactionSummaryMessage(c, ts(c.timestamp)) as unknown as PiAgentMessage,
    entryId: c.id,
  });
  let kept = false;
  for (let i = 0; i < ci; i++) {
    if (branch[i]!.id === c.firstKeptEntryId) kept = true;
    if (kept) push(branch[i]!);
  }
  for (let i = ci + 1; i < branch.length; i++) push(branch[i]!);
  return out;
}

/** The outcome of compact-safe's pass for pi: pi's compaction result, or why there is none. */
export type PiCompactionPlan =
  | {
      ok: true;
      compaction: { summary: string; firstKeptEntryId: string; tokensBefore: number; details: Rec };
      /** The context pi will build from it, as compact-safe messages (checked against the contract). */
      context: Message[];
    }
  | { ok: false; error: CompactError };

/** Why the extension answered pi with no compaction: the plan's refusal, or an error before or in it (`error`, as the refusal entry records it). */
export interface PiRefusal {
  kind: CompactError["kind"] | "error";
  /** One line. */
  message: string;
}

const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A branch as pi gives it (`branchEntries`): an array of entry objects, each with a string `type` and
 * `id`, a `message` entry with a message object. Anything else is a `ModelError` naming the entry,
 * never a `TypeError` from deep inside.
 */
function checkBranch(branch: unknown, path: string): asserts branch is readonly SessionEntry[] {
  if (!Array.isArray(branch)) throw new ModelError(path, "expected an array of pi session entries");
  checkPlainData(branch, path); // a hole, a cycle, a BigInt, a throwing getter…: a ModelError naming the place
  for (let i = 0; i < branch.length; i++) {
    const e: unknown = branch[i];
    const at = `${path}[${i}]`;
    if (!isRec(e)) throw new ModelError(at, "expected a pi session entry (an object)");
    if (typeof e.type !== "string") throw new ModelError(at, "a pi session entry needs a string type");
    if (typeof e.id !== "string") throw new ModelError(at, "a pi session entry needs a string id");
    if (e.type === "message" && !isRec(e.message))
      throw new ModelError(`${at}.message`, "a message entry needs a message (an object)");
  }
}

/** The pi summary message for `summary`, as compact-safe sees it. */
function piSummaryMessage(summary: string): Message {
  return {
    role: "user",
    content: [{ type: "text", text: PI_COMPACTION_PREFIX + summary + PI_COMPACTION_SUFFIX }],
  };
}

/**
 * Where the verbatim part of a replacement that ends with `kept` messages starts in `messages`: the
 * engine keeps a suffix of the history without its checkpoints (`replacementParts`), so the start is
 * where, counted from the end, the messages that are not checkpoints come to `kept`.
 */
function verbatimStart(messages: readonly Message[], kept: number): number {
  let n = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (!isCheckpoint(messages[i]!)) n++;
    if (n === kept) return i;
  }
  return 0;
}

/**
 * compact-safe's compaction of a pi branch (pure but for the summarizer):
 * the summary and cut point to answer `session_before_compact` with.
 */
export async function planPiCompaction(
  branch: readonly SessionEntry[],
  options: {
    tokensBefore: number;
    summarizer?: Summarizer;
    anchors?: string;
    liveState?: LiveState;
    retainedUserTokens?: number;
    summaryMaxTokens?: number;
    /** The recent messages kept verbatim with the protected round, in tokens (default 0: the round only). */
    keepRecentTokens?: number;
    budgetMs?: number;
    focus?: string;
    signal?: AbortSignal;
  },
): Promise<PiCompactionPlan> {
  if (!isRec(options)) throw new ModelError("options", "expected an object ({ tokensBefore, ... })");
  checkBranch(branch, "branchEntries");
  // What pi sends the model as conversation: `!!` commands are kept out of it, and pi 1.x's system
  // messages (its prompt and tool declarations, sent as the system prompt) are not conversation.
  const live = piLiveContext(branch).filter((m) => piSendsAsConversation(m.message as unknown as Rec));
  // As pi sends them (a message compact-safe split for pi is read piece by piece, as pi reads it).
  const messages = live.map((m) => fromPiMessage(m.message, { carrier: false }));
  const anchors = options.anchors?.trim() ?? "";
  // pi decides when to compact; pi can keep only a suffix of its entries, so the summary path is the
  // only one it can take (`summaryOnly`). The target is the history's size: pi's compaction has no
  // target of its own, and the recent tail is then bounded by keepRecentTokens alone.
  const before = estimateTokens(messages);
  const result = await compactMessagesSafe(messages, {
    summarizer: options.summarizer,
    anchors,
    liveState: options.liveState,
    retainedUserTokens: options.retainedUserTokens,
    // The note gets the cap unless told otherwise (there is no target to derive a budget from).
    summaryMaxTokens: options.summaryMaxTokens ?? CONSTANTS.summaryMaxTokens,
    keepRecentTokens: options.keepRecentTokens ?? 0,
    budgetMs: options.budgetMs,
    focus: options.focus,
    signal: options.signal,
    summaryOnly: true,
    target: Math.max(0, before - 1),
  });
  if (!result.ok) return result;
  const refuse = (kind: CompactError["kind"], message: string): PiCompactionPlan => ({
    ok: false,
    error: { kind, message, attempts: result.attempts },
  });
  if (result.path !== "summary" || !result.checkpoint)
    return refuse("nothing_to_compact", "no summary was written (pi needs one)");

  // The cut: pi keeps a suffix of its entries, so it falls where the replacement's verbatim part starts
  // (the recent tail, else the protected round), or earlier at the current round's first user
  // instruction (each is kept as the user wrote it, never only inside the summary), or at a branch
  // summary before that (never folded into a summary).
  const round = protectedRound(messages);
  const ci = result.replacement.indexOf(result.checkpoint);
  let cut = Math.min(
    verbatimStart(messages, result.replacement.length - ci - 1),
    round.regionStart,
    ...round.instructionIndices,
  );
  for (let i = 0; i < cut; i++) if (isBranchSummary(messages[i]!) && !isCheckpoint(messages[i]!)) cut = i;
  const first = live[cut];
  if (!first || isPiCompactionSummary(first.message as unknown as Rec))
    return refuse("nothing_to_compact", "no entry to keep from");

  // The summary: compact-safe's checkpoint, then the older user messages it retains verbatim.
  const keptTexts = new Set(messages.slice(cut).map(allText));
  const older = result.replacement
    .slice(0, ci)
    .filter((m) => isPlainUser(m))
    .map(allText)
    .filter((t) => !keptTexts.has(t));
  const summary =
    allText(result.checkpoint) +
    (older.length > 0
      ? `\n\n## Earlier user messages (verbatim, oldest first)\n\n${older.join("\n\n---\n\n")}`
      : "");
  const context = [piSummaryMessage(summary), ...messages.slice(cut)];
  const verdict = validateSurvivalContract(messages, context, { anchors, path: "summary" });
  if (!verdict.valid)
    return refuse("contract_violation", `pi's context would break the contract: ${verdict.reason}`);
  const after = estimateTokens(context);
  if (after >= before)
    return refuse(
      "nothing_to_compact",
      `pi's context would be ${after} tokens, not smaller than its ${before} now`,
    );
  return {
    ok: true,
    context,
    compaction: {
      summary,
      firstKeptEntryId: first.entryId,
      tokensBefore: options.tokensBefore,
      details: {
        compactSafe: {
          model: result.model,
          coverage: result.coverage,
          tokens_before_estimate: before,
          tokens_after_estimate: after,
          attempts: result.attempts,
        },
      },
    },
  };
}

/** The session as compact-safe imports it: pi's header and entries as its JSONL. */
export function piSessionText(ctx: Pick<ExtensionContext, "sessionManager">): string {
  const sm = ctx.sessionManager;
  const lines: unknown[] = [sm.getHeader(), ...sm.getEntries()].filter((l) => l !== null && l !== undefined);
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

/** The audit of the compaction `id` recorded in a pi session's text (undefined when it records none by that id). */
export function auditPiCompaction(sessionText: string, id: string): CompactionAudit | undefined {
  if (typeof sessionText !== "string")
    throw new ModelError("sessionText", "expected a pi session's JSONL text");
  if (typeof id !== "string") throw new ModelError("id", "expected a compaction entry's id (a string)");
  const { entries } = importPi(sessionText, "pi-session.jsonl");
  return auditEntries(entries).compactions.find((c) => c.id === id);
}

/** The extension with these options. */
export function compactSafeExtension(options: CompactSafePiOptions = {}): (pi: ExtensionAPI) => void {
  return (pi: ExtensionAPI) => {
    const say = (ctx: ExtensionContext, text: string, level: "info" | "warning" | "error") => {
      if (options.notify) return options.notify(text, level);
      try {
        if (ctx.hasUI) return ctx.ui.notify(text, level);
      } catch {
        // fall through to stderr
      }
      process.stderr.write(`${text}\n`);
    };

    pi.on("session_before_compact", async (event: SessionBeforeCompactEvent, ctx) => {
      let refusal: PiRefusal;
      try {
        if (!isRec(event))
          throw new ModelError("event", "expected pi's session_before_compact event (an object)");
        if (!isRec(event.preparation))
          throw new ModelError("event.preparation", "expected pi's compaction preparation (an object)");
        const workspace = options.workspace === false ? undefined : (options.workspace ?? ctx.cwd);
        const anchors =
          options.anchors ?? (workspace ? ((await readAnchors(workspace))?.text ?? undefined) : undefined);
        const liveState = options.liveState ?? (workspace ? await readLiveState(workspace) : undefined);
        const plan = await planPiCompaction(event.branchEntries, {
          tokensBefore: event.preparation.tokensBefore,
          summarizer: options.summarizer,
          anchors,
          liveState,
          retainedUserTokens: options.retainedUserTokens,
          summaryMaxTokens: options.summaryMaxTokens,
          keepRecentTokens: options.keepRecentTokens ?? event.preparation.settings?.keepRecentTokens,
          budgetMs: options.budgetMs,
          focus: event.customInstructions,
          signal: event.signal,
        });
        if (plan.ok) return { compaction: plan.compaction };
        refusal = plan.error;
      } catch (e) {
        refusal = { kind: "error", message: (e instanceof Error ? e.message : String(e)).split("\n")[0]! };
      }
      const fallback = options.onFailure === "pi";
      say(
        ctx,
        `compact-safe: compaction ${fallback ? "left to pi" : "cancelled, nothing committed"}: ${refusal.message}`,
        refusal.kind === "nothing_to_compact" ? "info" : "warning",
      );
      // "Nothing to compact" is an honest outcome, not a failure: shown, not recorded (pi asks again at
      // every turn over its threshold).
      if (refusal.kind !== "nothing_to_compact")
        try {
          pi.appendEntry(PI_REFUSAL_ENTRY, {
            event: "compaction_refused",
            kind: refusal.kind,
            reason: refusal.message,
            then: fallback ? "pi" : "cancelled",
          });
        } catch {
          // the session is gone: the notice is all there is
        }
      return fallback ? undefined : { cancel: true };
    });

    if (options.audit === false) return;
    pi.on("session_compact", async (event, ctx) => {
      try {
        const a = auditPiCompaction(piSessionText(ctx), event.compactionEntry.id);
        if (!a) throw new Error(`compaction ${event.compactionEntry.id} not found in the session`);
        const who = event.fromExtension ? "the extension's" : "pi's";
        say(
          ctx,
          a.kept
            ? `compact-safe: ${who} compaction ${a.id} kept the survival contract (${a.messages_before} → ${a.messages_after} messages)`
            : a.kept === null
              ? `compact-safe: ${who} compaction ${a.id} cannot be judged: ${NOT_JUDGEABLE}`
              : `compact-safe: ${who} compaction ${a.id} did not keep the survival contract: ${a.reason}`,
          a.kept === false ? "warning" : "info",
        );
        pi.appendEntry(PI_AUDIT_ENTRY, {
          compaction: a.id,
          from_extension: event.fromExtension,
          kept: a.kept,
          reason: a.reason,
          losses: a.losses,
          placeholder: a.placeholder,
        });
      } catch (e) {
        say(ctx, `compact-safe: audit failed: ${e instanceof Error ? e.message : String(e)}`, "error");
      }
    });
  };
}

/** The extension with its defaults (load it with `pi -e compact-safe/pi`'s file, or as a factory). */
export default function compactSafe(pi: ExtensionAPI): void {
  compactSafeExtension()(pi);
}
