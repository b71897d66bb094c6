import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { Message } from "../model/types.js";
import { boundMessage, buildReplacementHistory, openBoundScope } from "./replacement.js";
import { compactMessagesSafe } from "./compact.js";
import {
  isCheckpoint,
  validateLastRoundCoverage,
  validatePairing,
  validateSurvivalContract,
  protectedRound,
  CHECKPOINT_MARKER,
} from "../contract/index.js";
import { history } from "../../test/arbitraries.js";
import { deepFreeze } from "../../test/support.js";

const opts = {
  summary: "Worked on the login bug; tests pass.",
  anchors: "ship 0.9.12",
  liveState: { gitBranch: "main", head: "abc123" },
};

test("property: buildReplacementHistory passes both validators, pairs every call, never mutates, is stable when reapplied", () => {
  fc.assert(
    fc.property(history, (messages) => {
      const frozen = deepFreeze(structuredClone(messages));
      const before = JSON.stringify(frozen);
      const r = buildReplacementHistory(frozen, opts);
      assert.ok(r.ok, r.ok ? "" : r.error);
      assert.equal(JSON.stringify(frozen), before, "input unchanged");
      assert.ok(validateLastRoundCoverage(frozen, r.replacement).valid);
      const v = validateSurvivalContract(frozen, r.replacement, { anchors: opts.anchors });
      assert.ok(v.valid, v.reason ?? "");
      assert.ok(validatePairing(frozen, r.replacement).valid);
      assert.equal(r.replacement.filter(isCheckpoint).length, 1);

      // Applied again to its own output: still one checkpoint, and the original's protected round still covered.
      const again = buildReplacementHistory(deepFreeze(r.replacement), { ...opts, summary: "second pass" });
      assert.ok(again.ok, again.ok ? "" : again.error);
      assert.equal(again.replacement.filter(isCheckpoint).length, 1);
      const cov = validateLastRoundCoverage(frozen, again.replacement);
      assert.ok(cov.valid, cov.reason ?? "");
    }),
    { numRuns: 300 },
  );
});

test("a long uninterrupted task keeps only its two newest exchanges verbatim", () => {
  const msgs: Message[] = [{ role: "user", content: [{ type: "text", text: "refactor everything" }] }];
  for (let i = 0; i < 6; i++) {
    msgs.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `c${i}`, name: "Edit", input: { file_path: `f${i}` } }],
    });
    msgs.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `c${i}`, content: "ok" }] });
  }
  const r = buildReplacementHistory(msgs, opts);
  assert.ok(r.ok);
  const ids = r.replacement.flatMap((m) =>
    m.content.flatMap((b) => (b.type === "tool_use" ? [(b as { id: string }).id] : [])),
  );
  assert.deepEqual(ids, ["c4", "c5"]);
  assert.equal(r.coverage.last_round_messages, 4);
  // The instruction survives verbatim, ahead of the checkpoint.
  assert.equal((r.replacement[0]!.content[0] as { text: string }).text, "refactor everything");
  assert.ok((r.replacement[1]!.content[0] as { text: string }).text.startsWith(CHECKPOINT_MARKER));
});

test("the checkpoint restates the summary, the receipt, the anchors and the live state", () => {
  const msgs: Message[] = [
    { role: "user", content: [{ type: "text", text: "hi" }] },
    { role: "assistant", content: [{ type: "text", text: "hello" }] },
  ];
  const r = buildReplacementHistory(msgs, {
    ...opts,
    liveState: {
      gitBranch: "feat/x",
      worktree: "/w",
      head: "deadbeef",
      background: [{ id: "job-1", kind: "shell", command: "npm run dev", status: "running" }],
    },
  });
  assert.ok(r.ok);
  const text = (r.checkpoint.content[0] as { text: string }).text;
  assert.match(text, /^\[compact-safe checkpoint\]\nWorked on the login bug/);
  assert.match(
    text,
    /## Coverage\nsummary; last round kept: 2 messages \(0 tool results, 1 assistant\); anchors 11 chars/,
  );
  assert.match(text, /## Anchors\nship 0\.9\.12/);
  assert.match(
    text,
    /- git branch: feat\/x\n- worktree: \/w\n- HEAD: deadbeef\n- background: job-1 \(shell, running\): npm run dev/,
  );
});

test("it fails closed when its own output would break the contract (placeholder summary)", () => {
  const msgs: Message[] = [
    { role: "user", content: [{ type: "text", text: "hi" }] },
    { role: "assistant", content: [{ type: "text", text: "hello" }] },
  ];
  const r = buildReplacementHistory(msgs, { summary: "(no summary available)" });
  assert.equal(r.ok, false);
  assert.match(r.ok ? "" : r.error, /placeholder-only checkpoint/);
});

test("older plain user messages are kept newest first within the budget, truncated with a marker", () => {
  const msgs: Message[] = [];
  for (let i = 0; i < 5; i++) {
    msgs.push({ role: "user", content: [{ type: "text", text: `request ${i} ` + "x".repeat(4000) }] });
    msgs.push({ role: "assistant", content: [{ type: "text", text: `done ${i}` }] });
  }
  msgs.push({ role: "user", content: [{ type: "text", text: "latest" }] });
  msgs.push({ role: "assistant", content: [{ type: "text", text: "ok" }] });
  const r = buildReplacementHistory(msgs, { ...opts, retainedUserTokens: 2500 });
  assert.ok(r.ok);
  const users = r.replacement
    .filter((m) => m.role === "user" && !isCheckpoint(m))
    .map((m) => (m.content[0] as { text: string }).text);
  assert.ok(users[users.length - 1] === "latest");
  assert.ok(
    users.some((t) => t.startsWith("request 4 ")),
    "newest older request kept",
  );
  assert.ok(!users.some((t) => t.startsWith("request 0 ")), "oldest dropped");
  assert.ok(
    users.some((t) => t.includes("[compact-safe: older user message truncated")),
    "one truncated with a marker",
  );
  assert.equal(protectedRound(msgs).regionStart, 10);
});

test("a message is bounded once while a compaction runs, and afresh after it, so a host's later edit is seen", async () => {
  const big = (c: string) => c.repeat(20_000);
  const over: Message = {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "t1", content: big("a") }],
  };
  assert.notEqual(boundMessage(over), boundMessage(over), "no scope: a fresh copy each time");
  const close = openBoundScope();
  const closeInner = openBoundScope();
  const once = boundMessage(over);
  assert.equal(boundMessage(over), once, "in a scope: the same bounded copy");
  closeInner();
  closeInner();
  assert.equal(boundMessage(over), once, "an outer scope is still open");
  close();
  assert.notEqual(boundMessage(over), once);
  // A compaction opens and closes its own scope: what it bounded is not kept past it.
  const history: Message[] = [
    { role: "user", content: [{ type: "text", text: "read the log" }] },
    { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Read", input: { path: "a.log" } }] },
    over,
    { role: "assistant", content: [{ type: "text", text: "read it" }] },
  ];
  await compactMessagesSafe(history, { target: 50 });
  (over.content[0] as { content: string }).content = big("b");
  const after = boundMessage(over).content[0] as { content: string };
  assert.ok(
    after.content.startsWith("bbbb") && !after.content.includes("aaaa"),
    "the edited content is bounded",
  );
});
