/**
 * Nothing the guard logs leaks a secret: a secret of each kind in the
 * instruction a compaction lost, placed so that the verdict's quotation cuts
 * it at several places, never reaches a log line, whole or in part, in text
 * or in JSON (whose `losses` carry the lost texts whole); nor does one in an
 * error the core throws.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { CODEX_SUMMARY_PREFIX } from "../../formats/import/codex.js";
import { startGuard } from "./server.js";
import type { GuardCore } from "../types.js";
import { leakedFragments, SECRET_SAMPLES } from "../../../test/secret-samples.js";

async function upstream(): Promise<{ url: string; close(): Promise<void> }> {
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

function post(url: string, body: unknown, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: "POST", headers: { "content-type": "application/json", ...headers } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
const say = (text: string) => ({
  type: "message",
  role: "assistant",
  content: [{ type: "output_text", text }],
});
const call = (id: string) => ({
  type: "function_call",
  call_id: id,
  name: "shell",
  arguments: '{"cmd":"ls"}',
});
const out = (id: string) => ({ type: "function_call_output", call_id: id, output: `out ${id}` });
const responses = (input: unknown[]) => ({
  model: "gpt-x",
  instructions: "You are Codex.",
  input,
  tools: [{ type: "function", name: "shell" }],
});

/** Places of the cut in the secret: the verdict quotes 60 characters of the lost instruction. */
const CUTS = [3, 9, 17, 30];

test(
  "a lost instruction holding a secret, cut by the verdict's quotation: no part of it in any log line, text or JSON",
  { timeout: 120_000 },
  async (t) => {
    const up = await upstream();
    t.after(() => up.close());
    for (const json of [false, true]) {
      const lines: string[] = [];
      const guard = await startGuard({
        upstream: up.url,
        mode: "audit",
        json,
        log: (l) => void lines.push(l),
      });
      try {
        for (const [n, s] of SECRET_SAMPLES.entries())
          for (const k of CUTS) {
            // The secret starts 60 - k characters in: the quotation (60 characters) cuts it k characters in.
            const instruction = `${"a".repeat(60 - k - 1)} ${s.text} then run the tests`;
            const before = [
              user("old task"),
              call("c0"),
              out("c0"),
              say("old done"),
              user(instruction),
              call("c1"),
              out("c1"),
              say(`noted: ${s.text}`),
            ];
            const after = [user("old task"), user(`${CODEX_SUMMARY_PREFIX}\nthe parser`), user("go on")];
            const headers = { session_id: `leak-${n}-${k}`, originator: "codex_cli_rs" };
            const url = `${guard.url}/v1/responses`;
            assert.equal(await post(url, responses(before), headers), 200);
            const seen = lines.length;
            assert.equal(await post(url, responses(after), headers), 200);
            const verdicts = lines
              .slice(seen)
              .filter((l) => l.includes("VIOLATION") || l.includes('"verdict"'));
            assert.equal(verdicts.length, 1, lines.slice(seen).join("\n"));
            if (json) {
              const v = JSON.parse(verdicts[0]!) as { reason: string; losses: { user_texts: string[] } };
              assert.match(v.reason, /user text ".*" missing/);
              assert.equal(v.losses.user_texts.length, 1, "the lost text is in the losses, redacted");
            } else assert.match(verdicts[0]!, /VIOLATION: last round: user text ".*" missing/);
          }
        await guard.close();
        for (const s of SECRET_SAMPLES)
          assert.deepEqual(leakedFragments(lines.join("\n"), s), [], `${s.kind}${json ? " (json)" : ""}`);
      } finally {
        await guard.close();
      }
    }
  },
);

test(
  "an error the core throws, quoting a secret whole and cut: redacted in the log line",
  { timeout: 120_000 },
  async (t) => {
    const up = await upstream();
    t.after(() => up.close());
    for (const json of [false, true])
      for (const s of SECRET_SAMPLES) {
        const lines: string[] = [];
        const core: GuardCore = {
          handle: async () => {
            throw new Error(
              `cannot read ${s.text}; near "${s.text.slice(0, Math.ceil(s.text.length / 2))}..."`,
            );
          },
          close: async () => {},
          idle: async () => {},
        };
        const guard = await startGuard({ upstream: up.url, core, json, log: (l) => void lines.push(l) });
        try {
          await post(`${guard.url}/v1/responses`, {}, {});
        } finally {
          await guard.close();
        }
        assert.equal(lines.length, 1);
        assert.match(lines[0]!, /core failed on POST \/v1\/responses/);
        assert.deepEqual(leakedFragments(lines[0]!, s), [], `${s.kind}${json ? " (json)" : ""}`);
      }
  },
);
