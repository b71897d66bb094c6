/** The guard's summary of one run: counted from every outcome, logged once when it stops (opt-in). */
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { startGuard } from "./server.js";
import { GuardTally, summaryLine } from "./summary.js";
import type { GuardCore, GuardOutcome, GuardVerdict } from "../types.js";

const verdict = (session: string, kept: boolean, repaired: boolean): GuardVerdict => ({
  session,
  agent: "claude-code",
  agent_version: null,
  agent_session_id: session,
  wire: "anthropic-messages",
  at: "2026-12-04T00:00:00.000Z",
  kept,
  reason: kept ? null : "last round: lost",
  losses: { user_texts: [], tool_calls: [], tool_results: [], assistant_texts: [] },
  repaired,
  repair_refused: kept || repaired ? null : "refused",
  provider_edits: null,
  messages_before: 4,
  messages_after: 2,
  tokens_before: 400,
  tokens_after: 200,
});

test("the tally: sessions by key, compactions split into kept, repaired and not repaired", () => {
  const t = new GuardTally();
  const body = Buffer.from("{}");
  t.add({ body, changed: false, session: "a" });
  t.add({ body, changed: false, session: "a", verdict: verdict("a", true, false) });
  t.add({ body, changed: true, session: "b", verdict: verdict("b", false, true) });
  t.add({ body, changed: false, verdict: verdict("c", false, false) });
  t.add({ body, changed: false, note: "not a session" });
  assert.deepEqual(t.summary, { sessions: 3, compactions: 3, kept: 1, repaired: 1, not_repaired: 1 });
  assert.equal(
    summaryLine(t.summary),
    "guard: stopped: 3 sessions seen, 3 compactions (1 kept the contract, 1 repaired, 1 not repaired)",
  );
  assert.equal(summaryLine(new GuardTally().summary), "guard: stopped: 0 sessions seen, 0 compactions");
});

/** A core that answers from a script: the outcome for the n-th request. */
function scripted(outcomes: ((body: Buffer) => GuardOutcome)[]): GuardCore {
  let n = 0;
  return {
    handle: async (r) => outcomes[Math.min(n++, outcomes.length - 1)]!(r.body),
    idle: async () => {},
    close: async () => {},
  };
}

async function upstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    for await (const _ of req) void _;
    res.end("{}");
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

function post(base: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/v1/messages`, { method: "POST", agent: false }, (res) => {
      res.resume();
      res.on("end", resolve);
    });
    req.on("error", reject);
    req.end("{}");
  });
}

test("with summary, the guard logs one line when it stops (JSON with json); without it, none", async () => {
  const up = await upstream();
  try {
    for (const json of [false, true]) {
      const logs: string[] = [];
      const guard = await startGuard({
        upstream: up.url,
        json,
        summary: true,
        log: (l) => logs.push(l),
        core: scripted([
          (body) => ({ body, changed: false, session: "s1" }),
          (body) => ({ body, changed: true, session: "s1", verdict: verdict("s1", false, true) }),
          (body) => ({ body, changed: false, session: "s2", verdict: verdict("s2", true, false) }),
        ]),
      });
      for (let i = 0; i < 3; i++) await post(guard.url);
      assert.deepEqual(guard.summary(), {
        sessions: 2,
        compactions: 2,
        kept: 1,
        repaired: 1,
        not_repaired: 0,
      });
      await guard.close();
      await guard.close();
      const last = logs.filter((l) => l.includes("stopped") || l.includes('"summary"'));
      assert.equal(last.length, 1, "one summary line, however often close is called");
      assert.equal(logs.at(-1), last[0]);
      if (json)
        assert.deepEqual(JSON.parse(last[0]!), {
          event: "summary",
          sessions: 2,
          compactions: 2,
          kept: 1,
          repaired: 1,
          not_repaired: 0,
        });
      else
        assert.equal(
          last[0],
          "guard: stopped: 2 sessions seen, 2 compactions (1 kept the contract, 1 repaired, 0 not repaired)",
        );
    }
    const quiet: string[] = [];
    const guard = await startGuard({
      upstream: up.url,
      log: (l) => quiet.push(l),
      core: scripted([(body) => ({ body, changed: false })]),
    });
    await post(guard.url);
    await guard.close();
    assert.deepEqual(quiet, []);
  } finally {
    await up.close();
  }
});
