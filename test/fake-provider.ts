/**
 * A local fake LLM provider for tests: an HTTP server on 127.0.0.1 (port 0)
 * that speaks the OpenAI `/v1/chat/completions` and Anthropic `/v1/messages`
 * wire formats and answers from a script. It counts requests and keeps their
 * bodies, so tests can assert what was sent and that nothing was retried.
 *
 * Exported for reuse by the engine's and the CLI's tests (not part of the
 * library's public API).
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One scripted answer. */
export type FakeStep =
  | {
      kind?: "response";
      status?: number;
      /** A JSON body (serialized by the server). */
      body?: unknown;
      /** A raw body, sent as is (for bodies that are not JSON). */
      rawBody?: string;
      headers?: Record<string, string>;
      /** Wait this long before answering (for client timeouts). */
      delayMs?: number;
    }
  | {
      /** Destroy the socket without answering (a connection reset). */
      kind: "destroy";
      delayMs?: number;
    }
  | {
      /** Never answer: no status line, no headers; the connection stays open until `close()`. */
      kind: "hang";
      delayMs?: number;
    }
  | {
      /**
       * Send the status line and headers (and `partialBody`, if any) at once, then stall: the body never
       * ends (`then: "stall"`, the default) or the socket is destroyed mid-body (`then: "destroy"`).
       */
      kind: "stall";
      status?: number;
      headers?: Record<string, string>;
      partialBody?: string;
      then?: "stall" | "destroy";
      delayMs?: number;
    };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The parsed JSON body, or undefined when it is not JSON (typed loosely for test assertions). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export type FakeScript = FakeStep[] | ((request: RecordedRequest, index: number) => FakeStep);

export interface FakeProvider {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** Base URL for the OpenAI SDK (`url` + `/v1`). */
  readonly openaiBaseURL: string;
  /** Base URL for the Anthropic SDK (the SDK adds `/v1/messages`). */
  readonly anthropicBaseURL: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  readonly requestCount: number;
  /** Append steps to a list script. */
  enqueue(...steps: FakeStep[]): void;
  close(): Promise<void>;
}

const KNOWN_PATHS = new Set([
  "/v1/chat/completions",
  "/chat/completions",
  "/v1/messages",
  "/v1/responses/compact",
  "/responses/compact",
]);

/** Start a fake provider answering from `script` (a list consumed in order, or a function of the request). */
export async function startFakeProvider(script: FakeScript = []): Promise<FakeProvider> {
  const queue: FakeStep[] = Array.isArray(script) ? [...script] : [];
  const fn = Array.isArray(script) ? undefined : script;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = rawBody === "" ? undefined : JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const path = (req.url ?? "/").split("?")[0];
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        path,
        headers: req.headers,
        rawBody,
        body,
      };
      const index = requests.length;
      requests.push(recorded);
      let step: FakeStep;
      if (!KNOWN_PATHS.has(path) || req.method !== "POST") {
        step = {
          status: 404,
          body: {
            error: { message: `fake provider: no route for ${req.method} ${path}`, type: "not_found_error" },
          },
        };
      } else if (fn) step = fn(recorded, index);
      else
        step = queue.shift() ?? {
          status: 500,
          body: { error: { message: "fake provider: no scripted response left", type: "server_error" } },
        };
      const act = () => answer(step, res);
      if (step.delayMs !== undefined && step.delayMs > 0) {
        const t = setTimeout(() => {
          timers.delete(t);
          if (!res.destroyed && !res.writableEnded) act();
        }, step.delayMs);
        timers.add(t);
        res.on("close", () => {
          clearTimeout(t);
          timers.delete(t);
        });
      } else act();
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    openaiBaseURL: `${url}/v1`,
    anthropicBaseURL: url,
    requests,
    get requestCount() {
      return requests.length;
    },
    enqueue(...steps: FakeStep[]) {
      if (fn) throw new Error("fake provider: enqueue() needs a list script, not a function");
      queue.push(...steps);
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function answer(step: FakeStep, res: ServerResponse): void {
  if (step.kind === "destroy") {
    res.socket?.destroy();
    return;
  }
  if (step.kind === "hang") return;
  if (step.kind === "stall") {
    // A content-length larger than what is sent: the client waits for the rest of the body.
    const partial = step.partialBody ?? '{"id":"chatcmpl-stalled","choices":[';
    res.writeHead(step.status ?? 200, {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(partial) + 1_000),
      ...(step.headers ?? {}),
    });
    res.write(partial, () => {
      if (step.then === "destroy") res.socket?.destroy();
    });
    return;
  }
  const status = step.status ?? 200;
  const payload = step.rawBody ?? (step.body === undefined ? "" : JSON.stringify(step.body));
  const headers: Record<string, string> = {
    "content-type": step.rawBody !== undefined ? "text/plain" : "application/json",
    ...(step.headers ?? {}),
  };
  res.writeHead(status, headers);
  res.end(payload);
}

/** A URL on 127.0.0.1 where nothing listens (a connection there is refused). */
export async function closedPortURL(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

// ---------------------------------------------------------------------------
// Response builders in each provider's real shapes

let counter = 0;
const nextId = (prefix: string) => `${prefix}${(++counter).toString(36).padStart(6, "0")}`;

export interface ReplyOptions {
  model?: string;
  headers?: Record<string, string>;
  delayMs?: number;
}

/** OpenAI Chat Completions answers and errors. */
export const openaiReply = {
  completion(message: Record<string, unknown>, finishReason: string, opts: ReplyOptions = {}): FakeStep {
    return {
      status: 200,
      headers: opts.headers,
      delayMs: opts.delayMs,
      body: {
        id: nextId("chatcmpl-"),
        object: "chat.completion",
        created: 1_700_000_000,
        model: opts.model ?? "fake-model",
        choices: [
          {
            index: 0,
            message: { role: "assistant", refusal: null, ...message },
            logprobs: null,
            finish_reason: finishReason,
          },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
      },
    };
  },
  text(text: string | null, opts: ReplyOptions = {}): FakeStep {
    return openaiReply.completion({ content: text }, "stop", opts);
  },
  /** An answer cut at the output limit (`finish_reason: "length"`). */
  length(text: string, opts: ReplyOptions = {}): FakeStep {
    return openaiReply.completion({ content: text }, "length", opts);
  },
  toolCall(name: string, args: unknown, opts: ReplyOptions = {}): FakeStep {
    return openaiReply.completion(
      {
        content: null,
        tool_calls: [
          { id: nextId("call_"), type: "function", function: { name, arguments: JSON.stringify(args) } },
        ],
      },
      "tool_calls",
      opts,
    );
  },
  error(
    status: number,
    message: string,
    e: {
      type?: string;
      code?: string | null;
      param?: string | null;
      headers?: Record<string, string>;
      delayMs?: number;
    } = {},
  ): FakeStep {
    return {
      status,
      headers: e.headers,
      delayMs: e.delayMs,
      body: {
        error: {
          message,
          type: e.type ?? (status >= 500 ? "server_error" : "invalid_request_error"),
          param: e.param ?? null,
          code: e.code ?? null,
        },
      },
    };
  },
  contextLengthExceeded(): FakeStep {
    return openaiReply.error(
      400,
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
      { type: "invalid_request_error", param: "messages", code: "context_length_exceeded" },
    );
  },
  rateLimited(retryAfterSeconds?: number): FakeStep {
    return openaiReply.error(
      429,
      "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1.",
      {
        type: "requests",
        code: "rate_limit_exceeded",
        headers: retryAfterSeconds !== undefined ? { "retry-after": String(retryAfterSeconds) } : undefined,
      },
    );
  },
  insufficientQuota(): FakeStep {
    return openaiReply.error(
      429,
      "You exceeded your current quota, please check your plan and billing details.",
      {
        type: "insufficient_quota",
        code: "insufficient_quota",
      },
    );
  },
  unauthorized(): FakeStep {
    return openaiReply.error(
      401,
      "Incorrect API key provided: sk-fake. You can find your API key at https://platform.openai.com/account/api-keys.",
      {
        type: "invalid_request_error",
        code: "invalid_api_key",
      },
    );
  },
};

/** Anthropic Messages answers and errors. */
export const anthropicReply = {
  message(content: unknown[], stopReason: string, opts: ReplyOptions = {}): FakeStep {
    return {
      status: 200,
      headers: opts.headers,
      delayMs: opts.delayMs,
      body: {
        id: nextId("msg_"),
        type: "message",
        role: "assistant",
        model: opts.model ?? "fake-model",
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { input_tokens: 100, output_tokens: 20 },
      },
    };
  },
  text(text: string, opts: ReplyOptions = {}): FakeStep {
    return anthropicReply.message(text === "" ? [] : [{ type: "text", text }], "end_turn", opts);
  },
  /** An answer cut at the output limit (`stop_reason: "max_tokens"`). */
  maxTokens(text: string, opts: ReplyOptions = {}): FakeStep {
    return anthropicReply.message([{ type: "text", text }], "max_tokens", opts);
  },
  toolUse(name: string, input: unknown, opts: ReplyOptions = {}): FakeStep {
    return anthropicReply.message(
      [{ type: "tool_use", id: nextId("toolu_"), name, input }],
      "tool_use",
      opts,
    );
  },
  /** An error in the API's shape; `errorCode` adds `error.details.error_code` (the compaction errors carry one). */
  error(
    status: number,
    type: string,
    message: string,
    e: { headers?: Record<string, string>; delayMs?: number; errorCode?: string } = {},
  ): FakeStep {
    const error: Record<string, unknown> = { type, message };
    if (e.errorCode !== undefined) error.details = { error_code: e.errorCode };
    return {
      status,
      headers: e.headers,
      delayMs: e.delayMs,
      body: { type: "error", error, request_id: nextId("req_") },
    };
  },
  promptTooLong(): FakeStep {
    return anthropicReply.error(
      400,
      "invalid_request_error",
      "prompt is too long: 212345 tokens > 200000 maximum",
    );
  },
  rateLimited(retryAfterSeconds?: number): FakeStep {
    return anthropicReply.error(
      429,
      "rate_limit_error",
      "Number of request tokens has exceeded your per-minute rate limit",
      {
        headers: retryAfterSeconds !== undefined ? { "retry-after": String(retryAfterSeconds) } : undefined,
      },
    );
  },
  overloaded(): FakeStep {
    return anthropicReply.error(529, "overloaded_error", "Overloaded");
  },
  unauthorized(): FakeStep {
    return anthropicReply.error(401, "authentication_error", "invalid x-api-key");
  },
};

/**
 * The Anthropic Messages API's server-side compaction as documented (beta
 * `compact-2026-01-12`; `context_management.edits: [{ type: "compact_20260112",
 * trigger: { type: "input_tokens", value }, instructions, pause_after_compaction }]`):
 * a request without the beta header, or with a trigger under 50,000 tokens, is
 * refused with 400 as the API refuses it; a request whose input is under the
 * trigger is not compacted, and the model answers it as an ordinary turn, as the
 * API does; otherwise the answer is a `compaction` block holding `summary` (null
 * for a failed compaction), `stop_reason: "compaction"` when
 * `pause_after_compaction` is set, and a `usage` whose `iterations` hold the
 * compaction's own entry (cache reads included). The input's size is
 * `inputTokens` when given (a test standing for a large session), else the
 * body's length over four.
 */
export function anthropicCompaction(
  request: RecordedRequest,
  summary: string | null,
  opts: ReplyOptions & { cacheRead?: number; inputTokens?: number } = {},
): FakeStep {
  const beta = String(request.headers["anthropic-beta"] ?? "");
  const edits = request.body?.context_management?.edits;
  const edit = Array.isArray(edits)
    ? edits.find((e: { type?: string }) => e?.type === "compact_20260112")
    : undefined;
  if (edit !== undefined && !beta.split(",").includes("compact-2026-01-12"))
    return anthropicReply.error(
      400,
      "invalid_request_error",
      "context_management.edits.0: compact_20260112 requires the compact-2026-01-12 beta",
    );
  if (edit === undefined) return anthropicReply.text("A plain answer: nothing was compacted.");
  const value = edit.trigger?.value ?? 150_000;
  if (edit.trigger !== undefined && (edit.trigger.type !== "input_tokens" || typeof value !== "number"))
    return anthropicReply.error(
      400,
      "invalid_request_error",
      "context_management.edits.0.trigger: invalid trigger",
    );
  if (value < 50_000)
    return anthropicReply.error(
      400,
      "invalid_request_error",
      "context_management.edits.0.trigger.value: must be at least 50000",
    );
  const inputTokens = opts.inputTokens ?? Math.ceil(request.rawBody.length / 4);
  if (inputTokens < value)
    return anthropicReply.text("Continuing the work: the next step is to run the tests.", opts);
  const cacheRead = opts.cacheRead ?? 0;
  const iteration = {
    type: "compaction",
    input_tokens: 200,
    output_tokens: 900,
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: 0,
    cache_creation: null,
  };
  return {
    status: 200,
    headers: opts.headers,
    delayMs: opts.delayMs,
    body: {
      id: nextId("msg_"),
      type: "message",
      role: "assistant",
      model: opts.model ?? request.body?.model ?? "fake-model",
      content: [
        {
          type: "compaction",
          content: summary,
          encrypted_content: null,
          signature: "fake-signature-over-the-summary",
        },
      ],
      stop_reason: edit.pause_after_compaction === true ? "compaction" : "end_turn",
      stop_sequence: null,
      context_management: { applied_edits: [] },
      usage: {
        input_tokens: 10,
        output_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        iterations: [iteration],
      },
    },
  };
}

/**
 * The Anthropic Messages API's on-demand compaction as documented (beta
 * `compact-2026-09-04`; the top-level `compaction: { type: "summarize",
 * instructions? }` parameter; `@anthropic-ai/sdk` 1.14's `BetaCompactionConfig`
 * and error classes): a request with the parameter and without the beta header,
 * with `context_management` beside it, or with another `type`, is refused with
 * 400; one whose messages hold no user or assistant content is refused with
 * `compaction_nothing_to_summarize`, one that ends on an assistant turn with an
 * unanswered tool call with `compaction_incomplete_turn` (the error's
 * `details.error_code`). Any other is compacted whatever its size (there is no
 * trigger): the answer holds the `compaction` block alone (`summary`, null for a
 * failed compaction, and a signature), `stop_reason: "compaction"`, and a `usage`
 * whose `iterations` hold the compaction's own entry. A request without the
 * parameter is answered as an ordinary turn.
 */
export function anthropicOnDemandCompaction(
  request: RecordedRequest,
  summary: string | null,
  opts: ReplyOptions & { cacheRead?: number } = {},
): FakeStep {
  const body = request.body ?? {};
  const compaction = body.compaction;
  if (compaction === undefined || compaction === null)
    return anthropicReply.text("A plain answer: nothing was compacted.", opts);
  const beta = String(request.headers["anthropic-beta"] ?? "");
  if (!beta.split(",").includes("compact-2026-09-04"))
    return anthropicReply.error(
      400,
      "invalid_request_error",
      "compaction: this parameter requires the compact-2026-09-04 beta",
    );
  if (body.context_management !== undefined)
    return anthropicReply.error(
      400,
      "invalid_request_error",
      "compaction: cannot be combined with context_management",
    );
  if (compaction.type !== "summarize")
    return anthropicReply.error(400, "invalid_request_error", `compaction.type: Input should be 'summarize'`);
  const messages: { role?: string; content?: unknown }[] = Array.isArray(body.messages) ? body.messages : [];
  const conversational = messages.filter(
    (m) =>
      (m.role === "user" || m.role === "assistant") &&
      (typeof m.content === "string" ? m.content !== "" : Array.isArray(m.content) && m.content.length > 0),
  );
  if (conversational.length === 0)
    return anthropicReply.error(
      400,
      "invalid_request_error",
      "messages: there is no user or assistant content to summarize",
      { errorCode: "compaction_nothing_to_summarize" },
    );
  const last = messages.at(-1);
  if (
    last?.role === "assistant" &&
    Array.isArray(last.content) &&
    last.content.some((b: { type?: string }) => b?.type === "tool_use")
  )
    return anthropicReply.error(
      400,
      "invalid_request_error",
      "messages: the conversation ends on an assistant turn that is not finished (a tool call has no result)",
      { errorCode: "compaction_incomplete_turn" },
    );
  const iteration = {
    type: "compaction",
    input_tokens: 200,
    output_tokens: 900,
    cache_read_input_tokens: opts.cacheRead ?? 0,
    cache_creation_input_tokens: 0,
    cache_creation: null,
  };
  return {
    status: 200,
    headers: opts.headers,
    delayMs: opts.delayMs,
    body: {
      id: nextId("msg_"),
      type: "message",
      role: "assistant",
      model: opts.model ?? body.model ?? "fake-model",
      content: [
        {
          type: "compaction",
          content: summary,
          encrypted_content: null,
          signature: "fake-signature-over-the-summary",
        },
      ],
      stop_reason: "compaction",
      stop_sequence: null,
      usage: {
        input_tokens: 0,
        output_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        iterations: [iteration],
      },
    },
  };
}
