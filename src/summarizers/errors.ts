/**
 * Mapping provider failures to `SummarizerError` kinds for the engine's
 * failure ladder:
 * - `transient`: connection refused / reset, timeout, 408, 409, 429 (except an
 *   exhausted quota), 5xx and 529; `retry-after-ms` / `retry-after` give
 *   `retryAfterMs`;
 * - `prompt_too_long`: OpenAI `context_length_exceeded` (and the wording used
 *   by vLLM, llama.cpp and DeepSeek), Anthropic `prompt is too long`, and 413
 *   (request too large): dropping the oldest unit makes the request smaller;
 * - `deterministic`: everything else (400, 401, 403, 404, 422, quota, a
 *   malformed answer, an aborted request).
 */
import { SummarizerError } from "./types.js";
import { clip, oneLine } from "./transcript.js";

/** Where the raw body of a failed HTTP response is kept (the SDKs drop bodies they cannot parse). */
export interface ResponseSink {
  status?: number;
  body?: string;
}

/** A fetch that records the body of any non-2xx response into `sink`. */
export function capturingFetch(sink: ResponseSink, base: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    if (!res.ok) {
      sink.status = res.status;
      try {
        sink.body = await res.clone().text();
      } catch {
        sink.body = undefined;
      }
    }
    return res;
  };
}

function rec(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

interface ErrorFacts {
  message?: string;
  code?: string;
  type?: string;
}

/**
 * The message, code and type of an error body in any of the shapes seen in
 * practice: OpenAI `{ error: { message, type, code } }`, Anthropic
 * `{ type: "error", error: { type, message, details?: { error_code } } }` (the
 * `error_code` is the code: `compaction_nothing_to_summarize`, …), vLLM
 * `{ object: "error", message, type, code }`, llama.cpp `{ error: { code,
 * message, type } }`.
 */
export function errorFacts(body: unknown): ErrorFacts {
  const top = rec(body);
  if (!top) return typeof body === "string" && body.trim() !== "" ? { message: body } : {};
  const inner = rec(top.error);
  const src = inner ?? top;
  return {
    message: str(src.message) ?? str(top.message) ?? str(top.error) ?? str(top.detail),
    code: str(src.code) ?? str(rec(src.details)?.error_code) ?? str(top.code),
    type: str(src.type) ?? (inner ? undefined : str(top.type)),
  };
}

function parseBody(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

type HeaderBag = { get(name: string): string | null } | Record<string, unknown> | undefined | null;

function header(h: HeaderBag, name: string): string | undefined {
  if (!h) return undefined;
  if (typeof (h as { get?: unknown }).get === "function")
    return (h as { get(n: string): string | null }).get(name) ?? undefined;
  const r = h as Record<string, unknown>;
  for (const k of Object.keys(r))
    if (k.toLowerCase() === name) return typeof r[k] === "string" ? (r[k] as string) : undefined;
  return undefined;
}

/** `retry-after-ms`, else `retry-after` in seconds or as an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(h: HeaderBag, now: number = Date.now()): number | undefined {
  const ms = header(h, "retry-after-ms");
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.round(Number(ms));
  const ra = header(h, "retry-after");
  if (ra === undefined) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Math.round(Number(ra) * 1000);
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const CONTEXT_WORDING =
  /context_length_exceeded|maximum context length|context length exceeded|exceeds? the (?:available )?context (?:size|window|length)|prompt is too long|input is too long|too many (?:input )?tokens|reduce the length of the messages/i;

export interface HttpFailure {
  status: number;
  headers?: HeaderBag;
  /** The raw response body, when captured. */
  bodyText?: string;
  /** The SDK's parsed error object, used when no body was captured. */
  sdkError?: unknown;
  /** The SDK's message, the last resort. */
  sdkMessage?: string;
}

/** Classify an HTTP error response of either provider. `label` names the summarizer, model and endpoint. */
export function classifyHttpFailure(
  provider: "openai" | "anthropic",
  f: HttpFailure,
  label: string,
): SummarizerError {
  const body = f.bodyText !== undefined ? parseBody(f.bodyText) : f.sdkError;
  const facts = errorFacts(body);
  const message = clip(oneLine(facts.message ?? f.sdkMessage ?? "(no error message)", 301), 300);
  const codeText = facts.code ?? facts.type;
  const text = `${label}: HTTP ${f.status}${codeText ? ` ${codeText}` : ""}: ${message}`;
  const status = f.status;
  const retry = retryAfterMs(f.headers);
  const all = `${facts.code ?? ""} ${facts.type ?? ""} ${facts.message ?? ""}`;

  if (status === 429) {
    if (/insufficient_quota|exceeded your current quota|billing/i.test(all))
      return new SummarizerError("deterministic", text, { status });
    return new SummarizerError("transient", text, { status, retryAfterMs: retry });
  }
  if (status === 408 || status === 409 || status >= 500)
    return new SummarizerError("transient", text, { status, retryAfterMs: retry });
  if (status === 413) return new SummarizerError("prompt_too_long", text, { status });
  if (status >= 400 && status < 500) {
    const tooLong =
      provider === "anthropic"
        ? /prompt is too long/i.test(facts.message ?? "") || CONTEXT_WORDING.test(all)
        : facts.code === "context_length_exceeded" ||
          facts.type === "exceed_context_size_error" ||
          CONTEXT_WORDING.test(all);
    if (tooLong) return new SummarizerError("prompt_too_long", text, { status });
  }
  return new SummarizerError("deterministic", text, { status });
}

/** The innermost message of an error's cause chain (`connect ECONNREFUSED 127.0.0.1:9`). */
export function rootCauseMessage(err: unknown): string {
  let cur: unknown = err;
  let msg = err instanceof Error ? err.message : String(err);
  for (let depth = 0; depth < 8 && cur instanceof Error; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (cur.message)
      msg = typeof code === "string" && !cur.message.includes(code) ? `${code}: ${cur.message}` : cur.message;
    cur = (cur as { cause?: unknown }).cause;
  }
  return clip(oneLine(msg, 301), 300);
}
