/**
 * The guard's proxy: an HTTP server on loopback that reads each request
 * whole, hands it to the core (`core.ts`), forwards the core's body to the
 * upstream, and pipes the upstream's answer back as it arrives (a stream is
 * never held back: each chunk is written when it comes).
 *
 * The upstream of a request (`upstreamTarget`): with `upstream` (an origin
 * and an optional path prefix), a request path that already starts with the
 * prefix is sent to the origin as it is, and any other path is put under the
 * prefix: upstream `http://h:p/v1` sends `/v1/responses` to
 * `http://h:p/v1/responses` and `/models` to `http://h:p/v1/models`.
 * Without one, the wire decides: Anthropic Messages paths (`/v1/messages`,
 * `/v1/messages/count_tokens`, any request with an `anthropic-version`
 * header) go to https://api.anthropic.com, everything else (OpenAI
 * Responses, Chat Completions, models) to https://api.openai.com, with the
 * path as received.
 *
 * The upstream call goes direct, or through the proxy the environment names for its URL (`HTTPS_PROXY`,
 * `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`, either case: `upstream-agents.ts`), on keep-alive agents.
 *
 * What it never does: listen on an address other than loopback, log or
 * write a header (auth headers go to the upstream only), change a byte the
 * core did not change, or fail a request because the core failed (the
 * request is then forwarded untouched, with one log line).
 */
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { CompactSafeError } from "../../model/errors.js";
import { redactValue } from "../../redact/redact.js";
import { redactQuotedLine, redactQuotedValue } from "../../redact/quoted.js";
import { createGuardCore } from "../core.js";
import { RELAYED_MAX_BYTES } from "../reading/relayed.js";
import { createUpstreamAgents, type UpstreamAgents } from "./upstream-agents.js";
import { GuardTally, summaryLine, type GuardSummary } from "./summary.js";
import { startTelemetry, telemetryPlan } from "./telemetry.js";
import type { GuardCore, GuardMode, GuardOutcome, GuardVerdict, GuardWire } from "../types.js";

/** An option of the guard that cannot be used (a listen address, an upstream URL). */
export class GuardOptionError extends CompactSafeError {
  constructor(message: string) {
    super("invalid_guard_option", message);
    this.name = "GuardOptionError";
  }
}

export interface GuardOptions {
  /** Origin plus optional path prefix (see the module comment for how paths are joined). Default: by wire. */
  upstream?: string;
  /** `host:port` on loopback (127.0.0.1, ::1 or localhost); default `127.0.0.1:0` (a free port). */
  listen?: string;
  mode?: GuardMode;
  stateDir?: string;
  anchors?: string;
  /** Without `anchors`: the anchors of the agent's workspace, read at each repaired compaction (see `GuardCoreOptions`). */
  anchorsFromWorkspace?: boolean;
  /** `extractive`: answer the agents' own summarization requests offline (see `GuardCoreOptions.summarizer`). */
  summarizer?: "extractive";
  /** The workspace whose live state the repair restates (see `GuardCoreOptions.workspace`). */
  workspace?: string;
  /** The core; default `createGuardCore({ mode, stateDir, anchors, summarizer, workspace })`. Closed by `close()` either way. */
  core?: GuardCore;
  /** Where log lines go (one per verdict, note or error); default standard error. Never given a header. */
  log?: (line: string) => void;
  /** Log lines as JSON objects (`{ event: "verdict" | "note" | "error", ... }`), one per line. */
  json?: boolean;
  /**
   * The largest request body read, in bytes (default DEFAULT_MAX_BODY_BYTES, 64 MiB). A larger one is
   * answered 413 in the provider's error shape and its connection closed: from its `content-length`
   * before a byte of it is read, or, sent chunked, as soon as what arrived passes the limit.
   */
  maxBodyBytes?: number;
  /** Timeouts on receiving a request (never on the upstream's answer); defaults in DEFAULT_TIMEOUTS. */
  timeouts?: GuardTimeouts;
  /** The request bodies the core holds for its sessions, in bytes, at most (see `GuardCoreOptions.maxHeldBytes`). */
  maxHeldBytes?: number;
  /**
   * Log one line when closed: the sessions seen, the compactions, kept, repaired and not repaired
   * (`summary.ts`; with `json`, `{ event: "summary", ... }`). Default false (the CLI sets it).
   */
  summary?: boolean;
}

/** How long the guard waits for a request to arrive, in milliseconds (0: no limit). */
export interface GuardTimeouts {
  /** From a request's first byte to the end of its headers. */
  headersMs?: number;
  /** From a request's first byte to the end of its body (the answer is not counted). */
  requestMs?: number;
  /** Between two chunks of a request body (a body that stops arriving is answered 408). */
  bodyIdleMs?: number;
}

/** 64 MiB: above the providers' own limits (Anthropic's Messages API takes 32 MB), so the guard never refuses what they take. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Node's own defaults for headers and whole requests, and 30 s for a body that stops arriving. */
export const DEFAULT_TIMEOUTS: Readonly<Required<GuardTimeouts>> = {
  headersMs: 60_000,
  requestMs: 300_000,
  bodyIdleMs: 30_000,
};

export interface GuardServer {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  url: string;
  /** The port it listens on. */
  port: number;
  /** Stops listening, ends open connections, closes the core (then logs the summary, with `summary`). */
  close(): Promise<void>;
  /** What this run has seen so far: sessions, compactions, kept, repaired, not repaired. */
  summary(): GuardSummary;
}

export const ANTHROPIC_UPSTREAM = "https://api.anthropic.com";
export const OPENAI_UPSTREAM = "https://api.openai.com";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** `host:port` (or `[::1]:port`, or a bare port) parsed; throws a GuardOptionError for anything not on loopback. */
export function parseListen(listen: string): { host: string; port: number } {
  const text = listen.trim();
  let host = "127.0.0.1";
  let portText = text;
  const bracketed = /^\[([^\]]*)\]:(.*)$/.exec(text);
  if (bracketed) {
    host = bracketed[1];
    portText = bracketed[2];
  } else if (text.includes(":")) {
    const at = text.lastIndexOf(":");
    host = text.slice(0, at);
    portText = text.slice(at + 1);
    if (host.includes(":"))
      throw new GuardOptionError(`--listen ${JSON.stringify(listen)}: write an IPv6 address as [::1]:PORT`);
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535)
    throw new GuardOptionError(
      `--listen ${JSON.stringify(listen)}: expected HOST:PORT with a port from 0 to 65535`,
    );
  if (!LOOPBACK.has(host.toLowerCase()))
    throw new GuardOptionError(
      `--listen ${JSON.stringify(listen)}: the guard listens on loopback only (127.0.0.1, ::1 or localhost), not ${JSON.stringify(host)}`,
    );
  return { host: host.toLowerCase() === "localhost" ? "127.0.0.1" : host, port: Number(portText) };
}

/** `--upstream URL` parsed: http or https, no credentials, query or fragment; the path prefix without a trailing slash. */
export function parseUpstream(upstream: string): URL {
  let url: URL;
  try {
    url = new URL(upstream);
  } catch {
    throw new GuardOptionError(
      `--upstream ${JSON.stringify(upstream)}: not a URL (expected http(s)://HOST[:PORT][/PREFIX])`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new GuardOptionError(`--upstream ${JSON.stringify(url.protocol)}: expected an http or https URL`);
  if (url.username !== "" || url.password !== "")
    throw new GuardOptionError(
      "--upstream: credentials in the URL are not supported (the agent's own auth headers are forwarded)",
    );
  if (url.search !== "" || url.hash !== "")
    throw new GuardOptionError(
      `--upstream ${JSON.stringify(upstream)}: a query or fragment is not supported`,
    );
  url.pathname = url.pathname.replace(/\/+$/, "");
  return url;
}

const UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kib: 1024,
  kb: 1000,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  mb: 1000 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
  gb: 1000 ** 3,
};

/** A size in bytes: a count, or a number and a unit (`64MiB`, `32MB`, `512k`: K/M/G are 1024-based, KB/MB/GB 1000-based). */
export function parseByteSize(text: string, flag = "--max-body"): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = m ? UNITS[m[2].toLowerCase()] : undefined;
  const n = m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : NaN;
  if (!Number.isSafeInteger(n) || n < 1)
    throw new GuardOptionError(
      `${flag} ${JSON.stringify(text)}: expected a size in bytes, such as 67108864 or 64MiB (units B, KiB, MiB, GiB, KB, MB, GB)`,
    );
  return n;
}

/** The wire a request is on, from its path (and the `anthropic-version` header), or undefined. */
export function wireOfPath(path: string, headers: IncomingHttpHeaders = {}): GuardWire | undefined {
  const p = path.split("?")[0];
  if (/\/messages(\/count_tokens)?\/?$/.test(p)) return "anthropic-messages";
  if (/\/responses(\/[^/]+)*\/?$/.test(p)) return "openai-responses";
  if (/\/chat\/completions\/?$/.test(p)) return "openai-chat";
  if (headers["anthropic-version"] !== undefined) return "anthropic-messages";
  return undefined;
}

const isAnthropic = (wire: GuardWire | undefined, headers: IncomingHttpHeaders) =>
  wire === "anthropic-messages" || (wire === undefined && headers["anthropic-version"] !== undefined);

/** The URL a request goes to (see the module comment). `path` is the request's path and query. */
export function upstreamTarget(
  upstream: URL | undefined,
  path: string,
  headers: IncomingHttpHeaders = {},
): URL {
  if (!path.startsWith("/")) path = `/${path}`;
  if (upstream === undefined) {
    const origin = isAnthropic(wireOfPath(path, headers), headers) ? ANTHROPIC_UPSTREAM : OPENAI_UPSTREAM;
    return new URL(origin + path);
  }
  const prefix = upstream.pathname.replace(/\/+$/, "");
  const pathOnly = path.split("?")[0];
  const under = prefix === "" || pathOnly === prefix || pathOnly.startsWith(`${prefix}/`);
  return new URL(upstream.origin + (under ? path : prefix + path));
}

/** Headers that belong to one connection, never forwarded (RFC 9110 7.6.1), plus those `connection` names. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function forwardable(
  headers: IncomingHttpHeaders,
  drop: readonly string[] = [],
): Record<string, string | string[]> {
  const named = String(headers.connection ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "");
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || HOP_BY_HOP.has(k) || named.includes(k) || drop.includes(k)) continue;
    out[k] = v;
  }
  return out;
}

/** What went wrong, as each provider names it: Anthropic's error type, OpenAI's type and code. */
const ERROR_KINDS = {
  unreachable: { anthropic: "api_error", openai: "server_error", code: "upstream_unreachable" },
  too_large: { anthropic: "request_too_large", openai: "invalid_request_error", code: "request_too_large" },
  timeout: { anthropic: "invalid_request_error", openai: "invalid_request_error", code: "request_timeout" },
} as const;

/** The one-line JSON error body in the provider's own error shape (by default, an upstream not reached). */
export function errorBody(
  wire: GuardWire | undefined,
  headers: IncomingHttpHeaders,
  message: string,
  kind: keyof typeof ERROR_KINDS = "unreachable",
): string {
  const k = ERROR_KINDS[kind];
  return isAnthropic(wire, headers)
    ? JSON.stringify({ type: "error", error: { type: k.anthropic, message } })
    : JSON.stringify({ error: { message, type: k.openai, param: null, code: k.code } });
}

function lostText(v: GuardVerdict): string {
  const l = v.losses;
  const parts = (
    [
      [l.user_texts.length, "user text"],
      [l.tool_calls.length, "tool call"],
      [l.tool_results.length, "tool result"],
      [l.assistant_texts.length, "assistant text"],
    ] as const
  )
    .filter(([n]) => n > 0)
    .map(([n, what]) => `${n} ${what}${n === 1 ? "" : "s"}`);
  return parts.length > 0 ? `lost ${parts.join(", ")}` : "";
}

/** A verdict as one log line: `guard: compaction in SESSION (AGENT, N → M messages): ...`. */
export function verdictLine(v: GuardVerdict): string {
  const head = `guard: compaction in ${v.session} (${v.agent}, ${v.wire}, ${v.messages_before} → ${v.messages_after} messages)`;
  const edits = v.provider_edits ? `; provider edits: ${v.provider_edits}` : "";
  if (v.kept) return `${head}: kept the contract${edits}`;
  const lost = lostText(v);
  const repair = v.repaired
    ? "repaired: later requests carry the protected round again"
    : v.repair_refused !== null
      ? `not repaired: ${v.repair_refused}`
      : "not repaired (audit mode)";
  return `${head}: VIOLATION: ${v.reason ?? "the contract was not kept"}${lost ? ` (${lost})` : ""}; ${repair}${edits}`;
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, " ").trim();

/** What reading a request body came to: the body, a refusal (over the limit, stopped arriving), or a client gone. */
type BodyRead = { body: Buffer } | { refused: "too_large" | "timeout" } | { gone: true };

/** The request's declared length (`content-length`), or undefined when it is sent chunked. */
function declaredLength(req: IncomingMessage): number | undefined {
  const v = req.headers["content-length"];
  const n = v === undefined ? NaN : Number(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/**
 * The whole request body, at most `max` bytes. With a `content-length`, one
 * buffer of that size filled as the chunks come (each chunk let go of as it
 * is copied); chunked, the chunks joined once at the end. Over the limit (declared
 * or arrived), or no chunk for `idleMs`, it stops keeping what comes and
 * resolves with the refusal; a client that goes away resolves `gone`. Either
 * way what was read is let go of at once.
 */
function readBody(req: IncomingMessage, max: number, idleMs: number): Promise<BodyRead> {
  const length = declaredLength(req);
  if (length !== undefined && length > max) return Promise.resolve({ refused: "too_large" });
  return new Promise((resolve) => {
    let whole: Buffer | undefined;
    let chunks: Buffer[] = [];
    let size = 0;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      if (idleMs <= 0) return;
      clearTimeout(timer);
      timer = setTimeout(() => done({ refused: "timeout" }), idleMs);
    };
    const done = (r: BodyRead) => {
      clearTimeout(timer);
      req.off("data", onData).off("end", onEnd).off("close", onGone).off("error", onGone);
      whole = undefined;
      chunks = [];
      // Whatever still comes is dropped as it arrives (not kept) until the connection is closed.
      if (!("body" in r)) req.on("error", () => {}).resume();
      resolve(r);
    };
    const onData = (c: Buffer) => {
      if (size + c.length > max || (length !== undefined && size + c.length > length))
        return done({ refused: "too_large" });
      if (length !== undefined) {
        whole ??= Buffer.allocUnsafe(length);
        c.copy(whole, size);
      } else chunks.push(c);
      size += c.length;
      arm();
    };
    const onEnd = () => {
      const body =
        length !== undefined
          ? (whole ?? Buffer.alloc(0)).subarray(0, size)
          : chunks.length === 1
            ? chunks[0]
            : Buffer.concat(chunks, size);
      done({ body });
    };
    const onGone = () => done({ gone: true });
    req.on("data", onData).on("end", onEnd).on("close", onGone).on("error", onGone);
    arm();
  });
}

/** Answers a request the guard will not read (a body over the limit, or one that stopped arriving) and closes its connection. */
function refuse(
  ctx: GuardContext,
  req: IncomingMessage,
  res: ServerResponse,
  why: "too_large" | "timeout",
): void {
  const path = (req.url ?? "/").split("?")[0];
  const wire = wireOfPath(path, req.headers);
  const status = why === "too_large" ? 413 : 408;
  const what =
    why === "too_large"
      ? `the request body is larger than the guard's limit of ${ctx.limits.maxBody} bytes (--max-body)`
      : `the request body stopped arriving (nothing for ${ctx.limits.bodyIdleMs} ms)`;
  ctx.emit("error", `guard: ${req.method} ${path}: ${what}; answered ${status}`, { status });
  if (res.headersSent || res.destroyed) return void res.destroy();
  const text = errorBody(wire, req.headers, `compact-safe guard: ${what}`, why);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    connection: "close",
  });
  // `connection: close`: the socket is closed once the answer is out, whatever of the body is still coming.
  res.end(text);
}

/** A log object's fields redacted: `losses` (whole texts) with `redactValue`, the rest as lines with `sources`. */
function logFields(fields: Record<string, unknown>, sources: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields))
    out[k] = k === "losses" ? redactValue(v) : redactQuotedValue(v, sources);
  return out;
}

/** What the request handling of a running guard shares. */
interface GuardContext {
  readonly core: GuardCore;
  readonly upstream: URL | undefined;
  /** The upstream agents: direct, or through the proxy the environment names (`upstream-agents.ts`). */
  readonly agents: UpstreamAgents;
  readonly emit: (
    event: "verdict" | "note" | "error",
    text: string,
    fields?: Record<string, unknown>,
  ) => void;
  readonly report: (outcome: GuardOutcome) => void;
  /** The body limit and the idle timeout on a body that stops arriving (`GuardOptions`). */
  readonly limits: { readonly maxBody: number; readonly bodyIdleMs: number };
}

/** One request: the core sees it first, then the guard answers it itself or forwards it upstream. */
async function handleRequest(ctx: GuardContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { core, emit, report } = ctx;
  // Settles when the answer has gone to the agent, or it hung up: the core's after-answer work waits for it.
  const answered = new Promise<void>((resolve) => res.once("close", () => resolve()));
  const read = await readBody(req, ctx.limits.maxBody, ctx.limits.bodyIdleMs);
  if ("refused" in read) return refuse(ctx, req, res, read.refused);
  if (!("body" in read) || res.destroyed) return;
  const received = read.body;
  // Absolute-form request targets (a client using the guard as a forward proxy) keep only their path.
  const rawUrl = req.url ?? "/";
  const path = /^https?:\/\//i.test(rawUrl)
    ? (() => {
        const u = new URL(rawUrl);
        return u.pathname + u.search;
      })()
    : rawUrl;

  let outcome: GuardOutcome;
  try {
    outcome = await core.handle({
      method: req.method ?? "GET",
      url: path,
      headers: req.headers,
      body: received,
      answered,
    });
  } catch (e) {
    emit(
      "error",
      `guard: the core failed on ${req.method} ${path.split("?")[0]}, forwarded untouched: ${oneLine(e instanceof Error ? e.message : String(e))}`,
    );
    outcome = { body: received, changed: false };
  }
  report(outcome);
  if (outcome.respond) {
    // The guard's own answer (an agent's summarization request, --summarizer extractive): the upstream is not asked.
    sendOwnAnswer(res, outcome.respond);
    return;
  }
  forwardUpstream(
    ctx,
    req,
    res,
    path,
    outcome.changed ? outcome.body : received,
    outcome.wire,
    outcome.changed,
    outcome.relayed,
  );
}

/** Writes the guard's own answer: one buffer, or chunks written as they are listed. */
function sendOwnAnswer(res: ServerResponse, r: NonNullable<GuardOutcome["respond"]>): void {
  res.writeHead(r.status, r.headers);
  if (Buffer.isBuffer(r.body)) res.end(r.body);
  else {
    res.flushHeaders();
    for (const chunk of r.body) res.write(chunk);
    res.end();
  }
}

/**
 * Sends the request on to the upstream and streams its answer back as it comes; an unreachable
 * upstream is answered 502 in the request's wire format.
 */
function forwardUpstream(
  ctx: GuardContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  body: Buffer,
  outcomeWire: GuardWire | undefined,
  changed: boolean,
  relayed?: GuardOutcome["relayed"],
): void {
  const { upstream, agents, emit } = ctx;
  const wire = outcomeWire ?? wireOfPath(path, req.headers);

  const target = upstreamTarget(upstream, path, req.headers);
  const headers = forwardable(req.headers, ["host"]);
  if (changed || (headers["content-length"] === undefined && body.length > 0))
    headers["content-length"] = String(body.length);

  const lib = target.protocol === "https:" ? https : http;
  const { agent, proxy } = agents.forTarget(target);
  const up = lib.request(target, { method: req.method, headers, agent });
  // The agent went away: so does the upstream request (a stream the model is still writing is cut).
  res.on("close", () => {
    if (!res.writableFinished) up.destroy();
  });
  up.on("response", (ures) => {
    res.writeHead(ures.statusCode ?? 502, ures.statusMessage, forwardable(ures.headers));
    res.flushHeaders();
    // Each chunk is written as it comes (pipe: no buffering beyond the socket's own backpressure).
    ures.pipe(res);
    if (relayed && (ures.statusCode ?? 0) < 300) teeAnswer(ures, relayed);
    ures.on("close", () => {
      if (!ures.complete) res.destroy();
    });
  });
  up.on("error", (e: NodeJS.ErrnoException) => {
    if (res.destroyed || res.writableFinished) return;
    const reason = e.code ?? oneLine(e.message);
    const via = proxy === null ? "" : ` through the proxy ${proxy}`;
    const message = `compact-safe guard: the upstream ${target.origin} could not be reached${via} (${reason})`;
    emit(
      "error",
      `guard: ${req.method} ${path.split("?")[0]}: upstream ${target.origin} unreachable${via} (${reason}); answered 502`,
      {
        status: 502,
        upstream: target.origin,
        code: e.code ?? null,
        proxy,
      },
    );
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const text = errorBody(wire, req.headers, message);
    res.writeHead(502, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  });
  up.end(body);
}

/**
 * Hands the core the upstream's whole answer to an agent's summarization
 * request once it ended (up to RELAYED_MAX_BYTES; a longer or cut answer is
 * not handed): a copy of the chunks the pipe writes to the agent, which it
 * neither holds back nor changes.
 */
function teeAnswer(ures: IncomingMessage, relayed: NonNullable<GuardOutcome["relayed"]>): void {
  const chunks: Buffer[] = [];
  let size = 0;
  ures.on("data", (c: Buffer) => {
    size += c.length;
    if (size <= RELAYED_MAX_BYTES) chunks.push(c);
  });
  ures.on("end", () => {
    if (size > RELAYED_MAX_BYTES) return;
    const encoding = ures.headers["content-encoding"];
    try {
      relayed(Buffer.concat(chunks), typeof encoding === "string" ? encoding : undefined);
    } catch {
      // what the core makes of the answer is not the agent's business
    }
  });
}

/**
 * The server's own timeouts: headers and the whole request (Node answers 408 and closes the
 * connection); never one on the socket, so an upstream answer that streams for minutes is not cut
 * (Node counts `requestTimeout` until the request is received, not while it is answered).
 */
function serverOptions(t: Required<GuardTimeouts>): http.ServerOptions {
  const requestTimeout = t.requestMs;
  // Node refuses a headers timeout longer than the request timeout.
  const headersTimeout = requestTimeout > 0 && t.headersMs > requestTimeout ? requestTimeout : t.headersMs;
  const shortest = Math.min(...[headersTimeout, requestTimeout].filter((x) => x > 0));
  return {
    noDelay: true,
    requestTimeout,
    headersTimeout,
    keepAliveTimeout: 5_000,
    // How often Node looks for connections past those timeouts (its default is 30 s).
    connectionsCheckingInterval: Number.isFinite(shortest)
      ? Math.max(10, Math.min(30_000, Math.floor(shortest / 4)))
      : 30_000,
  };
}

/** Listens on host:port; a failure to listen becomes a GuardOptionError naming --listen. */
async function listenOn(server: http.Server, host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      server.off("listening", onListening);
      const what =
        e.code === "EADDRINUSE"
          ? "the port is in use"
          : e.code === "EADDRNOTAVAIL"
            ? "the address is not available on this machine"
            : e.code === "EACCES"
              ? "permission denied"
              : (e.code ?? e.message);
      reject(new GuardOptionError(`--listen ${host.includes(":") ? `[${host}]` : host}:${port}: ${what}`));
    };
    const onListening = () => {
      server.off("error", onError);
      resolve();
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, host);
  });
}

/** Starts the guard; resolves once it listens. Throws a GuardOptionError for a bad address or upstream. */
export async function startGuard(options: GuardOptions = {}): Promise<GuardServer> {
  const { host, port } = parseListen(options.listen ?? "127.0.0.1:0");
  const upstream = options.upstream === undefined ? undefined : parseUpstream(options.upstream);
  const write = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  // Every line is redacted, after any cut in it too: a quotation cut short is taken again from its text
  // redacted whole when the line's `sources` give it (a verdict's lost texts), else loses the word the cut
  // split (`redactQuotedLine`); a verdict's lost texts in JSON are whole, each redacted whole.
  const emit = (
    event: "verdict" | "note" | "error",
    text: string,
    fields: Record<string, unknown> = {},
    sources: readonly string[] = [],
  ) =>
    write(
      options.json
        ? JSON.stringify({
            event,
            ...logFields(fields, sources),
            ...(event === "verdict" ? {} : { message: redactQuotedLine(text, sources) }),
          })
        : redactQuotedLine(text, sources),
    );
  /** A verdict and a note of one outcome, one line each. */
  const report = (outcome: GuardOutcome) => {
    if (outcome.verdict) {
      const v = outcome.verdict;
      emit("verdict", verdictLine(v), v as unknown as Record<string, unknown>, [
        ...v.losses.user_texts,
        ...v.losses.assistant_texts,
      ]);
    }
    if (outcome.note) emit("note", `guard: ${oneLine(outcome.note)}`, { session: outcome.session ?? null });
  };
  // With OTEL_EXPORTER_OTLP_ENDPOINT (or a per-signal one): verdicts and metrics exported (`telemetry.ts`).
  const telemetry = await startTelemetry(telemetryPlan(), (text) => emit("note", `guard: ${text}`));
  // Every outcome, from a request or found after its answer, is counted for the summary, then reported.
  const tally = new GuardTally();
  const counted = (outcome: GuardOutcome) => {
    tally.add(outcome);
    telemetry?.outcome(outcome);
    report(outcome);
  };
  const own =
    options.core ??
    createGuardCore({
      mode: options.mode ?? "repair",
      stateDir: options.stateDir,
      anchors: options.anchors,
      anchorsFromWorkspace: options.anchorsFromWorkspace,
      summarizer: options.summarizer,
      workspace: options.workspace,
      maxHeldBytes: options.maxHeldBytes,
      // What the core finds after the request went out (work done off the request path) is logged too.
      onLate: counted,
    });
  const core = telemetry ? telemetry.wrap(own) : own;

  const given = options.timeouts ?? {};
  const timeouts: Required<GuardTimeouts> = {
    headersMs: given.headersMs ?? DEFAULT_TIMEOUTS.headersMs,
    requestMs: given.requestMs ?? DEFAULT_TIMEOUTS.requestMs,
    bodyIdleMs: given.bodyIdleMs ?? DEFAULT_TIMEOUTS.bodyIdleMs,
  };
  // Direct keep-alive agents, or through the proxy HTTPS_PROXY / HTTP_PROXY name (NO_PROXY honoured).
  const agents = createUpstreamAgents((origin, proxy) =>
    emit("note", `guard: requests to ${origin} go through the proxy ${proxy} (from the environment)`, {
      upstream: origin,
      proxy,
    }),
  );

  const limits = { maxBody: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, bodyIdleMs: timeouts.bodyIdleMs };
  const ctx: GuardContext = { core, upstream, agents, emit, report: counted, limits };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handleRequest(ctx, req, res).catch((e: unknown) => {
      emit("error", `guard: request failed: ${oneLine(e instanceof Error ? e.message : String(e))}`);
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(502, { "content-type": "application/json" });
        res.end(errorBody(undefined, req.headers, "compact-safe guard: the request could not be forwarded"));
      } else res.destroy();
    });
  };
  const server = http.createServer(serverOptions(timeouts), onRequest);
  // `expect: 100-continue`: a body declared over the limit is refused before the client sends it.
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    if ((declaredLength(req) ?? 0) <= limits.maxBody) res.writeContinue();
    onRequest(req, res);
  });

  await listenOn(server, host, port);

  const address = server.address() as AddressInfo;
  const url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        agents.destroy();
        await core.close();
        await telemetry?.close();
        if (options.summary) {
          const s = tally.summary;
          write(options.json ? JSON.stringify({ event: "summary", ...s }) : summaryLine(s));
        }
      })();
      return closing;
    },
    summary: () => tally.summary,
  };
}
