/**
 * The summarizer interface. The engine asks a summarizer for a handoff
 * summary of everything outside the protected last round; the engine owns
 * retries, the failure ladder and the rejection of unusable summaries.
 */
import type { Message } from "../model/types.js";
import { CompactSafeError } from "../model/errors.js";

export interface SummaryRequest {
  /** Everything outside the protected round, in order (including any previous checkpoint). */
  messages: readonly Message[];
  /**
   * The messages after the span that stay verbatim in the new history (the
   * protected last round), in order: where the work stands at the cut. They
   * are not to be summarized (the model reads them after the checkpoint);
   * the next step is read from them with the span, so that it never names a
   * step they show done.
   */
  following?: readonly Message[];
  /**
   * The older messages the new history keeps verbatim before the checkpoint
   * (retained user messages), in order. A summarizer refers to them rather
   * than quoting them again (the protected round, `following`, is kept too).
   * Optional: without it every message of the span is treated as summarized.
   */
  retained?: readonly Message[];
  /** Optional user focus ("keep the details of the auth refactor"). */
  focus?: string;
  /** Upper bound on the summary size, in tokens (default about 2,000). */
  maxTokens?: number;
  /**
   * How the host counts tokens (the engine passes its estimator). A summarizer
   * that sizes its own output, as the extractive one does, holds `maxTokens`
   * in this count rather than in its own characters-per-token guess.
   */
  countTokens?: (text: string) => number;
  /** Set on the one corrective retry after an unusable summary: why the last one was refused. */
  correction?: string;
  /** Background-work handles the host passed in (shown under "Still running"). */
  background?: readonly BackgroundHandle[];
  signal?: AbortSignal;
}

export interface SummaryResult {
  text: string;
  /** The model that wrote it (`extractive` for the embedded summarizer). */
  model: string;
  /** True when the provider stopped at its token limit (`finish_reason: length`, `stop_reason: max_tokens`). */
  truncated?: boolean;
  /** True when the provider answered with a tool call instead of text. */
  toolCallRequested?: boolean;
  /**
   * True when the summarizer redacted secrets from everything it took from the
   * transcript (the embedded extractive one does), so the pass need not scan
   * the summary again; an LLM's answer is always scanned.
   */
  redacted?: boolean;
  /**
   * The tokens the provider billed for the summary, when it says: for the
   * provider-native summarizer, the compaction's own usage, whose
   * `cache_read_input_tokens` show what the prompt cache paid.
   */
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
  };
}

export interface Summarizer {
  readonly name: string;
  readonly model: string;
  summarize(request: SummaryRequest): Promise<SummaryResult>;
}

/**
 * How a summarizer failure is handled by the failure ladder:
 * - `transient`: network, 429, 5xx, timeout: retried up to 3 times with exponential backoff;
 * - `deterministic`: auth, bad request, quota: fails at once;
 * - `prompt_too_long`: the oldest complete unit is dropped from the input and the call retried.
 */
export type SummarizerErrorKind = "transient" | "deterministic" | "prompt_too_long";

export class SummarizerError extends CompactSafeError {
  readonly kind: SummarizerErrorKind;
  readonly status?: number;
  /** Server-suggested wait (from `retry-after`), in milliseconds. */
  readonly retryAfterMs?: number;
  constructor(
    kind: SummarizerErrorKind,
    message: string,
    opts: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super("summarizer_failed", message, { cause: opts.cause });
    this.name = "SummarizerError";
    this.kind = kind;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** A background-work handle passed in by the host (restated under live state). */
export interface BackgroundHandle {
  id: string;
  kind: string;
  command?: string;
  status?: string;
}
