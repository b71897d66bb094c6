/**
 * The recent tail: on the summary path the newest whole messages before the protected round are kept
 * verbatim while the kept messages stay within `keepRecentTokens` and the target leaves the note its
 * budget; the note summarizes only what is older.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { Message } from "../model/types.js";
import type { Summarizer, SummaryRequest } from "../summarizers/types.js";
import { compactMessagesSafe } from "./compact.js";
import { recentTailStart } from "./tail.js";
import { buildCheckpoint, coverageReceipt } from "./replacement.js";
import { estimateTokens, fastEstimator } from "./tokens.js";
import {
  isCheckpoint,
  protectedRound,
  validatePairing,
  validateSurvivalContract,
} from "../contract/index.js";
import { history } from "../../test/arbitraries.js";
import { deepFreeze } from "../../test/support.js";

const text = (role: Message["role"], t: string): Message => ({ role, content: [{ type: "text", text: t }] });

/** A long task: one request, then `n` exchanges of `size`-byte results (under the prune bound: nothing to stub). */
function task(n: number, size = 200): Message[] {
  const out: Message[] = [text("user", "Port the session store to the new API.")];
  for (let i = 0; i < n; i++) {
    out.push({
      role: "assistant",
      content: [
        { type: "text", text: `Step ${i}: ${"the reasoning for this step. ".repeat(15)}` },
        { type: "tool_use", id: `c${i}`, name: "Read", input: { file_path: `src/f${i}.ts` } },
      ],
    });
    out.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `c${i}`, content: `line ${i}\n`.repeat(size / 8) }],
    });
  }
  return out;
}

function recording(): Summarizer & { calls: SummaryRequest[] } {
  const calls: SummaryRequest[] = [];
  return {
    name: "recording",
    model: "recording-1",
    calls,
    async summarize(req) {
      calls.push(req);
      return {
        text: "## Objective\nPort the session store.\n## Next step\nGo on with the next file.",
        model: "recording-1",
      };
    },
  };
}

test("with room under the target, the newest whole exchanges before the protected round stay verbatim; the note gets the older span", async () => {
  const h = deepFreeze(task(60));
  const round = protectedRound(h);
  const s = recording();
  const tokens = estimateTokens(h);
  const r = await compactMessagesSafe(h, { summarizer: s, target: Math.floor(tokens * 0.7) });
  assert.ok(r.ok && r.path === "summary", r.ok ? r.path : r.error.message);
  const req = s.calls[0]!;
  const kept = req.following ?? [];
  // More than the protected round is kept, from a message that starts an exchange, and the note was given the rest.
  assert.ok(kept.length > h.length - round.regionStart, `${kept.length} kept`);
  assert.deepEqual([...req.messages, ...kept], h);
  assert.equal(kept[0]!.role, "assistant");
  assert.deepEqual(r.replacement.slice(-kept.length), kept);
  assert.ok(r.tokens_after <= r.target, `${r.tokens_after} > ${r.target}`);
  // The receipt counts the protected round, not the tail before it.
  assert.equal(r.coverage.last_round_messages, h.length - round.regionStart);
  // keepRecentTokens bounds the kept messages; 0 keeps only the protected round, as before the tail.
  const bounded = recording();
  const b = await compactMessagesSafe(h, {
    summarizer: bounded,
    target: Math.floor(tokens * 0.7),
    keepRecentTokens: 3000,
  });
  assert.ok(b.ok);
  const boundedKept = bounded.calls[0]!.following ?? [];
  assert.ok(boundedKept.length < kept.length && estimateTokens(boundedKept) <= 3000);
  const none = recording();
  const n = await compactMessagesSafe(h, {
    summarizer: none,
    target: Math.floor(tokens * 0.7),
    keepRecentTokens: 0,
  });
  assert.ok(n.ok);
  assert.equal((none.calls[0]!.following ?? []).length, h.length - round.regionStart);
});

test("a tight target keeps no tail: the note's budget comes first", async () => {
  const h = deepFreeze(task(30));
  const round = protectedRound(h);
  const s = recording();
  const r = await compactMessagesSafe(h, { summarizer: s, target: 1500 });
  assert.ok(r.ok);
  assert.equal((s.calls[0]!.following ?? []).length, h.length - round.regionStart);
});

test("recentTailStart: never splits a call from its results (parallel calls, results over two messages), never crosses a checkpoint, leaves the first message to summarize", () => {
  const h: Message[] = [
    text("system", "You are a coding agent."),
    text("user", "Go."),
    {
      role: "assistant",
      content: [
        { type: "tool_use", id: "p1", name: "Read", input: {} },
        { type: "tool_use", id: "p2", name: "Read", input: {} },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "p1", content: "one" }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "p2", content: "two" }] },
    text("assistant", "Both read."),
    buildCheckpoint("earlier note", coverageReceipt("summary", [], ""), ""),
    text("assistant", "Going on."),
    text("user", "Now the rest."),
  ];
  // Unbounded room: back to the message after the checkpoint.
  assert.equal(recentTailStart(h, 8, Infinity, fastEstimator), 7);
  // Without the checkpoint: back to the call, never to a result of it; the first message (after the system one) stays.
  const noCheckpoint = h.filter((m) => !isCheckpoint(m));
  assert.equal(recentTailStart(noCheckpoint, 7, Infinity, fastEstimator), 2);
  const starts = new Set<number>();
  for (let room = 0; room < 200; room += 5) starts.add(recentTailStart(noCheckpoint, 7, room, fastEstimator));
  for (const s of starts) assert.ok([2, 5, 6, 7].includes(s), `start ${s}`);
  assert.equal(recentTailStart(noCheckpoint, 7, 0, fastEstimator), 7);
});

test("property: with any target and keepRecentTokens, a summary-path result keeps the contract, pairs every call, keeps a suffix of the history verbatim and stays within keepRecentTokens past the protected round", async () => {
  // How many runs took the summary path, and kept a tail: the property must not hold only vacuously.
  const seen = { summaries: 0, tails: 0 };
  await fc.assert(
    fc.asyncProperty(
      // A generated history, after an older task of up to 30 exchanges (room for a tail when the target allows).
      fc.tuple(fc.nat(30), history).map(([n, h]) => [...task(n), ...h]),
      fc.double({ min: 0.05, max: 0.9, noNaN: true }),
      fc.nat(20_000),
      async (h, frac, keep) => {
        const frozen = deepFreeze(h);
        const s = recording();
        const target = Math.max(1, Math.floor(estimateTokens(frozen) * frac));
        const r = await compactMessagesSafe(frozen, { summarizer: s, target, keepRecentTokens: keep });
        if (!r.ok || r.path !== "summary") return;
        seen.summaries++;
        assert.ok(validateSurvivalContract(frozen, r.replacement, { path: "summary" }).valid);
        assert.ok(validatePairing(frozen, r.replacement).valid);
        const req = s.calls.at(-1)!;
        const kept = req.following ?? [];
        const round = protectedRound(frozen);
        const region = frozen.slice(round.regionStart).filter((m) => !isCheckpoint(m));
        if (kept.length > region.length) {
          seen.tails++;
          // A tail was kept: whole units, within keepRecentTokens, and the span is what comes before it.
          assert.ok(estimateTokens(r.replacement.slice(-kept.length)) <= keep); // as kept: results bounded
          assert.ok(validatePairing(kept, kept).valid);
        }
        assert.deepEqual(frozen.filter((m) => !isCheckpoint(m)).slice(-kept.length), kept);
      },
    ),
    { numRuns: 150 },
  );
  assert.ok(seen.summaries > 0 && seen.tails > 0, JSON.stringify(seen));
});
