/**
 * compact-safe/langchain: the adapter for LangChain.js (`langchain` 1.x,
 * `@langchain/core` 1.x, optional peer dependencies).
 *
 * - `fromLangChainMessages` / `toLangChainMessages`: `BaseMessage[]` ⇄
 *   compact-safe messages without loss (see src/wire/langchain.ts
 *   for what is carried where); `fromLangChainStored` / `toLangChainStored`
 *   do the same for the stored dump form `[{ type, data }]`.
 * - `langChainSummarizer(model)`: any LangChain chat model as a compact-safe
 *   summarizer, with compact-safe's own prompt.
 * - `compactSafeMiddleware(options)`: a `createMiddleware` middleware, a
 *   drop-in for `summarizationMiddleware` (same `model`, `trigger`, `keep`)
 *   that compacts with `compactMessagesSafe`: it keeps the protected last
 *   round, writes exactly one checkpoint, and replaces the state's messages
 *   (a `RemoveMessage` of all messages, then the replacement, as
 *   `summarizationMiddleware` does) only when the validated pass succeeds.
 */
import {
  AIMessage,
  BaseMessage,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  RemoveMessage,
  SystemMessage,
  ToolMessage,
  type StoredMessage,
} from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { mergeConfigs, pickRunnableConfigKeys, type RunnableConfig } from "@langchain/core/runnables";
import { createMiddleware, initChatModel } from "langchain";
import type { Message } from "../model/types.js";
import { ModelError, parseMessage, parseMessages } from "../model/schema.js";
import { checkPlainData, isBuiltinContainer } from "../model/plain.js";
import type { CompactOptions, CompactResult } from "../engine/compact.js";
import { compactHostStep } from "./host-step.js";
import { measurePressure, PressureMemo, shouldCompact } from "../engine/pressure.js";
import { CONSTANTS } from "../model/constants.js";
import {
  SummarizerError,
  type Summarizer,
  type SummaryRequest,
  type SummaryResult,
} from "../summarizers/types.js";
import { buildUserPrompt, SYSTEM_PROMPT } from "../summarizers/prompt.js";
import { classifyHttpFailure, rootCauseMessage } from "../summarizers/errors.js";
import {
  joinParts,
  LANGCHAIN_COMMON_FIELDS,
  langChainFieldsOf,
  langChainStoredToMessages,
  messagesToLangChainStored,
  readLangChainStored,
  LangChainMessageError,
  type JoinMemo,
  type LangChainStoredMessage,
  type Read,
} from "../wire/langchain.js";

export { LangChainMessageError, type LangChainStoredMessage };

/**
 * LangGraph's `REMOVE_ALL_MESSAGES` (`@langchain/langgraph`): the id of the
 * `RemoveMessage` that makes the messages reducer drop every earlier message.
 * Written out here because `@langchain/langgraph` is langchain's dependency,
 * not one a user installs; a test pins it to LangGraph's own constant.
 */
export const REMOVE_ALL_MESSAGES = "__remove_all__";

type Rec = Record<string, unknown>;

/** A BaseMessage's own fields, in the stored form (`{ type, data }`). */
function storedOf(m: BaseMessage, path: string): LangChainStoredMessage {
  if (!BaseMessage.isInstance(m))
    throw new LangChainMessageError(path, "not a LangChain message (a BaseMessage instance)");
  const r = m as unknown as Rec;
  const type = m.getType();
  const data: Rec = {};
  for (const k of langChainFieldsOf(type)) if (r[k] !== undefined) data[k] = r[k];
  return { type, data };
}

/**
 * What a LangChain message may hold besides plain data: class instances (a
 * tool's `artifact` can be anything) are read as their own fields, as their
 * stored JSON has them; a Map, a Set, binary data are refused.
 */
const langChainValue = (v: object): "walk" | false => (isBuiltinContainer(v) ? false : "walk");

/**
 * Checks a host's array before any conversion reads it: a hole, a cycle, a
 * BigInt, a throwing getter… is a `ModelError` naming the place. `of` picks
 * what of each item is checked (the fields of a BaseMessage, from `storedOf`).
 */
function checkInput<T>(
  items: readonly T[],
  path: string,
  of: (item: T, at: string) => unknown = (x) => x,
): unknown[] {
  if (!Array.isArray(items)) throw new ModelError(path, "expected an array of messages");
  const out: unknown[] = [];
  for (let i = 0; i < items.length; i++) out.push(checkItem(items, i, `${path}[${i}]`, of));
  return out;
}

/** One item of `checkInput`. */
function checkItem<T>(
  items: readonly T[],
  i: number,
  at: string,
  of: (item: T, at: string) => unknown,
): unknown {
  if (!Object.hasOwn(items, i))
    throw new ModelError(at, "a hole in the array (a sparse array is not a list of messages)");
  let v: unknown;
  try {
    v = of(items[i]!, at);
  } catch (e) {
    if (e instanceof ModelError) throw e;
    throw new ModelError(at, `cannot be read (${e instanceof Error ? e.message.split("\n")[0] : String(e)})`);
  }
  checkPlainData(v, at, { allow: langChainValue });
  return v;
}

interface Seen {
  type: string;
  /** The values then of the fields the conversion read (`langChainFieldsOf(type)`), compared by identity before a reuse. */
  values: unknown[];
  /** Each content part and its text, compared by identity (a string by identity first, so its characters are not read again). */
  parts: unknown[] | undefined;
  /** How many tool calls (a host may push to the array in place). */
  toolCalls: number;
  read: Read;
}

/** The content parts and their texts, in pairs (what a host edits in place: a part, a part's text). */
function partsOf(r: Rec): unknown[] | undefined {
  const c = r.content;
  if (!Array.isArray(c)) return undefined;
  const out: unknown[] = [];
  for (let i = 0; i < c.length; i++) {
    const p = c[i] as Rec | null;
    out.push(p, p !== null && typeof p === "object" ? p.text : undefined);
  }
  return out;
}

const toolCallsOf = (r: Rec): number => (Array.isArray(r.tool_calls) ? r.tool_calls.length : -1);

/**
 * The middleware's reader: LangChain messages to compact-safe messages,
 * incrementally. A BaseMessage object read before is not checked, converted,
 * validated or measured again while it is still the same: the same values in
 * every field the conversion reads (`content`, `tool_calls`,
 * `additional_kwargs`…, compared by identity), the same content parts and
 * their texts, and as many tool calls. A host
 * that edits a message in place (LangGraph's reducers replace messages, but
 * a host may assign `message.content`, a part's text, or push a part) is
 * read again; an edit deep inside a part or a tool call's arguments is not
 * seen: give such a message as a new object.
 */
export class LangChainReader {
  private readonly seen = new WeakMap<object, Seen>();
  private readonly memo: JoinMemo = new WeakMap();
  private readonly valid = new WeakSet<Message>();
  /** The last call's input and what it gave: where a step that only appends carries on. */
  private last:
    | {
        input: unknown[];
        seen: Seen[];
        reads: Read[];
        out: Message[];
        /** For each joined message: the index after its last read, and after the last read any message up to it looked at. */
        ends: number[];
        reach: number[];
      }
    | undefined;
  /** The pressure measured on what this reader gave (see `PressureMemo`). */
  readonly pressure = new PressureMemo();
  /** Test hook: how many messages were looked at again (not carried on from the last call). */
  looked = 0;

  read(messages: readonly BaseMessage[], path = "messages"): Message[] {
    return this.readShared(messages, path).slice();
  }

  /**
   * As `read`, but the array returned is the reader's own, changed in place by
   * its next call (the middleware copies it before it awaits): a copy of a
   * long history per step costs more than the step.
   */
  readShared(messages: readonly BaseMessage[], path = "messages"): Message[] {
    if (!Array.isArray(messages)) throw new ModelError(path, "expected an array of messages");
    const last = this.last ?? { input: [], seen: [], reads: [], out: [], ends: [], reach: [] };
    this.last = undefined; // kept again only when this call ends well
    const { input, seen, reads } = last;
    // The messages the last call read, the very same objects at the same places: the same check
    // (`same`), without a lookup.
    const lim = Math.min(input.length, messages.length);
    let i = 0;
    while (i < lim && messages[i] === input[i] && same(messages[i] as unknown as Rec, seen[i]!)) i++;
    const p = i;
    input.length = p;
    seen.length = p;
    reads.length = p;
    for (; i < messages.length; i++) {
      this.looked++;
      const m = messages[i] as unknown;
      const hit = typeof m === "object" && m !== null ? this.seen.get(m) : undefined;
      if (hit && same(m as Rec, hit)) {
        input.push(m);
        reads.push(hit.read);
        seen.push(hit);
        continue;
      }
      const at = `${path}[${i}]`;
      const data = checkItem(messages, i, at, (x, a) => storedOf(x, a).data);
      const type = (m as BaseMessage).getType();
      const read = readLangChainStored({ type, data }, at);
      const r = m as Rec;
      const s: Seen = {
        type,
        values: langChainFieldsOf(type).map((k) => r[k]),
        parts: partsOf(r),
        toolCalls: toolCallsOf(r),
        read,
      };
      this.seen.set(r, s);
      input.push(m);
      reads.push(read);
      seen.push(s);
    }
    // A joined message is the same when every read that joining it looked at is: its parts, and as
    // many as its first part says there are (an incomplete group looked for the rest).
    const { out, ends, reach } = last;
    let g = ends.length;
    while (g > 0 && reach[g - 1]! > p) g--;
    out.length = g;
    ends.length = g;
    reach.length = g;
    const from = g > 0 ? ends[g - 1]! : 0;
    let far = g > 0 ? reach[g - 1]! : 0;
    for (const j of joinParts(from === 0 ? reads : reads.slice(from), this.memo)) {
      const m = j.message;
      if (!this.valid.has(m)) {
        parseMessage(m, `${path}[${out.length}]`);
        this.valid.add(m);
      }
      out.push(m);
      const first = from + j.first;
      const part = reads[first]!.part;
      const declared = part && part[0] === 0 && part[1] > 1 ? part[1] : 1;
      ends.push(first + j.count);
      far = Math.max(far, first + Math.max(j.count, declared));
      reach.push(far);
    }
    this.last = last;
    return out;
  }
}

/**
 * Whether the fields `langChainFieldsOf(s.type)` still hold `s.values`, read by name
 * (a keyed read of a variable name on message objects of several classes is
 * several times slower, and this runs on every message at every step).
 */
function sameFields(r: Rec, s: Seen): boolean {
  const v = s.values;
  if (
    r.content !== v[0] ||
    r.id !== v[1] ||
    r.name !== v[2] ||
    r.additional_kwargs !== v[3] ||
    r.response_metadata !== v[4]
  )
    return false;
  switch (s.type) {
    case "ai":
      return r.tool_calls === v[5] && r.invalid_tool_calls === v[6] && r.usage_metadata === v[7];
    case "tool":
      return r.tool_call_id === v[5] && r.status === v[6] && r.artifact === v[7] && r.metadata === v[8];
    case "generic":
      return r.role === v[5];
    default:
      return v.length === LANGCHAIN_COMMON_FIELDS.length;
  }
}

function same(r: Rec, s: Seen): boolean {
  if (!sameFields(r, s)) return false;
  const c = r.content;
  if (Array.isArray(c)) {
    const parts = s.parts;
    if (parts === undefined || parts.length !== 2 * c.length) return false;
    for (let i = 0; i < c.length; i++) {
      const p = c[i] as Rec | null;
      if (p !== parts[2 * i]) return false;
      if (p !== null && typeof p === "object" && p.text !== parts[2 * i + 1]) return false;
    }
  }
  return toolCallsOf(r) === s.toolCalls && (r as unknown as BaseMessage).getType() === s.type;
}

/** LangChain messages as compact-safe messages (nothing lost: see the module comment). */
export function fromLangChainMessages(messages: readonly BaseMessage[]): Message[] {
  const stored = checkInput(messages, "messages", (m, at) => storedOf(m, at).data).map((data, i) => ({
    type: messages[i]!.getType(),
    data: data as Rec,
  }));
  const out = langChainStoredToMessages(stored, (i) => `messages[${i}]`);
  parseMessages(out, "messages");
  return out;
}

/** compact-safe messages as LangChain messages. */
export function toLangChainMessages(messages: readonly Message[]): BaseMessage[] {
  checkInput(messages, "messages");
  return messagesToLangChainStored(messages).map(toBaseMessage);
}

/** One stored message as its BaseMessage class (as `mapStoredMessageToChatMessage` builds it). */
function toBaseMessage(s: LangChainStoredMessage): BaseMessage {
  const data = s.data as never;
  switch (s.type) {
    case "human":
      return new HumanMessage(data);
    case "ai":
      return new AIMessage(data);
    case "system":
      return new SystemMessage(data);
    case "tool":
      return new ToolMessage(data);
    case "function":
      return new FunctionMessage(data);
    case "generic":
      return new ChatMessage(data);
    default:
      throw new LangChainMessageError("message", `unknown LangChain message type ${JSON.stringify(s.type)}`);
  }
}

/** Stored LangChain messages (`mapChatMessagesToStoredMessages` output, or its JSON) as compact-safe messages. */
export function fromLangChainStored(stored: readonly (StoredMessage | LangChainStoredMessage)[]): Message[] {
  checkInput(stored, "messages");
  const out = langChainStoredToMessages(stored as readonly unknown[]);
  parseMessages(out, "messages");
  return out;
}

/** compact-safe messages in LangChain's stored form (`mapStoredMessagesToChatMessages` reads it). */
export function toLangChainStored(messages: readonly Message[]): LangChainStoredMessage[] {
  checkInput(messages, "messages");
  return messagesToLangChainStored(messages);
}

// ---------------------------------------------------------------------------------------------
// Summarizer

export interface LangChainSummarizerOptions {
  /** Runnable config for the model call (callbacks, tags, metadata); the middleware passes the agent's. */
  config?: RunnableConfig;
  /** The model name reported on the compaction (default: the model's own name, else its type). */
  name?: string;
}

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p) =>
      typeof p === "string"
        ? p
        : p !== null &&
            typeof p === "object" &&
            (p as Rec).type === "text" &&
            typeof (p as Rec).text === "string"
          ? ((p as Rec).text as string)
          : "",
    )
    .join("");
}

function modelName(model: BaseChatModel): string {
  const r = model as unknown as Rec;
  for (const k of ["model", "modelName"]) if (typeof r[k] === "string" && r[k] !== "") return r[k] as string;
  try {
    return model._llmType();
  } catch {
    return "langchain";
  }
}

/** A LangChain model failure as a SummarizerError the engine's failure ladder understands. */
export function langChainSummarizerError(err: unknown, label: string, signal?: AbortSignal): SummarizerError {
  if (err instanceof SummarizerError) return err;
  const e = (err ?? {}) as Rec;
  if (signal?.aborted === true || e.lc_error_code === "MODEL_ABORTED" || e.name === "AbortError")
    return new SummarizerError("deterministic", `${label}: request aborted`, { cause: err });
  const status =
    typeof e.status === "number"
      ? e.status
      : typeof (e.response as Rec | undefined)?.status === "number"
        ? ((e.response as Rec).status as number)
        : undefined;
  if (status !== undefined) {
    const mapped = classifyHttpFailure(
      "openai",
      {
        status,
        headers: e.headers as never,
        sdkError: e.error ?? { message: e.message },
        sdkMessage: String(e.message ?? ""),
      },
      label,
    );
    return new SummarizerError(mapped.kind, mapped.message, {
      status: mapped.status,
      retryAfterMs: mapped.retryAfterMs,
      cause: err,
    });
  }
  const message = `${label}: ${rootCauseMessage(err)}`;
  if (
    e.lc_error_code === "CONTEXT_OVERFLOW" ||
    /context length|context window|prompt is too long|too many tokens/i.test(message)
  )
    return new SummarizerError("prompt_too_long", message, { cause: err });
  if (e.lc_error_code === "MODEL_RATE_LIMIT")
    return new SummarizerError("transient", message, { cause: err });
  const code = typeof e.code === "string" ? e.code : "";
  if (/^(ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|EPIPE|UND_ERR_)/.test(code) || e.name === "TimeoutError")
    return new SummarizerError("transient", message, { cause: err });
  return new SummarizerError("deterministic", message, { cause: err });
}

/**
 * Any LangChain chat model as a compact-safe summarizer: compact-safe's
 * system prompt (the history is untrusted data) and the transcript as the
 * user turn. An answer cut off at its limit (`finish_reason: "length"`,
 * `stop_reason: "max_tokens"`) or asking for tools is marked so, and an empty
 * or placeholder answer is refused by the engine, as for the other LLM
 * summarizers; the model's errors go through the engine's failure ladder.
 */
export function langChainSummarizer(
  model: BaseChatModel,
  options: LangChainSummarizerOptions = {},
): Summarizer {
  const name = options.name ?? modelName(model);
  const label = `langchain summarizer (${name})`;
  return {
    name: "langchain",
    model: name,
    async summarize(request: SummaryRequest): Promise<SummaryResult> {
      let answer: BaseMessage;
      try {
        answer = await model.invoke(
          [new SystemMessage(SYSTEM_PROMPT), new HumanMessage(buildUserPrompt(request))],
          { ...(options.config ?? {}), ...(request.signal ? { signal: request.signal } : {}) },
        );
      } catch (err) {
        throw langChainSummarizerError(err, label, request.signal);
      }
      const meta = (answer.response_metadata ?? {}) as Rec;
      const result: SummaryResult = {
        text: text(answer.content),
        model: typeof meta.model_name === "string" && meta.model_name !== "" ? meta.model_name : name,
      };
      const finish = meta.finish_reason ?? meta.stop_reason;
      if (finish === "length" || finish === "max_tokens") result.truncated = true;
      const calls = (answer as AIMessage).tool_calls;
      if ((Array.isArray(calls) && calls.length > 0) || finish === "tool_calls" || finish === "tool_use")
        result.toolCallRequested = true;
      return result;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Middleware

/** When to compact: like `summarizationMiddleware`'s `trigger`, every given property must be reached. */
export interface ContextSize {
  /** Fraction (0–1] of the model's context window (`model.profile.maxInputTokens`). */
  fraction?: number;
  /** Tokens (compact-safe's estimate and the latest billed prompt, or `tokenCounter`'s count). */
  tokens?: number;
  /** Number of messages. */
  messages?: number;
}

/** What to compact to: the size to reach (`tokens`, or a `fraction` of the window). */
export interface KeepSize {
  fraction?: number;
  tokens?: number;
  /** Not supported: the protected last round is what is kept verbatim (refused with an error). */
  messages?: number;
}

export interface CompactSafeMiddlewareOptions {
  /** The summarizer: a LangChain chat model, or a model name for `initChatModel` ("openai:gpt-4o-mini"). */
  model: BaseChatModel | string;
  /**
   * When to compact. One condition: all its properties must be reached; an
   * array: any of them. Default: at 80% of the model's context window when
   * its profile gives one, as the engine decides it (`threshold`; else
   * never, as `summarizationMiddleware`).
   */
  trigger?: ContextSize | ContextSize[];
  /** The size to reach after the compaction (default: compact-safe's, half the window). */
  keep?: KeepSize;
  /** Counts the tokens of the state's messages for `trigger` (default: compact-safe's pressure measure). */
  tokenCounter?: (messages: BaseMessage[]) => number | Promise<number>;
  /** The context window in tokens (default: `model.profile.maxInputTokens`). */
  window?: number;
  /**
   * Without `trigger`: the fraction of the window at which to compact, as
   * the engine decides it (`shouldCompact`: the estimate or the latest
   * billed prompt, whichever is larger); default the engine's, 0.8.
   */
  threshold?: number;
  /** Pinned anchors, restated verbatim in every checkpoint. */
  anchors?: string;
  /** What the summary should keep in focus. */
  focus?: string;
  /** Any other option of `compactMessagesSafe` (budget, retries, live state…). */
  compact?: Omit<CompactOptions, "summarizer" | "target" | "window" | "anchors" | "focus" | "signal">;
  /** Told of every pass: `{ ok: true, … }` when the state's messages were replaced, else why not. */
  onCompaction?: (result: CompactResult) => void | Promise<void>;
}

function positive(v: unknown, what: string, max?: number): void {
  if (v === undefined) return;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || (max !== undefined && v > max))
    throw new RangeError(
      `compactSafeMiddleware: ${what} must be a positive number${max !== undefined ? ` at most ${max}` : ""}, got ${String(v)}`,
    );
}

function checkOptions(o: CompactSafeMiddlewareOptions): void {
  if (o === null || typeof o !== "object")
    throw new TypeError("compactSafeMiddleware: options are required ({ model, trigger })");
  if (o.model === undefined || o.model === null || (typeof o.model === "string" && o.model.trim() === ""))
    throw new TypeError("compactSafeMiddleware: model is required (a LangChain chat model or a model name)");
  const triggers = o.trigger === undefined ? [] : Array.isArray(o.trigger) ? o.trigger : [o.trigger];
  triggers.forEach((t, i) => {
    const at = Array.isArray(o.trigger) ? `trigger[${i}]` : "trigger";
    if (
      t === null ||
      typeof t !== "object" ||
      (t.fraction === undefined && t.tokens === undefined && t.messages === undefined)
    )
      throw new TypeError(`compactSafeMiddleware: ${at} needs at least one of fraction, tokens, messages`);
    positive(t.fraction, `${at}.fraction`, 1);
    positive(t.tokens, `${at}.tokens`);
    positive(t.messages, `${at}.messages`);
  });
  if (o.keep !== undefined) {
    if (o.keep.messages !== undefined)
      throw new TypeError(
        "compactSafeMiddleware: keep.messages is not supported: the protected last round (the current instructions and the two newest tool exchanges) is always kept verbatim; give keep.tokens or keep.fraction, the size to reach",
      );
    if ((o.keep.tokens === undefined) === (o.keep.fraction === undefined))
      throw new TypeError("compactSafeMiddleware: keep needs exactly one of tokens, fraction");
    positive(o.keep.tokens, "keep.tokens");
    positive(o.keep.fraction, "keep.fraction", 1);
  }
  positive(o.window, "window");
  positive(o.threshold, "threshold", 1);
}

/** The model's context window from its profile, when it gives one. */
function profileWindow(model: BaseChatModel): number | undefined {
  try {
    const p = (model as unknown as { profile?: { maxInputTokens?: unknown } }).profile;
    const n = p?.maxInputTokens;
    return typeof n === "number" && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** True when any condition is met (each condition: all its properties). */
function triggered(
  conditions: readonly ContextSize[],
  count: number,
  tokens: number,
  window: number | undefined,
): boolean {
  return conditions.some((c) => {
    if (c.messages !== undefined && count < c.messages) return false;
    if (c.tokens !== undefined && tokens < c.tokens) return false;
    if (c.fraction !== undefined && (window === undefined || tokens < Math.floor(window * c.fraction)))
      return false;
    return true;
  });
}

/**
 * A drop-in for `summarizationMiddleware` that compacts with compact-safe:
 * before each model call whose history reaches `trigger`, the history is
 * compacted by `compactMessagesSafe` with `model` as the summarizer. On
 * success the state's messages are replaced (as `summarizationMiddleware`
 * does: `RemoveMessage(REMOVE_ALL_MESSAGES)` then the replacement): the
 * system messages, older user instructions within budget, exactly one
 * checkpoint, and the protected last round verbatim. The replacement is
 * converted back and validated again against the contract before it is
 * committed. On any failure (the summarizer errs, answers empty or a
 * placeholder twice, the result would not shrink or not validate) the state
 * is left untouched and `onCompaction` is told why.
 */
export function compactSafeMiddleware(options: CompactSafeMiddlewareOptions) {
  checkOptions(options);
  const conditions =
    options.trigger === undefined ? [] : Array.isArray(options.trigger) ? options.trigger : [options.trigger];
  let resolved: BaseChatModel | undefined = typeof options.model === "string" ? undefined : options.model;
  const reader = new LangChainReader();
  return createMiddleware({
    name: "CompactSafeMiddleware",
    beforeModel: async (state, runtime) => {
      const model = (resolved ??= (await initChatModel(options.model as string)) as unknown as BaseChatModel);
      const window = options.window ?? profileWindow(model);
      const needsWindow =
        conditions.some((c) => c.fraction !== undefined) || options.keep?.fraction !== undefined;
      if (needsWindow && window === undefined)
        throw new Error(
          "compactSafeMiddleware: fraction needs the model's context window: give the window option, or use tokens",
        );
      const lcMessages = state.messages;
      // Only what is new since the last call is converted and measured (see LangChainReader).
      // (A copy when a token counter is awaited before the messages are used.)
      const shared = reader.readShared(lcMessages);
      const messages = options.tokenCounter ? shared.slice() : shared;
      let fire: boolean;
      if (options.tokenCounter) {
        const tokens = await options.tokenCounter(lcMessages);
        fire =
          conditions.length > 0
            ? triggered(conditions, lcMessages.length, tokens, window)
            : window !== undefined &&
              tokens >= Math.floor(window * (options.threshold ?? CONSTANTS.threshold));
      } else if (conditions.length > 0) {
        const memo = reader.pressure;
        fire = triggered(conditions, lcMessages.length, measurePressure({ messages, memo }).tokens, window);
      } else {
        fire =
          window !== undefined &&
          shouldCompact({ messages, memo: reader.pressure }, { window, threshold: options.threshold })
            .compact;
      }
      if (!fire) return undefined;
      // The reader's array changes at its next call: the compaction (which awaits) works on a copy.
      const history = messages.slice();
      const config = mergeConfigs(pickRunnableConfigKeys(runtime as Rec) ?? {}, {
        metadata: { lc_source: "summarization" },
        tags: ["nostream"],
      });
      const target =
        options.keep?.tokens ??
        (options.keep?.fraction !== undefined ? Math.floor(window! * options.keep.fraction) : undefined);
      const step = await compactHostStep(
        history,
        {
          ...options.compact,
          summarizer: langChainSummarizer(model, { config }),
          target,
          window,
          anchors: options.anchors,
          focus: options.focus,
          signal: (runtime as { signal?: AbortSignal }).signal,
        },
        { name: "LangChain messages", toHost: toLangChainMessages, fromHost: fromLangChainMessages },
      );
      const outcome: { result: CompactResult; update: { messages: BaseMessage[] } | undefined } = step.ok
        ? {
            result: step.result,
            update: { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...step.out] },
          }
        : { result: { ok: false, error: step.error }, update: undefined };
      await options.onCompaction?.(outcome.result);
      return outcome.update;
    },
  });
}
