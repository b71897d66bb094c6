/**
 * Context pressure: the larger of the estimated live-context tokens and the
 * latest billed parent prompt (plus an estimate of what came after it).
 * Usage billed to child agents or tool sub-calls never counts.
 */
import type { Message, Usage } from "../model/types.js";
import { isAssistantRole } from "../model/blocks.js";
import { estimateTokens, fastEstimator, type TokenEstimator } from "./tokens.js";
import { CONSTANTS } from "../model/constants.js";

export interface PressureState {
  messages: readonly Message[];
  /**
   * The latest billed parent prompt, when the host tracks it itself:
   * `tokens` billed for the request whose answer is `messages[index]`.
   * When absent it is read from the messages' recorded `usage`.
   */
  billed?: { tokens: number; index: number };
  estimator?: TokenEstimator;
}

export interface Pressure {
  /** The pressure in tokens: max(estimate, billed + estimate after the billed prompt). */
  tokens: number;
  estimate: number;
  /** Latest billed parent prompt tokens, when known. */
  billedParentPromptTokens: number | null;
  /** Estimated tokens of what came after that prompt. */
  afterBilled: number;
}

/** Prompt size of one request: input plus cache creation plus cache reads. */
export function billedPromptTokens(u: Usage): number {
  return (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
}

/** The latest parent (non-child) billed prompt recorded on an assistant message. */
export function latestBilledParent(
  messages: readonly Message[],
): { tokens: number; index: number } | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (!isAssistantRole(m) || !m.usage || m.usage.scope === "child") continue;
    const tokens = billedPromptTokens(m.usage);
    if (tokens > 0) return { tokens, index: i };
  }
  return undefined;
}

export function measurePressure(state: PressureState): Pressure {
  const estimator = state.estimator ?? fastEstimator;
  const estimate = estimateTokens(state.messages, estimator);
  const billed = state.billed ?? latestBilledParent(state.messages);
  if (!billed) return { tokens: estimate, estimate, billedParentPromptTokens: null, afterBilled: 0 };
  // The billed prompt covers everything before the answer; the answer and what follows are estimated.
  const afterBilled = estimateTokens(state.messages.slice(billed.index), estimator);
  return {
    tokens: Math.max(estimate, billed.tokens + afterBilled),
    estimate,
    billedParentPromptTokens: billed.tokens,
    afterBilled,
  };
}

export interface PressureOptions {
  /** The model's context window, in tokens. */
  window: number;
  /** Fraction of the window (0–1) at which to compact; default 0.8. */
  threshold?: number;
}

export interface CompactDecision extends Pressure {
  compact: boolean;
  thresholdTokens: number;
}

export function shouldCompact(state: PressureState, options: PressureOptions): CompactDecision {
  const threshold = options.threshold ?? CONSTANTS.threshold;
  if (!(options.window > 0))
    throw new RangeError(`window must be a positive number of tokens, got ${options.window}`);
  if (!(threshold > 0 && threshold <= 1))
    throw new RangeError(`threshold must be a fraction in (0, 1], got ${threshold}`);
  const p = measurePressure(state);
  const thresholdTokens = Math.floor(options.window * threshold);
  return { ...p, compact: p.tokens >= thresholdTokens, thresholdTokens };
}

/**
 * The one default target of a compaction, in estimated tokens: half the
 * model's window when one is given; but a compaction must still shrink, so
 * when the live context is already at or under that (or no window is given),
 * half the live size.
 */
export function defaultTarget(liveTokens: number, window?: number): number {
  const half = window !== undefined ? Math.floor(window / 2) : undefined;
  return half !== undefined && liveTokens > half ? half : Math.floor(liveTokens / 2);
}

/** A history rewrite clears the billed figure: the replacement carries no recorded usage. */
export function clearBilledUsage(messages: readonly Message[]): Message[] {
  return messages.map((m) => {
    if (m.usage === undefined) return m;
    const copy = { ...m };
    delete copy.usage;
    return copy;
  });
}
