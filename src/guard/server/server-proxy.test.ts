import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http, { type IncomingHttpHeaders } from "node:http";
import net, { type AddressInfo } from "node:net";
import { startGuard } from "./server.js";
import type { GuardCore } from "../types.js";
import { proxyForLog } from "./upstream-agents.js";

/** Every variable proxy-from-env reads, both cases. */
const PROXY_VARS = [
  "HTTP_PROXY",
  "http_proxy",
  "HTTPS_PROXY",
  "https_proxy",
  "ALL_PROXY",
  "all_proxy",
  "NO_PROXY",
  "no_proxy",
];

/** Runs `fn` with exactly `vars` set among the proxy variables, then puts the environment back. */
async function withProxyEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = new Map(PROXY_VARS.map((k) => [k, process.env[k]]));
  for (const k of PROXY_VARS) delete process.env[k];
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** A core that passes every request through untouched. */
const passThrough: GuardCore = {
  handle: async (r) => ({ body: r.body, changed: false }),
  idle: async () => {},
  close: async () => {},
};

interface Listening {
  port: number;
  close(): Promise<void>;
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

function closer(server: net.Server, sockets: Set<net.Socket>): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
}

/** The model: answers every request with a small JSON body, recording what it saw. */
async function fakeModel(): Promise<Listening & { seen: { url: string; body: string }[] }> {
  const seen: { url: string; body: string }[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    seen.push({ url: req.url ?? "", body: Buffer.concat(chunks).toString("utf8") });
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"ok":true}');
  });
  server.on("connection", (s) => sockets.add(s));
  const port = await listen(server);
  return { port, seen, close: closer(server, sockets) };
}

interface ProxySeen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/**
 * A forward proxy on 127.0.0.1: absolute-form requests (http targets) are forwarded to their URL, and
 * CONNECT (https targets) is recorded, answered 200 and tunnelled to `tunnelTo` (a port on 127.0.0.1).
 */
async function fakeProxy(
  tunnelTo?: number,
): Promise<Listening & { seen: ProxySeen[]; connections: () => number }> {
  const seen: ProxySeen[] = [];
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    const target = new URL(req.url ?? "/");
    const headers = { ...req.headers };
    delete headers["proxy-authorization"];
    delete headers["proxy-connection"];
    const up = http.request(target, { method: req.method, headers }, (ures) => {
      res.writeHead(ures.statusCode ?? 502, ures.headers);
      ures.pipe(res);
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    if (tunnelTo === undefined) {
      client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    const upstream = net.connect(tunnelTo, "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  server.on("connection", (s) => {
    connections++;
    sockets.add(s);
  });
  const port = await listen(server);
  return { port, seen, connections: () => connections, close: closer(server, sockets) };
}

/**
 * A TCP sink standing for a TLS upstream at the tunnel's end: it records the first bytes the guard sends
 * through the tunnel (a TLS ClientHello) and hangs up.
 */
async function tlsSink(): Promise<Listening & { received: Buffer[] }> {
  const sockets = new Set<net.Socket>();
  const received: Buffer[] = [];
  const server = net.createServer((s) => {
    sockets.add(s);
    s.once("data", (b: Buffer) => {
      received.push(b);
      s.destroy();
    });
    s.on("error", () => {});
  });
  const port = await listen(server);
  return { port, received, close: closer(server, sockets) };
}

/** One POST to the guard. */
function post(base: string, path: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(path, base),
      // No keep-alive between the test and the guard: the test's own requests never meet a proxy.
      { method: "POST", headers: { "content-type": "application/json" }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("the guard behind a proxy (HTTPS_PROXY, HTTP_PROXY, NO_PROXY)", { timeout: 30_000 }, () => {
  test("an http upstream goes through HTTP_PROXY as absolute-form requests, on one kept-alive connection; its credentials are never logged", async () => {
    const model = await fakeModel();
    const proxy = await fakeProxy();
    const logs: string[] = [];
    await withProxyEnv(
      { HTTP_PROXY: `http://alice:s3cret-pass@127.0.0.1:${proxy.port}`, NO_PROXY: "example.internal" },
      async () => {
        const guard = await startGuard({
          upstream: `http://127.0.0.1:${model.port}`,
          core: passThrough,
          log: (l) => logs.push(l),
        });
        try {
          const a = await post(guard.url, "/v1/messages", '{"n":1}');
          const b = await post(guard.url, "/v1/messages", '{"n":2}');
          assert.deepEqual([a.status, a.body, b.status], [200, '{"ok":true}', 200]);
        } finally {
          await guard.close();
        }
      },
    );
    await Promise.all([model.close(), proxy.close()]);
    assert.deepEqual(
      proxy.seen.map((s) => [s.method, s.url]),
      [
        ["POST", `http://127.0.0.1:${model.port}/v1/messages`],
        ["POST", `http://127.0.0.1:${model.port}/v1/messages`],
      ],
    );
    assert.deepEqual(
      model.seen.map((s) => s.body),
      ['{"n":1}', '{"n":2}'],
    );
    // The proxy URL's credentials go to the proxy, as Basic auth.
    assert.equal(
      proxy.seen[0].headers["proxy-authorization"],
      `Basic ${Buffer.from("alice:s3cret-pass").toString("base64")}`,
    );
    assert.equal(proxy.connections(), 1, "both requests on one connection to the proxy (keep-alive)");
    assert.deepEqual(logs, [
      `guard: requests to http://127.0.0.1:${model.port} go through the proxy http://127.0.0.1:${proxy.port} (from the environment)`,
    ]);
    assert.ok(!logs.join("\n").includes("s3cret"));
  });

  test("an https upstream goes through https_proxy (lower case) as a CONNECT tunnel carrying TLS for the upstream's host", async () => {
    const sink = await tlsSink();
    const proxy = await fakeProxy(sink.port);
    const logs: string[] = [];
    let got: { status: number; body: string } | undefined;
    await withProxyEnv({ https_proxy: `http://127.0.0.1:${proxy.port}` }, async () => {
      // A host name the guard never resolves itself: only the proxy is asked to reach it.
      const guard = await startGuard({
        upstream: "https://api.example.test",
        core: passThrough,
        log: (l) => logs.push(l),
      });
      try {
        got = await post(guard.url, "/v1/messages", "{}");
      } finally {
        await guard.close();
      }
    });
    await Promise.all([sink.close(), proxy.close()]);
    assert.deepEqual(
      proxy.seen.map((s) => [s.method, s.url]),
      [["CONNECT", "api.example.test:443"]],
    );
    // A TLS handshake record whose ClientHello names the upstream (SNI): TLS is end to end, not with the proxy.
    assert.equal(sink.received.length, 1);
    assert.equal(sink.received[0][0], 0x16);
    assert.ok(sink.received[0].includes(Buffer.from("api.example.test")));
    // The sink hung up: the agent gets the guard's 502, and the log says which proxy it went through.
    assert.equal(got?.status, 502);
    assert.match(got?.body ?? "", /through the proxy http:\/\/127\.0\.0\.1:\d+/);
    assert.equal(logs.length, 2);
    assert.match(
      logs[1],
      /upstream https:\/\/api\.example\.test unreachable through the proxy http:\/\/127\.0\.0\.1:\d+ /,
    );
  });

  test("NO_PROXY naming the upstream's host (or *) goes direct; ALL_PROXY alone covers http; no variable, direct", async () => {
    const cases: { vars: (proxy: string) => Record<string, string>; via: boolean }[] = [
      { vars: (p) => ({ HTTP_PROXY: p, ALL_PROXY: p, NO_PROXY: "localhost,127.0.0.1" }), via: false },
      { vars: (p) => ({ http_proxy: p, no_proxy: "*" }), via: false },
      { vars: (p) => ({ HTTP_PROXY: p, NO_PROXY: "127.0.0.2,.example.internal" }), via: true },
      { vars: (p) => ({ ALL_PROXY: p }), via: true },
      { vars: (p) => ({ HTTPS_PROXY: p }), via: false },
      { vars: () => ({}), via: false },
    ];
    for (const c of cases) {
      const model = await fakeModel();
      const proxy = await fakeProxy();
      const vars = c.vars(`http://127.0.0.1:${proxy.port}`);
      const logs: string[] = [];
      await withProxyEnv(vars, async () => {
        const guard = await startGuard({
          upstream: `http://127.0.0.1:${model.port}`,
          core: passThrough,
          log: (l) => logs.push(l),
        });
        try {
          const a = await post(guard.url, "/v1/messages", '{"n":1}');
          assert.equal(a.status, 200, JSON.stringify(vars));
        } finally {
          await guard.close();
        }
      });
      await Promise.all([model.close(), proxy.close()]);
      assert.equal(model.seen.length, 1, JSON.stringify(vars));
      assert.equal(proxy.seen.length, c.via ? 1 : 0, JSON.stringify(vars));
      assert.equal(logs.length, c.via ? 1 : 0, JSON.stringify(vars));
    }
  });

  test("a proxy URL is logged without its user and password", () => {
    assert.equal(proxyForLog("http://bob:hunter2@proxy.corp:3128"), "http://proxy.corp:3128");
    assert.equal(proxyForLog("not a url"), "(a proxy URL that does not parse)");
  });
});
