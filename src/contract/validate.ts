/**
 * The survival-contract validators. Pure functions: they never mutate their
 * input, and return the reason that names what was lost.
 */
import type { Block, Message, ToolResultBlock, ToolUseBlock } from "../model/types.js";
import { canonicalJson, isAssistantRole, isText, isToolResult, isToolUse } from "../model/blocks.js";
import {
  allText,
  checkpointMarkerOf,
  checkpointsOf,
  checkpointText,
  isBranchSummary,
  isCheckpoint,
  isExporterTextBlock,
  userWords,
} from "./classify.js";
import { protectedRound, type ProtectedRound } from "./rounds.js";
import { isValidBoundedResult, resultOverBound } from "./bounds.js";
import { placeholderKind } from "./placeholder.js";
import type { CompactionPath } from "../model/types.js";

export interface ValidationResult {
  valid: boolean;
  /** One line naming what was lost, or null when valid. */
  reason: string | null;
}

export interface SurvivalOptions {
  /** The user's pinned anchors (verbatim text), if any. */
  anchors?: string;
  /** `summary` (default) or `prune-only`. */
  path?: CompactionPath;
  /** `protectedRound(original)`, when the caller already computed it (saves recomputing it). */
  round?: ProtectedRound;
  /**
   * Name a message of `original` in a reason by its place from the end
   * (`message 3 from the end`, 1 the last) instead of its index: what an agent's
   * hook says, as it reads only the end of a long session.
   */
  fromEnd?: boolean;
}

const OK: ValidationResult = { valid: true, reason: null };
const fail = (reason: string): ValidationResult => ({ valid: false, reason });

/** A bounded, single-line quotation for reasons. */
export function quote(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max)}…` : flat);
}

/** A count per key (a multiset): each protected item needs its own copy in the replacement. */
class Counts {
  private readonly map = new Map<string, number>();
  add(key: string): void {
    this.map.set(key, (this.map.get(key) ?? 0) + 1);
  }
  /** Takes one copy; false when none is left. */
  take(key: string): boolean {
    const n = this.map.get(key) ?? 0;
    if (n <= 0) return false;
    this.map.set(key, n - 1);
    return true;
  }
}

interface ReplacementIndex {
  userTexts: Counts;
  assistantTexts: Counts;
  systemTexts: Set<string>;
  toolUses: Map<string, ToolUseBlock[]>;
  toolResults: Map<string, ToolResultBlock[]>;
  thinking: Counts;
  redacted: Counts;
  imageUrls: Counts;
  opaque: Counts;
}

const KNOWN = new Set(["text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image_url"]);
/**
 * A provider's own summary in the protected round is folded into the new
 * checkpoint, as an earlier checkpoint's text is: not required to survive.
 */
const PROVIDER_SUMMARY = "provider_compaction";

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

const thinkingKey = (b: Block): string => {
  const t = b as { thinking: string; signature?: string };
  return `${t.thinking}\u0000${t.signature ?? ""}`;
};

/** An image block's URL; a malformed block (no `image_url`) never matches a real one. */
const imageUrl = (b: Block): string => {
  const image = (b as { image_url?: { url?: unknown } }).image_url;
  return typeof image?.url === "string" ? canonicalJson(image) : "\u0000(no url)";
};

function indexReplacement(replacement: readonly Message[]): ReplacementIndex {
  const idx: ReplacementIndex = {
    userTexts: new Counts(),
    assistantTexts: new Counts(),
    systemTexts: new Set(),
    toolUses: new Map(),
    toolResults: new Map(),
    thinking: new Counts(),
    redacted: new Counts(),
    imageUrls: new Counts(),
    opaque: new Counts(),
  };
  for (const m of replacement) {
    const assistant = isAssistantRole(m);
    for (const b of m.content) {
      if (isText(b)) {
        if (m.role === "user") idx.userTexts.add(b.text);
        else if (assistant) idx.assistantTexts.add(b.text);
        else if (m.role === "system") idx.systemTexts.add(b.text);
      } else if (isToolUse(b)) push(idx.toolUses, b.id, b);
      else if (isToolResult(b)) push(idx.toolResults, b.tool_use_id, b);
      else if (b.type === "thinking" && assistant) idx.thinking.add(thinkingKey(b));
      else if (b.type === "redacted_thinking" && assistant) idx.redacted.add((b as { data: string }).data);
      else if (b.type === "image_url") idx.imageUrls.add(imageUrl(b));
      else if (!KNOWN.has(b.type)) idx.opaque.add(canonicalJson(b));
    }
  }
  return idx;
}

function sameCall(a: ToolUseBlock, b: ToolUseBlock): boolean {
  if (a.name !== b.name) return false;
  if (a.input !== b.input && JSON.stringify(a.input) !== JSON.stringify(b.input)) {
    // Same content with another key order is the same input.
    if (canonicalJson(a.input) !== canonicalJson(b.input)) return false;
  }
  return a.thought_signature === b.thought_signature;
}

/** Why `kept` is not `original` kept under the contract's bound, or undefined when it is. */
function resultDifference(original: ToolResultBlock, kept: ToolResultBlock): string | undefined {
  if (!isValidBoundedResult(original.content, kept.content))
    return "content altered or not bounded correctly";
  if ((original.is_error === true) !== (kept.is_error === true))
    return original.is_error === true ? "is_error dropped" : "is_error altered";
  // Nested blocks are kept as they are, or dropped with a result over the bound.
  const keptNested = kept.content_blocks ?? [];
  if (keptNested.length === 0 && resultOverBound(original)) return undefined;
  if (canonicalJson(original.content_blocks ?? []) !== canonicalJson(keptNested))
    return "content_blocks dropped or altered";
  return undefined;
}

/** A count per object (a multiset by identity). */
class Refs {
  private readonly map = new Map<Block, number>();
  add(b: Block): void {
    this.map.set(b, (this.map.get(b) ?? 0) + 1);
  }
  has(b: Block): boolean {
    return this.map.has(b);
  }
  take(b: Block): boolean {
    const n = this.map.get(b) ?? 0;
    if (n <= 0) return false;
    this.map.set(b, n - 1);
    return true;
  }
}

/**
 * Whether every item the last round protects is in `replacement` as the very
 * same block object, in a message of the role the full check asks for, each
 * copy matched by its own (the engine keeps the round's blocks as they are).
 * Then the full check holds too (a block is equal to itself), without keying
 * every text of both histories by its value; when not, the full check runs
 * and names what differs.
 */
function coveredByIdentity(
  original: readonly Message[],
  replacement: readonly Message[],
  round: ProtectedRound,
): boolean {
  const userTexts = new Refs();
  const assistantTexts = new Refs();
  const systemTexts = new Refs();
  const assistantThinking = new Refs();
  const blocks = new Refs();
  for (const m of replacement) {
    const assistant = isAssistantRole(m);
    for (const b of m.content) {
      if (isText(b)) {
        if (m.role === "user") userTexts.add(b);
        else if (assistant) assistantTexts.add(b);
        else if (m.role === "system") systemTexts.add(b);
      } else if (b.type === "thinking" || b.type === "redacted_thinking") {
        if (assistant) assistantThinking.add(b);
      } else blocks.add(b);
    }
  }
  for (const i of round.instructionIndices)
    for (const b of userWords(original[i]!)) if (!userTexts.take(b)) return false;
  const instructions = new Set(round.instructionIndices);
  for (let i = round.regionStart; i < original.length; i++) {
    const m = original[i]!;
    const assistant = isAssistantRole(m);
    const folded = isCheckpoint(m) || isBranchSummary(m);
    for (const b of m.content) {
      if (isToolUse(b) || isToolResult(b)) {
        if (!blocks.take(b)) return false;
      } else if (isText(b)) {
        if (b.text.trim().length === 0 || folded || instructions.has(i) || isExporterTextBlock(b.text))
          continue;
        if (
          assistant ? !assistantTexts.take(b) : m.role === "system" ? !systemTexts.has(b) : !userTexts.take(b)
        )
          return false;
      } else if (b.type === "thinking" || b.type === "redacted_thinking") {
        if (assistant && !assistantThinking.take(b)) return false;
      } else if (b.type === "image_url" || (!KNOWN.has(b.type) && b.type !== PROVIDER_SUMMARY)) {
        if (!blocks.take(b)) return false;
      }
    }
  }
  return true;
}

/**
 * Checks the protected last round of `original` against `replacement`: every
 * instruction, protected call and result (with every field the contract marks
 * as surviving), user, system and assistant text, signed thinking, image and
 * opaque block must be present, each protected copy matched by its own copy
 * in the replacement.
 */
export function validateLastRoundCoverage(
  original: readonly Message[],
  replacement: readonly Message[],
  round: ProtectedRound = protectedRound(original),
  fromEnd = false,
): ValidationResult {
  if (coveredByIdentity(original, replacement, round)) return OK;
  const at = (i: number): string =>
    fromEnd ? `message ${original.length - i} from the end` : `message ${i}`;
  const idx = indexReplacement(replacement);
  const instructions = new Set(round.instructionIndices);

  for (const i of round.instructionIndices) {
    for (const b of userWords(original[i]!)) {
      if (!idx.userTexts.take(b.text)) {
        return fail(`last round: user text ${quote(b.text)} missing (${at(i)})`);
      }
    }
  }

  for (let i = round.regionStart; i < original.length; i++) {
    const m = original[i]!;
    const assistant = isAssistantRole(m);
    // A checkpoint in the region is folded into the new one; branch summaries are checked on their own;
    // an exporter's opener or result-as-text is not the user's words.
    const folded = isCheckpoint(m) || isBranchSummary(m);
    for (const b of m.content) {
      if (isToolUse(b)) {
        const found = idx.toolUses.get(b.id);
        if (!found || found.length === 0)
          return fail(`last round: tool call ${JSON.stringify(b.id)} (${b.name}) missing (${at(i)})`);
        const k = found.findIndex((c) => sameCall(b, c));
        if (k < 0) {
          return fail(
            `last round: tool call ${JSON.stringify(b.id)} altered (name, input or thought_signature differs)`,
          );
        }
        found.splice(k, 1);
      } else if (isToolResult(b)) {
        const found = idx.toolResults.get(b.tool_use_id);
        if (!found || found.length === 0)
          return fail(`last round: tool result ${JSON.stringify(b.tool_use_id)} missing (${at(i)})`);
        const k = found.findIndex((r) => resultDifference(b, r) === undefined);
        if (k < 0) {
          return fail(
            `last round: tool result ${JSON.stringify(b.tool_use_id)} ${resultDifference(b, found[0]!)} (${at(i)})`,
          );
        }
        found.splice(k, 1);
      } else if (isText(b)) {
        if (b.text.trim().length === 0 || folded || instructions.has(i) || isExporterTextBlock(b.text))
          continue;
        if (assistant) {
          if (!idx.assistantTexts.take(b.text))
            return fail(`last round: assistant text ${quote(b.text)} missing (${at(i)})`);
        } else if (m.role === "system") {
          if (!idx.systemTexts.has(b.text))
            return fail(`last round: system text ${quote(b.text)} missing (${at(i)})`);
        } else if (!idx.userTexts.take(b.text)) {
          return fail(`last round: user text ${quote(b.text)} missing (${at(i)})`);
        }
      } else if (b.type === "thinking") {
        if (assistant && !idx.thinking.take(thinkingKey(b))) {
          const t = b as { thinking: string };
          return fail(`last round: thinking block ${quote(t.thinking, 40)} missing or altered (${at(i)})`);
        }
      } else if (b.type === "redacted_thinking") {
        if (assistant && !idx.redacted.take((b as { data: string }).data)) {
          return fail(`last round: redacted thinking missing or altered (${at(i)})`);
        }
      } else if (b.type === "image_url") {
        const url = imageUrl(b);
        if (!idx.imageUrls.take(url)) return fail(`last round: image ${quote(url, 40)} missing (${at(i)})`);
      } else if (!KNOWN.has(b.type) && b.type !== PROVIDER_SUMMARY) {
        if (!idx.opaque.take(canonicalJson(b))) {
          const r = b as { id?: unknown; tool_use_id?: unknown };
          const id = typeof r.id === "string" ? r.id : typeof r.tool_use_id === "string" ? r.tool_use_id : "";
          return fail(`last round: ${b.type} block ${JSON.stringify(id)} missing or altered (${at(i)})`);
        }
      }
    }
  }
  return OK;
}

/** Every call in the replacement has its result after it (unless in flight in the original), and vice versa. */
export function validatePairing(
  original: readonly Message[],
  replacement: readonly Message[],
): ValidationResult {
  const callsBefore = new Set<string>();
  let orphans: Set<string> | undefined;
  for (let i = 0; i < replacement.length; i++) {
    const m = replacement[i]!;
    for (const b of m.content) {
      if (isToolResult(b) && !callsBefore.has(b.tool_use_id)) {
        // A result may stay without its call only when the original has it so too (a transcript cut mid-session).
        orphans ??= orphanResultIds(original);
        if (orphans.has(b.tool_use_id)) continue;
        return fail(
          `tool_result ${JSON.stringify(b.tool_use_id)} has no matching tool_use before it (message ${i})`,
        );
      }
    }
    for (const b of m.content) if (isToolUse(b)) callsBefore.add(b.id);
  }

  // Calls of the replacement with no result after them (usually none).
  const unanswered = new Map<string, number>();
  const resultsAfter = new Set<string>();
  for (let i = replacement.length - 1; i >= 0; i--) {
    const m = replacement[i]!;
    for (const b of m.content)
      if (isToolUse(b) && !resultsAfter.has(b.id) && !unanswered.has(b.id)) unanswered.set(b.id, i);
    for (const b of m.content) if (isToolResult(b)) resultsAfter.add(b.tool_use_id);
  }
  if (unanswered.size === 0) return OK;
  // Such a call may stay only when it is in flight in the original too: called there, with no result anywhere.
  const called = new Set<string>();
  const answered = new Set<string>();
  for (const m of original) {
    for (const b of m.content) {
      if (isToolUse(b) && unanswered.has(b.id)) called.add(b.id);
      else if (isToolResult(b) && unanswered.has(b.tool_use_id)) answered.add(b.tool_use_id);
    }
  }
  for (const [id, i] of unanswered) {
    if (!called.has(id) || answered.has(id))
      return fail(`tool_use ${JSON.stringify(id)} has no tool_result after it (message ${i})`);
  }
  return OK;
}

/** Ids of results that have no call with their id before them. */
function orphanResultIds(messages: readonly Message[]): Set<string> {
  const calls = new Set<string>();
  const out = new Set<string>();
  for (const m of messages) {
    for (const b of m.content) if (isToolResult(b) && !calls.has(b.tool_use_id)) out.add(b.tool_use_id);
    for (const b of m.content) if (isToolUse(b)) calls.add(b.id);
  }
  return out;
}

/** The summary part of a checkpoint: its text without the marker, cut before `## Coverage`. */
export function checkpointSummaryPart(m: Message): string {
  const text = allText(m).trimStart();
  const marker = checkpointMarkerOf(m) ?? "";
  let body = text.slice(marker.length);
  const cut = body.indexOf("\n## Coverage");
  if (cut >= 0) body = body.slice(0, cut);
  return body;
}

function textsContaining(messages: readonly Message[], needle: string): boolean {
  return messages.some((m) => m.content.some((b) => isText(b) && b.text.includes(needle)));
}

/**
 * The whole survival contract: last-round coverage, call/result pairing,
 * exactly one checkpoint (per path), no placeholder-only checkpoint, anchors
 * restated, branch summaries kept.
 */
export function validateSurvivalContract(
  original: readonly Message[],
  replacement: readonly Message[],
  options: SurvivalOptions = {},
): ValidationResult {
  const path = options.path ?? "summary";
  const coverage = validateLastRoundCoverage(original, replacement, options.round, options.fromEnd);
  if (!coverage.valid) return coverage;

  const pairing = validatePairing(original, replacement);
  if (!pairing.valid) return pairing;

  // A provider's summary counts as the checkpoint, with the guard's restatement after it (`checkpointsOf`).
  const checkpoints = checkpointsOf(replacement);
  if (path === "summary") {
    if (checkpoints.length === 0) return fail("missing checkpoint (the summary path writes exactly one)");
    if (checkpoints.length > 1)
      return fail(
        `more than one checkpoint (${checkpoints.length}); a later compaction must replace the earlier one`,
      );
  } else {
    const before = checkpointsOf(original).length;
    if (before > 0 && checkpoints.length !== 1) {
      return fail(
        checkpoints.length === 0
          ? "prune-only dropped the existing checkpoint"
          : `more than one checkpoint (${checkpoints.length}) after prune-only`,
      );
    }
    if (before === 0 && checkpoints.length > 0) return fail("prune-only wrote a new checkpoint");
  }

  // A provider's summary is the provider's (encrypted, or its own text): not judged as a placeholder.
  for (const c of checkpoints) {
    if (c.provider) continue;
    const m = replacement[c.at]!;
    const kind = placeholderKind(checkpointSummaryPart(m));
    if (kind) return fail(`placeholder-only checkpoint (${kind}): ${quote(checkpointSummaryPart(m), 40)}`);
  }

  const anchors = options.anchors?.trim() ?? "";
  if (anchors.length > 0) {
    if (path === "summary") {
      if (!checkpoints.some((c) => checkpointText(replacement, c).includes(anchors)))
        return fail("anchors not restated in the checkpoint");
    } else if (textsContaining(original, anchors) && !textsContaining(replacement, anchors)) {
      return fail("anchors dropped by prune-only");
    }
  }

  const kept = new Set(replacement.filter(isBranchSummary).map(allText));
  for (const m of original) {
    if (isBranchSummary(m) && !kept.has(allText(m)))
      return fail(`branch summary ${quote(allText(m))} dropped`);
  }
  return OK;
}
