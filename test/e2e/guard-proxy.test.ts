/**
 * The one-liner behind a proxy: the command the guard runs gets the guard's loopback host in NO_PROXY
 * (and no_proxy), so that an agent honouring HTTPS_PROXY / HTTP_PROXY reaches the guard directly.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { run, tempDir } from "./helpers.js";
import { withGuardNoProxy } from "../../src/cli/commands/guard.js";

const PRINT = `console.log(JSON.stringify({ NO_PROXY: process.env.NO_PROXY ?? null, no_proxy: process.env.no_proxy ?? null, HTTPS_PROXY: process.env.HTTPS_PROXY ?? null }))`;

test("the command run through the guard gets the guard's host in NO_PROXY when a proxy is set, and nothing changed when none is", async () => {
  const t = tempDir("cs-guard-proxy-");
  try {
    const base = {
      COMPACT_SAFE_STATE_DIR: t.dir,
      HTTP_PROXY: undefined,
      http_proxy: undefined,
      ALL_PROXY: undefined,
      all_proxy: undefined,
      https_proxy: undefined,
    };
    const proxied = await run(["guard", "--", process.execPath, "-e", PRINT], {
      env: {
        ...base,
        HTTPS_PROXY: "http://proxy.corp.example:3128",
        NO_PROXY: ".corp.example",
        no_proxy: undefined,
      },
      timeoutMs: 30_000,
    });
    assert.equal(proxied.code, 0, proxied.stderr);
    assert.deepEqual(JSON.parse(proxied.stdout), {
      NO_PROXY: ".corp.example,127.0.0.1",
      no_proxy: ".corp.example,127.0.0.1",
      HTTPS_PROXY: "http://proxy.corp.example:3128",
    });
    const direct = await run(["guard", "--", process.execPath, "-e", PRINT], {
      env: { ...base, HTTPS_PROXY: undefined, NO_PROXY: undefined, no_proxy: undefined },
      timeoutMs: 30_000,
    });
    assert.equal(direct.code, 0, direct.stderr);
    assert.deepEqual(JSON.parse(direct.stdout), { NO_PROXY: null, no_proxy: null, HTTPS_PROXY: null });
  } finally {
    t.cleanup();
  }
});

test("NO_PROXY for the command: the guard's host added once, IPv6 both bare and bracketed, each case's own list kept", () => {
  const env = { http_proxy: "http://p:1", NO_PROXY: "a.example, b.example", no_proxy: "127.0.0.1" };
  assert.deepEqual(withGuardNoProxy(env, "http://127.0.0.1:4000"), {
    ...env,
    NO_PROXY: "a.example,b.example,127.0.0.1",
    no_proxy: "127.0.0.1",
  });
  assert.deepEqual(withGuardNoProxy({ ALL_PROXY: "http://p:1" }, "http://[::1]:4000"), {
    ALL_PROXY: "http://p:1",
    NO_PROXY: "::1,[::1]",
    no_proxy: "::1,[::1]",
  });
  const none = { NO_PROXY: "x" };
  assert.equal(withGuardNoProxy(none, "http://127.0.0.1:4000"), none);
});
