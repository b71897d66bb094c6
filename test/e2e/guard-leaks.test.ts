/**
 * `compact-safe guard` leaves nothing lying around: `--log FILE` is created
 * owner-only and its lines (with `--json`, the verdicts' lost texts too) are
 * redacted; `guard -- pi` killed with SIGKILL leaves its temporary agent
 * folder (a copy of models.json, with its key), which the next guard removes
 * when it starts.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CODEX_SUMMARY_PREFIX } from "../../src/formats/import/codex.js";
import { exited, run, spawnCli, tempDir } from "./helpers.js";
import { leakedFragments, SECRET_SAMPLES } from "../secret-samples.js";

async function fakeUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.end("{}"));
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

/** Waits until `file` exists (a child writes it), polling. */
async function appears(file: string, child: { exitCode: number | null }): Promise<void> {
  while (!existsSync(file)) {
    if (child.exitCode !== null) throw new Error(`exited (${child.exitCode}) before ${file} appeared`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("compact-safe guard leaves nothing lying around", { timeout: 120_000 }, () => {
  test("--log FILE with --json: created 0600, no part of a secret of a lost instruction in it", async () => {
    const t = tempDir("cs-guard-log-");
    const up = await fakeUpstream();
    try {
      const log = join(t.dir, "guard.log");
      // The agent: a Codex session whose compaction loses an instruction holding every secret kind.
      const secrets = SECRET_SAMPLES.map((s) => s.text).join("\n");
      const input = (items: unknown[]) =>
        JSON.stringify({
          model: "m",
          instructions: "You are Codex.",
          input: items,
          tools: [{ type: "function", name: "shell" }],
        });
      const user = (text: string) => ({
        type: "message",
        role: "user",
        content: [{ type: "input_text", text }],
      });
      const before = input([
        user("old task"),
        { type: "function_call", call_id: "c0", name: "shell", arguments: "{}" },
        { type: "function_call_output", call_id: "c0", output: "ok" },
        user(`${"use these ".repeat(5)}${secrets}`),
      ]);
      const after = input([user("old task"), user(`${CODEX_SUMMARY_PREFIX}\nsummary`), user("go on")]);
      const agent = `
        const http = require("node:http");
        const send = (body) => new Promise((resolve) => {
          const req = http.request(process.env.OPENAI_BASE_URL + "/responses", { method: "POST", headers: { session_id: "s-log" } }, (res) => { res.resume(); res.on("end", resolve); });
          req.end(body);
        });
        send(${JSON.stringify(before)}).then(() => send(${JSON.stringify(after)})).then(() => process.exit(0));
      `;
      const r = await run(
        [
          "guard",
          "--upstream",
          up.url,
          "--mode",
          "audit",
          "--json",
          "--log",
          log,
          "--",
          process.execPath,
          "-e",
          agent,
        ],
        { timeoutMs: 60_000 },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(statSync(log).mode & 0o777, 0o600);
      const text = readFileSync(log, "utf8");
      const verdict = text
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as { event: string; losses?: { user_texts: string[] } })
        .find((o) => o.event === "verdict");
      assert.equal(verdict?.losses?.user_texts.length, 1, text);
      for (const s of SECRET_SAMPLES) {
        assert.deepEqual(leakedFragments(text, s), [], `${s.kind} in --log`);
        assert.deepEqual(leakedFragments(r.stderr, s), [], `${s.kind} on stderr`);
      }
    } finally {
      await up.close();
      t.cleanup();
    }
  });

  test("guard -- pi killed with SIGKILL: its temporary agent folder is removed by the next guard that starts", async () => {
    const t = tempDir("cs-guard-pi-kill-");
    // What this test started, ended in any case.
    let guard: ChildProcess | undefined;
    let piPid: number | undefined;
    try {
      const tmp = join(t.dir, "tmp");
      const agentDir = join(t.dir, "agent");
      const bin = join(t.dir, "bin");
      for (const d of [tmp, agentDir, bin]) mkdirSync(d);
      writeFileSync(
        join(agentDir, "models.json"),
        JSON.stringify({
          providers: {
            fake: { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "KEY-1" },
          },
        }),
      );
      const seen = join(t.dir, "seen.json");
      // A stand-in pi: says where its agent folder is, then waits (or, with PI_EXIT set, ends at once).
      writeFileSync(
        join(bin, "pi"),
        `#!${process.execPath}
require("node:fs").writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ dir: process.env.PI_CODING_AGENT_DIR, pid: process.pid }));
if (process.env.PI_EXIT) process.exit(0);
setTimeout(() => process.exit(0), 60000);
`,
      );
      chmodSync(join(bin, "pi"), 0o755);
      const env = {
        PATH: `${bin}:${process.env.PATH ?? ""}`,
        TMPDIR: tmp,
        PI_CODING_AGENT_DIR: agentDir,
        PI_EXIT: undefined,
      };
      guard = spawnCli(["guard", "--", "pi", "--provider", "fake"], { env });
      await appears(seen, guard);
      const first = JSON.parse(readFileSync(seen, "utf8")) as { dir: string; pid: number };
      piPid = first.pid;
      assert.ok(first.dir.startsWith(tmp), first.dir);
      assert.match(first.dir, new RegExp(`/compact-safe-guard-[^/]+/pi-${guard.pid}-[^/]+$`));
      assert.ok(existsSync(join(first.dir, "models.json")));
      assert.equal(statSync(join(first.dir, "..")).mode & 0o777, 0o700);
      guard.kill("SIGKILL");
      await exited(guard);
      // The stand-in pi outlives the guard it ran under: ended here (this test started it).
      process.kill(first.pid, "SIGKILL");
      piPid = undefined;
      assert.ok(existsSync(join(first.dir, "models.json")), "SIGKILL left the folder");
      const r = await run(["guard", "--", "pi", "--provider", "fake"], {
        env: { ...env, PI_EXIT: "1" },
        timeoutMs: 30_000,
      });
      assert.equal(r.code, 0, r.stderr);
      const second = JSON.parse(readFileSync(seen, "utf8")) as { dir: string };
      assert.notEqual(second.dir, first.dir);
      assert.ok(!existsSync(first.dir), "the killed guard's folder is gone");
      assert.ok(!existsSync(second.dir), "the guard that ended removed its own");
      assert.ok(existsSync(join(agentDir, "models.json")), "the real agent folder is untouched");
    } finally {
      if (guard !== undefined && guard.exitCode === null && guard.signalCode === null) guard.kill("SIGKILL");
      if (piPid !== undefined) {
        try {
          process.kill(piPid, "SIGKILL");
        } catch {
          // already ended
        }
      }
      t.cleanup();
    }
  });
});
