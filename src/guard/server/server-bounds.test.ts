/**
 * The guard's bounds on what it reads (issue 43): a request body over the
 * limit is answered 413 in the provider's error shape (from its
 * `content-length`, or as a chunked body passes the limit) and its
 * connection closed; a body that stops arriving is answered 408; headers that
 * never end are cut by the server's headers timeout; a body the client
 * abandons is let go of; and none of these timeouts cuts an upstream answer
 * that streams for longer than they are. The limits are tiny here, so
 * nothing waits on the clock for long.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { GuardOptionError, parseByteSize, startGuard, type GuardOptions } from "./server.js";
import type { GuardCore } from "../types.js";
import { runGuard } from "../../cli/commands/guard.js";

/** A fake model on 127.0.0.1 that counts the requests it gets and answers each with `answer`. */
async function fakeUpstream(
  answer: (res: ServerResponse, body: Buffer) => void | Promise<void> = (res) => void res.end("{}"),
): Promise<{ url: string; bodies: Buffer[]; close(): Promise<void> }> {
  const bodies: Buffer[] = [];
  const server = http.createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    bodies.push(Buffer.concat(chunks));
    await answer(res, bodies.at(-1)!);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A guard on `up` with the options given, logging into `logs`. */
async function guardOn(up: string, logs: string[], options: GuardOptions = {}) {
  return startGuard({ upstream: up, log: (l) => void logs.push(l), ...options });
}

interface Answered {
  status: number;
  body: string;
  /** Resolves when the connection to the guard has closed. */
  closed: Promise<void>;
}

/**
 * Starts a request and hands it to `feed`, which writes (some of) its body and may never end it;
 * resolves with the guard's answer (read whole) and a promise of the connection's close.
 */
function answerTo(
  base: string,
  path: string,
  headers: Record<string, string>,
  feed: (req: http.ClientRequest, answered: () => boolean) => void,
): Promise<Answered> {
  return new Promise((resolve, reject) => {
    let got = false;
    const req = http.request(new URL(path, base), { method: "POST", headers, agent: false });
    const closed = new Promise<void>((r) => req.once("socket", (s) => s.once("close", () => r())));
    req.on("response", (res) => {
      got = true;
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), closed }),
      );
      res.on("error", () => {});
    });
    // Writes after the guard closed the connection fail here: what counts is its answer.
    req.on("error", (e) => {
      if (!got) reject(e);
    });
    feed(req, () => got);
  });
}

/** Writes `chunk` again and again (chunked) until the answer arrives or the connection closes. */
function writeForever(req: http.ClientRequest, answered: () => boolean, chunk: Buffer): void {
  const more = () => {
    if (answered() || req.destroyed) return;
    if (req.write(chunk)) setImmediate(more);
    else req.once("drain", more);
  };
  more();
}

const KIB = Buffer.alloc(1024, "x");

describe("the guard's bounds on a request", { timeout: 30_000 }, () => {
  test("a content-length over the limit is answered 413 in Anthropic's shape before the body is read; the connection closes", async () => {
    const up = await fakeUpstream();
    const logs: string[] = [];
    const guard = await guardOn(up.url, logs, { maxBodyBytes: 4096 });
    try {
      const got = await answerTo(
        guard.url,
        "/v1/messages",
        { "content-type": "application/json", "content-length": "4097", "anthropic-version": "2023-06-01" },
        // Only the headers and one KiB are sent: the answer does not wait for the rest.
        (req) => req.write(KIB),
      );
      assert.equal(got.status, 413);
      const err = JSON.parse(got.body) as { type: string; error: { type: string; message: string } };
      assert.equal(err.type, "error");
      assert.equal(err.error.type, "request_too_large");
      assert.match(err.error.message, /larger than the guard's limit of 4096 bytes/);
      await got.closed;
      assert.equal(up.bodies.length, 0, "nothing went upstream");
      assert.equal(logs.filter((l) => /answered 413/.test(l)).length, 1, logs.join("\n"));
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("a chunked body that never ends is answered 413 in OpenAI's shape once past the limit; the connection closes", async () => {
    const up = await fakeUpstream();
    const guard = await guardOn(up.url, [], { maxBodyBytes: 8 * 1024 });
    try {
      const got = await answerTo(
        guard.url,
        "/v1/responses",
        { "content-type": "application/json", "transfer-encoding": "chunked" },
        (req, answered) => writeForever(req, answered, KIB),
      );
      assert.equal(got.status, 413);
      const err = JSON.parse(got.body) as { error: { type: string; code: string } };
      assert.equal(err.error.type, "invalid_request_error");
      assert.equal(err.error.code, "request_too_large");
      await got.closed;
      assert.equal(up.bodies.length, 0);
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("bodies at the limit pass byte for byte, declared or chunked", async () => {
    const up = await fakeUpstream();
    const guard = await guardOn(up.url, [], { maxBodyBytes: 3 * 1024 });
    try {
      const body = Buffer.concat([KIB, Buffer.from("é".repeat(512)), KIB]);
      assert.equal(body.length, 3 * 1024);
      const declared = await answerTo(
        guard.url,
        "/v1/chat/completions",
        { "content-length": String(body.length) },
        (req) => req.end(body),
      );
      const chunked = await answerTo(
        guard.url,
        "/v1/chat/completions",
        { "transfer-encoding": "chunked" },
        (req) => {
          for (let i = 0; i < body.length; i += 1000) req.write(body.subarray(i, i + 1000));
          req.end();
        },
      );
      assert.deepEqual([declared.status, chunked.status], [200, 200]);
      assert.equal(up.bodies.length, 2);
      for (const seen of up.bodies) assert.ok(seen.equals(body));
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("expect: 100-continue with a length over the limit is refused before the client sends its body", async () => {
    const up = await fakeUpstream();
    const guard = await guardOn(up.url, [], { maxBodyBytes: 1024 });
    try {
      let continued = false;
      const got = await answerTo(
        guard.url,
        "/v1/messages",
        { "content-length": "100000", expect: "100-continue" },
        (req) => req.on("continue", () => (continued = true)),
      );
      assert.equal(got.status, 413);
      assert.equal(continued, false, "no 100 Continue was sent");
      // Within the limit, the client is told to go on, and its body goes upstream.
      const small = Buffer.from('{"messages":[]}');
      const ok = await answerTo(
        guard.url,
        "/v1/messages",
        { "content-length": String(small.length), expect: "100-continue" },
        (req) => req.on("continue", () => req.end(small)),
      );
      assert.equal(ok.status, 200);
      assert.equal(up.bodies.length, 1);
      assert.ok(up.bodies[0].equals(small));
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("a body that stops arriving is answered 408 and its connection closed", async () => {
    const up = await fakeUpstream();
    const logs: string[] = [];
    const guard = await guardOn(up.url, logs, { timeouts: { bodyIdleMs: 100 } });
    try {
      const got = await answerTo(
        guard.url,
        "/v1/messages",
        { "content-length": "5000", "anthropic-version": "2023-06-01" },
        (req) => req.write(KIB),
      );
      assert.equal(got.status, 408);
      const err = JSON.parse(got.body) as { error: { type: string; message: string } };
      assert.equal(err.error.type, "invalid_request_error");
      assert.match(err.error.message, /stopped arriving/);
      await got.closed;
      assert.equal(up.bodies.length, 0);
      assert.ok(logs.some((l) => /answered 408/.test(l)));
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("a timeout given as undefined keeps its default: a body with a pause in it is read", async () => {
    const up = await fakeUpstream();
    const guard = await guardOn(up.url, [], { timeouts: { bodyIdleMs: undefined, headersMs: undefined } });
    try {
      const got = await answerTo(
        guard.url,
        "/v1/messages",
        { "content-length": String(2 * KIB.length) },
        (req) => {
          req.write(KIB);
          setTimeout(() => req.end(KIB), 50);
        },
      );
      assert.equal(got.status, 200);
      assert.equal(up.bodies[0]?.length, 2 * KIB.length);
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("headers that never end are cut by the headers timeout", async () => {
    const guard = await startGuard({ log: () => {}, timeouts: { headersMs: 100, requestMs: 200 } });
    try {
      const sock = net.connect(guard.port, "127.0.0.1");
      const chunks: Buffer[] = [];
      sock.on("data", (c: Buffer) => chunks.push(c));
      sock.on("error", () => {});
      const closed = new Promise<void>((r) => sock.once("close", () => r()));
      sock.write("POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nx-slow: ");
      await closed;
      assert.match(Buffer.concat(chunks).toString("latin1"), /^HTTP\/1\.1 408/);
    } finally {
      await guard.close();
    }
  });

  test("a client that abandons its body mid-way: the core never sees it, nothing goes upstream, the guard serves on", async () => {
    const up = await fakeUpstream();
    const logs: string[] = [];
    let handled = 0;
    const core: GuardCore = {
      handle: async (r) => {
        handled++;
        return { body: r.body, changed: false };
      },
      idle: async () => {},
      close: async () => {},
    };
    const guard = await guardOn(up.url, logs, { core });
    try {
      // Headers and one chunk of a chunked body, then the client hangs up (its FIN comes after them).
      const sock = net.connect(guard.port, "127.0.0.1");
      sock.on("error", () => {}).resume();
      const closed = new Promise<void>((r) => sock.once("close", () => r()));
      sock.write("POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n");
      sock.end(Buffer.concat([Buffer.from("400\r\n"), KIB, Buffer.from("\r\n")]));
      await closed;
      const ok = await answerTo(guard.url, "/v1/messages", {}, (req) => req.end("{}"));
      assert.equal(ok.status, 200);
      assert.equal(handled, 1, "only the whole request reached the core");
      assert.equal(up.bodies.length, 1);
      assert.deepEqual(
        logs.filter((l) => /failed/.test(l)),
        [],
        "an abandoned body is not an error",
      );
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test("an upstream answer that streams for longer than every timeout reaches the agent whole", async () => {
    const parts = ["data: one\n\n", "data: two\n\n", "data: three\n\n", "data: four\n\n"];
    const up = await fakeUpstream(async (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const p of parts) {
        res.write(p);
        // Each pause is longer than every timeout of the guard below.
        await new Promise((r) => setTimeout(r, 250));
      }
      res.end();
    });
    const guard = await guardOn(up.url, [], {
      timeouts: { headersMs: 50, requestMs: 100, bodyIdleMs: 50 },
    });
    try {
      const got = await answerTo(guard.url, "/v1/messages", { "content-type": "application/json" }, (req) =>
        req.end('{"stream":true}'),
      );
      assert.equal(got.status, 200);
      assert.equal(got.body, parts.join(""));
    } finally {
      await guard.close();
      await up.close();
    }
  });
});

describe("--max-body", () => {
  test("sizes are read in bytes or with a unit; anything else is a usage error", async () => {
    assert.equal(parseByteSize("67108864"), 64 * 1024 * 1024);
    assert.equal(parseByteSize("64MiB"), 64 * 1024 * 1024);
    assert.equal(parseByteSize("64m"), 64 * 1024 * 1024);
    assert.equal(parseByteSize("32MB"), 32_000_000);
    assert.equal(parseByteSize("1.5 KiB"), 1536);
    assert.equal(parseByteSize("2gib"), 2 * 1024 ** 3);
    for (const bad of ["", "lots", "-1", "0", "64 furlongs", "1e9"])
      assert.throws(() => parseByteSize(bad), GuardOptionError, bad);
    await assert.rejects(runGuard({ maxBody: "lots" }, [], false), GuardOptionError);
  });
});
