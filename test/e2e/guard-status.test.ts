/**
 * `compact-safe guard status`: the sessions of a state folder written by the guard's core, and the
 * one-line summary the guard logs when it stops; `guard -- COMMAND` parsing is unchanged by the
 * subcommand.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { run, tempDir } from "./helpers.js";
import { createGuardCore } from "../../src/guard/core.js";
import { answerOn } from "../../src/guard/judging/answer.js";
import type { WireRequest } from "../../src/guard/types.js";

const TOOLS = [{ name: "Bash", description: "run", input_schema: { type: "object" } }];
const SUMMARY =
  "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nThe parser was fixed.";

function claude(session: string, messages: unknown[]): WireRequest {
  return {
    method: "POST",
    url: "/v1/messages?beta=true",
    headers: { "x-claude-code-session-id": session, "user-agent": "claude-cli/2.1.328" },
    body: Buffer.from(JSON.stringify({ model: "claude-x", max_tokens: 100, tools: TOOLS, messages })),
  };
}
const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const call = (id: string) => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "Bash", input: { command: id } }],
});
const result = (id: string) => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content: `out ${id}` }],
});
const HISTORY = [
  user("fix the parser"),
  call("t1"),
  result("t1"),
  call("t2"),
  result("t2"),
  { role: "assistant", content: [{ type: "text", text: "fixed" }] },
];

/** A state folder: session "lossy" compacts and loses its round (repaired), session "quiet" never compacts. */
async function stateFolder(dir: string): Promise<void> {
  const core = createGuardCore({ stateDir: dir });
  await core.handle(claude("quiet", [user("hello")]));
  await core.handle(claude("lossy", HISTORY));
  // The summarization request, and the upstream's answer relayed: what proves the compaction.
  const summ = await core.handle(
    claude("lossy", [...HISTORY, user("CRITICAL: Respond with TEXT ONLY. Summarize.")]),
  );
  summ.relayed!(
    answerOn(
      "anthropic-messages",
      {},
      "<summary>The summary below covers the earlier portion of the conversation.\n\nThe parser was fixed.</summary>",
      0,
      0,
    ).body as Buffer,
  );
  const o = await core.handle(claude("lossy", [user(SUMMARY), user("now add a test")]));
  assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? "");
  await core.close();
}

interface Listed {
  state: string;
  sessions: {
    session: string;
    agent: string;
    wire: string;
    file: string;
    first_seen: string;
    last_seen: string;
    compactions: number;
    kept: number;
    violations: number;
    repairs: number;
  }[];
  unreadable: string[];
}

describe("compact-safe guard status", { timeout: 60_000 }, () => {
  test("lists the sessions of the state folder, most recently seen first: agent, last seen, compactions, verdicts, repairs", async () => {
    const t = tempDir("cs-guard-status-");
    try {
      await stateFolder(t.dir);
      writeFileSync(join(t.dir, "notes.jsonl"), "not a journal\n");
      const j = await run(["guard", "status", "--state", t.dir, "--json"], { timeoutMs: 30_000 });
      assert.equal(j.code, 0, j.stderr);
      const listed = JSON.parse(j.stdout) as Listed;
      assert.equal(listed.state, t.dir);
      assert.deepEqual(
        listed.sessions.map((s) => [
          s.session,
          s.agent,
          s.wire,
          s.compactions,
          s.kept,
          s.violations,
          s.repairs,
        ]),
        [
          ["claude-code:lossy", "claude-code", "anthropic-messages", 1, 0, 1, 1],
          ["claude-code:quiet", "claude-code", "anthropic-messages", 0, 0, 0, 0],
        ],
      );
      for (const s of listed.sessions) {
        assert.match(s.last_seen, /^\d{4}-\d\d-\d\dT/);
        assert.ok(s.first_seen <= s.last_seen);
        assert.match(s.file, /\.jsonl$/);
      }
      assert.deepEqual(listed.unreadable, ["notes.jsonl"]);
      assert.match(j.stderr, /warning: notes\.jsonl is not a guard journal \(skipped\)/);

      // The text, from the per-user folder by default (COMPACT_SAFE_STATE_DIR), --json given before status too.
      const r = await run(["guard", "status"], { env: { COMPACT_SAFE_STATE_DIR: t.dir }, timeoutMs: 30_000 });
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.trimEnd().split("\n");
      assert.equal(lines[0], `2 guard sessions in ${t.dir}, the most recently seen first:`);
      assert.match(
        lines[1]!,
        /^claude-code:lossy \(claude-code, anthropic-messages\): last seen \S+; 1 compaction \(0 kept the contract, 1 violation\); 1 repair$/,
      );
      assert.match(
        lines[2]!,
        /^claude-code:quiet \(claude-code, anthropic-messages\): last seen \S+; no compaction; 0 repairs$/,
      );
      const before = await run(["guard", "--json", "status", "--state", t.dir], { timeoutMs: 30_000 });
      assert.deepEqual(JSON.parse(before.stdout), listed);
    } finally {
      t.cleanup();
    }
  });

  test("an empty or missing folder: no session, exit 0; a file for --state, exit 2; an extra argument, exit 2", async () => {
    const t = tempDir("cs-guard-status-");
    try {
      const missing = join(t.dir, "none");
      const r = await run(["guard", "status", "--state", missing], { timeoutMs: 30_000 });
      assert.deepEqual([r.code, r.stdout], [0, `no guard session in ${missing}\n`]);
      const file = join(t.dir, "f");
      writeFileSync(file, "");
      const bad = await run(["guard", "status", "--state", file], { timeoutMs: 30_000 });
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /not a folder/);
      const extra = await run(["guard", "status", "now"], { timeoutMs: 30_000 });
      assert.equal(extra.code, 2);
      assert.match(extra.stderr, /unexpected argument "now"/);
    } finally {
      t.cleanup();
    }
  });

  test("the guard's stop summary, and `guard -- status` still runs a command named status", async () => {
    const server = http.createServer(async (req, res) => {
      for await (const _ of req) void _;
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"id":"m","type":"message","content":[]}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const up = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const t = tempDir("cs-guard-status-");
    try {
      const agent = `
        const http = require("node:http");
        const req = http.request(process.env.ANTHROPIC_BASE_URL + "/v1/messages", { method: "POST", headers: { "x-claude-code-session-id": "sum-1" } }, (res) => { res.resume(); res.on("end", () => process.exit(0)); });
        req.end(JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }));
      `;
      const env = { COMPACT_SAFE_STATE_DIR: t.dir };
      const text = await run(["guard", "--upstream", up, "--", process.execPath, "-e", agent], {
        env,
        timeoutMs: 30_000,
      });
      assert.equal(text.code, 0, text.stderr);
      assert.equal(text.stderr.trimEnd().split("\n").at(-1), "guard: stopped: 1 session seen, 0 compactions");
      const json = await run(["guard", "--json", "--upstream", up, "--", process.execPath, "-e", agent], {
        env,
        timeoutMs: 30_000,
      });
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stderr.trimEnd().split("\n").at(-1)!), {
        event: "summary",
        sessions: 1,
        compactions: 0,
        kept: 0,
        repaired: 0,
        not_repaired: 0,
      });

      // A command named status after --: run through the guard (here it is not found: exit 2, one line).
      const dashed = await run(["guard", "--upstream", up, "--", "status", "--json"], {
        env: { ...env, PATH: t.dir },
        timeoutMs: 30_000,
      });
      assert.equal(dashed.code, 2, dashed.stderr);
      assert.match(dashed.stderr, /running status \(other\) through it/);
      assert.match(dashed.stderr, /guard: status: command not found/);
      assert.equal(dashed.stdout, "");
    } finally {
      t.cleanup();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
