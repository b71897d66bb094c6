/**
 * Token estimates. The default estimator is fast (a character-class
 * heuristic, calibrated against the prompt sizes billed in real Claude Code
 * sessions; see `npm run bench`) and cached per message object. An exact
 * BPE tokenizer (gpt-tokenizer, o200k_base) can be selected instead.
 */
import type { Block, Message } from "../model/types.js";

export interface TokenEstimator {
  readonly name: string;
  /** Tokens of a whole message, including its framing. */
  message(m: Message): number;
  /** Tokens of a bare string. */
  text(s: string): number;
}

/** Calibration constants for the fast estimator (see bench/calibrate). */
export const FAST_CALIBRATION = {
  /** ASCII characters per token. */
  asciiCharsPerToken: 3.6,
  /** Tokens per non-ASCII code unit (CJK, emoji, accents). */
  nonAsciiTokensPerChar: 0.9,
  /** Framing per message (role, separators). */
  perMessage: 4,
  /** Framing per content block. */
  perBlock: 3,
  /** An image, whatever its size (providers bill roughly 1,000–1,600 tokens). */
  perImage: 1500,
};

function fastText(s: string): number {
  let ascii = 0;
  let other = 0;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) < 0x80) ascii++;
    else other++;
  }
  return Math.ceil(ascii / FAST_CALIBRATION.asciiCharsPerToken + other * FAST_CALIBRATION.nonAsciiTokensPerChar);
}

function isImageBlock(b: Block): boolean {
  if (b.type === "image" || b.type === "image_url") return true;
  return false;
}

/** The text that a block costs, for estimators that work on strings. */
export function blockCostText(b: Block): string {
  switch (b.type) {
    case "text":
      return (b as { text: string }).text;
    case "thinking":
      return (b as { thinking: string }).thinking;
    case "redacted_thinking":
      return "";
    case "tool_use": {
      const t = b as { name: string; input: unknown };
      return `${t.name} ${typeof t.input === "string" ? t.input : JSON.stringify(t.input ?? null)}`;
    }
    case "tool_result":
      return (b as { content: string }).content;
    default:
      if (isImageBlock(b)) return "";
      return JSON.stringify(b);
  }
}

function blockTokens(b: Block, text: (s: string) => number): number {
  let n = FAST_CALIBRATION.perBlock;
  if (isImageBlock(b)) return n + FAST_CALIBRATION.perImage;
  n += text(blockCostText(b));
  if (b.type === "tool_result") {
    const nested = (b as { content_blocks?: Block[] }).content_blocks;
    if (nested) for (const c of nested) n += blockTokens(c, text);
  }
  return n;
}

function makeEstimator(name: string, text: (s: string) => number): TokenEstimator {
  const cache = new WeakMap<Message, number>();
  return {
    name,
    text,
    message(m: Message): number {
      const hit = cache.get(m);
      if (hit !== undefined) return hit;
      let n = FAST_CALIBRATION.perMessage;
      for (const b of m.content) n += blockTokens(b, text);
      cache.set(m, n);
      return n;
    },
  };
}

/** The default: fast, heuristic, cached per message object. */
export const fastEstimator: TokenEstimator = makeEstimator("fast", fastText);

let exact: TokenEstimator | undefined;

/** An exact BPE tokenizer (o200k_base via gpt-tokenizer), loaded on first use. */
export async function exactEstimator(): Promise<TokenEstimator> {
  if (!exact) {
    const mod = await import("gpt-tokenizer/encoding/o200k_base");
    const count = (s: string): number => (s.length === 0 ? 0 : mod.countTokens(s));
    exact = makeEstimator("o200k_base", count);
  }
  return exact;
}

/** Estimated tokens of a message array. */
export function estimateTokens(messages: readonly Message[], estimator: TokenEstimator = fastEstimator): number {
  let n = 0;
  for (const m of messages) n += estimator.message(m);
  return n;
}
