/**
 * Early forwarding (`EarlyForward` in server.ts): a large body goes upstream
 * while it arrives, all but its last byte; the last byte goes once the core
 * let the body through, and the request is cut when the core changed the
 * body or answers itself, so the upstream never has a body it must not act on.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { EARLY_FORWARD_MIN_BYTES, startGuard } from "./server.js";
import type { GuardCore, GuardOutcome, WireRequest } from "./types.js";

/** What the fake upstream saw of one request: the bytes so far, and whether the body came whole. */
interface Seen {
  bytes: number;
  chunks: Buffer[];
  complete: boolean;
  aborted: boolean;
}

/** A fake model on 127.0.0.1 counting each request's bytes as they come; `early` answers 401 before reading. */
async function countingUpstream(early = false) {
  const seen: Seen[] = [];
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const s: Seen = { bytes: 0, chunks: [], complete: false, aborted: false };
    seen.push(s);
    if (early) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end('{"type":"error","error":{"type":"authentication_error","message":"no key"}}');
    }
    req.on("data", (c: Buffer) => {
      s.bytes += c.length;
      s.chunks.push(c);
    });
    req.on("end", () => {
      s.complete = true;
      if (early) return;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(`{"got":${s.bytes}}`);
    });
    req.on("aborted", () => (s.aborted = true));
    req.on("close", () => {
      if (!s.complete) s.aborted = true;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A core that records the requests it was handed and gives `decide`'s outcome. */
function recordingCore(decide: (r: WireRequest) => GuardOutcome = (r) => ({ body: r.body, changed: false })) {
  const handed: WireRequest[] = [];
  const core: GuardCore = {
    handle: async (r) => {
      handed.push(r);
      return decide(r);
    },
    idle: async () => {},
    close: async () => {},
  };
  return { core, handed };
}

/** Waits until `cond()` holds (checked every 5 ms); fails after 10 s. */
async function until(cond: () => boolean, what: string): Promise<void> {
  const stop = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > stop) assert.fail(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A request whose body is written by the caller (`write`, `end`), and its answer. */
function open(base: string, length: number) {
  const req = http.request(new URL("/v1/messages", base), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      "content-length": String(length),
    },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
  });
  return { req, answer };
}

const bodyOf = (n: number) => Buffer.from(`{"messages":[{"role":"user","content":"${"x".repeat(n - 46)}"}]}`);

describe("early forwarding of large bodies", { timeout: 60_000 }, () => {
  test("the upstream reads a large body while it arrives, and gets its last byte once the core let it through", async () => {
    const up = await countingUpstream();
    const { core, handed } = recordingCore();
    const guard = await startGuard({ upstream: up.url, core, log: () => {} });
    try {
      const body = bodyOf(4 * EARLY_FORWARD_MIN_BYTES);
      const { req, answer } = open(guard.url, body.length);
      const held = 100;
      req.write(body.subarray(0, body.length - held));
      // The guard has not got the body whole, yet the upstream already has what came of it.
      await until(
        () => up.seen[0]?.bytes === body.length - held,
        "the upstream reads the body as it arrives",
      );
      assert.equal(handed.length, 0, "the core is asked only once the body is whole");
      assert.equal(up.seen[0]!.complete, false);
      req.end(body.subarray(body.length - held));
      const got = await answer;
      assert.equal(got.status, 200);
      assert.equal(got.body, `{"got":${body.length}}`);
      assert.deepEqual(Buffer.concat(up.seen[0]!.chunks), body, "byte for byte");
      assert.equal(up.seen.length, 1);
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("a large body the core changed: the early request is cut short, and only the core's body reaches the upstream whole", async () => {
    const up = await countingUpstream();
    const changed = Buffer.from('{"messages":[{"role":"user","content":"repaired"}]}');
    const { core } = recordingCore(() => ({ body: changed, changed: true }));
    const guard = await startGuard({ upstream: up.url, core, log: () => {} });
    try {
      const body = bodyOf(2 * EARLY_FORWARD_MIN_BYTES);
      const { req, answer } = open(guard.url, body.length);
      req.end(body);
      const got = await answer;
      assert.equal(got.status, 200);
      assert.equal(got.body, `{"got":${changed.length}}`);
      await until(() => up.seen.every((s) => s.complete || s.aborted), "every upstream request ended");
      const whole = up.seen.filter((s) => s.complete);
      assert.equal(whole.length, 1, "one request reached the upstream whole");
      assert.deepEqual(Buffer.concat(whole[0]!.chunks), changed);
      for (const s of up.seen.filter((x) => !x.complete))
        assert.ok(s.bytes < body.length, "the cut request never had the agent's body whole");
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("a large body the core answers itself never reaches the upstream whole", async () => {
    const up = await countingUpstream();
    const { core } = recordingCore((r) => ({
      body: r.body,
      changed: false,
      respond: {
        status: 200,
        headers: { "content-type": "application/json" },
        body: Buffer.from('{"own":true}'),
      },
    }));
    const guard = await startGuard({ upstream: up.url, core, log: () => {} });
    try {
      const body = bodyOf(2 * EARLY_FORWARD_MIN_BYTES);
      const { req, answer } = open(guard.url, body.length);
      req.end(body);
      assert.deepEqual(await answer, { status: 200, body: '{"own":true}' });
      await until(() => up.seen.every((s) => s.complete || s.aborted), "every upstream request ended");
      assert.equal(up.seen.filter((s) => s.complete).length, 0);
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("an upstream that refuses before reading the body: its refusal reaches the agent", async () => {
    const up = await countingUpstream(true);
    const { core } = recordingCore();
    const guard = await startGuard({ upstream: up.url, core, log: () => {} });
    try {
      const body = bodyOf(2 * EARLY_FORWARD_MIN_BYTES);
      const { req, answer } = open(guard.url, body.length);
      req.end(body);
      const got = await answer;
      assert.equal(got.status, 401);
      assert.match(got.body, /authentication_error/);
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("an agent that goes away mid-body: the upstream request is cut and the core never sees it", async () => {
    const up = await countingUpstream();
    const { core, handed } = recordingCore();
    const guard = await startGuard({ upstream: up.url, core, log: () => {} });
    try {
      const body = bodyOf(2 * EARLY_FORWARD_MIN_BYTES);
      const { req, answer } = open(guard.url, body.length);
      answer.catch(() => undefined);
      req.write(body.subarray(0, EARLY_FORWARD_MIN_BYTES));
      await until(() => (up.seen[0]?.bytes ?? 0) > 0, "the upstream reads the body as it arrives");
      req.destroy();
      await until(() => up.seen[0]!.aborted, "the upstream request is cut");
      assert.equal(up.seen[0]!.complete, false);
      assert.equal(handed.length, 0);
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("an upstream that cannot be reached: the agent gets a 502 in its provider's shape", async () => {
    const up = await countingUpstream();
    const dead = up.url;
    await up.close();
    const { core } = recordingCore();
    const logs: string[] = [];
    const guard = await startGuard({ upstream: dead, core, log: (l) => logs.push(l) });
    try {
      const body = bodyOf(2 * EARLY_FORWARD_MIN_BYTES);
      const { req, answer } = open(guard.url, body.length);
      req.end(body);
      const got = await answer;
      assert.equal(got.status, 502);
      assert.equal(JSON.parse(got.body).type, "error");
      assert.equal(logs.filter((l) => /unreachable/.test(l)).length, 1, "one line for one request");
    } finally {
      await guard.close();
    }
  });
});
