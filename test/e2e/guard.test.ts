/**
 * `compact-safe guard` as a user runs it: the built binary, a fake upstream
 * on 127.0.0.1, and `-- node -e ...` standing in for the agent.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import http, { type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { ChildProcess } from "node:child_process";
import { exited, run, spawnCli, tempDir } from "./helpers.js";

// A guard run with a command keeps its state in the per-user folder by default: here, a temporary one.
const stateHome = tempDir("cs-e2e-guard-state-");
process.env.COMPACT_SAFE_STATE_DIR = stateHome.dir;
after(() => stateHome.cleanup());

const SECRET = "sk-ant-api03-e2eguardsecret0123456789abcdefghijklmnopqrstuvwxyz0123";

interface Fake {
  url: string;
  seen: { url: string; headers: IncomingHttpHeaders; body: Buffer }[];
  close(): Promise<void>;
}

/** A fake Anthropic upstream: a JSON answer, or an SSE stream when the request asks for one. */
async function fake(): Promise<Fake> {
  const seen: Fake["seen"] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    seen.push({ url: req.url ?? "", headers: req.headers, body });
    if (body.includes('"stream":true')) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const e of SSE) res.write(e);
      res.end();
    } else {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON_ANSWER);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const JSON_ANSWER = Buffer.from(
  '{"id":"msg_e2e","type":"message","content":[{"type":"text","text":"ok é"}]}',
);
const SSE = [
  'event: message_start\ndata: {"type":"message_start"}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"hé"}}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
].map((s) => Buffer.from(s));

/** The first line the child writes on stderr (the guard's URL), and the child's stderr so far. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const onData = (c: Buffer) => {
      buf += c.toString("utf8");
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        child.stderr!.off("data", onData);
        resolve(buf.slice(0, nl));
      }
    };
    child.stderr!.on("data", onData);
    child.once("exit", () => reject(new Error(`exited before its first line: ${buf}`)));
  });
}

function collect(stream: NodeJS.ReadableStream | null): () => string {
  let text = "";
  stream?.on("data", (c: Buffer) => (text += c.toString("utf8")));
  return () => text;
}

function post(
  url: string,
  body: Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: "POST", headers: { "content-type": "application/json", ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const REQUEST = Buffer.from(
  '{"model":"m", "messages":[{"role":"user","content":"Fix the bug — é"}],"max_tokens":8}',
);

describe("compact-safe guard", { timeout: 60_000 }, () => {
  test("serving: its first stderr line is the URL; JSON and SSE pass byte for byte; auth never in its output; SIGTERM stops it with 0", async () => {
    const up = await fake();
    const child = spawnCli(["guard", "--upstream", up.url]);
    const stderr = collect(child.stderr);
    const stdout = collect(child.stdout);
    try {
      const url = await firstLine(child);
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const a = await post(`${url}/v1/messages?beta=true`, REQUEST, {
        "x-api-key": SECRET,
        "anthropic-version": "2023-06-01",
      });
      assert.equal(a.status, 200);
      assert.ok(a.body.equals(JSON_ANSWER));
      assert.ok(up.seen[0].body.equals(REQUEST));
      assert.equal(up.seen[0].url, "/v1/messages?beta=true");
      assert.equal(up.seen[0].headers["x-api-key"], SECRET);
      const streamed = Buffer.from('{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}');
      const s = await post(`${url}/v1/messages`, streamed, { "x-api-key": SECRET });
      assert.ok(s.body.equals(Buffer.concat(SSE)));
      assert.ok(up.seen[1].body.equals(streamed));
    } finally {
      child.kill("SIGTERM");
    }
    const end = await exited(child);
    await up.close();
    assert.deepEqual(end, { code: 0, signal: null }, stderr());
    assert.ok(!stderr().includes(SECRET) && !stdout().includes(SECRET), "the key is never printed");
  });

  test("with a command: the child sees ANTHROPIC_BASE_URL at the guard, its requests go through, its exit code comes back", async () => {
    const up = await fake();
    const script = `
      const http = require("node:http");
      const base = process.env.ANTHROPIC_BASE_URL;
      const req = http.request(base + "/v1/messages", { method: "POST", headers: { "x-api-key": ${JSON.stringify(SECRET)} } }, (res) => {
        let t = ""; res.on("data", (c) => (t += c)); res.on("end", () => { console.log(JSON.stringify({ base, openai: process.env.OPENAI_BASE_URL, got: t })); process.exit(7); });
      });
      req.end(${JSON.stringify(REQUEST.toString("utf8"))});
    `;
    const r = await run(["guard", "--upstream", up.url, "--", process.execPath, "-e", script], {
      timeoutMs: 30_000,
    });
    await up.close();
    assert.equal(r.code, 7, r.stderr);
    const url = r.stderr.split("\n")[0];
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const child = JSON.parse(r.stdout) as { base: string; openai: string; got: string };
    assert.equal(child.base, url);
    assert.equal(child.openai, `${url}/v1`, "a command that is no known agent gets both base URLs");
    assert.equal(child.got, JSON_ANSWER.toString("utf8"));
    assert.ok(up.seen[0].body.equals(REQUEST));
    assert.ok(!r.stderr.includes(SECRET));
  });

  test("a command named claude gets ANTHROPIC_BASE_URL only", async () => {
    const { mkdtempSync, writeFileSync, chmodSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), "cs-guard-claude-"));
    try {
      const claude = join(dir, "claude");
      writeFileSync(
        claude,
        `#!${process.execPath}\nconsole.log(JSON.stringify({ a: process.env.ANTHROPIC_BASE_URL, o: process.env.OPENAI_BASE_URL ?? null }));\n`,
      );
      chmodSync(claude, 0o755);
      const r = await run(["guard", "--", claude], {
        timeoutMs: 30_000,
        env: { ANTHROPIC_BASE_URL: undefined, OPENAI_BASE_URL: undefined },
      });
      assert.equal(r.code, 0, r.stderr);
      const url = r.stderr.split("\n")[0];
      assert.deepEqual(JSON.parse(r.stdout), { a: url, o: null });
      assert.match(r.stderr, /running .*claude \(claude-code\) through it via ANTHROPIC_BASE_URL/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("SIGTERM to the guard reaches the child; a child killed by a signal gives 128 + its number", async () => {
    const handled = `process.on("SIGTERM", () => { console.log("child got SIGTERM"); process.exit(42); }); console.log("ready"); setInterval(() => {}, 1000);`;
    const unhandled = `console.log("ready"); setInterval(() => {}, 1000);`;
    for (const [script, expected] of [
      [handled, 42],
      [unhandled, 143],
    ] as const) {
      const child = spawnCli(["guard", "--", process.execPath, "-e", script]);
      const stderr = collect(child.stderr);
      await new Promise<void>((resolve) => {
        let t = "";
        child.stdout!.on("data", (c: Buffer) => {
          t += c.toString("utf8");
          if (t.includes("ready")) resolve();
        });
      });
      const out = collect(child.stdout);
      child.kill("SIGTERM");
      const end = await exited(child);
      assert.deepEqual(end, { code: expected, signal: null }, stderr());
      if (expected === 42) assert.match(out(), /child got SIGTERM/);
    }
  });

  test("refused, one line and exit 2: a non-loopback --listen, a bad --upstream, no command after --, a port in use, a --workspace that is not a folder", async () => {
    const busy = spawnCli(["guard"]);
    const busyUrl = await firstLine(busy);
    try {
      const port = new URL(busyUrl).port;
      for (const [args, reason] of [
        [["guard", "--listen", "0.0.0.0:0"], /loopback only/],
        [["guard", "--listen", "10.1.2.3:8080"], /loopback only/],
        [["guard", "--upstream", "not a url"], /not a URL/],
        [["guard", "--"], /no command after --/],
        [["guard", "--listen", `127.0.0.1:${port}`], /port is in use/],
        [["guard", "--mode", "fix"], /--mode: expected audit or repair/],
        [
          ["guard", "--workspace", "/nonexistent/compact-safe-ws"],
          /--workspace \/nonexistent\/compact-safe-ws: not a folder/,
        ],
      ] as const) {
        const r = await run(args, { timeoutMs: 20_000 });
        assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
        const lines = r.stderr.trim().split("\n");
        assert.equal(lines.length, 1, r.stderr);
        assert.match(lines[0], reason);
        assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
      }
    } finally {
      busy.kill("SIGTERM");
      await exited(busy);
    }
  });

  test("an upstream that is down: the agent gets a 502 with a one-line error, the guard one log line", async () => {
    const gone = await fake();
    const dead = gone.url;
    await gone.close();
    const child = spawnCli(["guard", "--upstream", dead, "--json"]);
    const stderr = collect(child.stderr);
    try {
      const first = JSON.parse(await firstLine(child)) as { event: string; url: string };
      assert.equal(first.event, "listening");
      const r = await post(`${first.url}/v1/messages`, REQUEST, { "x-api-key": SECRET });
      assert.equal(r.status, 502);
      const text = r.body.toString("utf8");
      assert.ok(!text.includes("\n"));
      assert.equal((JSON.parse(text) as { type: string }).type, "error");
    } finally {
      child.kill("SIGTERM");
    }
    assert.deepEqual(await exited(child), { code: 0, signal: null });
    const lines = stderr()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; status?: number });
    const errors = lines.filter((l) => l.event === "error");
    assert.equal(errors.length, 1, stderr());
    assert.equal(errors[0].status, 502);
    assert.ok(!stderr().includes(SECRET));
  });
});
