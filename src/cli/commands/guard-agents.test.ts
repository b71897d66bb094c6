import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  agentOf,
  agentTempParent,
  planAgent,
  readCodexConfig,
  removeStaleAgentFolders,
} from "./guard-agents.js";

const GUARD = "http://127.0.0.1:4000";

test("the agent is known by the command's base name", () => {
  assert.equal(agentOf("/usr/local/bin/claude"), "claude-code");
  assert.equal(agentOf("codex"), "codex");
  assert.equal(agentOf("./node_modules/.bin/pi"), "pi");
  assert.equal(agentOf("node"), "other");
});

test("Claude Code: ANTHROPIC_BASE_URL at the guard; the one it replaces is the upstream", () => {
  const plan = planAgent(["claude", "-p", "hi"], { ANTHROPIC_BASE_URL: "https://gw.example/anthropic" });
  assert.equal(plan.upstream, "https://gw.example/anthropic");
  const l = plan.launch(GUARD, plan.upstream);
  assert.deepEqual(l.env, { ANTHROPIC_BASE_URL: `${GUARD}/anthropic` });
  assert.deepEqual(l.args, ["-p", "hi"]);
  assert.equal(planAgent(["claude"], {}).launch(GUARD, "http://h/v1").env.ANTHROPIC_BASE_URL, GUARD);
});

test("Codex config.toml: the top-level model_provider and each provider's base_url", () => {
  const c = readCodexConfig(
    [
      'model = "gpt-5"',
      "model_provider = 'fake' # chosen",
      "[model_providers.fake]",
      'base_url = "http://127.0.0.1:9/v1"',
      'wire_api = "responses"',
      '[model_providers."with.dot"]',
      'base_url = "https://x.example/api"',
      "[profiles.p]",
      'model_provider = "other"',
    ].join("\n"),
  );
  assert.equal(c.provider, "fake");
  assert.equal(c.baseUrls.get("fake"), "http://127.0.0.1:9/v1");
  assert.equal(c.baseUrls.get("with.dot"), "https://x.example/api");
});

test("Codex: the built-in openai provider through OPENAI_BASE_URL; a configured one through -c", () => {
  const home = mkdtempSync(join(tmpdir(), "cs-codex-home-"));
  try {
    const builtIn = planAgent(["codex", "exec", "hi"], { CODEX_HOME: home });
    assert.equal(builtIn.upstream, undefined);
    assert.deepEqual(builtIn.launch(GUARD, undefined).env, { OPENAI_BASE_URL: `${GUARD}/v1` });
    writeFileSync(
      join(home, "config.toml"),
      'model_provider = "fake"\n[model_providers.fake]\nbase_url = "http://127.0.0.1:9/v1"\nenv_key = "K"\n',
    );
    const configured = planAgent(["codex", "exec", "resume", "ID", "continue"], { CODEX_HOME: home });
    assert.equal(configured.upstream, "http://127.0.0.1:9/v1");
    const l = configured.launch(GUARD, configured.upstream);
    assert.deepEqual(l.env, {});
    assert.deepEqual(l.args, [
      "-c",
      `model_providers.fake.base_url="${GUARD}/v1"`,
      "exec",
      "resume",
      "ID",
      "continue",
    ]);
    const picked = planAgent(["codex", "-c", "model_provider=openai", "exec"], { CODEX_HOME: home });
    assert.deepEqual(picked.launch(GUARD, undefined).env, { OPENAI_BASE_URL: `${GUARD}/v1` });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test("Codex: openai_base_url in config.toml or on the command (which Codex prefers to OPENAI_BASE_URL) is the upstream, and the guard's URL is given the same way", () => {
  const home = mkdtempSync(join(tmpdir(), "cs-codex-home-"));
  try {
    writeFileSync(join(home, "config.toml"), 'model = "gpt-5"\nopenai_base_url = "http://127.0.0.1:9/v1"\n');
    const p = planAgent(["codex", "exec", "hi"], {
      CODEX_HOME: home,
      OPENAI_BASE_URL: "http://elsewhere/v1",
    });
    assert.equal(p.upstream, "http://127.0.0.1:9/v1");
    const l = p.launch(GUARD, p.upstream);
    assert.deepEqual(l.env, { OPENAI_BASE_URL: `${GUARD}/v1` });
    assert.deepEqual(l.args, ["-c", `openai_base_url="${GUARD}/v1"`, "exec", "hi"]);
    // The user's own override on the command: its URL is the upstream, and it is replaced, not left to win.
    const own = planAgent(
      [
        "codex",
        "-c",
        'openai_base_url="http://127.0.0.1:8/v1"',
        "--config=openai_base_url=x",
        "exec",
        "--",
        "-c",
        "openai_base_url=y",
      ],
      { CODEX_HOME: home },
    );
    assert.equal(own.upstream, "x");
    assert.deepEqual(own.launch(GUARD, "http://127.0.0.1:8/v1").args, [
      "-c",
      `openai_base_url="${GUARD}/v1"`,
      "exec",
      "--",
      "-c",
      "openai_base_url=y",
    ]);
    assert.equal(readCodexConfig('openai_base_url = "u"\n[x]\nopenai_base_url = "v"\n').openaiBaseUrl, "u");
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test("pi: a temporary agent folder whose models.json points the provider at the guard, the rest linked, removed after", () => {
  const agentDir = mkdtempSync(join(tmpdir(), "cs-pi-agent-"));
  try {
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({
        providers: { fake: { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "K" } },
      }),
    );
    writeFileSync(join(agentDir, "auth.json"), "{}");
    mkdirSync(join(agentDir, "extensions"));
    const plan = planAgent(["pi", "--provider", "fake", "-p", "go"], { PI_CODING_AGENT_DIR: agentDir });
    assert.equal(plan.upstream, "http://127.0.0.1:9/v1");
    const l = plan.launch(GUARD, plan.upstream);
    const dir = l.env.PI_CODING_AGENT_DIR;
    assert.ok(dir && dir !== agentDir);
    const models = JSON.parse(readFileSync(join(dir, "models.json"), "utf8")) as {
      providers: Record<string, Record<string, string>>;
    };
    assert.deepEqual(models.providers.fake, {
      baseUrl: `${GUARD}/v1`,
      api: "openai-completions",
      apiKey: "K",
    });
    for (const name of ["auth.json", "extensions", "sessions", "settings.json"])
      assert.ok(lstatSync(join(dir, name)).isSymbolicLink(), name);
    // What pi writes lands in the real folder.
    writeFileSync(join(dir, "settings.json"), '{"x":1}');
    assert.equal(readFileSync(join(agentDir, "settings.json"), "utf8"), '{"x":1}');
    l.cleanup();
    assert.ok(!existsSync(dir));
    assert.ok(existsSync(join(agentDir, "auth.json")) && existsSync(join(agentDir, "sessions")));
    // The built-in anthropic provider, no models.json entry: its public endpoint, the guard without /v1.
    const a = planAgent(["pi"], { PI_CODING_AGENT_DIR: agentDir });
    assert.equal(a.upstream, "https://api.anthropic.com");
    const la = a.launch(GUARD, a.upstream);
    const m2 = JSON.parse(readFileSync(join(la.env.PI_CODING_AGENT_DIR, "models.json"), "utf8")) as {
      providers: Record<string, { baseUrl: string }>;
    };
    assert.equal(m2.providers.anthropic.baseUrl, GUARD);
    la.cleanup();
    // An unknown provider with no baseUrl needs --upstream.
    assert.throws(
      () =>
        planAgent(["pi", "--provider", "nowhere"], { PI_CODING_AGENT_DIR: agentDir }).launch(
          GUARD,
          undefined,
        ),
      /give --upstream/,
    );
  } finally {
    rmSync(agentDir, { recursive: true, force: true });
  }
});

test("pi's temporary folders: in a per-user owner-only parent, named by the guard's pid; those of guards no longer running are removed, links not followed", () => {
  const root = mkdtempSync(join(tmpdir(), "cs-pi-stale-"));
  try {
    const parent = agentTempParent(root);
    const real = join(root, "real-agent");
    mkdirSync(real);
    writeFileSync(join(real, "auth.json"), "{}");
    mkdirSync(parent, { mode: 0o700 });
    // A process that has ended: its pid is no longer running.
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    const stale = join(parent, `pi-${dead}-abc123`);
    const live = join(parent, `pi-${process.pid}-def456`);
    const other = join(parent, "not-a-guard-folder");
    for (const d of [stale, live, other]) mkdirSync(d);
    writeFileSync(join(stale, "models.json"), '{"apiKey":"K"}');
    symlinkSync(join(real, "auth.json"), join(stale, "auth.json"));
    symlinkSync(real, join(stale, "sessions"));
    assert.deepEqual(removeStaleAgentFolders(parent), [stale]);
    assert.ok(!existsSync(stale));
    assert.ok(existsSync(live) && existsSync(other));
    assert.ok(existsSync(join(real, "auth.json")), "a link's target is left alone");
    assert.deepEqual(removeStaleAgentFolders(join(root, "missing")), []);
    // A parent that is a link (to a folder holding such a name) is not swept.
    const elsewhere = join(root, "elsewhere");
    mkdirSync(join(elsewhere, `pi-${dead}-zzz`), { recursive: true });
    symlinkSync(elsewhere, join(root, "linked-parent"));
    assert.deepEqual(removeStaleAgentFolders(join(root, "linked-parent")), []);
    assert.ok(existsSync(join(elsewhere, `pi-${dead}-zzz`)));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
