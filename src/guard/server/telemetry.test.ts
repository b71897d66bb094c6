/**
 * The guard's verdicts in a team's telemetry (`telemetry.ts`): with an OTLP endpoint in the environment
 * the guard exports a log record per compaction and its metrics, seen here by a local OTLP receiver on
 * 127.0.0.1 (protobuf and JSON decoded), keyed by the agent's own session id, with no text of the
 * conversation and no header of the agent's; without one, no module of the SDK is loaded.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AddressInfo } from "node:net";
import { startGuard } from "./server.js";
import { answerOn } from "../judging/answer.js";
import { lostKinds, planLines, telemetryPlan, verdictAttributes } from "./telemetry.js";
import type { GuardVerdict } from "../types.js";
import { agentVersion } from "../sessions/session.js";
import { startOtlpReceiver, type ReceivedMetric } from "../../../test/otlp-receiver.js";

const SESSION = "5d0c6a4e-7f1b-4c52-9a43-telemetry0001";
const API_KEY = "sk-ant-api03-TELEMETRYheaderSECRET0123456789abcdef";
const INSTRUCTION = "fix the parser in src/parse.ts and keep the PLANTED-INSTRUCTION-8841 flag";
const TOOLS = [{ name: "Bash", description: "run", input_schema: { type: "object" } }];
const SUMMARY =
  "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nThe parser was fixed.";

const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const call = (id: string) => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "Bash", input: { command: `run ${id}` } }],
});
const result = (id: string) => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content: `out ${id}` }],
});
const HISTORY = [
  user(INSTRUCTION),
  call("t1"),
  result("t1"),
  call("t2"),
  result("t2"),
  { role: "assistant", content: [{ type: "text", text: "fixed" }] },
];

/** An Anthropic upstream that answers every request with the summary (what the guard relays to the session). */
async function upstream(): Promise<{ url: string; close(): Promise<void> }> {
  const answer = answerOn(
    "anthropic-messages",
    {},
    "<summary>The summary below covers the earlier portion of the conversation.\n\nThe parser was fixed.</summary>",
    0,
    0,
  );
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body as Buffer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Claude Code's three requests of a compaction that loses its last round: before, its summarization, after. */
async function compactOnce(guardUrl: string): Promise<void> {
  const send = async (messages: unknown[]) => {
    const r = await fetch(`${guardUrl}/v1/messages?beta=true`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": API_KEY,
        "anthropic-version": "2023-06-01",
        "x-claude-code-session-id": SESSION,
        "user-agent": "claude-cli/2.1.328 (external, cli)",
      },
      body: JSON.stringify({ model: "claude-x", max_tokens: 100, tools: TOOLS, messages }),
    });
    await r.arrayBuffer();
  };
  await send(HISTORY);
  await send([...HISTORY, user("CRITICAL: Respond with TEXT ONLY. Summarize.")]);
  await send([user(SUMMARY), user("now add a test")]);
}

const OTEL_VARS = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
  "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_SERVICE_NAME",
];

/** Runs `fn` with the OTel variables set as given (and the others unset), then restores them. */
async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(OTEL_VARS.map((k) => [k, process.env[k]]));
  for (const k of OTEL_VARS) delete process.env[k];
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const k of OTEL_VARS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

const metric = (ms: ReceivedMetric[], name: string) => {
  const found = ms.filter((m) => m.name === name);
  assert.ok(found.length > 0, `metric ${name} exported (got ${ms.map((m) => m.name).join(", ")})`);
  return found.at(-1)!;
};
const total = (m: ReceivedMetric) => m.points.reduce((n, p) => n + (p.value ?? p.count ?? 0), 0);

describe("the guard's OTLP export, seen by a local receiver", () => {
  for (const protocol of ["http/protobuf", "http/json"] as const)
    test(`a record per compaction keyed by the agent's session id, and the metrics (${protocol})`, async () => {
      const receiver = await startOtlpReceiver();
      const up = await upstream();
      const lines: string[] = [];
      try {
        await withEnv(
          {
            OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
            OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
            OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer collector-token",
            OTEL_SERVICE_NAME: "team-guard",
          },
          async () => {
            const guard = await startGuard({ upstream: up.url, log: (l) => lines.push(l) });
            await compactOnce(guard.url);
            assert.equal(guard.summary().repaired, 1, lines.join("\n"));
            await guard.close();
          },
        );
      } finally {
        await up.close();
        await receiver.close();
      }
      const paths = new Set(receiver.requests.map((r) => r.path));
      assert.deepEqual([...paths].sort(), ["/v1/logs", "/v1/metrics"]);
      for (const r of receiver.requests) {
        assert.equal(r.headers.authorization, "Bearer collector-token", "OTEL_EXPORTER_OTLP_HEADERS sent");
        assert.match(r.contentType, protocol === "http/json" ? /json/ : /protobuf/);
        // No text of the conversation, no header of the agent's, in any byte sent.
        const raw = r.raw.toString("latin1");
        for (const leak of [API_KEY, "PLANTED-INSTRUCTION-8841", "parser", "now add a test", "out t1"])
          assert.ok(!raw.includes(leak), `${r.path} carries ${leak}`);
      }

      const logs = receiver.logs();
      assert.equal(logs.length, 1, "one record per compaction");
      const [log] = logs;
      assert.equal(log.eventName, "compact_safe.compaction");
      assert.equal(log.scope, "compact-safe.guard");
      assert.equal(log.resource["service.name"], "team-guard", "OTEL_SERVICE_NAME honoured");
      const pkg = JSON.parse(readFileSync(new URL("../../../../package.json", import.meta.url), "utf8")) as {
        version: string;
      };
      assert.equal(log.resource["service.version"], pkg.version);
      const a = log.attributes;
      assert.equal(a["session.id"], SESSION, "joins Claude Code's claude_code.compaction by session.id");
      assert.equal(a["agent.name"], "claude-code");
      assert.equal(a["agent.version"], "2.1.328");
      assert.equal(a.verdict, "lost");
      assert.deepEqual(a["lost.kinds"], ["instructions", "tool_rounds", "assistant_texts"]);
      assert.equal(a["lost.instructions"], 1);
      assert.equal(a["lost.tool_calls"], 2);
      assert.equal(a["lost.tool_results"], 2);
      assert.equal(a.repaired, true);
      assert.equal(a.repair, "repaired");
      assert.ok((a.pre_tokens as number) > (a.post_tokens as number), `${a.pre_tokens} → ${a.post_tokens}`);
      assert.ok((a.post_tokens as number) > 0);
      assert.equal(a.messages_before, 6);

      const ms = receiver.metrics();
      assert.equal(total(metric(ms, "compact_safe.guard.requests")), 3);
      assert.equal(total(metric(ms, "compact_safe.guard.compactions")), 1);
      assert.equal(total(metric(ms, "compact_safe.guard.compactions.lost")), 1);
      assert.equal(total(metric(ms, "compact_safe.guard.compactions.repaired")), 1);
      const lost = metric(ms, "compact_safe.guard.compactions.lost").points[0]!;
      assert.deepEqual(lost.attributes, { "agent.name": "claude-code", "agent.version": "2.1.328" });
      const latency = metric(ms, "compact_safe.guard.added_latency");
      assert.equal(latency.kind, "histogram");
      assert.equal(latency.unit, "ms");
      assert.equal(total(latency), 3, "one latency per request");
    });

  test("per-signal endpoints: only the logs endpoint set, only log records go out, to that URL", async () => {
    const receiver = await startOtlpReceiver();
    const up = await upstream();
    try {
      await withEnv({ OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `${receiver.url}/collector/logs` }, async () => {
        const guard = await startGuard({ upstream: up.url, log: () => {} });
        await compactOnce(guard.url);
        await guard.close();
      });
    } finally {
      await up.close();
      await receiver.close();
    }
    assert.deepEqual(
      receiver.requests.map((r) => r.path),
      ["/collector/logs"],
    );
    assert.equal(receiver.logs()[0]?.attributes["session.id"], SESSION);
  });

  test("a collector that is down: one line says so, the guard closes in bounded time", async () => {
    const dead = await startOtlpReceiver();
    const url = dead.url;
    await dead.close();
    const up = await upstream();
    const lines: string[] = [];
    try {
      await withEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: url }, async () => {
        const guard = await startGuard({ upstream: up.url, log: (l) => lines.push(l) });
        await compactOnce(guard.url);
        await guard.close();
      });
    } finally {
      await up.close();
    }
    // Either the exporter gave up (its retries spent) or the guard stopped waiting for it: said, once or twice.
    const said = lines.filter((l) => l.includes("OpenTelemetry"));
    assert.ok(said.length >= 1 && said.length <= 3, said.join("\n"));
    for (const l of said)
      assert.match(
        l,
        /^guard: OpenTelemetry: ((log records|metrics) not exported: |the last export did not finish)/,
      );
  });
});

describe("what the environment asks for", () => {
  test("nothing without an endpoint, or with OTEL_SDK_DISABLED", () => {
    assert.deepEqual(telemetryPlan({}), { notes: [] });
    assert.deepEqual(telemetryPlan({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }), { notes: [] });
    assert.deepEqual(
      telemetryPlan({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }),
      { notes: [] },
    );
  });

  test("the endpoint for all signals gets /v1/logs and /v1/metrics; a per-signal one is used as it is", () => {
    const p = telemetryPlan({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://user:pw@collector:4318/base/",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://m:9000/custom?token=x",
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/json",
    });
    assert.deepEqual(p.logs, { protocol: "http/protobuf", url: "http://collector:4318/base/v1/logs" });
    assert.deepEqual(p.metrics, { protocol: "http/json", url: "http://m:9000/custom" });
    assert.deepEqual(planLines(p), [
      "OpenTelemetry: a log record per compaction to http://collector:4318/base/v1/logs (http/protobuf)",
      "OpenTelemetry: the guard's metrics to http://m:9000/custom (http/json)",
    ]);
  });

  test("grpc is said and not exported; OTEL_*_EXPORTER=none turns a signal off", () => {
    const p = telemetryPlan({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317",
      OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "grpc",
      OTEL_METRICS_EXPORTER: "none",
    });
    assert.equal(p.logs, undefined);
    assert.equal(p.metrics, undefined);
    assert.deepEqual(p.notes, [
      "OpenTelemetry: OTEL_EXPORTER_OTLP_LOGS_PROTOCOL=grpc: the guard exports over http/protobuf or http/json only; no log records exported",
    ]);
  });
});

describe("a verdict as attributes", () => {
  const v = (over: Partial<GuardVerdict>): GuardVerdict => ({
    session: "pi:h-0123456789abcdef01234567",
    agent: "pi",
    agent_version: null,
    agent_session_id: null,
    wire: "openai-chat",
    at: "2026-12-05T00:00:00.000Z",
    kept: false,
    reason: 'last round: user text "keep the SECRET-TEXT flag" missing (message 3 from the end)',
    losses: {
      user_texts: ["keep the SECRET-TEXT flag"],
      tool_calls: [],
      tool_results: [],
      assistant_texts: [],
    },
    repaired: false,
    repair_refused: "the spliced request would not keep the contract: x",
    provider_edits: null,
    messages_before: 9,
    messages_after: 2,
    tokens_before: 5000,
    tokens_after: 300,
    ...over,
  });

  test("counts and kinds, never the texts or the reason; no session.id where the agent gives none", () => {
    const a = verdictAttributes(v({}));
    assert.ok(!JSON.stringify(a).includes("SECRET-TEXT"));
    assert.equal(a["session.id"], undefined);
    assert.equal(a["agent.version"], undefined);
    assert.equal(a.repair, "refused");
    assert.deepEqual(a["lost.kinds"], ["instructions"]);
  });

  test("kinds from the reason where no piece is counted: anchors, checkpoint, a tool round cut in two", () => {
    const none = { user_texts: [], tool_calls: [], tool_results: [], assistant_texts: [] };
    assert.deepEqual(lostKinds(v({ losses: none, reason: "anchors not restated in the checkpoint" })), [
      "anchors",
    ]);
    assert.deepEqual(
      lostKinds(v({ losses: none, reason: "missing checkpoint (the summary path writes exactly one)" })),
      ["checkpoint"],
    );
    assert.deepEqual(
      lostKinds(v({ losses: none, reason: 'tool_use "t9" has no tool_result after it (message 4)' })),
      ["tool_rounds"],
    );
    assert.deepEqual(lostKinds(v({ losses: none, reason: "last round: redacted thinking missing" })), [
      "other",
    ]);
    assert.deepEqual(lostKinds(v({ kept: true, reason: null, losses: none })), []);
    assert.equal(verdictAttributes(v({ kept: true, reason: null, losses: none })).repair, "not_needed");
    assert.equal(verdictAttributes(v({ repair_refused: null })).repair, "not_attempted");
  });
});

test("the agent's version from its headers, and none from an agent it does not know", () => {
  assert.equal(
    agentVersion({ "user-agent": "claude-cli/2.1.328 (external, cli)" }, "claude-code"),
    "2.1.328",
  );
  const codexUa = "codex_cli_rs/0.46.0 (Ubuntu 24.4.0; x86_64) xterm-256color";
  assert.equal(agentVersion({ "user-agent": codexUa }, "codex"), "0.46.0");
  assert.equal(agentVersion({ "user-agent": codexUa, version: "0.47.1" }, "codex"), "0.47.1");
  assert.equal(agentVersion({ "user-agent": "pi-coding-agent/0.73.1" }, "pi"), "0.73.1");
  assert.equal(agentVersion({ "user-agent": "Anthropic/JS 1.14.0" }, "pi"), undefined);
  assert.equal(agentVersion({ "user-agent": "claude-cli/2.1.328" }, "unknown"), undefined);
  assert.equal(agentVersion({ "user-agent": "claude-cli/not a version" }, "claude-code"), undefined);
});

describe("nothing of the SDK is loaded without the variables", () => {
  /** Runs the CLI's guard around a command that exits at once, recording every @opentelemetry module resolved. */
  function guardRun(env: Record<string, string>): {
    loaded: string[];
    stderr: string;
    status: number | null;
  } {
    const dir = mkdtempSync(join(tmpdir(), "cs-otel-load-"));
    const log = join(dir, "loaded.txt");
    writeFileSync(log, "");
    writeFileSync(
      join(dir, "hooks.mjs"),
      `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  if (process.env.CS_TEST_NO_OTEL && specifier.startsWith("@opentelemetry/"))
    throw Object.assign(new Error("Cannot find package '" + specifier + "'"), { code: "ERR_MODULE_NOT_FOUND" });
  const r = await next(specifier, context);
  if (r.url.includes("/@opentelemetry/")) appendFileSync(${JSON.stringify(log)}, r.url + "\\n");
  return r;
}
`,
    );
    writeFileSync(
      join(dir, "register.mjs"),
      `import { register } from "node:module";
import { createRequire } from "node:module";
import { appendFileSync } from "node:fs";
register("./hooks.mjs", import.meta.url);
// CommonJS modules (the SDK's own requires) land in require's cache: listed at exit too.
const cache = createRequire(import.meta.url).cache;
process.on("exit", () => {
  for (const k of Object.keys(cache)) if (k.includes("/@opentelemetry/")) appendFileSync(${JSON.stringify(log)}, k + "\\n");
});
`,
    );
    const main = fileURLToPath(new URL("../../cli/main.js", import.meta.url));
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("OTEL_")));
    const r = spawnSync(
      process.execPath,
      ["--import", join(dir, "register.mjs"), main, "guard", "--no-state", "--", process.execPath, "-e", ""],
      { env: { ...clean, ...env }, encoding: "utf8", timeout: 60_000 },
    );
    const loaded = readFileSync(log, "utf8").split("\n").filter(Boolean);
    return { loaded, stderr: r.stderr, status: r.status };
  }

  test("unset: the guard starts, runs its command and stops with no @opentelemetry module resolved", () => {
    const r = guardRun({});
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.loaded, []);
    assert.ok(!r.stderr.includes("OpenTelemetry"), r.stderr);
  });

  test("set, the SDK not installed (--omit=optional): one line, nothing exported, the agent runs", () => {
    const r = guardRun({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", CS_TEST_NO_OTEL: "1" });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr.split("\n")[0]!, /^http:\/\/127\.0\.0\.1:\d+$/, "the URL is still the first line");
    assert.match(
      r.stderr,
      /guard: OpenTelemetry: the SDK could not be loaded \(Cannot find package '@opentelemetry\/[a-z-]+'\); nothing exported/,
    );
  });

  test("set: the same run loads the SDK and says where it exports (after the URL line)", async () => {
    const receiver = await startOtlpReceiver();
    try {
      const r = guardRun({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
      assert.equal(r.status, 0, r.stderr);
      assert.ok(
        r.loaded.some((u) => u.includes("/@opentelemetry/sdk-logs/")),
        r.loaded.join("\n"),
      );
      const lines = r.stderr.split("\n");
      assert.match(lines[0]!, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.ok(
        lines.includes(
          `guard: OpenTelemetry: a log record per compaction to ${receiver.url}/v1/logs (http/protobuf)`,
        ),
        r.stderr,
      );
    } finally {
      await receiver.close();
    }
  });
});
