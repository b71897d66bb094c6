/**
 * The data model of `compact-safe report`: for each compaction on a
 * session's active path (the agent's own and compact-safe's) and for a
 * preview compaction that is not written, the history before it as rows,
 * each message marked by its fate (kept verbatim, bounded, stubbed by
 * prune-only, summarized into the checkpoint, dropped), token totals by
 * category before and after, the checkpoint as the model sees it, and the
 * contract's verdict (the same as `audit`).
 *
 * Pure: entries in, a JSON-ready object out. Every piece of session text in
 * it is redacted (as compaction redacts) and bounded (head and tail, with its
 * full size), and each distinct message is stored once however many
 * compactions show it, so the page stays near the session's size.
 */
import type { Block, CompactionEntry, JournalEntry, Message } from "../model/index.js";
import { isAssistantRole, isText, isToolResult, isToolUse } from "../model/blocks.js";
import { isBranchSummary, isCheckpoint, isPlainUser } from "../contract/classify.js";
import { CHECKPOINT_MARKER } from "../contract/markers.js";
import { protectedRound } from "../contract/rounds.js";
import { isAlreadyBounded } from "../contract/bounds.js";
import { auditCompaction, type AuditLosses, type CompactionAudit } from "../route/audit.js";
import { redactQuotedLine } from "../redact/quoted.js";
import { activePath, projectPath } from "../journal/tree.js";
import { redactedHead, redactedTail, redactSecrets } from "../redact/redact.js";
import { CompactSafeError } from "../model/errors.js";
import { STUB_PREFIX } from "../engine/prune.js";
import { blockCostText, fastEstimator, type TokenEstimator } from "../engine/tokens.js";

/** Every text a compaction lost, whole: what the contract's reason may quote cut short. */
const lostTexts = (l: AuditLosses): string[] => [
  ...l.user_texts,
  ...l.assistant_texts,
  ...l.tool_calls,
  ...l.tool_results,
];
export const REPORT_MODEL_VERSION = 1;

/** What became of a message of the history before a compaction. */
export type Fate = "kept" | "bounded" | "stubbed" | "summarized" | "dropped";
export const FATES: readonly Fate[] = ["kept", "bounded", "stubbed", "summarized", "dropped"];

/** Token categories of the bars. */
export type Category =
  "user" | "assistant" | "tool_calls" | "tool_results" | "thinking" | "checkpoint" | "system" | "other";
export const CATEGORIES: readonly Category[] = [
  "user",
  "assistant",
  "tool_calls",
  "tool_results",
  "thinking",
  "checkpoint",
  "system",
  "other",
];

/** Session text longer than HEAD + TAIL characters keeps its head and tail; `chars` gives the full size. */
export const TEXT_HEAD = 2000;
export const TEXT_TAIL = 600;
/** Characters redacted past a cut, so that a secret across it is seen whole. */
const REDACT_MARGIN = 4096;

export interface ReportBlock {
  kind: "text" | "thinking" | "tool_use" | "tool_result" | "image" | "other";
  /** tool_use: the tool's name; other: the block's type. */
  name?: string;
  /** tool_use: its id; tool_result: the id of its call. */
  id?: string;
  /** tool_result flagged as an error. */
  error?: boolean;
  /** The text (tool_use: its input as JSON), redacted; its head when it is bounded. */
  text: string;
  /** When bounded: the last TEXT_TAIL characters. */
  tail?: string;
  /** When bounded: the full length of the text, in characters (absent: `text` is the whole text). */
  chars?: number;
}

export interface ReportMessage {
  role: string;
  blocks: ReportBlock[];
  tokens: number;
}

export interface ReportRow {
  /** Index of the message in `model.messages`. */
  m: number;
  fate: Fate;
  /** Why, in a few words (protected round, retained user text...); absent when it is `model.why_default[fate]`. */
  why?: string;
  /** What of this message the contract names lost (the audit's losses that concern it). */
  lost?: string[];
  /** A tool_result row: the row of its call. */
  call?: number;
  /** A tool_use row: the rows carrying its results. */
  results?: number[];
}

export interface ReportCheckpoint {
  /** The marker its first text opens with (compact-safe's or another agent's). */
  marker: string;
  summary: string;
  /** compact-safe's checkpoints: the coverage receipt, anchors and live state sections. */
  coverage: string | null;
  anchors: string | null;
  live_state: string | null;
  chars: number;
}

export interface ReportVerdict {
  /** As `audit` gives it: null when the compaction cannot be judged (`judgeable` false). */
  kept: boolean | null;
  /** False when the file holds no history before the compaction (see `CompactionAudit.judgeable`). */
  judgeable: boolean;
  reason: string | null;
  placeholder: boolean;
  stacked_checkpoints: boolean;
  /** A provider's own compaction (an Anthropic `compaction` block, an OpenAI `compaction` item) after it, as `audit` names it. */
  provider_compaction: CompactionAudit["provider_compaction"];
  messages_before: number;
  messages_after: number;
  losses: { user_texts: string[]; tool_calls: string[]; tool_results: string[]; assistant_texts: string[] };
}

export type TokenBars = Record<Category, number>;

export interface ReportView {
  /** The compaction entry's id, or `preview`. */
  id: string;
  /** `compact-safe` or the agent that wrote it; `preview` for the one not written. */
  source: string;
  preview: boolean;
  path: string;
  created_at: string | null;
  model: string | null;
  verdict: ReportVerdict;
  tokens: { before: TokenBars; after: TokenBars; before_total: number; after_total: number };
  counts: Record<Fate, number>;
  rows: ReportRow[];
  /** Message indices (in `model.messages`) of the replacement, in order. */
  after: number[];
  checkpoint: ReportCheckpoint | null;
}

export interface ReportModel {
  version: number;
  source: { file: string; format: string; bytes: number; entries: number };
  window: number;
  /** What became of the preview when none was built (nothing to compact, refused...). */
  preview_note: string | null;
  /** The reason of a row whose `why` is absent, by its fate. */
  why_default: Record<Fate, string>;
  messages: ReportMessage[];
  views: ReportView[];
}

/** `text` redacted and bounded to head and tail. */
export function boundText(text: string): { text: string; tail?: string; chars?: number } {
  const chars = text.length;
  if (chars <= TEXT_HEAD + TEXT_TAIL) return { text: redactSecrets(text) };
  const head = redactedHead(text, TEXT_HEAD, REDACT_MARGIN);
  const tail = redactedTail(text, TEXT_TAIL, REDACT_MARGIN);
  return { text: head, tail, chars };
}

/** A short piece of session text (a lost text, a reason), redacted and cut to `max` characters with its size. */
function bounded(s: string, max = 400): string {
  if (s.length <= max) return redactSecrets(s);
  return `${redactedHead(s, max, REDACT_MARGIN)}… (${s.length} chars)`;
}

function reportBlock(b: Block): ReportBlock {
  if (isText(b)) return { kind: "text", ...boundText(b.text) };
  if (b.type === "thinking") return { kind: "thinking", ...boundText((b as { thinking: string }).thinking) };
  if (b.type === "redacted_thinking") return { kind: "thinking", text: "(redacted thinking)" };
  if (isToolUse(b)) {
    const input = typeof b.input === "string" ? b.input : (JSON.stringify(b.input ?? null) ?? "null");
    return { kind: "tool_use", name: redactSecrets(b.name), id: b.id, ...boundText(input) };
  }
  if (isToolResult(b)) {
    const r: ReportBlock = { kind: "tool_result", id: b.tool_use_id, ...boundText(b.content) };
    if (b.is_error) r.error = true;
    return r;
  }
  if (b.type === "image" || b.type === "image_url") return { kind: "image", text: "(image)" };
  return { kind: "other", name: b.type, ...boundText(JSON.stringify(b) ?? "") };
}

/** The category of a block's tokens in message `m`. */
function categoryOf(m: Message, b: Block, checkpoint: boolean): Category {
  if (checkpoint) return "checkpoint";
  if (m.role === "system") return "system";
  if (isToolUse(b)) return "tool_calls";
  if (isToolResult(b)) return "tool_results";
  if (b.type === "thinking" || b.type === "redacted_thinking") return "thinking";
  if (isText(b)) return isAssistantRole(m) ? "assistant" : "user";
  return "other";
}

function emptyBars(): TokenBars {
  return Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as TokenBars;
}

/** Estimated tokens of `messages` by category (the framing of each message counts to its first block's). */
export function tokenBars(
  messages: readonly Message[],
  estimator: TokenEstimator = fastEstimator,
): TokenBars {
  const bars = emptyBars();
  for (const m of messages) {
    const cp = isCheckpoint(m);
    const whole = estimator.message(m);
    let parts = 0;
    for (const b of m.content) {
      const n = estimator.text(blockCostText(b));
      bars[categoryOf(m, b, cp)] += n;
      parts += n;
    }
    // The message's framing (role, separators) goes to its first block's category.
    const first = m.content[0];
    const rest = Math.max(0, whole - parts);
    if (first !== undefined) bars[categoryOf(m, first, cp)] += rest;
    else bars.other += rest;
  }
  return bars;
}

/** The checkpoint's parts as the model sees them. */
export function checkpointParts(m: Message): ReportCheckpoint {
  const text = m.content
    .filter(isText)
    .map((b) => b.text)
    .join("\n");
  const cap = (s: string | null) => (s === null ? null : s.length > 100_000 ? bounded(s, 100_000) : s);
  if (text.startsWith(CHECKPOINT_MARKER)) {
    const body = text.slice(CHECKPOINT_MARKER.length).replace(/^\n/, "");
    const cov = body.lastIndexOf("\n## Coverage\n");
    const anc = body.lastIndexOf("\n## Anchors\n");
    const live = body.lastIndexOf("\n## Live state\n");
    if (cov >= 0 && anc > cov && live > anc) {
      return {
        marker: CHECKPOINT_MARKER,
        summary: cap(redactSecrets(body.slice(0, cov).trim()))!,
        coverage: cap(redactSecrets(body.slice(cov + 13, anc).trim())),
        anchors: cap(body.slice(anc + 12, live).trim()),
        live_state: cap(redactSecrets(body.slice(live + 15).trim())),
        chars: text.length,
      };
    }
  }
  const firstLine = text.split("\n", 1)[0] ?? "";
  return {
    marker: bounded(firstLine, 200),
    summary: cap(redactSecrets(text))!,
    coverage: null,
    anchors: null,
    live_state: null,
    chars: text.length,
  };
}

/** The usual reason of each fate (rows leave it out). */
export const WHY_DEFAULT: Readonly<Record<Fate, string>> = {
  kept: "protected round",
  bounded: "protected round: result cut to head and tail",
  stubbed: "pruned: large old result replaced by a stub",
  summarized: "summarized into the checkpoint",
  dropped: "not in the replacement",
};

/** What the replacement holds, indexed for the fate of each message before. */
interface AfterIndex {
  calls: Set<string>;
  results: Map<string, string>;
  userTexts: Set<string>;
  assistantTexts: Set<string>;
  thinking: Set<string>;
  /** Heads of older user messages kept truncated (before their marker). */
  truncatedHeads: string[];
  /** Canonical JSON of checkpoint messages and other messages without keyed blocks. */
  json: Set<string>;
  hasCheckpoint: boolean;
}

const USER_TRUNCATED = "\n[compact-safe: older user message truncated;";

function indexAfter(after: readonly Message[]): AfterIndex {
  const ix: AfterIndex = {
    calls: new Set(),
    results: new Map(),
    userTexts: new Set(),
    assistantTexts: new Set(),
    thinking: new Set(),
    truncatedHeads: [],
    json: new Set(),
    hasCheckpoint: false,
  };
  for (const m of after) {
    if (isCheckpoint(m)) ix.hasCheckpoint = true;
    ix.json.add(JSON.stringify(m));
    const assistant = isAssistantRole(m);
    for (const b of m.content) {
      if (isToolUse(b)) ix.calls.add(b.id);
      else if (isToolResult(b)) ix.results.set(b.tool_use_id, b.content);
      else if (isText(b)) {
        (assistant ? ix.assistantTexts : ix.userTexts).add(b.text);
        const cut = b.text.lastIndexOf(USER_TRUNCATED);
        if (!assistant && cut > 0) ix.truncatedHeads.push(b.text.slice(0, cut));
      } else if (b.type === "thinking") ix.thinking.add((b as { thinking: string }).thinking);
    }
  }
  return ix;
}

type BlockFate = "kept" | "bounded" | "stubbed" | "missing" | "ignored";

function blockFate(m: Message, b: Block, ix: AfterIndex): BlockFate {
  if (isText(b)) {
    if (b.text.trim() === "") return "ignored";
    const set = isAssistantRole(m) ? ix.assistantTexts : ix.userTexts;
    if (set.has(b.text) || set.has(redactSecrets(b.text))) return "kept";
    if (!isAssistantRole(m) && ix.truncatedHeads.some((h) => h.length > 0 && b.text.startsWith(h)))
      return "bounded";
    return "missing";
  }
  if (b.type === "thinking")
    return ix.thinking.has((b as { thinking: string }).thinking) ? "kept" : "missing";
  if (isToolUse(b)) return ix.calls.has(b.id) ? "kept" : "missing";
  if (isToolResult(b)) {
    const c = ix.results.get(b.tool_use_id);
    if (c === undefined) return "missing";
    if (c === b.content) return "kept";
    if (c.startsWith(STUB_PREFIX)) return "stubbed";
    if (isAlreadyBounded(c) || c.length < b.content.length)
      return c === redactSecrets(b.content) ? "kept" : "bounded";
    return "kept";
  }
  return "ignored";
}

interface FateResult {
  fate: Fate;
  why: string;
}

function messageFate(
  m: Message,
  i: number,
  ix: AfterIndex,
  round: { regionStart: number; instructions: Set<number> },
  path: string,
): FateResult {
  const gone = (): FateResult =>
    path === "summary" && ix.hasCheckpoint
      ? { fate: "summarized", why: "summarized into the checkpoint" }
      : { fate: "dropped", why: "not in the replacement" };
  if (isCheckpoint(m)) {
    if (ix.json.has(JSON.stringify(m))) return { fate: "kept", why: "checkpoint kept" };
    return ix.hasCheckpoint
      ? { fate: "summarized", why: "earlier checkpoint folded into the new one" }
      : gone();
  }
  const fates = m.content.map((b) => blockFate(m, b, ix)).filter((f) => f !== "ignored");
  if (fates.length === 0)
    return ix.json.has(JSON.stringify(m)) ? { fate: "kept", why: "kept verbatim" } : gone();
  if (fates.every((f) => f === "missing")) return gone();
  if (fates.includes("stubbed"))
    return { fate: "stubbed", why: "pruned: large old result replaced by a stub" };
  const where =
    i >= round.regionStart
      ? "protected round"
      : round.instructions.has(i)
        ? "protected round: a current user instruction"
        : m.role === "system"
          ? "system"
          : isBranchSummary(m)
            ? "branch summary"
            : isPlainUser(m)
              ? "retained user text"
              : "kept verbatim";
  if (fates.includes("bounded"))
    return {
      fate: "bounded",
      why: m.content.some(isToolResult) ? `${where}: result cut to head and tail` : `${where}: truncated`,
    };
  if (fates.includes("missing")) return { fate: "kept", why: `${where} (partly: the rest summarized)` };
  return { fate: "kept", why: where };
}

/** The audit's losses that concern message `m`, in a few words each. */
function lossesOf(m: Message, sets: LossSets): string[] {
  const out: string[] = [];
  for (const b of m.content) {
    if (isText(b)) {
      if (m.role === "user" && sets.user.has(b.text)) out.push("user text lost");
      else if (isAssistantRole(m) && sets.assistant.has(b.text)) out.push("assistant text lost");
    } else if (isToolUse(b) && sets.calls.has(b.id)) out.push(`tool call ${b.id} lost`);
    else if (isToolResult(b) && sets.results.has(b.tool_use_id))
      out.push(`tool result ${b.tool_use_id} lost`);
  }
  return out;
}

interface LossSets {
  user: Set<string>;
  assistant: Set<string>;
  calls: Set<string>;
  results: Set<string>;
}

/** Interns messages: each distinct message is stored once in the model. */
class MessageTable {
  readonly messages: ReportMessage[] = [];
  private readonly index = new Map<string, number>();
  private readonly byObject = new WeakMap<Message, number>();
  constructor(private readonly estimator: TokenEstimator) {}
  add(m: Message): number {
    const seen = this.byObject.get(m);
    if (seen !== undefined) return seen;
    const key = JSON.stringify(m);
    let n = this.index.get(key);
    if (n === undefined) {
      n = this.messages.length;
      this.messages.push({
        role: m.role,
        blocks: m.content.map(reportBlock),
        tokens: this.estimator.message(m),
      });
      this.index.set(key, n);
    }
    this.byObject.set(m, n);
    return n;
  }
}

function boundLosses(l: CompactionAudit["losses"]): ReportVerdict["losses"] {
  return {
    user_texts: l.user_texts.map((s) => bounded(s)),
    tool_calls: l.tool_calls.map((s) => bounded(s)),
    tool_results: l.tool_results.map((s) => bounded(s)),
    assistant_texts: l.assistant_texts.map((s) => bounded(s)),
  };
}

/** The view of one compaction: `entries` must hold `c` (a preview's entry is appended to them). */
function buildView(
  entries: readonly JournalEntry[],
  c: CompactionEntry,
  preview: boolean,
  table: MessageTable,
  estimator: TokenEstimator,
): ReportView {
  const before = c.parent_id ? projectPath(activePath(entries, c.parent_id)) : [];
  const after = c.payload.replacement;
  const audit = auditCompaction(entries, c);
  const ix = indexAfter(after);
  const pr = protectedRound(before);
  const round = { regionStart: pr.regionStart, instructions: new Set(pr.instructionIndices) };
  const sets: LossSets = {
    user: new Set(audit.losses.user_texts),
    assistant: new Set(audit.losses.assistant_texts),
    calls: new Set(audit.losses.tool_calls),
    results: new Set(audit.losses.tool_results),
  };
  const anyLoss = sets.user.size + sets.assistant.size + sets.calls.size + sets.results.size > 0;
  const counts = Object.fromEntries(FATES.map((f) => [f, 0])) as Record<Fate, number>;
  const rows: ReportRow[] = [];
  const callRow = new Map<string, number>();
  for (let i = 0; i < before.length; i++) {
    const m = before[i]!;
    const { fate, why } = messageFate(m, i, ix, round, c.payload.path);
    const row: ReportRow = { m: table.add(m), fate };
    if (why !== WHY_DEFAULT[fate]) row.why = why;
    if (anyLoss) {
      const lost = lossesOf(m, sets);
      if (lost.length > 0) row.lost = lost;
    }
    for (const b of m.content) {
      if (isToolUse(b)) callRow.set(b.id, i);
      else if (isToolResult(b)) {
        const at = callRow.get(b.tool_use_id);
        if (at !== undefined) {
          row.call = at;
          const caller = at === i ? row : rows[at]!;
          const results = (caller.results ??= []);
          if (!results.includes(i)) results.push(i);
        }
      }
    }
    counts[fate]++;
    rows.push(row);
  }
  const barsBefore = tokenBars(before, estimator);
  const barsAfter = tokenBars(after, estimator);
  const sum = (b: TokenBars) => CATEGORIES.reduce((n, k) => n + b[k], 0);
  const cp = after.find(isCheckpoint);
  return {
    id: c.id,
    source: preview ? "preview" : audit.source,
    preview,
    path: c.payload.path,
    created_at: preview ? null : (c.created_at ?? null),
    model: typeof c.payload.model === "string" ? c.payload.model : null,
    verdict: {
      kept: audit.kept,
      judgeable: audit.judgeable,
      // Redacted before the contract's cut: its quotation is taken again from the lost text redacted whole.
      reason:
        audit.reason === null ? null : bounded(redactQuotedLine(audit.reason, lostTexts(audit.losses)), 2000),
      placeholder: audit.placeholder,
      stacked_checkpoints: audit.stacked_checkpoints,
      provider_compaction: audit.provider_compaction,
      messages_before: audit.messages_before,
      messages_after: audit.messages_after,
      losses: boundLosses(audit.losses),
    },
    tokens: {
      before: barsBefore,
      after: barsAfter,
      before_total: sum(barsBefore),
      after_total: sum(barsAfter),
    },
    counts,
    rows,
    after: after.map((m) => table.add(m)),
    checkpoint: cp ? checkpointParts(cp) : null,
  };
}

export interface ReportOptions {
  /** The input file as given, its detected format and size in bytes. */
  source: { file: string; format: string; bytes: number };
  /** The model's context window the bars are drawn against (tokens). */
  window: number;
  /** A compaction not written (a dry run on the live context): its entry, child of the leaf. */
  preview?: CompactionEntry;
  /** Why there is no preview, when there is none. */
  previewNote?: string;
  /** Only this compaction (an id on the active path, or `preview`). */
  only?: string;
  estimator?: TokenEstimator;
}

/** The compaction entries on the active path, oldest first. */
export function activeCompactions(entries: readonly JournalEntry[]): CompactionEntry[] {
  return activePath(entries).filter((e): e is CompactionEntry => e.kind === "compaction");
}

/**
 * The report's data model. `only` that names no compaction on the active
 * path (nor `preview` when there is one) throws an Error naming the ids there are.
 */
export function buildReportModel(entries: readonly JournalEntry[], options: ReportOptions): ReportModel {
  const estimator = options.estimator ?? fastEstimator;
  const table = new MessageTable(estimator);
  let targets: { entry: CompactionEntry; preview: boolean }[] = activeCompactions(entries).map((entry) => ({
    entry,
    preview: false,
  }));
  if (options.preview) targets.push({ entry: options.preview, preview: true });
  if (options.only !== undefined) {
    const pick = targets.filter((t) => (t.preview ? "preview" : t.entry.id) === options.only);
    if (pick.length === 0) {
      const ids = targets.map((t) => (t.preview ? "preview" : t.entry.id));
      throw new CompactSafeError(
        "unknown_compaction",
        `no compaction ${JSON.stringify(options.only)} on the active path (${ids.length > 0 ? `there are: ${ids.join(", ")}` : "there is none"})`,
      );
    }
    targets = pick;
  }
  const withPreview = options.preview ? [...entries, options.preview] : entries;
  const views = targets.map((t) => {
    const v = buildView(withPreview, t.entry, t.preview, table, estimator);
    return t.preview ? { ...v, id: "preview" } : v;
  });
  return {
    version: REPORT_MODEL_VERSION,
    source: { ...options.source, entries: entries.length },
    window: options.window,
    preview_note: options.preview ? null : (options.previewNote ?? null),
    why_default: { ...WHY_DEFAULT },
    messages: table.messages,
    views,
  };
}
