/**
 * buildReplacementHistory: the live context that replaces a history, in the
 * contract's order (system content, a provider's own compaction kept first,
 * older plain user messages within a budget, branch summaries, exactly one
 * checkpoint, the bounded protected round). It validates its own output and fails closed. Pure.
 */
import type { Block, CompactionPath, CoverageReceipt, Message, TextBlock } from "../model/types.js";
import { canonicalJson, isAssistantRole, isToolResult } from "../model/blocks.js";
import { CHECKPOINT_MARKER } from "../contract/markers.js";
import {
  isBranchSummary,
  isPlainUser,
  isProviderSummary,
  notCheckpoint,
  ownUserWords,
} from "../contract/classify.js";
import { redactKept } from "./prune.js";
import { protectedRound, type ProtectedRound } from "../contract/rounds.js";
import { boundedResultContent } from "../contract/bounds.js";
import { validateSurvivalContract } from "../contract/validate.js";
import { estimateTokens, fastEstimator, type TokenEstimator } from "./tokens.js";
import { renderLiveState, type LiveState } from "../workspace/live-state.js";
import { redactRepeated, redactSecrets } from "../redact/redact.js";
import { CONSTANTS } from "../model/constants.js";
import { countedScope } from "../model/scope.js";
import { messageRef, recallHint } from "../model/refs.js";
import {
  providerCompactions,
  providerNotes,
  withProviderCompactions,
  type ProviderCompactionMode,
  type ProviderCompactions,
} from "./provider-prefix.js";

export const DEFAULT_RETAINED_USER_TOKENS = CONSTANTS.retainedUserTokens;

export interface ReplacementOptions {
  /** The handoff summary (already checked for usability and redacted). */
  summary: string;
  /** The user's pinned anchors, restated verbatim. */
  anchors?: string;
  liveState?: LiveState;
  /** Token budget for older plain user messages (default 20,000). */
  retainedUserTokens?: number;
  estimator?: TokenEstimator;
  /** Precomputed protected round of `messages` (to avoid computing it twice). */
  round?: ProtectedRound;
  /** Precomputed verbatim parts (`replacementParts` with the same options). */
  parts?: ReplacementParts;
  /**
   * Where the verbatim part starts: the protected round's start (the default), or earlier, to keep a
   * recent tail of whole units before it too (`recentTailStart`).
   */
  keepStart?: number;
  /**
   * A provider's own compaction in the history: `keep` (default) keeps the last one as the
   * replacement's prefix, right after the system content; `fold` folds it into the checkpoint, which
   * names it (see `provider-prefix.ts`).
   */
  providerCompaction?: ProviderCompactionMode;
}

export type ReplacementResult =
  | { ok: true; replacement: Message[]; checkpoint: Message; coverage: CoverageReceipt }
  | { ok: false; error: string };

export function userTruncationMarker(originalTokens: number, ref?: string): string {
  const recall = ref !== undefined ? `; ${recallHint(ref)}` : "";
  return `\n[compact-safe: older user message truncated; about ${originalTokens} tokens in all${recall}]`;
}

/** The ref of an older user message cut to its budget: the one its text cites when it was cut before, else its own. */
function truncatedRef(m: Message, text: string): string {
  const prior = /; recall (msg:[0-9a-f]{12})\]$/.exec(text);
  return prior !== null ? prior[1]! : messageRef(m);
}

/**
 * The coverage receipt of a compaction: what of the protected round it kept
 * (`kept`: the region as it stands in the replacement). The one place a
 * receipt is built; `formatReceipt` writes it as the checkpoint's line.
 */
export function coverageReceipt(
  path: CompactionPath,
  kept: readonly Message[],
  anchors: string,
): CoverageReceipt {
  return {
    path,
    last_round_messages: kept.length,
    last_round_tool_results: kept.reduce((n, m) => n + m.content.filter(isToolResult).length, 0),
    last_round_assistant: kept.filter(isAssistantRole).length,
    anchors_chars: anchors.length,
  };
}

export function formatReceipt(c: CoverageReceipt): string {
  return (
    `${c.path}; last round kept: ${c.last_round_messages} messages ` +
    `(${c.last_round_tool_results} tool results, ${c.last_round_assistant} assistant); anchors ${c.anchors_chars} chars`
  );
}

/**
 * The receipt's second line: the history is saved and recallable, and how.
 * The refs cited in the note, the stubs and the cut messages are the
 * `recall` tool's (see `model/refs.ts`).
 */
export const RECALL_RECEIPT =
  "recallable: the history is saved; `compact-safe mcp` recall REF gives back what a ref cited here names";

/**
 * The checkpoint message: marker, summary, coverage receipt, anchors, live
 * state. The summary comes redacted (compactMessagesSafe redacts it); the
 * live state (background commands may carry tokens) is redacted here; the
 * anchors are the user's own words and are restated verbatim (the contract
 * requires them).
 */
export function buildCheckpoint(
  summary: string,
  coverage: CoverageReceipt,
  anchors: string,
  liveState?: LiveState,
  /** Lines of the Coverage section after the receipt (the provider compactions kept first or folded). */
  notes: readonly string[] = [],
): Message {
  const text =
    `${CHECKPOINT_MARKER}\n${summary.trim()}\n\n` +
    `## Coverage\n${formatReceipt(coverage)}\n${notes.map((n) => `${n}\n`).join("")}${RECALL_RECEIPT}\n\n` +
    `## Anchors\n${anchors.length > 0 ? anchors : "(none)"}\n\n` +
    liveStateSection(liveState);
  return { role: "user", content: [{ type: "text", text }] };
}

/**
 * The `## Live state` section of a checkpoint (heading and lines), redacted:
 * what `buildCheckpoint` writes, and what the guard restates after a
 * repaired compaction.
 */
export function liveStateSection(liveState: LiveState | undefined): string {
  return `## Live state\n${redactSecrets(renderLiveState(liveState))}`;
}

/**
 * Bounds every tool result in a protected message: content over 8 KiB keeps
 * its head and tail, and the nested blocks of a result over the bound
 * (content and nested blocks together) are dropped. The same object when
 * nothing changes.
 */
export function boundMessage(m: Message): Message {
  const hit = boundMemo?.get(m);
  if (hit !== undefined) return hit;
  let changed = false;
  const content = m.content.map((b): Block => {
    if (!isToolResult(b)) return b;
    const r = boundedResultContent(b);
    if (r === undefined || (!r.truncated && b.content_blocks === undefined)) return b;
    changed = true;
    const copy = { ...b, content: r.content };
    delete copy.content_blocks;
    return copy;
  });
  const bounded = changed ? { ...m, content } : m;
  boundMemo?.set(m, bounded);
  return bounded;
}

/**
 * Per message, its bounded form (`boundMessage`), while a compaction runs: the recent tail's measure and
 * the replacement bound the same messages, and the bounded copy being the same object, the estimator's
 * count of it is reused too (a pass over a large result each, and the copy's measure). Held while some
 * bound scope is open (`openBoundScope`, which `compactMessagesSafe` holds for its run) and dropped when
 * the last one closes, as the redaction memo is: a message is not changed while it is being compacted
 * (the engine never mutates one), but a host may change it between compactions.
 */
let boundMemo: WeakMap<Message, Message> | undefined;

/** Opens a bound scope; the function returned closes it (once). */
export const openBoundScope: () => () => void = countedScope(
  () => {
    boundMemo = new WeakMap();
  },
  () => {
    boundMemo = undefined;
  },
);

/** A user's text blocks with secrets redacted (the same block object when it holds none). */
function redactTexts(blocks: TextBlock[]): TextBlock[] {
  return blocks.map((b) => {
    // The note or the summarizer's transcript quotes the same words.
    const text = redactRepeated(b.text);
    return text === b.text ? b : { ...b, text };
  });
}

/** By position in the history (a comparator made once: see DECISIONS.md, hot code makes no closure per call). */
const byIndex = (a: { index: number }, b: { index: number }): number => a.index - b.index;

/**
 * Older plain user messages, newest first within the budget, back in
 * chronological order. The current instructions are kept verbatim (the
 * contract compares them); the others are redacted.
 */
function retainOlderUsers(
  messages: readonly Message[],
  round: ProtectedRound,
  keepStart: number,
  budget: number,
  estimator: TokenEstimator,
): Message[] {
  const required = new Set(round.instructionIndices.filter((i) => i < keepStart));
  const picked: { index: number; message: Message }[] = [];
  let used = 0;
  for (const i of required) {
    // A current instruction is kept verbatim; tool results beside it stay with their calls (summarized).
    const m = messages[i]!;
    const message = m.content.some(isToolResult)
      ? { role: m.role, content: m.content.filter((b) => !isToolResult(b)) }
      : m;
    picked.push({ index: i, message });
    used += estimator.message(message);
  }
  for (let i = keepStart - 1; i >= 0; i--) {
    if (required.has(i)) continue;
    const m = messages[i]!;
    if (!isPlainUser(m)) continue;
    // The user's own words only: a skill's body, a command's caveat or output, hook output, a system
    // reminder or an interruption marker is the harness's (`ownUserWords`), not an older user message.
    const own = ownUserWords(m);
    if (own.length === 0) continue;
    const texts = redactTexts(own);
    // Text-only messages without secrets are kept as they are (and their estimate is cached); others keep
    // only their (redacted) text.
    const candidate: Message =
      texts.length === m.content.length && texts.every((b, k) => b === m.content[k])
        ? m
        : { role: "user", content: texts };
    const cost = estimator.message(candidate);
    if (used + cost <= budget) {
      picked.push({ index: i, message: candidate });
      used += cost;
      continue;
    }
    const room = budget - used;
    if (room < 64) break;
    // Truncate the text to fit what is left, with a marker.
    const full = texts.map((b) => b.text).join("\n");
    const keepChars = Math.max(0, Math.floor((room - 32) * 3.5));
    const text =
      full.slice(0, keepChars).replace(/[\uD800-\uDBFF]$/, "") +
      userTruncationMarker(cost, truncatedRef(m, full));
    picked.push({ index: i, message: { role: "user", content: [{ type: "text", text }] } });
    break;
  }
  picked.sort(byIndex);
  const out: Message[] = [];
  for (const p of picked) out.push(p.message);
  return out;
}

/**
 * A message of the recent tail as kept (`bounded`), redacted: its texts, tool inputs and results (not
 * system content, a provider's compaction, branch summaries or signed thinking, which are kept as they
 * are). A current instruction in the tail keeps its words verbatim (the contract compares them, as
 * prune-only keeps them: see DECISIONS.md); what else it carries is redacted. Call ids and the pairing
 * of calls with results are unchanged.
 */
function redactTailMessage(bounded: Message, original: Message, instructions: ReadonlySet<Message>): Message {
  if (bounded.role === "system" || isBranchSummary(bounded) || isProviderSummary(bounded)) return bounded;
  return redactKept(bounded, instructions.has(original));
}

/** The verbatim parts of a replacement, everything but the checkpoint's summary. */
export interface ReplacementParts {
  system: Message[];
  /** A provider's own compaction kept as the prefix, after the system content (0 or 1 message). */
  provider: Message[];
  /** The provider compactions kept first or folded (see `provider-prefix.ts`). */
  providers: ProviderCompactions;
  users: Message[];
  branches: Message[];
  /** The verbatim part from `keepStart` (the recent tail, then the protected round), bounded. */
  kept: Message[];
  /** Where `kept` starts in the history (the protected round's start when no recent tail is kept). */
  keepStart: number;
  /** The receipt: what of the protected round is kept (the recent tail before it is not counted). */
  coverage: CoverageReceipt;
  anchors: string;
  round: ProtectedRound;
}

/** What a replacement keeps verbatim beside its summary (pure; no validation). */
export function replacementParts(
  messages: readonly Message[],
  options: Omit<ReplacementOptions, "summary">,
): ReplacementParts {
  const estimator = options.estimator ?? fastEstimator;
  const round = options.round ?? protectedRound(messages);
  const anchors = options.anchors?.trim() ?? "";
  const keepStart = Math.min(options.keepStart ?? round.regionStart, round.regionStart);

  // 0. A provider's own compaction: the last one is kept first (taken out of where it stood), others folded.
  const providers = providerCompactions(messages, keepStart, options.providerCompaction);

  // 1. System content, verbatim, duplicates collapsed (system messages inside the kept part stay in place).
  const region = withProviderCompactions(messages, providers, keepStart).filter(notCheckpoint);
  const seenSystem = new Set(region.filter((m) => m.role === "system").map((m) => canonicalJson(m.content)));
  const system: Message[] = [];
  for (let i = 0; i < keepStart; i++) {
    const m = messages[i]!;
    if (m.role !== "system") continue;
    const key = canonicalJson(m.content);
    if (seenSystem.has(key)) continue;
    seenSystem.add(key);
    system.push(m);
  }

  // 2. Older plain user messages within the budget (the current instructions always).
  const users = retainOlderUsers(
    messages,
    round,
    keepStart,
    options.retainedUserTokens ?? DEFAULT_RETAINED_USER_TOKENS,
    estimator,
  );

  // 3. Branch summaries before the kept part, verbatim (those inside it stay in place).
  const branches = messages.slice(0, keepStart).filter(isBranchSummary);

  // 5. The recent tail and the protected round, with tool results bounded to 8 KiB; the recent tail
  // redacted as prune-only redacts what it keeps outside the round (the round itself is the contract's).
  const tail = withProviderCompactions(messages, providers, keepStart, round.regionStart).filter(
    notCheckpoint,
  ).length;
  const kept = region.map(boundMessage);
  if (tail > 0) {
    const instructions = new Set<Message>();
    for (const i of round.instructionIndices) if (i >= keepStart) instructions.add(messages[i]!);
    for (let k = 0; k < tail; k++) kept[k] = redactTailMessage(kept[k]!, region[k]!, instructions);
  }
  const coverage = coverageReceipt("summary", kept.slice(tail), anchors);
  if (providers.kept) coverage.provider_compactions_kept = 1;
  if (providers.folded.length > 0) coverage.provider_compactions_folded = providers.folded.length;
  const provider = providers.kept ? [providers.kept.prefix] : [];
  return { system, provider, providers, users, branches, kept, keepStart, coverage, anchors, round };
}

/**
 * The tokens a replacement spends on everything but its summary: the verbatim
 * parts and the checkpoint's own frame (coverage, anchors, live state).
 */
export function verbatimTokens(
  parts: ReplacementParts,
  liveState: LiveState | undefined,
  estimator: TokenEstimator = fastEstimator,
): number {
  const frame = buildCheckpoint("", parts.coverage, parts.anchors, liveState, providerNotes(parts.providers));
  return estimateTokens(
    [...parts.system, ...parts.provider, ...parts.users, ...parts.branches, frame, ...parts.kept],
    estimator,
  );
}

export function buildReplacementHistory(
  messages: readonly Message[],
  options: ReplacementOptions,
): ReplacementResult {
  const parts = options.parts ?? replacementParts(messages, options);
  const { system, provider, providers, users, branches, kept, coverage, anchors, round } = parts;
  // 4. Exactly one checkpoint.
  const checkpoint = buildCheckpoint(
    options.summary,
    coverage,
    anchors,
    options.liveState,
    providerNotes(providers),
  );

  const replacement = [...system, ...provider, ...users, ...branches, checkpoint, ...kept];
  const verdict = validateSurvivalContract(messages, replacement, { anchors, path: "summary", round });
  if (!verdict.valid) return { ok: false, error: `replacement refused: ${verdict.reason}` };
  return { ok: true, replacement, checkpoint, coverage };
}
