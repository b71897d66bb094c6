/**
 * The guard's verdicts in a team's own telemetry: when the standard
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`) is set, the guard exports, through
 * the OpenTelemetry JS SDK and its OTLP exporters, one log record per
 * compaction it judges and its metrics (requests, compactions seen, lost,
 * repaired, the latency it adds). Without them nothing of the SDK is loaded:
 * this module imports it only when a signal is configured. The SDK's packages are optional
 * dependencies (installed by default; `npm install --omit=optional` leaves them out, and then an
 * endpoint set is one line and nothing exported).
 *
 * What goes out is counts, kinds, ids and versions: never a text of the
 * conversation (a lost instruction is counted, not quoted; the validator's
 * reason, which quotes, is left out) and never a header of the agent's.
 *
 * The record joins Claude Code's own `claude_code.compaction` event by
 * `session.id` (the agent's own session id, the same attribute Claude Code
 * puts on all its events) and carries the tokens before and after under
 * Claude Code's names, `pre_tokens` and `post_tokens`.
 *
 * The SDK's own variables are honoured as the SDK reads them: the endpoint,
 * `OTEL_EXPORTER_OTLP_HEADERS`, `_TIMEOUT`, `_COMPRESSION`, the certificates
 * and the metrics temporality (read by the exporters), `OTEL_SERVICE_NAME`
 * and `OTEL_RESOURCE_ATTRIBUTES` (the resource); here,
 * `OTEL_EXPORTER_OTLP_PROTOCOL` and its per-signal variants (`http/protobuf`,
 * the default, or `http/json`; `grpc` is not exported, said in one line),
 * `OTEL_LOGS_EXPORTER` / `OTEL_METRICS_EXPORTER` (`none` turns a signal off),
 * `OTEL_SDK_DISABLED`, `OTEL_METRIC_EXPORT_INTERVAL` / `_TIMEOUT` and
 * `OTEL_BLRP_SCHEDULE_DELAY`.
 */
import { readFileSync } from "node:fs";
import type { Counter, Histogram } from "@opentelemetry/api";
import type { Logger } from "@opentelemetry/api-logs";
import type { GuardCore, GuardOutcome, GuardVerdict } from "../types.js";

export type OtlpProtocol = "http/protobuf" | "http/json";

/** One signal to export: over which protocol, and where (the URL as the exporter will use it, for the log line). */
export interface SignalPlan {
  protocol: OtlpProtocol;
  url: string;
}

/** What the environment asks for: the signals exported, and lines to say about what it asks that is not done. */
export interface TelemetryPlan {
  logs?: SignalPlan;
  metrics?: SignalPlan;
  notes: string[];
}

type Env = Readonly<Record<string, string | undefined>>;

const value = (env: Env, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v ? v : undefined;
};

/** The URL shown in the log line: no credentials, no query. */
function shown(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(an endpoint that is not a URL)";
  }
}

function signalPlan(env: Env, signal: "LOGS" | "METRICS", notes: string[]): SignalPlan | undefined {
  const own = value(env, `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`);
  const common = value(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (own === undefined && common === undefined) return undefined;
  const exporters = (value(env, `OTEL_${signal}_EXPORTER`) ?? "otlp").split(",").map((s) => s.trim());
  if (!exporters.includes("otlp")) return undefined;
  const what = signal === "LOGS" ? "log records" : "metrics";
  const name = value(env, `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`)
    ? `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = value(env, name) ?? "http/protobuf";
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    notes.push(
      `OpenTelemetry: ${name}=${protocol}: the guard exports over http/protobuf or http/json only; no ${what} exported`,
    );
    return undefined;
  }
  const url = own ?? `${common!.replace(/\/+$/, "")}/v1/${signal.toLowerCase()}`;
  return { protocol, url: shown(url) };
}

/** What the environment asks the guard to export (nothing with `OTEL_SDK_DISABLED=true` or no endpoint). */
export function telemetryPlan(env: Env = process.env): TelemetryPlan {
  const notes: string[] = [];
  if (value(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return { notes };
  const logs = signalPlan(env, "LOGS", notes);
  const metrics = signalPlan(env, "METRICS", notes);
  return { ...(logs ? { logs } : {}), ...(metrics ? { metrics } : {}), notes };
}

/** The lines that say what the plan exports (after the guard's URL, in the CLI). */
export function planLines(plan: TelemetryPlan): string[] {
  const out = [...plan.notes];
  if (plan.logs)
    out.push(`OpenTelemetry: a log record per compaction to ${plan.logs.url} (${plan.logs.protocol})`);
  if (plan.metrics)
    out.push(`OpenTelemetry: the guard's metrics to ${plan.metrics.url} (${plan.metrics.protocol})`);
  return out;
}

/** What a compaction lost, by kind: `instructions`, `tool_rounds`, `assistant_texts`, `anchors`, `checkpoint`, else `other`. */
export function lostKinds(v: GuardVerdict): string[] {
  if (v.kept) return [];
  const l = v.losses;
  const reason = v.reason ?? "";
  const kinds: string[] = [];
  if (l.user_texts.length > 0) kinds.push("instructions");
  if (l.tool_calls.length > 0 || l.tool_results.length > 0 || /^tool_use .* has no tool_result/.test(reason))
    kinds.push("tool_rounds");
  if (l.assistant_texts.length > 0) kinds.push("assistant_texts");
  if (/^anchors /.test(reason)) kinds.push("anchors");
  if (/^(missing checkpoint|placeholder-only checkpoint)/.test(reason)) kinds.push("checkpoint");
  return kinds.length > 0 ? kinds : ["other"];
}

/** A verdict as the log record's attributes: counts, kinds, ids and versions, never a text of the conversation. */
export function verdictAttributes(v: GuardVerdict): Record<string, string | number | boolean | string[]> {
  const repair = v.kept
    ? "not_needed"
    : v.repaired
      ? "repaired"
      : v.repair_refused !== null
        ? "refused"
        : "not_attempted";
  return {
    "event.name": COMPACTION_EVENT,
    ...(v.agent_session_id !== null ? { "session.id": v.agent_session_id } : {}),
    "guard.session": v.session,
    "agent.name": v.agent,
    ...(v.agent_version !== null ? { "agent.version": v.agent_version } : {}),
    wire: v.wire,
    verdict: v.kept ? "kept" : "lost",
    "lost.kinds": lostKinds(v),
    "lost.instructions": v.losses.user_texts.length,
    "lost.tool_calls": v.losses.tool_calls.length,
    "lost.tool_results": v.losses.tool_results.length,
    "lost.assistant_texts": v.losses.assistant_texts.length,
    pre_tokens: v.tokens_before,
    post_tokens: v.tokens_after,
    messages_before: v.messages_before,
    messages_after: v.messages_after,
    repaired: v.repaired,
    repair,
    provider_edits: v.provider_edits !== null,
  };
}

/** The log record's event name. */
export const COMPACTION_EVENT = "compact_safe.compaction";
/** The instrumentation scope of the logger and the meter. */
export const SCOPE = "compact-safe.guard";

/** The guard's telemetry, once started. */
export interface GuardTelemetry {
  /** The core with every request counted and the time it took (what the guard adds) recorded. */
  wrap(core: GuardCore): GuardCore;
  /** One outcome: a verdict is a log record and counts in the compaction metrics. */
  outcome(o: GuardOutcome): void;
  /** Exports what is left and stops (bounded: a collector that does not answer does not hold the guard). */
  close(): Promise<void>;
}

/**
 * The exporters' options: the SDK reads everything from the environment; only where
 * `OTEL_EXPORTER_OTLP_TIMEOUT` (or the signal's) is not set, an export (its retries included) is given
 * CLOSE_WAIT_MS rather than the SDK's 10 s, so that a collector that does not answer keeps a stopping
 * guard no longer than that.
 */
function exporterOptions(env: Env, signal: "LOGS" | "METRICS"): { timeoutMillis?: number } {
  const set = value(env, `OTEL_EXPORTER_OTLP_${signal}_TIMEOUT`) ?? value(env, "OTEL_EXPORTER_OTLP_TIMEOUT");
  return set === undefined ? { timeoutMillis: CLOSE_WAIT_MS } : {};
}

/** The SDK's modules, loaded only when a signal is configured. */
async function loadSdk(plan: TelemetryPlan, env: Env) {
  const [resources, logs, metrics] = await Promise.all([
    import("@opentelemetry/resources"),
    plan.logs ? import("@opentelemetry/sdk-logs") : undefined,
    plan.metrics ? import("@opentelemetry/sdk-metrics") : undefined,
  ]);
  const logExporter = !plan.logs
    ? undefined
    : plan.logs.protocol === "http/json"
      ? new (await import("@opentelemetry/exporter-logs-otlp-http")).OTLPLogExporter(
          exporterOptions(env, "LOGS"),
        )
      : new (await import("@opentelemetry/exporter-logs-otlp-proto")).OTLPLogExporter(
          exporterOptions(env, "LOGS"),
        );
  const metricExporter = !plan.metrics
    ? undefined
    : plan.metrics.protocol === "http/json"
      ? new (await import("@opentelemetry/exporter-metrics-otlp-http")).OTLPMetricExporter(
          exporterOptions(env, "METRICS"),
        )
      : new (await import("@opentelemetry/exporter-metrics-otlp-proto")).OTLPMetricExporter(
          exporterOptions(env, "METRICS"),
        );
  return { resources, logs, metrics, logExporter, metricExporter };
}

function packageVersion(): string {
  try {
    const url = new URL("../../../../package.json", import.meta.url);
    return (JSON.parse(readFileSync(url, "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

const positive = (env: Env, name: string, fallback: number): number => {
  const n = Number(value(env, name));
  return Number.isFinite(n) && n > 0 ? n : fallback;
};

/** An exporter's failures said in one line each time exporting starts failing (not again until it works). */
function watched<
  T extends { export(items: never, done: (r: { code: number; error?: Error }) => void): void },
>(exporter: T, what: string, note: (text: string) => void): T {
  const inner = exporter.export.bind(exporter) as (
    items: unknown,
    done: (r: { code: number; error?: Error }) => void,
  ) => void;
  let failing = false;
  (exporter as { export: unknown }).export = (
    items: unknown,
    done: (r: { code: number; error?: Error }) => void,
  ) =>
    inner(items, (r) => {
      if (r.code !== 0 && !failing)
        note(`OpenTelemetry: ${what} not exported: ${(r.error?.message ?? "failed").split("\n")[0]}`);
      failing = r.code !== 0;
      done(r);
    });
  return exporter;
}

/** The buckets of the added-latency histogram, in milliseconds. */
const LATENCY_BUCKETS_MS = [0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];
/** How long `close` waits for the last export. */
const CLOSE_WAIT_MS = 3000;

type Sdk = Awaited<ReturnType<typeof loadSdk>>;
type Resource = ReturnType<Sdk["resources"]["defaultResource"]>;
interface Provider {
  shutdown(): Promise<void>;
}

/** The guard's instruments. */
interface Instruments {
  requests: Counter;
  compactions: Counter;
  lost: Counter;
  repaired: Counter;
  latency: Histogram;
}

function loggerOf(
  sdk: Sdk,
  resource: Resource,
  version: string,
  note: (text: string) => void,
  env: Env,
): { logger: Logger; provider: Provider } | undefined {
  if (!sdk.logs || !sdk.logExporter) return undefined;
  const provider = new sdk.logs.LoggerProvider({
    resource,
    processors: [
      new sdk.logs.BatchLogRecordProcessor({
        exporter: watched(sdk.logExporter, "log records", note),
        scheduledDelayMillis: positive(env, "OTEL_BLRP_SCHEDULE_DELAY", 1000),
      }),
    ],
  });
  return { logger: provider.getLogger(SCOPE, version), provider };
}

function metersOf(
  sdk: Sdk,
  resource: Resource,
  version: string,
  note: (text: string) => void,
  env: Env,
): { instruments: Instruments; provider: Provider } | undefined {
  if (!sdk.metrics || !sdk.metricExporter) return undefined;
  const provider = new sdk.metrics.MeterProvider({
    resource,
    readers: [
      new sdk.metrics.PeriodicExportingMetricReader({
        exporter: watched(sdk.metricExporter, "metrics", note),
        exportIntervalMillis: positive(env, "OTEL_METRIC_EXPORT_INTERVAL", 60_000),
        exportTimeoutMillis: positive(env, "OTEL_METRIC_EXPORT_TIMEOUT", 30_000),
      }),
    ],
  });
  const meter = provider.getMeter(SCOPE, version);
  const counter = (name: string, description: string, unit: string) =>
    meter.createCounter(name, { description, unit });
  const instruments: Instruments = {
    requests: counter("compact_safe.guard.requests", "Requests the guard handled", "{request}"),
    compactions: counter(
      "compact_safe.guard.compactions",
      "Compactions the guard saw and judged",
      "{compaction}",
    ),
    lost: counter(
      "compact_safe.guard.compactions.lost",
      "Compactions that did not keep what must survive",
      "{compaction}",
    ),
    repaired: counter(
      "compact_safe.guard.compactions.repaired",
      "Compactions the guard repaired",
      "{compaction}",
    ),
    latency: meter.createHistogram("compact_safe.guard.added_latency", {
      description: "Time the guard held a request before sending it on (or answering it)",
      unit: "ms",
      advice: { explicitBucketBoundaries: LATENCY_BUCKETS_MS },
    }),
  };
  return { instruments, provider };
}

/** The core with each request counted and the time it took recorded. */
function timed(core: GuardCore, metrics: Instruments): GuardCore {
  const wrapped: GuardCore = {
    async handle(request) {
      const t0 = performance.now();
      const out = await core.handle(request);
      const attrs = { wire: out.wire ?? "other" };
      metrics.latency.record(performance.now() - t0, attrs);
      metrics.requests.add(1, attrs);
      return out;
    },
    idle: () => core.idle(),
    close: () => core.close(),
  };
  if (core.counts) wrapped.counts = () => core.counts!();
  return wrapped;
}

/** Shuts the providers down (their last exports), waiting at most CLOSE_WAIT_MS. */
async function shutdown(providers: (Provider | undefined)[], note: (text: string) => void): Promise<void> {
  const done = Promise.allSettled(providers.map((p) => p?.shutdown())).then(() => true);
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), CLOSE_WAIT_MS);
    timer.unref();
  });
  const finished = await Promise.race([done, waited]);
  clearTimeout(timer);
  if (!finished)
    note(
      `OpenTelemetry: the last export did not finish within ${CLOSE_WAIT_MS / 1000} s; what it held is not sent`,
    );
}

/**
 * Starts exporting as `plan` says (from `telemetryPlan`), or resolves undefined when it exports
 * nothing; `note` gets a line when an export fails.
 */
export async function startTelemetry(
  plan: TelemetryPlan,
  note: (text: string) => void,
  env: Env = process.env,
): Promise<GuardTelemetry | undefined> {
  if (!plan.logs && !plan.metrics) return undefined;
  let sdk: Sdk;
  try {
    sdk = await loadSdk(plan, env);
  } catch (e) {
    // Optional dependencies: left out by `npm install --omit=optional`, or not installable here. Said once
    // the guard listens (its first line is its URL): on the next turn of the event loop.
    const why = (e instanceof Error ? e.message : String(e)).split("\n")[0];
    setImmediate(() =>
      note(
        `OpenTelemetry: the SDK could not be loaded (${why}); nothing exported (npm install compact-safe without --omit=optional installs it)`,
      ),
    );
    return undefined;
  }
  const { resources } = sdk;
  const version = packageVersion();
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ "service.name": "compact-safe", "service.version": version }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const logs = loggerOf(sdk, resource, version, note, env);
  const meters = metersOf(sdk, resource, version, note, env);
  const metrics = meters?.instruments;
  return {
    wrap: (core) => (metrics ? timed(core, metrics) : core),
    outcome(o) {
      const v = o.verdict;
      if (!v) return;
      const attrs =
        v.agent_version !== null
          ? { "agent.name": v.agent, "agent.version": v.agent_version }
          : { "agent.name": v.agent };
      metrics?.compactions.add(1, { ...attrs, verdict: v.kept ? "kept" : "lost" });
      if (!v.kept) metrics?.lost.add(1, attrs);
      if (v.repaired) metrics?.repaired.add(1, attrs);
      const kinds = lostKinds(v);
      logs?.logger.emit({
        eventName: COMPACTION_EVENT,
        severityNumber: v.kept || v.repaired ? 9 : 13,
        severityText: v.kept || v.repaired ? "INFO" : "WARN",
        body: v.kept
          ? "compaction kept the contract"
          : `compaction lost what must survive (${kinds.join(", ")}); ${v.repaired ? "repaired" : "not repaired"}`,
        attributes: verdictAttributes(v),
      });
    },
    close: () => shutdown([logs?.provider, meters?.provider], note),
  };
}
