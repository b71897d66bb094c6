/**
 * Where `compact-safe guard` keeps its state: the one-liner (a command after `--`) in the per-user state
 * folder by default, so that two runs share it; `--state DIR` overrides it, `--no-state` keeps it in
 * memory; the stand-alone guard in memory unless `--state`.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { exited, run, spawnCli, tempDir } from "./helpers.js";
import { defaultStateDir } from "../../src/cli/commands/guard.js";

/** A fake Anthropic upstream that answers every request with a small message. */
async function fake(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    for await (const _ of req) void _;
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"id":"msg_s","type":"message","content":[{"type":"text","text":"ok"}]}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An agent standing in for Claude Code: one Messages request with `messages`, to ANTHROPIC_BASE_URL. */
function agentScript(messages: unknown[]): string {
  return `
    const http = require("node:http");
    const req = http.request(process.env.ANTHROPIC_BASE_URL + "/v1/messages", { method: "POST", headers: { "x-claude-code-session-id": "state-1", "anthropic-version": "2023-06-01" } }, (res) => {
      res.resume(); res.on("end", () => process.exit(0));
    });
    req.end(${JSON.stringify(JSON.stringify({ model: "m", max_tokens: 8, messages }))});
  `;
}
const FIRST = [{ role: "user", content: "fix the parser" }];
const SECOND = [
  ...FIRST,
  { role: "assistant", content: [{ type: "text", text: "fixed" }] },
  { role: "user", content: "now add a test" },
];

const journals = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir).filter((f) => f.endsWith(".jsonl") && f !== "followed-sessions.jsonl")
    : [];
const lines = (file: string) => readFileSync(file, "utf8").trim().split("\n").length;

/** The environment of a user whose home and XDG state folder are temporary. */
function userEnv(home: string, xdg?: string): Record<string, string | undefined> {
  return { HOME: home, XDG_STATE_HOME: xdg, COMPACT_SAFE_STATE_DIR: undefined };
}

describe("the guard's state folder", { timeout: 60_000 }, () => {
  test("the per-user folder: $COMPACT_SAFE_STATE_DIR, else an absolute $XDG_STATE_HOME/compact-safe/guard, else ~/.local/state/compact-safe/guard", () => {
    assert.equal(
      defaultStateDir({ COMPACT_SAFE_STATE_DIR: "/s/cs", XDG_STATE_HOME: "/x" }, "/home/u"),
      "/s/cs",
    );
    assert.equal(defaultStateDir({ XDG_STATE_HOME: "/x" }, "/home/u"), "/x/compact-safe/guard");
    assert.equal(
      defaultStateDir({ XDG_STATE_HOME: "relative/x", COMPACT_SAFE_STATE_DIR: "" }, "/home/u"),
      "/home/u/.local/state/compact-safe/guard",
    );
    assert.equal(defaultStateDir({}, "/home/u"), "/home/u/.local/state/compact-safe/guard");
  });

  test("the one-liner keeps its state in the per-user folder (made owner-only), and a second run goes on in the same journal", async () => {
    const up = await fake();
    const t = tempDir("cs-guard-state-");
    try {
      const xdg = join(t.dir, "xdg");
      const dir = join(xdg, "compact-safe", "guard");
      const env = userEnv(join(t.dir, "home"), xdg);
      const one = await run(
        ["guard", "--upstream", up.url, "--", process.execPath, "-e", agentScript(FIRST)],
        {
          env,
          timeoutMs: 30_000,
        },
      );
      assert.equal(one.code, 0, one.stderr);
      assert.match(one.stderr, new RegExp(`; state ${dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\n`));
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      const [file] = journals(dir);
      assert.ok(file, `a journal in ${dir}: ${readdirSync(dir).join(", ")}`);
      const before = lines(join(dir, file));
      const two = await run(
        ["guard", "--upstream", up.url, "--", process.execPath, "-e", agentScript(SECOND)],
        {
          env,
          timeoutMs: 30_000,
        },
      );
      assert.equal(two.code, 0, two.stderr);
      assert.deepEqual(journals(dir), [file], "the second run goes on in the first run's journal");
      assert.equal(lines(join(dir, file)), before + 2, "the two new messages appended");

      // Without XDG_STATE_HOME: under the home folder.
      const home = join(t.dir, "home2");
      const three = await run(
        ["guard", "--upstream", up.url, "--", process.execPath, "-e", agentScript(FIRST)],
        {
          env: userEnv(home),
          timeoutMs: 30_000,
        },
      );
      assert.equal(three.code, 0, three.stderr);
      assert.equal(journals(join(home, ".local", "state", "compact-safe", "guard")).length, 1);
    } finally {
      t.cleanup();
      await up.close();
    }
  });

  test("--state DIR overrides the per-user folder, --no-state keeps nothing; the stand-alone guard keeps nothing unless --state", async () => {
    const up = await fake();
    const t = tempDir("cs-guard-state-");
    try {
      const xdg = join(t.dir, "xdg");
      const env = userEnv(join(t.dir, "home"), xdg);
      const own = join(t.dir, "own");
      const a = await run(
        ["guard", "--state", own, "--upstream", up.url, "--", process.execPath, "-e", agentScript(FIRST)],
        { env, timeoutMs: 30_000 },
      );
      assert.equal(a.code, 0, a.stderr);
      assert.equal(journals(own).length, 1);
      const b = await run(
        [
          "guard",
          "--no-state",
          "--json",
          "--upstream",
          up.url,
          "--",
          process.execPath,
          "-e",
          agentScript(FIRST),
        ],
        { env, timeoutMs: 30_000 },
      );
      assert.equal(b.code, 0, b.stderr);
      const started = b.stderr
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { event: string; state?: unknown })
        .find((l) => l.event === "started");
      assert.equal(started?.state, null);
      assert.equal(existsSync(xdg), false, "nothing written under XDG_STATE_HOME");

      // The stand-alone guard: in memory.
      const child = spawnCli(["guard", "--upstream", up.url], { env });
      const url = await new Promise<string>((resolve) => {
        let buf = "";
        child.stderr!.on("data", (c: Buffer) => {
          buf += c.toString("utf8");
          if (buf.includes("\n")) resolve(buf.split("\n")[0]!);
        });
      });
      await new Promise<void>((resolve, reject) => {
        const req = http.request(
          `${url}/v1/messages`,
          {
            method: "POST",
            headers: { "x-claude-code-session-id": "state-2", "anthropic-version": "2023-06-01" },
          },
          (res) => {
            res.resume();
            res.on("end", resolve);
          },
        );
        req.on("error", reject);
        req.end(JSON.stringify({ model: "m", max_tokens: 8, messages: FIRST }));
      });
      child.kill("SIGTERM");
      assert.deepEqual(await exited(child), { code: 0, signal: null });
      assert.equal(existsSync(xdg), false, "the stand-alone guard wrote no state");
    } finally {
      t.cleanup();
      await up.close();
    }
  });
});
