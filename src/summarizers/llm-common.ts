/** What the LLM summarizers share: options, key lookup, the output cap and the SDK error mapping. */
import { SummarizerError, type SummaryRequest } from "./types.js";
import { classifyHttpFailure, rootCauseMessage, type ResponseSink } from "./errors.js";
import { DEFAULT_SUMMARY_TOKENS } from "./extractive.js";

export const DEFAULT_TIMEOUT_MS = 120_000;

export interface LlmSummarizerOptions {
  /** API root; for OpenAI-compatible servers it usually ends in `/v1`. Defaults to the provider's. */
  baseURL?: string;
  model: string;
  /** Defaults to the provider's environment variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`). */
  apiKey?: string;
  /** Per-request timeout (default 120 s); a timeout is a transient failure. */
  timeoutMs?: number;
  /**
   * The output cap sent to the provider (`max_tokens`). Default: twice the
   * request's summary budget, at least 1,024, so that a summary of the asked
   * size is not cut off.
   */
  maxTokens?: number;
  /** Where environment variables are read (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** A fetch implementation (default the global one). */
  fetch?: typeof fetch;
}

/** The API key from the options or the environment, or a deterministic error naming both. */
export function resolveApiKey(
  fn: string,
  apiKey: string | undefined,
  envName: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const key = apiKey ?? env[envName];
  if (key === undefined || key.trim() === "") {
    throw new SummarizerError(
      "deterministic",
      `${fn}: no API key: set the ${envName} environment variable or pass the apiKey option (a local server that needs no key accepts any placeholder, e.g. apiKey: "local")`,
    );
  }
  return key;
}

export function requireModel(fn: string, model: unknown): string {
  if (typeof model !== "string" || model.trim() === "") {
    throw new SummarizerError(
      "deterministic",
      `${fn}: the model option is required (e.g. { model: "gpt-4o-mini" })`,
    );
  }
  return model;
}

/** The output cap: explicit, else twice the summary budget and at least 1,024. */
export function outputCap(optionMax: number | undefined, request: SummaryRequest): number {
  if (optionMax !== undefined) return optionMax;
  return Math.max(1024, 2 * (request.maxTokens ?? DEFAULT_SUMMARY_TOKENS));
}

/** An SDK error class, used with `instanceof`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ErrorClass = abstract new (...args: any[]) => Error;

/**
 * Map a thrown SDK error to a `SummarizerError`. Shared by both providers
 * (their SDKs have the same error class shapes), each passing its own classes.
 */
export function mapSdkError(
  err: unknown,
  ctx: {
    provider: "openai" | "anthropic";
    label: string;
    timeoutMs: number;
    sink: ResponseSink;
    signal?: AbortSignal;
    classes: {
      APIError: ErrorClass;
      APIConnectionError: ErrorClass;
      APIConnectionTimeoutError: ErrorClass;
      APIUserAbortError: ErrorClass;
    };
  },
): SummarizerError {
  if (err instanceof SummarizerError) return err;
  const { classes, label } = ctx;
  if (err instanceof classes.APIUserAbortError || ctx.signal?.aborted === true) {
    return new SummarizerError("deterministic", `${label}: request aborted`, { cause: err });
  }
  if (err instanceof classes.APIConnectionTimeoutError) {
    return new SummarizerError("transient", `${label}: timed out after ${ctx.timeoutMs} ms`, { cause: err });
  }
  if (err instanceof classes.APIConnectionError) {
    return new SummarizerError("transient", `${label}: connection failed: ${rootCauseMessage(err)}`, {
      cause: err,
    });
  }
  if (err instanceof classes.APIError) {
    const e = err as { status?: unknown; headers?: unknown; error?: unknown; message?: string };
    if (typeof e.status === "number") {
      const mapped = classifyHttpFailure(
        ctx.provider,
        {
          status: e.status,
          headers: e.headers as never,
          bodyText: ctx.sink.status === e.status ? ctx.sink.body : undefined,
          sdkError: e.error,
          sdkMessage: e.message,
        },
        label,
      );
      return new SummarizerError(mapped.kind, mapped.message, {
        status: mapped.status,
        retryAfterMs: mapped.retryAfterMs,
        cause: err,
      });
    }
  }
  return new SummarizerError("deterministic", `${label}: ${rootCauseMessage(err)}`, { cause: err });
}
