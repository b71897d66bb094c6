/**
 * What the LLM summarizers share: options, key lookup, the output cap, the SDK error mapping, and the
 * one client setup (`llmSetup` at construction, `callLlm` for each request) that every LLM summarizer
 * (OpenAI-compatible, Anthropic, Anthropic-native) goes through.
 */
import { SummarizerError, type SummaryRequest } from "./types.js";
import { capturingFetch, classifyHttpFailure, rootCauseMessage, type ResponseSink } from "./errors.js";
import { DEFAULT_SUMMARY_TOKENS } from "./extractive/sections.js";
import { CONSTANTS } from "../model/constants.js";

export const DEFAULT_TIMEOUT_MS = CONSTANTS.requestTimeoutMs;
/** The longest timer Node keeps (about 24.8 days); a longer one would fire at once. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export interface LlmSummarizerOptions {
  /** API root; for OpenAI-compatible servers it usually ends in `/v1`. Defaults to the provider's. */
  baseURL?: string;
  model: string;
  /** Defaults to the provider's environment variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`). */
  apiKey?: string;
  /**
   * Per-request timeout in milliseconds (default 120 s), covering the whole request: connection,
   * headers and the body. A timeout is a transient failure.
   */
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

/** The per-request timeout: the option or the default; anything but a positive number of milliseconds fails at construction. */
export function resolveTimeout(fn: string, timeoutMs: unknown): number {
  const t = timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof t !== "number" || !Number.isFinite(t) || t <= 0 || t > MAX_TIMEOUT_MS) {
    throw new SummarizerError(
      "deterministic",
      `${fn}: timeoutMs must be a positive number of milliseconds, at most ${MAX_TIMEOUT_MS}; got ${String(t)}`,
    );
  }
  return t;
}

/** What a call that has not settled in its first turn of microtasks is told apart by (`withWholeRequestTimeout`). */
const PENDING: unique symbol = Symbol("pending");
const STILL_PENDING: Promise<typeof PENDING> = Promise.resolve(PENDING);

/**
 * Runs `call` under one timer that covers the whole request, body included. The SDKs' own timer
 * stops when the headers arrive, so a server that sends headers and then stalls the body would
 * otherwise hold the request until the HTTP client's body timeout (5 minutes). `call` gets a
 * signal that aborts when the timer fires or `outer` aborts; the returned promise settles at that
 * moment even if `call` ignores the signal. A timeout rejects with `onTimeout()`; an abort of
 * `outer` with its reason.
 *
 * The timer is set once the call has not settled in its first turn of microtasks: a call that
 * answers at once (a summarizer that runs in the process) is done before a timer could fire, and
 * setting one up and clearing it was a tenth of compacting a small history with such a summarizer.
 */
export function withWholeRequestTimeout<T>(
  timeoutMs: number,
  outer: AbortSignal | undefined,
  onTimeout: () => Error,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  return withWholeRequestTimeoutLazy(timeoutMs, outer, onTimeout, (abort) => call(abort.signal));
}

/**
 * An abort signal made when it is first read: a call that never reads it (a summarizer that runs in
 * the process and answers at once) costs no `AbortController`, whose set-up was a twentieth of
 * compacting a small history. Aborted before it is read, the signal is made aborted.
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private reason: unknown;
  private aborted = false;

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/** `withWholeRequestTimeout`, whose call gets the signal as a `LazyAbort` (made only if the call reads it). */
export async function withWholeRequestTimeoutLazy<T>(
  timeoutMs: number,
  outer: AbortSignal | undefined,
  onTimeout: () => Error,
  call: (abort: LazyAbort) => Promise<T>,
): Promise<T> {
  const abort = new LazyAbort();
  // An outer signal already aborted: the call starts with its signal aborted, as it always did.
  if (outer?.aborted) return raceTimer(timeoutMs, outer, onTimeout, abort, () => call(abort));
  const pending = call(abort);
  const first = await Promise.race([pending, STILL_PENDING]);
  if (first !== PENDING) return first as T;
  return raceTimer(timeoutMs, outer, onTimeout, abort, () => pending);
}

/** `start()`'s promise raced against the timer and `outer` (`withWholeRequestTimeout`). */
async function raceTimer<T>(
  timeoutMs: number,
  outer: AbortSignal | undefined,
  onTimeout: () => Error,
  abort: LazyAbort,
  start: () => Promise<T>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let forward: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(onTimeout());
      abort.abort();
    }, timeoutMs);
    if (outer) {
      forward = () => {
        reject(outer.reason);
        abort.abort(outer.reason);
      };
      if (outer.aborted) forward();
      else outer.addEventListener("abort", forward, { once: true });
    }
  });
  try {
    return await Promise.race([start(), stop]);
  } finally {
    clearTimeout(timer);
    if (forward) outer?.removeEventListener("abort", forward);
  }
}

/** Error codes of a connection that failed or broke, anywhere in the cause chain (a body cut mid-stream included). */
const NETWORK_CODES = new Set([
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
]);

function isNetworkFailure(err: unknown): boolean {
  let cur: unknown = err;
  for (let depth = 0; depth < 8 && cur instanceof Error; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return true;
    // undici's error when a response body breaks off ("TypeError: terminated").
    if (cur instanceof TypeError && cur.message === "terminated") return true;
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
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
  if (isNetworkFailure(err)) {
    // Raised while the body was read (after the SDK's own error mapping): the connection broke.
    return new SummarizerError("transient", `${label}: connection failed: ${rootCauseMessage(err)}`, {
      cause: err,
    });
  }
  return new SummarizerError("deterministic", `${label}: ${rootCauseMessage(err)}`, { cause: err });
}

/** What an LLM summarizer resolves once, at construction: a bad option fails there, as a `deterministic` error. */
export interface LlmSetup {
  /** The provider, for the error mapping. */
  provider: "openai" | "anthropic";
  model: string;
  apiKey: string;
  timeoutMs: number;
  /** Every message's first words: `NAME summarizer (model M[, DETAIL][ at URL])`. */
  label: string;
  baseURL?: string;
  /** The caller's fetch; the global one (as it is at each request) when none. */
  fetch?: typeof fetch;
}

/**
 * The setup of the summarizer `fn` (the public function's name, for its errors) named `name` in its
 * label: the model (required), the key (the option, else `envName` in `options.env`, default
 * `process.env`), the whole-request timeout, and `detail` added to the label after the model.
 */
export function llmSetup(
  fn: string,
  name: string,
  provider: LlmSetup["provider"],
  options: LlmSummarizerOptions,
  detail = "",
): LlmSetup {
  const model = requireModel(fn, options?.model);
  const envName = provider === "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
  const apiKey = resolveApiKey(fn, options.apiKey, envName, options.env ?? process.env);
  const timeoutMs = resolveTimeout(fn, options.timeoutMs);
  const label = `${name} summarizer (model ${model}${detail ? `, ${detail}` : ""}${options.baseURL ? ` at ${options.baseURL}` : ""})`;
  return {
    provider,
    model,
    apiKey,
    timeoutMs,
    label,
    baseURL: options.baseURL,
    fetch: options.fetch,
  };
}

/** An SDK module (`openai`, `@anthropic-ai/sdk`): its client class and the error classes `mapSdkError` tells apart. */
export interface LlmSdk<Client> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  default: new (options: any) => Client;
  APIError: ErrorClass;
  APIConnectionError: ErrorClass;
  APIConnectionTimeoutError: ErrorClass;
  APIUserAbortError: ErrorClass;
}

/**
 * One request through the SDK: a client with the SDK's retries off (the engine owns the failure
 * ladder) and its logging off, the setup's key, base URL and timeout, and a fetch that keeps the raw
 * error body (`capturingFetch`); `call` runs under one timer for the whole request, body included
 * (`withWholeRequestTimeout`), and whatever it throws becomes a `SummarizerError` (`mapSdkError`).
 */
export async function callLlm<Client, T>(
  setup: LlmSetup,
  sdk: LlmSdk<Client>,
  signal: AbortSignal | undefined,
  call: (client: Client, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const sink: ResponseSink = {};
  const client = new sdk.default({
    apiKey: setup.apiKey,
    // An explicit base URL; without one the SDK's default (or its environment variable) applies.
    baseURL: setup.baseURL,
    maxRetries: 0,
    timeout: setup.timeoutMs,
    fetch: capturingFetch(sink, setup.fetch ?? globalThis.fetch),
    logLevel: "off",
  });
  const timedOut = () =>
    new SummarizerError("transient", `${setup.label}: timed out after ${setup.timeoutMs} ms`);
  try {
    // Awaiting the SDK's promise reads and parses the body, so the timer covers it.
    return await withWholeRequestTimeout(setup.timeoutMs, signal, timedOut, (s) => call(client, s));
  } catch (err) {
    throw mapSdkError(err, {
      provider: setup.provider,
      label: setup.label,
      timeoutMs: setup.timeoutMs,
      sink,
      signal,
      classes: sdk,
    });
  }
}
