/**
 * Token estimates.
 *
 * The default estimator (`fastEstimator`) is a character-class heuristic,
 * cached per message (a `WeakMap` keyed on the message's `content` array, so
 * shallow copies share the entry, and editing a content array in place is not
 * seen: the engine never mutates messages, it copies them). An exact BPE
 * tokenizer (`exactEstimator()`: gpt-tokenizer, o200k_base) can be selected
 * instead; note that o200k_base is OpenAI's vocabulary, so on Claude it is
 * "exact" only for OpenAI models and under-counts Claude prompts by 20–30 %.
 *
 * What an estimate covers. `estimateTokens(messages)` counts the messages
 * only. A real request also carries what the host adds to every request (its
 * system prompt and tool definitions: Claude Code sends 15k–45k tokens of
 * these) which is not part of the message array. A host that wants the full
 * prompt size passes it as `overhead`, either measured (`fastEstimator.text`
 * of its system prompt and serialized tool schemas) or calibrated from the
 * first billed request with `calibrateOverhead(billed, sentMessages)`. The
 * default overhead is 0, so that `estimateTokens` keeps meaning "the size of
 * these messages" (what compaction shrinks) and no hidden constant skews
 * `tokens_before`/`tokens_after`.
 *
 * Thinking of earlier turns. Anthropic's API drops the thinking blocks of
 * assistant turns before the latest user turn from the prompt for most
 * models, but Claude Opus 4.5 and later keep them (both behaviours are
 * visible in the billed prompts of the corpus). The default `priorThinking:
 * "keep"` counts them (the conservative choice for a pressure check: it never
 * under-estimates); `"drop"` counts only the current turn's thinking, and
 * `priorThinkingFor(model)` picks the policy for an Anthropic model name.
 *
 * Calibration (`FAST_CALIBRATION`) was fitted against the prompt sizes billed
 * in the real Claude Code sessions of the corpus (`node dist/bench/calibrate.js`
 * re-runs the fit and its leave-one-session-out check; `npm run bench` reports
 * the error per file). Claude's tokenizer yields about 3 ASCII characters per
 * token on coding sessions (tool payloads slightly denser than prose).
 */
import type { Block, Message } from "../model/types.js";
import { ModelError, checkDepth } from "../model/schema.js";
import { MAX_MESSAGE_DEPTH } from "../model/depth.js";
import { importOptional } from "../model/optional-package.js";

export interface TokenEstimator {
  readonly name: string;
  /** Tokens of a whole message, including its framing. */
  message(m: Message): number;
  /** Tokens of a bare string. */
  text(s: string): number;
  /**
   * Tokens of the message's thinking and redacted-thinking blocks (included
   * in `message(m)`), for `priorThinking: "drop"`. Optional for custom
   * estimators: when absent it is computed from `text`.
   */
  thinking?(m: Message): number;
  /**
   * Tokens of the message's thinking blocks that carry no signature (part of
   * `thinking(m)`): the Anthropic exporter never sends them. Optional, like
   * `thinking`.
   */
  unsignedThinking?(m: Message): number;
}

/** The constants of the fast estimator. */
export interface FastCalibration {
  /** ASCII characters per token in prose: text and thinking blocks. */
  readonly proseCharsPerToken: number;
  /** ASCII characters per token in structured payloads: tool inputs, tool results, other blocks. */
  readonly codeCharsPerToken: number;
  /** Tokens per non-ASCII UTF-16 code unit (CJK, emoji, accents, box drawing). */
  readonly nonAsciiTokensPerChar: number;
  /** Framing per message (role, separators). */
  readonly perMessage: number;
  /** Framing per content block (block markup). */
  readonly perBlock: number;
  /** Extra framing per `tool_use` / `tool_result` block (call wrappers, ids), on top of `perBlock`. */
  readonly perToolBlock: number;
  /** An image, whatever its size (providers bill roughly 1,000–1,600 tokens). */
  readonly perImage: number;
}

/**
 * Calibrated against 860 billed Claude Code requests (9 sessions; Opus 4.5,
 * Opus 4.6, Sonnet 4.5, Sonnet 4, Haiku 4.5). See the module comment.
 */
export const FAST_CALIBRATION: FastCalibration = Object.freeze({
  proseCharsPerToken: 3.2,
  codeCharsPerToken: 3.3,
  nonAsciiTokensPerChar: 0.7,
  perMessage: 4,
  perBlock: 5,
  perToolBlock: 64,
  perImage: 1500,
});

// eslint-disable-next-line no-control-regex
const NON_ASCII_RUN = /[^\x00-\x7f]+/g;
// eslint-disable-next-line no-control-regex
const ASCII_ONLY = /^[\x00-\x7f]*$/;
interface NodeBufferLike extends Uint8Array {
  write(s: string, offset: number, encoding: "utf16le"): number;
}
const nodeBuffer = (
  globalThis as {
    Buffer?: {
      byteLength(s: string, enc: "utf8"): number;
      alloc(size: number): NodeBufferLike;
    };
  }
).Buffer;
const utf8Length = nodeBuffer ? (s: string): number => nodeBuffer.byteLength(s, "utf8") : undefined;

/** Code units read as 16-bit numbers in this machine's order are UTF-16LE's (not on a big-endian machine). */
const LITTLE_ENDIAN = new Uint16Array(new Uint8Array([1, 0]).buffer)[0] === 1;
/** Strings up to this many code units are copied into one buffer, made on first use (256 KB); longer ones into their own. */
const UNITS_SCRATCH = 1 << 17;
/** A buffer for a string's UTF-16LE bytes, seen as 32-bit words (two code units each). */
interface UnitsBuffer {
  bytes: NodeBufferLike;
  pairs: Uint32Array;
}
let unitsScratch: UnitsBuffer | undefined;

/** A buffer of `units` code units (rounded up to an even number), its bytes from offset 0 of their own memory. */
function unitsBuffer(buffer: { alloc(size: number): NodeBufferLike }, units: number): UnitsBuffer {
  const bytes = buffer.alloc(units * 2 + 4);
  // A buffer this large has memory of its own: its words are aligned (the 32-bit view needs it).
  return { bytes, pairs: new Uint32Array(bytes.buffer, bytes.byteOffset, (units + 1) >> 1) };
}

/**
 * The code units of `s` above U+007F, counted in a copy of its UTF-16LE bytes (Node on a
 * little-endian machine; undefined elsewhere). The copy is read two units at a time, as 32-bit
 * words: a word with no bit above bit 6 in either unit is passed over at once, the others count
 * each unit that carries into bit 16 when 0xFF80 is added. About twice as fast as finding the
 * non-ASCII runs with a regular expression, on texts where such characters are spread through
 * code or tables, and a fifth faster than reading the units one at a time.
 */
function countNonAsciiUnits(s: string): number | undefined {
  // Past 4M units the copy would take more memory than it is worth: the regular expression counts those.
  if (!nodeBuffer || !LITTLE_ENDIAN || s.length > 1 << 22) return undefined;
  let buf: UnitsBuffer;
  if (s.length <= UNITS_SCRATCH) buf = unitsScratch ??= unitsBuffer(nodeBuffer, UNITS_SCRATCH);
  else buf = unitsBuffer(nodeBuffer, s.length);
  buf.bytes.write(s, 0, "utf16le");
  const { pairs } = buf;
  const whole = s.length >> 1;
  let other = 0;
  for (let i = 0; i < whole; i++) {
    const w = pairs[i]!;
    if ((w & 0xff80ff80) === 0) continue;
    other += (((w & 0xffff) + 0xff80) >>> 16) + (((w >>> 16) + 0xff80) >>> 16);
  }
  // An odd length's last unit is the low half of the next word (the high half is what an earlier text left).
  if ((s.length & 1) === 1) other += ((pairs[whole]! & 0xffff) + 0xff80) >>> 16;
  return other;
}

/** The UTF-16 code units of `s` outside ASCII. */
function nonAscii(s: string): number {
  // Fast path: most agent text is pure ASCII, which its UTF-8 length tells (Node's native count,
  // about twice as fast as a regex test; the regex elsewhere, so the core runs without Node).
  if (utf8Length ? utf8Length(s) === s.length : ASCII_ONLY.test(s)) return 0;
  const counted = countNonAsciiUnits(s);
  if (counted !== undefined) return counted;
  let other = 0;
  NON_ASCII_RUN.lastIndex = 0;
  for (let m = NON_ASCII_RUN.exec(s); m !== null; m = NON_ASCII_RUN.exec(s)) other += m[0].length;
  return other;
}

/**
 * What the counting functions below add to: ASCII characters and other
 * UTF-16 code units. The estimator reads them right after one block's count
 * (nothing here awaits); an object returned per block and per tool input was
 * most of what estimating a long history left for the collector.
 */
let countedAscii = 0;
let countedOther = 0;

/** Adds the characters of a string to the counts. */
function addText(s: string): void {
  const o = nonAscii(s);
  countedOther += o;
  countedAscii += s.length - o;
}

/**
 * The characters of a JSON value as `JSON.stringify` writes it, counted
 * without building the text: ASCII (punctuation, keys, numbers, string
 * contents) and other code units. Escapes are not counted (a string counts
 * its own length): on a large tool input (a patch, a file written) building
 * the JSON text cost more than everything else the estimate does. Nesting is
 * walked with a stack, not recursion, at most MAX_MESSAGE_DEPTH levels: a
 * deeper or cyclic value throws a `RangeError`, as `JSON.stringify` does for
 * a value too deep, which the estimator turns into the `ModelError` naming
 * the message's path (`explainOverflow`).
 */
export function jsonChars(value: unknown): { ascii: number; other: number } {
  countedAscii = 0;
  countedOther = 0;
  addJson(value);
  return { ascii: countedAscii, other: countedOther };
}

/** Adds the characters of a JSON value (see `jsonChars`) to the counts. */
function addJson(value: unknown): void {
  // Most tool inputs are one object of strings and numbers: counted without the walk's stacks.
  if (typeof value === "object" && value !== null && addFlatJson(value)) return;
  let ascii = 0;
  let other = 0;
  const todo: unknown[] = [value];
  const depths: number[] = [1];
  while (todo.length > 0) {
    const v = todo.pop();
    const depth = depths.pop()!;
    if (depth > MAX_MESSAGE_DEPTH && v !== null && typeof v === "object")
      throw new RangeError(`a value nested deeper than ${MAX_MESSAGE_DEPTH} levels (or cyclic)`);
    if (typeof v === "string") {
      const o = nonAscii(v);
      other += o;
      ascii += v.length - o + 2;
    } else if (typeof v === "number" || typeof v === "boolean") ascii += String(v).length;
    else if (v === null || v === undefined) ascii += 4;
    else if (Array.isArray(v)) {
      ascii += 1 + Math.max(1, v.length);
      for (let i = v.length - 1; i >= 0; i--) {
        todo.push(v[i]);
        depths.push(depth + 1);
      }
    } else if (typeof v === "object") {
      const keys = Object.keys(v);
      ascii += 1 + Math.max(1, keys.length);
      for (const k of keys) {
        const o = nonAscii(k);
        other += o;
        ascii += k.length - o + 3;
        todo.push((v as Record<string, unknown>)[k]);
        depths.push(depth + 1);
      }
    }
  }
  countedAscii += ascii;
  countedOther += other;
}

/** What `addFlatJson` has counted of the value it reads (added to the totals only when the whole is flat). */
let flatAscii = 0;
let flatOther = 0;

/** Counts a string, number, boolean, null or undefined as the walk does; false, for anything else. */
function addFlatValue(x: unknown): boolean {
  if (typeof x === "string") {
    const o = nonAscii(x);
    flatOther += o;
    flatAscii += x.length - o + 2;
  } else if (typeof x === "number" || typeof x === "boolean") flatAscii += String(x).length;
  else if (x === null || x === undefined) flatAscii += 4;
  else return false;
  return true;
}

/**
 * An array or object (its own enumerable keys, as the walk reads them)
 * holding only strings, numbers, booleans, null and undefined, counted as
 * the walk counts it; false, with nothing added, for anything else.
 */
function addFlatJson(v: object): boolean {
  flatAscii = 0;
  flatOther = 0;
  let n = 0;
  if (Array.isArray(v)) {
    n = v.length;
    for (let i = 0; i < n; i++) if (!addFlatValue(v[i])) return false;
  } else {
    const keys = Object.keys(v);
    n = keys.length;
    for (let i = 0; i < n; i++) {
      const k = keys[i]!;
      if (!addFlatValue((v as Record<string, unknown>)[k])) return false;
      const o = nonAscii(k);
      flatOther += o;
      flatAscii += k.length - o + 3;
    }
  }
  countedAscii += flatAscii + 1 + Math.max(1, n);
  countedOther += flatOther;
  return true;
}

/**
 * The characters a block costs for the fast estimator: those of
 * `blockCostText`, with a tool call's input counted as JSON by `jsonChars`
 * (never stringified).
 */
export function blockChars(b: Block): { ascii: number; other: number } {
  countedAscii = 0;
  countedOther = 0;
  addBlockChars(b);
  return { ascii: countedAscii, other: countedOther };
}

/** Adds the characters of a block (see `blockChars`) to the counts. */
function addBlockChars(b: Block): void {
  if (b.type === "tool_use") {
    const t = b as { name: string; input: unknown };
    const name = typeof t.name === "string" ? t.name : String(t.name);
    if (typeof t.input === "string") addText(t.input);
    else addJson(t.input ?? null);
    addText(name);
    countedAscii += 1;
    return;
  }
  addText(blockCostText(b));
}

function isImageBlock(b: Block): boolean {
  return b.type === "image" || b.type === "image_url";
}

/** Whether a block's text is prose (text, thinking) rather than a structured payload. */
export function isProseBlock(b: Block): boolean {
  return b.type === "text" || b.type === "thinking";
}

function isThinkingBlock(b: Block): boolean {
  return b.type === "thinking" || b.type === "redacted_thinking";
}

function isUnsignedThinking(b: Block): boolean {
  if (b.type !== "thinking") return false;
  const sig = (b as { signature?: unknown }).signature;
  return typeof sig !== "string" || sig.length === 0;
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

type TextCost = (s: string, prose: boolean) => number;
/** A block's cost from its character counts (the fast estimator), instead of its text. */
type CharsCost = (ascii: number, other: number, prose: boolean) => number;

/** A block and the blocks nested in it (`content_blocks` of tool results), walked without recursion. */
function blockTokens(block: Block, cost: TextCost, cal: FastCalibration, chars?: CharsCost): number {
  const nested =
    block.type === "tool_result" ? (block as { content_blocks?: Block[] }).content_blocks : undefined;
  // Most blocks hold none: counted without the walk's list.
  if (!nested) return oneBlockTokens(block, cost, cal, chars);
  let n = 0;
  const todo: Block[] = [block];
  for (let b = todo.pop(); b !== undefined; b = todo.pop()) {
    n += oneBlockTokens(b, cost, cal, chars);
    if (b.type === "tool_result") {
      const inner = (b as { content_blocks?: Block[] }).content_blocks;
      if (inner) for (let i = inner.length - 1; i >= 0; i--) todo.push(inner[i]!);
    }
  }
  return n;
}

/**
 * A block's tokens for the fast estimator: the text, thinking and tool-result
 * blocks (most of a history) counted here from their one text, the others
 * (and any block whose text is not a string) by `blockTokens`. The same
 * figure either way; on a long history the calls from block to text were
 * most of the first estimate's cost.
 */
function fastBlockTokens(b: Block, cost: TextCost, cal: FastCalibration, chars: CharsCost): number {
  let s: unknown;
  let framing = cal.perBlock;
  let prose = true;
  switch (b.type) {
    case "text":
      s = (b as { text: unknown }).text;
      break;
    case "thinking":
      s = (b as { thinking: unknown }).thinking;
      break;
    case "tool_result":
      if ((b as { content_blocks?: unknown }).content_blocks !== undefined) break;
      s = (b as { content: unknown }).content;
      framing += cal.perToolBlock;
      prose = false;
      break;
  }
  if (typeof s !== "string") return blockTokens(b, cost, cal, chars);
  if (s.length === 0) return framing;
  const other = nonAscii(s);
  return framing + chars(s.length - other, other, prose);
}

/** One block, without the blocks nested in it. */
function oneBlockTokens(b: Block, cost: TextCost, cal: FastCalibration, chars?: CharsCost): number {
  if (isImageBlock(b)) return cal.perBlock + cal.perImage;
  const framing =
    b.type === "tool_use" || b.type === "tool_result" ? cal.perBlock + cal.perToolBlock : cal.perBlock;
  if (!chars) return framing + cost(blockCostText(b), isProseBlock(b));
  countedAscii = 0;
  countedOther = 0;
  addBlockChars(b);
  return framing + chars(countedAscii, countedOther, isProseBlock(b));
}

/**
 * A message's content was too deep for `JSON.stringify` (a library caller's
 * value, not one read from a file: those are depth-checked when parsed).
 * Rethrown as the `ModelError` naming the path when the content is over the
 * nesting limit; any other error is rethrown as is.
 */
function explainOverflow(e: unknown, m: Message): never {
  if (e instanceof RangeError) checkDepth(m.content, "message.content");
  throw e;
}

function makeEstimator(
  name: string,
  cost: TextCost,
  cal: FastCalibration,
  chars?: CharsCost,
): TokenEstimator {
  // One cache entry per content array: the whole message's tokens, or [whole message, its
  // thinking blocks, those of them unsigned] when it has thinking (most messages have none: a
  // number, not an array, for them). Keyed on `m.content` rather than `m`, so that the shallow
  // copies the engine makes (e.g. to clear recorded usage) hit the cache: only the role and the
  // content are counted.
  const cache = new WeakMap<readonly Block[], number | [number, number, number]>();
  const measure = (m: Message): number | [number, number, number] => {
    const content = m.content;
    const hit = cache.get(content);
    if (hit !== undefined) return hit;
    let n = cal.perMessage;
    let thinking = 0;
    let unsigned = 0;
    try {
      for (let i = 0; i < content.length; i++) {
        const b = content[i]!;
        const t = chars ? fastBlockTokens(b, cost, cal, chars) : blockTokens(b, cost, cal, chars);
        n += t;
        if (isThinkingBlock(b)) {
          thinking += t;
          if (isUnsignedThinking(b)) unsigned += t;
        }
      }
    } catch (e) {
      explainOverflow(e, m);
    }
    // Unsigned thinking is part of the thinking: none of it when there is no thinking.
    const entry: number | [number, number, number] = thinking === 0 ? n : [n, thinking, unsigned];
    cache.set(content, entry);
    return entry;
  };
  const at = (m: Message, k: 1 | 2): number => {
    const e = measure(m);
    return typeof e === "number" ? 0 : e[k];
  };
  return {
    name,
    text: (s: string) => cost(s, true),
    message: (m: Message) => {
      const e = measure(m);
      return typeof e === "number" ? e : e[0];
    },
    thinking: (m: Message) => at(m, 1),
    unsignedThinking: (m: Message) => at(m, 2),
  };
}

/**
 * A fast estimator with the given constants (for hosts that calibrate
 * against their own provider; `FAST_CALIBRATION` is the default).
 */
export function createFastEstimator(
  calibration: FastCalibration = FAST_CALIBRATION,
  name = "fast",
): TokenEstimator {
  const cal = Object.freeze({ ...calibration });
  for (const [k, v] of Object.entries(cal)) {
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
      throw new RangeError(`calibration ${k} must be a finite number >= 0, got ${String(v)}`);
  }
  if (!(cal.proseCharsPerToken > 0) || !(cal.codeCharsPerToken > 0))
    throw new RangeError("calibration characters per token must be > 0");
  const chars: CharsCost = (ascii, other, prose) =>
    ascii + other === 0
      ? 0
      : Math.ceil(
          ascii / (prose ? cal.proseCharsPerToken : cal.codeCharsPerToken) +
            other * cal.nonAsciiTokensPerChar,
        );
  const cost: TextCost = (s, prose) => {
    if (s.length === 0) return 0;
    const other = nonAscii(s);
    return chars(s.length - other, other, prose);
  };
  return makeEstimator(name, cost, cal, chars);
}

/** The default: fast, heuristic, cached per message object. */
export const fastEstimator: TokenEstimator = createFastEstimator(FAST_CALIBRATION, "fast");

/** The most tokens `fastEstimator` counts per character, whatever the character. */
const CEILING_RATE = Math.max(
  1 / FAST_CALIBRATION.proseCharsPerToken,
  1 / FAST_CALIBRATION.codeCharsPerToken,
  FAST_CALIBRATION.nonAsciiTokensPerChar,
);

/**
 * A figure that `fastEstimator.message(m)` never exceeds, from the lengths of
 * the message's texts alone: each character counted at the highest rate (a
 * non-ASCII one's), so that no text is scanned for its non-ASCII characters
 * and nothing is cached. `Infinity` for a block it does not read that way (a
 * text that is not a string, an unknown block, a value no JSON holds). A
 * pressure check whose ceiling is under the threshold needs no estimate
 * (`PressureMemo.surelyBelow`).
 */
export function fastTokensCeiling(m: Message): number {
  const content = m.content;
  let n = FAST_CALIBRATION.perMessage;
  for (let i = 0; i < content.length; i++) n += blockCeiling(content[i]!, 1);
  return n;
}

/** A block's share of `fastTokensCeiling`, with the blocks nested in it (`depth` of them above it). */
function blockCeiling(b: Block, depth: number): number {
  const cal = FAST_CALIBRATION;
  let text: unknown;
  let chars = -1;
  let framing = cal.perBlock;
  let nested = 0;
  switch (b.type) {
    case "text":
      text = (b as { text: unknown }).text;
      break;
    case "thinking":
      text = (b as { thinking: unknown }).thinking;
      break;
    case "tool_result": {
      text = (b as { content: unknown }).content;
      framing += cal.perToolBlock;
      const inner = (b as { content_blocks?: unknown }).content_blocks;
      if (inner !== undefined) nested = nestedCeiling(inner, depth);
      break;
    }
    case "tool_use":
      chars = toolUseChars(b as { name: unknown; input: unknown });
      framing += cal.perToolBlock;
      break;
    case "redacted_thinking":
      chars = 0;
      break;
    case "image":
    case "image_url":
      chars = 0;
      framing += cal.perImage;
      break;
  }
  if (typeof text === "string") chars = text.length;
  // One more than the rate gives: no rounding of the estimate's sums can pass it.
  return chars < 0 ? Infinity : framing + Math.ceil(chars * CEILING_RATE) + 1 + nested;
}

/** The ceilings of a tool result's `content_blocks` (an array of blocks), or Infinity. */
function nestedCeiling(inner: unknown, depth: number): number {
  if (!Array.isArray(inner) || depth >= MAX_MESSAGE_DEPTH) return Infinity;
  let n = 0;
  for (let i = 0; i < inner.length; i++) {
    const b: unknown = inner[i];
    if (typeof b !== "object" || b === null) return Infinity;
    n += blockCeiling(b as Block, depth + 1);
  }
  return n;
}

/** The characters `addBlockChars` counts for a tool call (its name, a space, its input), or -1. */
function toolUseChars(b: { name: unknown; input: unknown }): number {
  if (typeof b.name !== "string") return -1;
  const x = b.input;
  const input = typeof x === "string" ? x.length : jsonLength(x, 1);
  return input < 0 ? -1 : input + b.name.length + 1;
}

/**
 * What `jsonChars` counts of a value (ASCII and other characters together,
 * `depth` levels from the input), or -1 for a value it does not count (no
 * JSON value, or nested past the limit).
 */
function jsonLength(x: unknown, depth: number): number {
  if (typeof x === "string") return x.length + 2;
  if (typeof x === "number" || typeof x === "boolean") return String(x).length;
  if (x === null || x === undefined) return 4;
  if (typeof x !== "object" || depth > MAX_MESSAGE_DEPTH) return -1;
  let total = 0;
  let n: number;
  if (Array.isArray(x)) {
    n = x.length;
    for (let i = 0; i < n; i++) {
      const v: unknown = x[i];
      const c = typeof v === "string" ? v.length + 2 : jsonLength(v, depth + 1);
      if (c < 0) return -1;
      total += c;
    }
  } else {
    const keys = Object.keys(x);
    n = keys.length;
    for (let i = 0; i < n; i++) {
      const k = keys[i]!;
      const v = (x as Record<string, unknown>)[k];
      // Most values are strings: counted here, without a call.
      const c = typeof v === "string" ? v.length + 2 : jsonLength(v, depth + 1);
      if (c < 0) return -1;
      total += c + k.length + 3;
    }
  }
  return total + 1 + Math.max(1, n);
}

let exact: TokenEstimator | undefined;

/**
 * An exact BPE tokenizer (o200k_base via gpt-tokenizer, an optional peer
 * dependency), loaded on first use; a `MissingPackageError` without it.
 * It counts text with the tokenizer and keeps the fast estimator's framing
 * constants (per message, per block, per image).
 */
export async function exactEstimator(): Promise<TokenEstimator> {
  if (!exact) {
    const mod = await importOptional(
      "gpt-tokenizer",
      "exactEstimator()",
      () => import("gpt-tokenizer/encoding/o200k_base"),
    );
    const count: TextCost = (s) => (s.length === 0 ? 0 : mod.countTokens(s));
    exact = makeEstimator("o200k_base", count, FAST_CALIBRATION);
  }
  return exact;
}

/** Whether the thinking of assistant turns before the latest user turn is counted. */
export type PriorThinking = "keep" | "drop";

export interface EstimateOptions {
  /**
   * Tokens that every request carries outside the messages (system prompt,
   * tool definitions), added once. Default 0: the estimate is the messages'
   * own size. See `calibrateOverhead`.
   */
  overhead?: number;
  /** Default `keep` (see the module comment and `priorThinkingFor`). */
  priorThinking?: PriorThinking;
}

/** Index of the latest user turn: a user message that is not only tool results; -1 when none. */
function latestUserTurn(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "user" && m.content.some((b) => b.type !== "tool_result")) return i;
  }
  return -1;
}

/** Tokens of the blocks of `m` that `pick` selects, by the estimator's text measure (block framing included). */
function pickedBlockTokens(m: Message, estimator: TokenEstimator, pick: (b: Block) => boolean): number {
  let n = 0;
  for (const b of m.content) if (pick(b)) n += FAST_CALIBRATION.perBlock + estimator.text(blockCostText(b));
  return n;
}

function thinkingTokens(m: Message, estimator: TokenEstimator): number {
  return estimator.thinking ? estimator.thinking(m) : pickedBlockTokens(m, estimator, isThinkingBlock);
}

function unsignedThinkingTokens(m: Message, estimator: TokenEstimator): number {
  return estimator.unsignedThinking
    ? estimator.unsignedThinking(m)
    : pickedBlockTokens(m, estimator, isUnsignedThinking);
}

/** Estimated tokens of the request each provider receives for these messages. */
export interface SentTokens {
  /** Anthropic Messages: thinking without a signature, and thinking outside assistant turns, are not sent. */
  anthropic: number;
  /** OpenAI Chat Completions: no thinking is sent. */
  openai: number;
}

/**
 * What the exporters send, estimated: the messages' tokens less the thinking
 * each provider never receives. Shrinking is judged on these figures, since
 * removing thinking that was never sent saves the user nothing.
 */
export function sentTokens(
  messages: readonly Message[],
  estimator: TokenEstimator = fastEstimator,
): SentTokens {
  const sent: SentTokens = { anthropic: 0, openai: 0 };
  for (const m of messages) addSentTokens(sent, m, estimator.message(m), estimator);
  return sent;
}

/** Adds one message, whose whole estimate is `tokens`, to `sent` (less the thinking each provider never receives). */
export function addSentTokens(sent: SentTokens, m: Message, tokens: number, estimator: TokenEstimator): void {
  sent.anthropic += tokens;
  sent.openai += tokens;
  const thinking = thinkingTokens(m, estimator);
  if (thinking === 0) return;
  sent.openai -= thinking;
  const assistant = m.role === "assistant" || m.role === "assistant_interrupted";
  sent.anthropic -= assistant ? unsignedThinkingTokens(m, estimator) : thinking;
}

/** The estimate of `messages[i]`; an estimator's error names the message (`messages[7].content[2]…`). */
export function messageTokensAt(
  messages: readonly Message[],
  i: number,
  estimator: TokenEstimator = fastEstimator,
): number {
  try {
    return estimator.message(messages[i]!);
  } catch (e) {
    if (e instanceof ModelError && e.path.startsWith("message."))
      throw new ModelError(`messages[${i}]${e.path.slice(7)}`, e.message.slice(e.path.length + 2));
    throw e;
  }
}

/** Estimated tokens of a message array (plus `options.overhead`). */
export function estimateTokens(
  messages: readonly Message[],
  estimator: TokenEstimator = fastEstimator,
  options: EstimateOptions = {},
): number {
  const overhead = options.overhead ?? 0;
  if (!Number.isFinite(overhead) || overhead < 0)
    throw new RangeError(`overhead must be a finite number of tokens >= 0, got ${overhead}`);
  let n = overhead;
  for (let i = 0; i < messages.length; i++) n += messageTokensAt(messages, i, estimator);
  if (options.priorThinking === "drop") {
    const turn = latestUserTurn(messages);
    for (let i = 0; i < turn; i++) {
      const m = messages[i]!;
      if (m.role !== "user" && m.role !== "system") n -= thinkingTokens(m, estimator);
    }
  }
  return n;
}

/**
 * The per-request overhead implied by one billed request: the billed prompt
 * tokens minus the estimate of the messages that were sent (never negative).
 * Pass the result as `overhead` for later estimates of the same session.
 */
export function calibrateOverhead(
  billedPromptTokens: number,
  sent: readonly Message[],
  estimator: TokenEstimator = fastEstimator,
  options: Omit<EstimateOptions, "overhead"> = {},
): number {
  if (!Number.isFinite(billedPromptTokens) || billedPromptTokens < 0) {
    throw new RangeError(`billed prompt tokens must be a finite number >= 0, got ${billedPromptTokens}`);
  }
  return Math.max(
    0,
    billedPromptTokens - estimateTokens(sent, estimator, { priorThinking: options.priorThinking }),
  );
}

/**
 * The prior-thinking policy of an Anthropic model name: `drop` for the Claude
 * models known to strip earlier turns' thinking from the prompt (Claude 3.x,
 * Sonnet 4 and 4.5, Haiku 4.5, Opus 4 and 4.1); `keep` for Claude Opus 4.5 and
 * later, and for any other or unknown name (the conservative default).
 */
export function priorThinkingFor(model: string | undefined): PriorThinking {
  const m = (model ?? "").toLowerCase();
  if (!m.includes("claude")) return "keep";
  if (/claude-3([-.]|$)/.test(m)) return "drop";
  const v = /(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2})(?!\d))?/.exec(m);
  if (!v) return "keep";
  const family = v[1]!;
  const version = Number(v[2]) + (v[3] !== undefined ? Number(v[3]) / 10 : 0);
  if (family === "opus") return version >= 4.5 ? "keep" : "drop";
  return version <= 4.5 ? "drop" : "keep";
}
