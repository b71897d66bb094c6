/**
 * Context pressure: the larger of the estimated live-context tokens and the
 * latest billed parent prompt (plus an estimate of what came after it).
 * Usage billed to child agents or tool sub-calls never counts.
 */
import type { Message, Usage } from "../model/types.js";
import { isAssistantRole } from "../model/blocks.js";
import {
  estimateTokens,
  fastEstimator,
  fastTokensCeiling,
  messageTokensAt,
  type TokenEstimator,
} from "./tokens.js";
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
  /**
   * What was measured at the last call of the same loop (see
   * `PressureMemo`): the messages it shares with the last call, by identity,
   * are not measured again. The figures are the same as without it.
   */
  memo?: PressureMemo;
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

/**
 * The measure of one agent loop's history across its steps. A step's history
 * is the last step's plus what came after it: the messages at the start that
 * are the very same objects as the last call's (compared by identity, one
 * pointer each) keep their estimate, and only the rest is measured. A
 * message is a value here: the adapters give a new object for a message the
 * host edited (the estimator itself keys its cache the same way).
 */
export class PressureMemo {
  private messages: Message[] = [];
  private estimator: TokenEstimator | undefined;
  /** Each message's estimate, and the running sum before each index (sums[i] = messages 0..i-1). */
  private each: number[] = [];
  private sums: number[] = [0];
  /** The indexes of the messages with a billed parent prompt, ascending. */
  private billedAt: number[] = [];
  /** Test hook: how many messages this memo has measured. */
  measured = 0;
  private readonly ceilings = new CeilingMemo();

  /**
   * True when `shouldCompact` with this memo would surely say "do not
   * compact": the default estimator's ceiling of the pressure
   * (`fastTokensCeiling` of each message, and the billed prompt as `measure`
   * reads it) is under the threshold. No message is estimated then, and no
   * text scanned; the figures are measured when they may matter (false says
   * only "measure"). A custom estimator, or options `shouldCompact` refuses:
   * false.
   */
  surelyBelow(state: PressureState, options: PressureOptions): boolean {
    const threshold = options.threshold ?? CONSTANTS.threshold;
    if (!(options.window > 0) || !(threshold > 0 && threshold <= 1)) return false;
    if (state.estimator !== undefined && state.estimator !== fastEstimator) return false;
    let ceiling: number;
    try {
      ceiling = this.ceilings.pressure(state);
    } catch {
      return false; // `measure` names the problem
    }
    return ceiling < Math.floor(options.window * threshold);
  }

  measure(state: PressureState): Pressure {
    const estimator = state.estimator ?? fastEstimator;
    const ms = state.messages;
    const old = this.messages;
    const p = estimator === this.estimator ? sharedStart(old, ms) : 0;
    // Forget first: an estimator that throws leaves nothing half-kept. The arrays are kept and
    // cut to the shared start, not copied (a copy of a long history per step costs more than the step).
    const kept = this.messages;
    this.messages = [];
    kept.length = p;
    this.estimator = estimator;
    this.each.length = p;
    this.sums.length = p + 1;
    const billedAt = cutBilled(this.billedAt, p);
    let sum = this.sums[p]!;
    for (let i = p; i < ms.length; i++) {
      const m = ms[i]!;
      const t = messageTokensAt(ms, i, estimator);
      this.each.push(t);
      sum += t;
      this.sums.push(sum);
      if (carriesBilled(m)) billedAt.push(i);
      kept.push(m);
    }
    this.measured += ms.length - p;
    this.messages = kept;
    const estimate = sum;
    const billed = billedPrompt(state, billedAt);
    if (!billed) return { tokens: estimate, estimate, billedParentPromptTokens: null, afterBilled: 0 };
    let afterBilled = 0;
    for (let i = sliceStart(billed.index, ms.length); i < ms.length; i++) afterBilled += this.each[i]!;
    return {
      tokens: Math.max(estimate, billed.tokens + afterBilled),
      estimate,
      billedParentPromptTokens: billed.tokens,
      afterBilled,
    };
  }
}

/** How many messages at the start of `ms` are the very objects at the start of `old`. */
function sharedStart(old: readonly Message[], ms: readonly Message[]): number {
  const lim = Math.min(old.length, ms.length);
  let p = 0;
  while (p < lim && ms[p] === old[p]) p++;
  return p;
}

/** `billedAt` (ascending indexes) without those from `p` on: the same array. */
function cutBilled(billedAt: number[], p: number): number[] {
  while (billedAt.length > 0 && billedAt[billedAt.length - 1]! >= p) billedAt.pop();
  return billedAt;
}

/**
 * The billed prompt a pressure reads: the state's, else that of the last message (of `billedAt`, the
 * indexes of `state.messages` that carry one) that carries one.
 */
function billedPrompt(state: PressureState, billedAt: readonly number[]): PressureState["billed"] {
  if (state.billed || billedAt.length === 0) return state.billed;
  const at = billedAt[billedAt.length - 1]!;
  return { tokens: billedPromptTokens(state.messages[at]!.usage!), index: at };
}

/** Where `messages.slice(index)` starts in `length` messages (a host's index may be negative or fractional). */
function sliceStart(index: number, length: number): number {
  const k = Math.trunc(index) || 0;
  return k < 0 ? Math.max(0, length + k) : k;
}

/** Whether an assistant message carries the billed prompt of its request (what `measure` reads). */
const carriesBilled = (m: Message): boolean =>
  m.usage !== undefined && isAssistantRole(m) && m.usage.scope !== "child" && billedPromptTokens(m.usage) > 0;

/**
 * Ceilings of one agent loop's history across its steps (`fastTokensCeiling`
 * of each message), kept as `PressureMemo` keeps its estimates: the messages
 * at the start that are the very same objects as the last call's keep theirs.
 */
class CeilingMemo {
  private messages: Message[] = [];
  /** The running sum before each index (sums[i] = messages 0..i-1). */
  private sums: number[] = [0];
  /** The indexes of the messages with a billed parent prompt, ascending. */
  private billedAt: number[] = [];

  /** The ceiling of the pressure `PressureMemo.measure` would give for `state` (the default estimator). */
  pressure(state: PressureState): number {
    const ms = state.messages;
    const old = this.messages;
    const p = sharedStart(old, ms);
    // Forget first: a read that throws leaves nothing half-kept.
    this.messages = [];
    old.length = p;
    this.sums.length = p + 1;
    const billedAt = cutBilled(this.billedAt, p);
    let sum = this.sums[p]!;
    for (let i = p; i < ms.length; i++) {
      const m = ms[i]!;
      sum += fastTokensCeiling(m);
      this.sums.push(sum);
      if (carriesBilled(m)) billedAt.push(i);
      old.push(m);
    }
    this.messages = old;
    const billed = billedPrompt(state, billedAt);
    if (!billed) return sum;
    const from = sliceStart(billed.index, ms.length);
    const after = from < ms.length ? sum - this.sums[from]! : 0;
    return Math.max(sum, billed.tokens + after);
  }
}

export function measurePressure(state: PressureState): Pressure {
  if (state.memo) return state.memo.measure(state);
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
  const out: Message[] = [];
  for (const m of messages) {
    if (m.usage === undefined) {
      out.push(m);
      continue;
    }
    const copy = { ...m };
    delete copy.usage;
    out.push(copy);
  }
  return out;
}
