/**
 * Auditing the compactions a session records (Claude Code's, Codex's, pi's
 * and compact-safe's own): for each one, the survival contract's verdict on
 * the live context just before it against the replacement it installed, and
 * what of the protected last round it lost, piece by piece. A provider's
 * native compaction (an Anthropic `compaction` block, an OpenAI `compaction`
 * item; the importers make it a compaction entry) is judged the same way, on
 * what its replacement shows: an encrypted summary shows nothing, and the
 * audit says so (`provider_compaction.opaque`).
 *
 * The guard's journal (`compact-safe guard --state`) records, after an agent's
 * compaction that lost what must survive, the guard's repair as a compaction
 * of its own (`source_agent: compact-safe-guard`, its parent the agent's
 * compaction entry). The audit judges that repair against the context before
 * the agent's compaction (what the model read after it, against what it had
 * before), and links the two: `repair_of` on the repair, `repaired_by` on the
 * agent's compaction. A user text block that is only harness-injected
 * `<system-reminder>…</system-reminder>` blocks (Claude Code adds them to the
 * user's turns) is not the user's words: it is neither required to survive
 * nor counted as lost.
 */
import type { CompactionEntry, JournalEntry, Message } from "../model/index.js";
import { providerCompactionIn } from "../model/index.js";
import { isAssistantRole, isText, isToolResult, isToolUse } from "../model/blocks.js";
import { checkpointsOf, userWords } from "../contract/classify.js";
import { protectedRound } from "../contract/rounds.js";
import { checkpointSummaryPart, validateSurvivalContract } from "../contract/validate.js";
import { placeholderKind } from "../contract/placeholder.js";
import { activePath, projectPath } from "../journal/tree.js";

/** What one compaction lost of the protected last round (texts whole, as they were written). */
export interface AuditLosses {
  user_texts: string[];
  tool_calls: string[];
  tool_results: string[];
  assistant_texts: string[];
}

export interface CompactionAudit {
  /** The compaction entry's id. */
  id: string;
  /** Who wrote it: `compact-safe`, or the agent it was imported from (`claude-code`, `codex`, `pi`). */
  source: string;
  path: string;
  /** Messages of the live context just before it, and of its replacement. */
  messages_before: number;
  messages_after: number;
  /**
   * Whether the contract can judge it: false when the file holds no conversation before it (nothing,
   * or only the system prompt: a session that opens with a provider's compaction, a fork's first
   * line), then it is neither kept nor lost (`kept` null).
   */
  judgeable: boolean;
  /** The contract's verdict: true when the replacement keeps what must survive; null when not judgeable. */
  kept: boolean | null;
  /** The first violation the validator names (null when kept or not judgeable). */
  reason: string | null;
  losses: AuditLosses;
  /** The checkpoint's summary is a placeholder (empty, "(no summary available)", a refusal). */
  placeholder: boolean;
  /** More than one checkpoint in the replacement. */
  stacked_checkpoints: boolean;
  /**
   * The provider's native compaction the replacement holds, or null: which
   * provider, whether its summary is opaque (encrypted: the verdict is on what
   * else the replacement shows), and the characters of the summary it shows.
   */
  provider_compaction: null | { provider: "anthropic" | "openai"; opaque: boolean; summary_chars: number };
  /**
   * (`auditEntries` only.) On the guard's repair: the id of the agent's compaction it repairs (then
   * `messages_before` and the verdict are against the context before that compaction); null otherwise.
   */
  repair_of?: string | null;
  /** (`auditEntries` only.) On an agent's compaction: the id of the guard's repair that follows it, or null. */
  repaired_by?: string | null;
}

/** Who writes the guard's repair entries (`src/guard/judging/compaction.ts`). */
export const GUARD_REPAIR_SOURCE = "compact-safe-guard";

/** A text that is only harness-injected `<system-reminder>` blocks (and white space): never the user's words. */
const REMINDERS_ONLY = /^(?:\s*<system-reminder>(?:(?!<\/system-reminder>)[\s\S])*<\/system-reminder>)+\s*$/;

/** Whether a user text is only Claude Code's `<system-reminder>…</system-reminder>` blocks. */
export function isSystemReminder(text: string): boolean {
  return text.includes("<system-reminder>") && REMINDERS_ONLY.test(text);
}

/**
 * The messages with the user text blocks that are only system reminders left out (a message keeps its
 * place, with the rest of its content): what the contract judges of a history. The same array when
 * there is none.
 */
export function withoutSystemReminders(messages: readonly Message[]): readonly Message[] {
  let changed = false;
  const out = messages.map((m) => {
    if (m.role !== "user" || !m.content.some((b) => isText(b) && isSystemReminder(b.text))) return m;
    changed = true;
    return { ...m, content: m.content.filter((b) => !(isText(b) && isSystemReminder(b.text))) };
  });
  return changed ? out : messages;
}

/** Why a compaction cannot be judged (`judgeable` false), as `audit` and the other readers say it. */
export const NOT_JUDGEABLE = "no history before it in the file";

/** Whether a context holds any conversation (a message that is not the system prompt) to judge a compaction against. */
export function hasHistory(before: readonly Message[]): boolean {
  return before.some((m) => m.role !== "system");
}

/** The first provider compaction in a replacement, as the audit reports it. */
function nativeCompaction(after: readonly Message[]): CompactionAudit["provider_compaction"] {
  for (const m of after) {
    const found = providerCompactionIn(m);
    if (found)
      return {
        provider: found.block.provider,
        opaque: found.block.opaque,
        summary_chars: found.block.summary.length,
      };
  }
  return null;
}

export interface SessionAudit {
  compactions: CompactionAudit[];
  /** How many kept the contract (of all the entries listed, the guard's repairs included). */
  kept: number;
  /** How many could not be judged (no history before them in the file): counted neither as kept nor as lost. */
  not_judgeable: number;
  /** Compactions that did not keep the contract and that a guard's repair which keeps it follows. */
  repaired: number;
  /** Compactions (not the guard's repairs) that did not keep the contract and were not repaired. */
  unrepaired: number;
}

/** One piece of the protected last round a compaction lost: where it was in the context before it, and what. */
export interface LostItem {
  kind: "user_text" | "tool_call" | "tool_result" | "assistant_text";
  /** Index of its message in the context before the compaction, and of its block in that message. */
  at: number;
  block: number;
  /** The text (user and assistant texts), or the tool call id (calls and results). */
  value: string;
  /** The tool's name (calls only). */
  tool?: string;
}

/** The pieces of the protected last round of `before` that `after` does not carry (by text or id), with their places. */
export function protectedLossItems(before: readonly Message[], after: readonly Message[]): LostItem[] {
  const round = protectedRound(before);
  const userTexts = new Set<string>();
  const assistantTexts = new Set<string>();
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const m of after) {
    const texts = m.role === "user" ? userTexts : isAssistantRole(m) ? assistantTexts : undefined;
    for (const b of m.content) {
      if (isText(b)) texts?.add(b.text);
      else if (isToolUse(b)) calls.add(b.id);
      else if (isToolResult(b)) results.add(b.tool_use_id);
    }
  }
  const items: LostItem[] = [];
  for (const i of round.instructionIndices) {
    const words = new Set<unknown>(userWords(before[i]!));
    before[i]!.content.forEach((b, k) => {
      if (words.has(b) && isText(b) && !userTexts.has(b.text) && !isSystemReminder(b.text))
        items.push({ kind: "user_text", at: i, block: k, value: b.text });
    });
  }
  for (let i = round.regionStart; i < before.length; i++) {
    const m = before[i]!;
    m.content.forEach((b, k) => {
      if (isToolUse(b) && !calls.has(b.id))
        items.push({ kind: "tool_call", at: i, block: k, value: b.id, tool: b.name });
      else if (isToolResult(b) && !results.has(b.tool_use_id))
        items.push({ kind: "tool_result", at: i, block: k, value: b.tool_use_id });
      else if (isText(b) && isAssistantRole(m) && b.text.trim() !== "" && !assistantTexts.has(b.text))
        items.push({ kind: "assistant_text", at: i, block: k, value: b.text });
    });
  }
  return items;
}

/** The pieces of the protected last round of `before` that `after` does not carry (by text or id). */
export function protectedLosses(before: readonly Message[], after: readonly Message[]): AuditLosses {
  const losses: AuditLosses = { user_texts: [], tool_calls: [], tool_results: [], assistant_texts: [] };
  const list = {
    user_text: losses.user_texts,
    tool_call: losses.tool_calls,
    tool_result: losses.tool_results,
    assistant_text: losses.assistant_texts,
  };
  for (const item of protectedLossItems(before, after)) list[item.kind].push(item.value);
  return losses;
}

/**
 * The audit of one compaction entry, against the live context at its parent
 * (`before`, when the caller already projected it). `fromEnd`: a reason names
 * a message of the context before by its place from the end (see
 * `SurvivalOptions.fromEnd`).
 */
export function auditCompaction(
  entries: readonly JournalEntry[],
  c: CompactionEntry,
  options: { fromEnd?: boolean; before?: readonly Message[] } = {},
): CompactionAudit {
  const before = options.before ?? (c.parent_id ? projectPath(activePath(entries, c.parent_id)) : []);
  const after = c.payload.replacement;
  const judgeable = hasHistory(before);
  const verdict = judgeable
    ? validateSurvivalContract(withoutSystemReminders(before), after, {
        path: c.payload.path,
        fromEnd: options.fromEnd,
      })
    : undefined;
  // As the validator counts them: a provider's summary is a checkpoint (the guard's restatement after it part of it).
  const checkpoints = checkpointsOf(after);
  return {
    id: c.id,
    source: typeof c.payload.source_agent === "string" ? c.payload.source_agent : "compact-safe",
    path: c.payload.path,
    messages_before: before.length,
    messages_after: after.length,
    judgeable,
    kept: verdict === undefined ? null : verdict.valid,
    reason: verdict === undefined || verdict.valid ? null : (verdict.reason ?? "violation"),
    losses: protectedLosses(before, after),
    placeholder: checkpoints.some(
      (c) => !c.provider && placeholderKind(checkpointSummaryPart(after[c.at]!)) !== undefined,
    ),
    stacked_checkpoints: checkpoints.length > 1,
    provider_compaction: nativeCompaction(after),
  };
}

/** The agent's compaction a guard's repair entry follows, or undefined when `c` is no such repair. */
function repairedCompaction(
  c: CompactionEntry,
  byId: ReadonlyMap<string, JournalEntry>,
): CompactionEntry | undefined {
  if (c.payload.source_agent !== GUARD_REPAIR_SOURCE || !c.parent_id) return undefined;
  const parent = byId.get(c.parent_id);
  return parent?.kind === "compaction" ? (parent as CompactionEntry) : undefined;
}

/**
 * Audits every compaction the entries record, in file order. A guard's repair is judged against the
 * context before the compaction it repairs (see the module comment).
 */
export function auditEntries(
  entries: readonly JournalEntry[],
  options: {
    /** Called with each compaction's audit and the context it was judged against (a batch names the losses' places). */
    visit?: (audit: CompactionAudit, before: readonly Message[], entry: CompactionEntry) => void;
  } = {},
): SessionAudit {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const compactions: CompactionAudit[] = [];
  const audited = new Map<string, CompactionAudit>();
  for (const e of entries) {
    if (e.kind !== "compaction") continue;
    const c = e as CompactionEntry;
    const of = repairedCompaction(c, byId);
    const judgedOn = of ?? (options.visit !== undefined ? c : undefined);
    const before =
      judgedOn === undefined
        ? undefined
        : judgedOn.parent_id
          ? projectPath(activePath(entries, judgedOn.parent_id))
          : ([] as Message[]);
    const a: CompactionAudit = {
      ...auditCompaction(entries, c, { before }),
      repair_of: of?.id ?? null,
      repaired_by: null,
    };
    const agents = of === undefined ? undefined : audited.get(of.id);
    if (agents !== undefined) agents.repaired_by = c.id;
    audited.set(c.id, a);
    compactions.push(a);
    if (options.visit !== undefined && before !== undefined) options.visit(a, before, c);
  }
  let repaired = 0;
  let unrepaired = 0;
  for (const a of compactions) {
    if (a.kept !== false || a.repair_of) continue;
    const repair = a.repaired_by ? audited.get(a.repaired_by) : undefined;
    if (repair?.kept === true) repaired++;
    else unrepaired++;
  }
  return {
    compactions,
    kept: compactions.filter((a) => a.kept === true).length,
    not_judgeable: compactions.filter((a) => !a.judgeable).length,
    repaired,
    unrepaired,
  };
}
