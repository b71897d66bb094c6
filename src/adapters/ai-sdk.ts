/**
 * `compact-safe/ai-sdk`: the adapter for the Vercel AI SDK (`ai` 7).
 *
 * - `fromModelMessages` / `toModelMessages`: `ModelMessage[]` ⇄ compact-safe
 *   messages without loss (see src/wire/ai-sdk.ts for what is carried where).
 * - `compactSafePrepareStep(options)`: a `prepareStep` for `generateText`,
 *   `streamText` and `ToolLoopAgent` that compacts when the step's messages
 *   are under pressure and returns the validated replacement.
 * - `aiSdkSummarizer(model)`: a compact-safe summarizer from any AI SDK model.
 */
import { isDeepStrictEqual } from "node:util";
import {
  APICallError,
  assistantModelMessageSchema,
  generateText,
  modelMessageSchema,
  systemModelMessageSchema,
  toolModelMessageSchema,
  userModelMessageSchema,
  type LanguageModel,
  type LanguageModelUsage,
  type ModelMessage,
} from "ai";
import type { Message } from "../model/types.js";
import type { CompactError, CompactOptions, CompactSuccess } from "../engine/compact.js";
import { PressureMemo, shouldCompact, type CompactDecision } from "../engine/pressure.js";
import { compactHostStep } from "./host-step.js";
import {
  SummarizerError,
  type Summarizer,
  type SummaryRequest,
  type SummaryResult,
} from "../summarizers/types.js";
import { buildUserPrompt, SYSTEM_PROMPT } from "../summarizers/prompt.js";
import { classifyHttpFailure } from "../summarizers/errors.js";
import { outputCap, resolveTimeout, withWholeRequestTimeout } from "../summarizers/llm-common.js";
import {
  conversionMemo,
  fromModelMessagesIndexed,
  toModelMessages as toModel,
  type ConversionCache,
  type SchemaLike,
} from "../wire/ai-sdk.js";
import { surelyValidModelMessage } from "../wire/ai-sdk-quick.js";

/**
 * The `ai` package's `modelMessageSchema`, checked through the schema of the
 * message's own role first: a message valid for the union is valid for its
 * role's schema, and the union's try of every role made an issue for each
 * branch that failed (about 2.5× the time). A message that fails is checked
 * again against the union, so that the error names what the union names.
 */
const byRole: Record<string, SchemaLike> = {
  system: systemModelMessageSchema as unknown as SchemaLike,
  user: userModelMessageSchema as unknown as SchemaLike,
  assistant: assistantModelMessageSchema as unknown as SchemaLike,
  tool: toolModelMessageSchema as unknown as SchemaLike,
};
const union = modelMessageSchema as unknown as SchemaLike;
const schema: SchemaLike = {
  // `quickMessageFromModel` takes only shapes that `surelyValidModelMessage` accepts.
  acceptsQuickShapes: true,
  safeParse(v) {
    // The common shapes are checked here; the schema decides the rest (and names every error).
    if (surelyValidModelMessage(v)) return { success: true };
    const role = typeof v === "object" && v !== null ? (v as { role?: unknown }).role : undefined;
    const own = typeof role === "string" && Object.hasOwn(byRole, role) ? byRole[role] : undefined;
    if (own !== undefined) {
      const r = own.safeParse(v);
      if (r.success) return r;
    }
    return union.safeParse(v);
  },
};

/**
 * AI SDK `ModelMessage[]` → compact-safe messages. Each message is validated
 * with the `ai` package's own `modelMessageSchema` first; an invalid one
 * throws a `ModelError` naming its path (`messages[3].content[1].type: …`).
 */
export function fromModelMessages(messages: readonly ModelMessage[]): Message[] {
  return fromModelMessagesIndexed(messages, schema).messages;
}

/**
 * compact-safe messages → AI SDK `ModelMessage[]`. An invalid compact-safe
 * message throws a `ModelError` naming its path.
 */
export function toModelMessages(messages: readonly Message[]): ModelMessage[] {
  return toModel(messages) as unknown as ModelMessage[];
}

// ---------------------------------------------------------------------------
// prepareStep

/** What `compactSafePrepareStep` reads of the AI SDK's `prepareStep` options. */
export interface PrepareStepInput {
  messages: ModelMessage[];
  stepNumber: number;
  steps: ReadonlyArray<{ usage?: LanguageModelUsage; response: { messages: readonly ModelMessage[] } }>;
}

export interface CompactionEvent {
  stepNumber: number;
  /** The pressure that triggered the compaction. */
  decision: CompactDecision;
  /** The engine's result: path, summary, coverage, tokens before and after. */
  result: CompactSuccess;
  /** The messages the step runs on instead of its history. */
  messages: ModelMessage[];
  /** The history they replace (as the step received it, or with an earlier replacement re-applied). */
  replaced: ModelMessage[];
}

export interface RefusedEvent {
  stepNumber: number;
  decision: CompactDecision | undefined;
  /**
   * Why the step runs on its untouched history: the engine's refusal
   * (`summarizer_failed`, `unusable_summary`, `contract_violation`,
   * `nothing_to_compact`) or `invalid_messages` when the history could not be
   * converted.
   */
  error: CompactError | { kind: "invalid_messages"; message: string; attempts: 0 };
}

export interface CompactSafePrepareStepOptions extends Omit<
  CompactOptions,
  "summarizer" | "window" | "target" | "anchors"
> {
  /** The model's context window, in tokens. */
  window: number;
  /** Fraction of the window at which to compact (default 0.8). */
  threshold?: number;
  /** Size to reach, in estimated tokens (default: half the window). */
  target?: number;
  /** The summarizer (default: the embedded extractive summarizer, offline). */
  summarizer?: Summarizer;
  /** Any AI SDK model as the summarizer (`aiSdkSummarizer(model)`); ignored when `summarizer` is given. */
  summarizerModel?: LanguageModel;
  /** Pinned anchors, restated verbatim in the checkpoint. */
  anchors?: string;
  onCompaction?: (event: CompactionEvent) => void;
  onRefused?: (event: RefusedEvent) => void;
}

/** The step's compact-safe messages and the billed prompt of the last step, when the AI SDK reported it. */
function billedOf(
  input: PrepareStepInput,
  indexOf: readonly number[],
): { tokens: number; index: number } | undefined {
  const last = input.steps[input.steps.length - 1];
  const tokens = last?.usage?.inputTokens;
  if (!last || typeof tokens !== "number" || !(tokens > 0)) return undefined;
  const k = last.response.messages.length;
  const n = input.messages.length;
  if (k === 0 || k > n) return undefined;
  // The last step's answer must be the tail of what this step sends (else the figure is not about it).
  for (let j = 0; j < k; j++) {
    const a = input.messages[n - k + j];
    const b = last.response.messages[j];
    if (a !== b && !isDeepStrictEqual(a, b)) return undefined;
  }
  return { tokens, index: indexOf[n - k]! };
}

function startsWith(messages: readonly ModelMessage[], prefix: readonly ModelMessage[]): boolean {
  if (prefix.length === 0 || prefix.length > messages.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    const a = messages[i];
    const b = prefix[i];
    if (a !== b && !isDeepStrictEqual(a, b)) return false;
  }
  return true;
}

/**
 * A `prepareStep` that compacts the step's messages when they are under
 * pressure (the last step's billed prompt when the AI SDK reports it, else
 * the estimate, against `threshold × window`). On success it returns
 * `{ messages }`: the replacement, validated against the survival contract
 * as the model will receive it. Otherwise it returns nothing and the step
 * runs on its untouched history; `onRefused` says why.
 *
 * The AI SDK carries a returned `messages` forward to the later steps of the
 * same call. A host that sends the whole history again on its next call
 * (a chat route) gets the last replacement re-applied: when the step's
 * messages start with the history that was replaced, the replacement plus
 * what came after is used instead of compacting again.
 */
export function compactSafePrepareStep(
  options: CompactSafePrepareStepOptions,
): (input: PrepareStepInput) => Promise<{ messages: ModelMessage[] } | undefined> {
  const { threshold, summarizerModel, onCompaction, onRefused, ...compact } = options;
  const summarizer =
    options.summarizer ?? (summarizerModel !== undefined ? aiSdkSummarizer(summarizerModel) : undefined);
  // Checked once, so that a bad window or threshold fails at construction, not in the loop.
  shouldCompact({ messages: [] }, { window: options.window, threshold });
  let last: { source: ModelMessage[]; replacement: ModelMessage[] } | undefined;
  // The AI SDK passes the same message objects to every step: each is validated and converted once.
  const cache: ConversionCache = new WeakMap();
  // A step that sends the last step's messages and new ones: only the new ones are read and measured.
  const memo = conversionMemo();
  const pressure = new PressureMemo();

  return async (input) => {
    const original = input.messages;
    let messages = original;
    let reapplied = false;
    if (last && !startsWith(original, last.replacement) && startsWith(original, last.source)) {
      messages = [...last.replacement, ...original.slice(last.source.length)];
      reapplied = true;
    }
    const keep = reapplied ? { messages } : undefined;
    let converted: { messages: Message[]; indexOf: number[] };
    try {
      converted = fromModelMessagesIndexed(messages, schema, "messages", cache, memo);
    } catch (e) {
      onRefused?.({
        stepNumber: input.stepNumber,
        decision: undefined,
        error: { kind: "invalid_messages", message: (e as Error).message, attempts: 0 },
      });
      return keep;
    }
    const billed = reapplied ? undefined : billedOf(input, converted.indexOf);
    const state = { messages: converted.messages, billed, estimator: compact.estimator, memo: pressure };
    // Far under the threshold by a ceiling read from the texts' lengths: nothing to estimate.
    if (pressure.surelyBelow(state, { window: options.window, threshold })) return keep;
    const decision = shouldCompact(state, { window: options.window, threshold });
    if (!decision.compact) return keep;
    // The memo's arrays change at its next call: the compaction (which awaits) works on a copy.
    converted = { messages: converted.messages.slice(), indexOf: converted.indexOf.slice() };
    const step = await compactHostStep(
      converted.messages,
      { ...compact, summarizer, trigger: "auto" },
      {
        name: "AI SDK messages",
        toHost: (replacement) => toModelMessages(replacement),
        // What the model will receive, read back: the AI SDK's schema, then the contract.
        fromHost: (out) => fromModelMessagesIndexed(out, schema, "messages", cache).messages,
      },
    );
    if (!step.ok) {
      onRefused?.({ stepNumber: input.stepNumber, decision, error: step.error });
      return keep;
    }
    const { out, result: r } = step;
    last = { source: original, replacement: out };
    onCompaction?.({ stepNumber: input.stepNumber, decision, result: r, messages: out, replaced: messages });
    return { messages: out };
  };
}

// ---------------------------------------------------------------------------
// aiSdkSummarizer

export interface AiSdkSummarizerOptions {
  /** The output cap (`maxOutputTokens`); default twice the summary budget, at least 1,024. */
  maxTokens?: number;
  /** Per-request timeout in ms (default 120 s). */
  timeoutMs?: number;
  /** Provider options passed to `generateText`. */
  providerOptions?: Parameters<typeof generateText>[0]["providerOptions"];
}

function modelName(model: LanguageModel): string {
  if (typeof model === "string") return model;
  const m = model as { modelId?: unknown; provider?: unknown };
  return typeof m.modelId === "string" ? m.modelId : "ai-sdk";
}

/**
 * A compact-safe summarizer over any AI SDK model: one `generateText` call
 * with the project's summarizer prompt (the transcript, redacted, as
 * untrusted data). No AI SDK retries: the engine owns the failure ladder. A
 * cut-off answer or a tool call is reported so that the engine refuses it, as
 * it refuses empty, punctuation-only and placeholder summaries.
 */
export function aiSdkSummarizer(model: LanguageModel, options: AiSdkSummarizerOptions = {}): Summarizer {
  const name = modelName(model);
  const timeoutMs = resolveTimeout("aiSdkSummarizer", options.timeoutMs);
  const label = `ai-sdk summarizer (model ${name})`;
  return {
    name: "ai-sdk",
    model: name,
    async summarize(request: SummaryRequest): Promise<SummaryResult> {
      let r: Awaited<ReturnType<typeof generateText>>;
      try {
        r = await withWholeRequestTimeout(
          timeoutMs,
          request.signal,
          () => new SummarizerError("transient", `${label}: timed out after ${timeoutMs} ms`),
          (signal) =>
            generateText({
              model,
              instructions: SYSTEM_PROMPT,
              prompt: buildUserPrompt(request),
              maxOutputTokens: outputCap(options.maxTokens, request),
              maxRetries: 0,
              abortSignal: signal,
              providerOptions: options.providerOptions,
            }),
        );
      } catch (e) {
        throw mapError(e, label, request.signal);
      }
      const result: SummaryResult = {
        text: r.text,
        model: r.response?.modelId || name,
      };
      if (r.finishReason === "length") result.truncated = true;
      if (r.finishReason === "tool-calls" || r.toolCalls.length > 0) result.toolCallRequested = true;
      return result;
    },
  };
}

function mapError(e: unknown, label: string, signal: AbortSignal | undefined): SummarizerError {
  if (e instanceof SummarizerError) return e;
  if (signal?.aborted) return new SummarizerError("deterministic", `${label}: request aborted`, { cause: e });
  const cause = (e as { lastError?: unknown })?.lastError ?? e;
  if (APICallError.isInstance(cause) && typeof cause.statusCode === "number") {
    const mapped = classifyHttpFailure(
      "openai",
      {
        status: cause.statusCode,
        headers: cause.responseHeaders as never,
        bodyText: cause.responseBody,
        sdkMessage: cause.message,
      },
      label,
    );
    return new SummarizerError(mapped.kind, mapped.message, {
      status: mapped.status,
      retryAfterMs: mapped.retryAfterMs,
      cause: e,
    });
  }
  if (APICallError.isInstance(cause) && cause.isRetryable)
    return new SummarizerError("transient", `${label}: ${cause.message}`, { cause: e });
  const message = e instanceof Error ? e.message : String(e);
  return new SummarizerError("deterministic", `${label}: ${message.split("\n")[0]}`, { cause: e });
}
