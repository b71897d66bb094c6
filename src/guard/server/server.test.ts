import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { GuardOptionError, parseListen, startGuard, upstreamTarget, verdictLine } from "./server.js";
import type { GuardCore, GuardVerdict } from "../types.js";
import { CompactSafeError } from "../../model/errors.js";

/** What the fake upstream saw of one request. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Resolves when the upstream's side of the exchange closed (the guard ended or cut it). */
  closed: Promise<void>;
}

type Answer = (req: Seen, res: ServerResponse) => void | Promise<void>;

/** A fake model on 127.0.0.1 that records each request and answers with `answer`. */
async function fakeUpstream(answer: Answer): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const closed = new Promise<void>((resolve) => res.on("close", () => resolve()));
    const s: Seen = {
      method: req.method ?? "",
      url: req.url ?? "",
      headers: req.headers,
      body: Buffer.concat(chunks),
      closed,
    };
    seen.push(s);
    await answer(s, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Got {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Sends one request to `base + path`; `onChunk` sees each chunk of the answer as it arrives. */
function send(
  base: string,
  path: string,
  body: Buffer,
  headers: Record<string, string> = {},
  onChunk?: (chunk: Buffer, all: Buffer[]) => void,
): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(path, base),
      { method: "POST", headers: { "content-type": "application/json", ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => {
          chunks.push(c);
          onChunk?.(c, chunks);
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const SECRET_KEY = "sk-ant-api03-guardtestsecret0123456789abcdefghijklmnopqrstuvwxyz";
const SECRET_BEARER = "Bearer sk-proj-guardtestbearer0123456789abcdefghijklmnop";

/** A request body whose bytes matter: odd spacing, escapes, non-ASCII, key order. */
const AGENT_BODY = Buffer.from(
  '{"model":"claude-x",  "stream":false,"messages":[{"role":"user","content":"Port the parser \\u00e9 — naïve 🧪"}],\n"max_tokens":64, "z":1,"a":2}',
  "utf8",
);
const UPSTREAM_JSON = Buffer.from(
  '{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok  é"}],"usage":{"input_tokens":3,"output_tokens":1}}\n',
  "utf8",
);

describe("the guard's proxy", { timeout: 30_000 }, () => {
  let logs: string[] = [];
  const log = (l: string) => void logs.push(l);

  test("a JSON request and its answer pass byte for byte; auth headers reach the upstream and never the log", async () => {
    logs = [];
    const up = await fakeUpstream((_s, res) => {
      res.writeHead(200, { "content-type": "application/json", "x-upstream": "yes" });
      res.end(UPSTREAM_JSON);
    });
    const guard = await startGuard({ upstream: up.url, log });
    try {
      const got = await send(guard.url, "/v1/messages?beta=true", AGENT_BODY, {
        "x-api-key": SECRET_KEY,
        authorization: SECRET_BEARER,
        "anthropic-version": "2023-06-01",
      });
      assert.equal(got.status, 200);
      assert.ok(got.body.equals(UPSTREAM_JSON), "the agent got the upstream's bytes");
      assert.equal(got.headers["x-upstream"], "yes");
      assert.equal(up.seen.length, 1);
      const s = up.seen[0];
      assert.ok(s.body.equals(AGENT_BODY), "the upstream got the agent's bytes");
      assert.equal(s.url, "/v1/messages?beta=true");
      assert.equal(s.headers["x-api-key"], SECRET_KEY);
      assert.equal(s.headers.authorization, SECRET_BEARER);
      assert.equal(s.headers["anthropic-version"], "2023-06-01");
      assert.equal(s.headers["content-length"], String(AGENT_BODY.length));
      assert.equal(s.headers.host, new URL(up.url).host, "host is the upstream's");
      for (const l of logs) {
        assert.ok(!l.includes(SECRET_KEY) && !l.includes("guardtestbearer"), l);
      }
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("an SSE stream reaches the agent chunk by chunk, before the upstream ends it, byte for byte", async () => {
    const events = [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1"}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"héllo"}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ].map((e) => Buffer.from(e, "utf8"));
    let firstSeen!: () => void;
    const clientSawFirst = new Promise<void>((resolve) => (firstSeen = resolve));
    let upstreamEnded = false;
    let endedBeforeFirstSeen: boolean | undefined;
    const up = await fakeUpstream(async (_s, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write(events[0]);
      // The upstream holds the stream open until the agent has the first chunk: a guard that
      // buffered the stream would never deliver it, and this test would hang (and fail on its timeout).
      await clientSawFirst;
      res.write(events[1]);
      res.end(events[2], () => (upstreamEnded = true));
    });
    const guard = await startGuard({ upstream: up.url, log });
    try {
      const body = Buffer.from('{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}');
      const got = await send(guard.url, "/v1/messages", body, { "x-api-key": SECRET_KEY }, (_c, all) => {
        if (endedBeforeFirstSeen === undefined) {
          endedBeforeFirstSeen = upstreamEnded;
          assert.ok(Buffer.concat(all).length > 0);
          firstSeen();
        }
      });
      assert.equal(
        endedBeforeFirstSeen,
        false,
        "the first chunk arrived while the upstream still held the stream",
      );
      assert.ok(got.body.equals(Buffer.concat(events)), "the stream's bytes are the upstream's");
      assert.equal(got.headers["content-type"], "text/event-stream");
      assert.ok(up.seen[0].body.equals(body));
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("a body the core changed goes upstream with its content-length recomputed", async () => {
    const changed = Buffer.from('{"messages":[{"role":"user","content":"spliced é"}]}');
    const core: GuardCore = {
      handle: async () => ({ body: changed, changed: true, wire: "anthropic-messages" }),
      close: async () => {},
      idle: async () => {},
    };
    const up = await fakeUpstream((_s, res) => void res.end("{}"));
    const guard = await startGuard({ upstream: up.url, core, log });
    try {
      await send(guard.url, "/v1/messages", AGENT_BODY);
      assert.ok(up.seen[0].body.equals(changed));
      assert.equal(up.seen[0].headers["content-length"], String(changed.length));
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("a core that throws: the request is forwarded untouched, with one log line", async () => {
    logs = [];
    let closed = 0;
    const core: GuardCore = {
      handle: async () => {
        throw new Error("cannot read\nthis");
      },
      close: async () => void closed++,
      idle: async () => {},
    };
    const up = await fakeUpstream((_s, res) => void res.end(UPSTREAM_JSON));
    const guard = await startGuard({ upstream: up.url, core, log });
    try {
      const got = await send(guard.url, "/v1/responses", AGENT_BODY, { authorization: SECRET_BEARER });
      assert.ok(got.body.equals(UPSTREAM_JSON));
      assert.ok(up.seen[0].body.equals(AGENT_BODY));
      assert.equal(logs.length, 1);
      assert.match(logs[0], /core failed on POST \/v1\/responses, forwarded untouched: cannot read this/);
    } finally {
      await guard.close();
      await up.close();
    }
    assert.equal(closed, 1, "close() closes the core");
  });

  test("verdicts are one line each; with json one JSON object per line", async () => {
    const verdict: GuardVerdict = {
      session: "s-1",
      agent: "claude-code",
      agent_version: "2.1.328",
      agent_session_id: "s-1",
      wire: "anthropic-messages",
      at: "2026-01-01T00:00:00.000Z",
      kept: false,
      reason: "the user text of the last round is missing",
      losses: { user_texts: ["Run the tests"], tool_calls: [], tool_results: [], assistant_texts: [] },
      repaired: true,
      repair_refused: null,
      provider_edits:
        "the request asks the provider to clear tool results (clear_tool_uses_20250919, keep 1 tool use): the protected round's 2 exchanges may not reach the model",
      messages_before: 40,
      messages_after: 3,
      tokens_before: 90_000,
      tokens_after: 2_000,
    };
    const core: GuardCore = {
      handle: async (r) => ({ body: r.body, changed: false, verdict }),
      close: async () => {},
      idle: async () => {},
    };
    const up = await fakeUpstream((_s, res) => void res.end("{}"));
    for (const json of [false, true]) {
      logs = [];
      const guard = await startGuard({ upstream: up.url, core, log, json });
      try {
        await send(guard.url, "/v1/messages", AGENT_BODY, { "x-api-key": SECRET_KEY });
        assert.equal(logs.length, 1);
        assert.ok(!logs[0].includes("\n"));
        if (json) {
          const o = JSON.parse(logs[0]) as Record<string, unknown>;
          assert.equal(o.event, "verdict");
          assert.equal(o.session, "s-1");
          assert.equal(o.kept, false);
          assert.equal(o.provider_edits, verdict.provider_edits);
        } else {
          assert.equal(logs[0], verdictLine(verdict));
          assert.match(
            logs[0],
            /compaction in s-1 \(claude-code.*40 → 3 messages\): VIOLATION: .*lost 1 user text.*repaired.*; provider edits: the request asks the provider to clear tool results \(clear_tool_uses_20250919, keep 1 tool use\)/,
          );
        }
      } finally {
        await guard.close();
      }
    }
    await up.close();
  });

  test("an upstream that is down: a 502 with a one-line JSON error in the provider's shape, one log line", async () => {
    const gone = await fakeUpstream(() => {});
    const deadUrl = gone.url;
    await gone.close();
    logs = [];
    const guard = await startGuard({ upstream: deadUrl, log });
    try {
      const a = await send(guard.url, "/v1/messages", AGENT_BODY, { "x-api-key": SECRET_KEY });
      assert.equal(a.status, 502);
      const text = a.body.toString("utf8");
      assert.ok(!text.includes("\n"));
      const ea = JSON.parse(text) as { type: string; error: { type: string; message: string } };
      assert.equal(ea.type, "error");
      assert.equal(ea.error.type, "api_error");
      assert.match(ea.error.message, /could not be reached \(ECONNREFUSED\)/);
      const o = await send(guard.url, "/v1/chat/completions", AGENT_BODY, { authorization: SECRET_BEARER });
      assert.equal(o.status, 502);
      const eo = JSON.parse(o.body.toString("utf8")) as { error: { message: string; type: string } };
      assert.equal(eo.error.type, "server_error");
      assert.equal(logs.length, 2, logs.join("\n"));
      assert.match(logs[0], /upstream http:\/\/127\.0\.0\.1:\d+ unreachable \(ECONNREFUSED\); answered 502/);
      for (const l of logs) assert.ok(!l.includes(SECRET_KEY) && !l.includes("guardtestbearer"));
    } finally {
      await guard.close();
    }
  });

  test("an agent that goes away mid-stream: the upstream request is aborted", async () => {
    const up = await fakeUpstream((_s, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("event: ping\ndata: {}\n\n");
      // ... and never ends it.
    });
    const guard = await startGuard({ upstream: up.url, log });
    try {
      await new Promise<void>((resolve, reject) => {
        const req = http.request(new URL("/v1/messages", guard.url), { method: "POST" }, (res) => {
          res.once("data", () => {
            req.destroy();
            resolve();
          });
        });
        req.on("error", (e: NodeJS.ErrnoException) => (e.code === "ECONNRESET" ? undefined : reject(e)));
        req.end("{}");
      });
      // Resolves only when the guard closed the upstream's side (otherwise the test times out).
      await up.seen[0].closed;
    } finally {
      await guard.close();
      await up.close();
    }
  });
});

describe("the guard's options", () => {
  test("any address but loopback is refused before listening", async () => {
    for (const listen of ["0.0.0.0:0", "192.168.1.10:8080", "example.com:80", "[::]:0", "[2001:db8::1]:80"]) {
      await assert.rejects(startGuard({ listen }), (e: unknown) => {
        assert.ok(e instanceof GuardOptionError && e instanceof CompactSafeError, String(e));
        assert.equal((e as CompactSafeError).code, "invalid_guard_option");
        assert.match((e as Error).message, /loopback only/);
        return true;
      });
    }
    for (const listen of ["127.0.0.1", "127.0.0.1:99999", "127.0.0.1:abc", "::1:80"])
      assert.throws(() => parseListen(listen), GuardOptionError, listen);
    assert.deepEqual(parseListen("localhost:0"), { host: "127.0.0.1", port: 0 });
    assert.deepEqual(parseListen("[::1]:8080"), { host: "::1", port: 8080 });
  });

  test("a port in use is one clear error", async () => {
    const first = await startGuard({ log: () => {} });
    try {
      await assert.rejects(startGuard({ listen: `127.0.0.1:${first.port}` }), /port is in use/);
    } finally {
      await first.close();
    }
  });

  test("a bad upstream URL is refused", async () => {
    for (const upstream of ["not a url", "ftp://h/x", "http://user:pw@h/", "http://h/v1?x=1"])
      await assert.rejects(startGuard({ upstream }), GuardOptionError, upstream);
  });

  test("paths join the upstream's prefix once; without an upstream the wire picks the provider", () => {
    const u = new URL("http://h:1/v1");
    assert.equal(upstreamTarget(u, "/v1/responses").href, "http://h:1/v1/responses");
    assert.equal(upstreamTarget(u, "/responses").href, "http://h:1/v1/responses");
    assert.equal(upstreamTarget(u, "/v1/messages?beta=true").href, "http://h:1/v1/messages?beta=true");
    assert.equal(upstreamTarget(u, "/v10/x").href, "http://h:1/v1/v10/x", "a prefix matches whole segments");
    assert.equal(
      upstreamTarget(new URL("http://h:1/api/"), "/v1/chat/completions").href,
      "http://h:1/api/v1/chat/completions",
    );
    assert.equal(upstreamTarget(new URL("https://h"), "/v1/messages").href, "https://h/v1/messages");
    assert.equal(
      upstreamTarget(undefined, "/v1/messages?beta=true").href,
      "https://api.anthropic.com/v1/messages?beta=true",
    );
    assert.equal(
      upstreamTarget(undefined, "/v1/messages/count_tokens").href,
      "https://api.anthropic.com/v1/messages/count_tokens",
    );
    assert.equal(upstreamTarget(undefined, "/v1/responses").href, "https://api.openai.com/v1/responses");
    assert.equal(
      upstreamTarget(undefined, "/v1/chat/completions").href,
      "https://api.openai.com/v1/chat/completions",
    );
    assert.equal(
      upstreamTarget(undefined, "/v1/models", { "anthropic-version": "2023-06-01" }).href,
      "https://api.anthropic.com/v1/models",
    );
    assert.equal(upstreamTarget(undefined, "/v1/models").href, "https://api.openai.com/v1/models");
  });
});
