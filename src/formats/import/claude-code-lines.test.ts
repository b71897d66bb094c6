/**
 * The line types Claude Code 2.1.33x writes beside its conversation (its
 * bookkeeping, its request log, the harness's context attachments) are
 * skipped by design, each with its reason; an attachment of a type the
 * importer does not know is still named as not known. Shaped as a fresh
 * session of Claude Code 2.1.332 wrote them on this machine.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { importClaudeCode } from "./claude-code.js";

const SID = "cb2e686c-d6c6-451f-8d49-aa15191eba77";
const at = "2026-12-04T21:00:59.377Z";

function session(extra: object[] = []): string {
  const lines: object[] = [
    {
      type: "queue-operation",
      operation: "enqueue",
      timestamp: at,
      sessionId: SID,
      content: "list the files",
    },
    { type: "queue-operation", operation: "dequeue", timestamp: at, sessionId: SID },
    ...["environment", "model", "date", "deferred_tools_delta", "skill_listing", "prompt_snapshot"].map(
      (kind, i) => ({
        parentUuid: i === 0 ? null : `a${i - 1}`,
        isSidechain: false,
        attachment: { type: kind },
        type: "attachment",
        uuid: `a${i}`,
        timestamp: at,
        sessionId: SID,
      }),
    ),
    { type: "atis-latch", atis: "", sessionId: SID },
    {
      type: "api-request-shape",
      sessionId: SID,
      shapeHash: "h",
      timestamp: at,
      version: "2.1.332",
      shape: {},
    },
    { type: "api-request-blob", sessionId: SID, hash: "b", message: { role: "system", content: [] } },
    { type: "api-request", sessionId: SID, id: "r1", timestamp: at, version: "2.1.332" },
    {
      parentUuid: "a5",
      isSidechain: false,
      type: "user",
      message: { role: "user", content: "list the files" },
      uuid: "u1",
      timestamp: at,
      sessionId: SID,
    },
    {
      parentUuid: "u1",
      isSidechain: false,
      type: "assistant",
      message: { role: "assistant", content: [{ type: "text", text: "a.txt" }] },
      uuid: "m1",
      timestamp: at,
      sessionId: SID,
    },
    { type: "last-prompt", lastPrompt: "list the files", leafUuid: "m1", sessionId: SID },
    { type: "cost-state", sessionId: SID, totalCostUSD: 0.0042 },
    { type: "mode", mode: "normal", sessionId: SID },
    ...extra,
  ];
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

test("Claude Code 2.1.332's bookkeeping, request log and harness attachments are skipped by design", () => {
  const r = importClaudeCode(session(), "fresh.jsonl");
  const unknown = r.report.skipped.filter((s) => !s.by_design);
  assert.deepEqual(unknown, [], JSON.stringify(unknown));
  const messages = r.entries.filter((e) => e.kind === "user" || e.kind === "assistant");
  assert.equal(messages.length, 2, "the conversation is read, chained through the attachments");
  assert.match(
    r.report.skipped.find((s) => /attachment/.test(s.reason))!.reason,
    /^harness context attachment \(environment\)/,
  );
});

test("an attachment of a type not known is named as such, not skipped by design", () => {
  const r = importClaudeCode(
    session([
      {
        parentUuid: "m1",
        type: "attachment",
        attachment: { type: "not_a_known_kind" },
        uuid: "q1",
        sessionId: SID,
      },
    ]),
    "fresh.jsonl",
  );
  const unknown = r.report.skipped.filter((s) => !s.by_design);
  assert.equal(unknown.length, 1);
  assert.equal(unknown[0]!.reason, 'unknown attachment type "not_a_known_kind"');
});

/**
 * Every entry type Claude Code 2.1.332's own table of entry types names
 * beside its transcript types (user, assistant, system, attachment,
 * progress), as its binary lists them.
 */
const METADATA_TYPES_2_1_332 = [
  "file-history-snapshot",
  "file-history-delta",
  "last-prompt",
  "continued-in",
  "resume-head-vouch",
  "content-replacement",
  "data-flow-records",
  "data-flow-incomplete",
  "derived-from",
  "api-request-shape",
  "api-request-blob",
  "api-request",
  "api-request-resumed",
  "fork-context-ref",
  "frame-link",
  "summary",
  "custom-title",
  "ended-by-model",
  "ai-title",
  "tag",
  "relocated",
  "agent-name",
  "agent-color",
  "agent-setting",
  "pr-link",
  "artifact-comment-monitor",
  "artifact-autoreact-ledger",
  "bridge-session",
  "history-suppression",
  "attribution-snapshot",
  "mode",
  "permission-mode",
  "isolation-latch",
  "session-owner",
  "dev-mods",
  "memory-mode",
  "atis-latch",
  "tools-used",
  "worktree-state",
  "cost-state",
  "queue-operation",
  "observer-ref",
  "host-row",
  "repl-mode",
  "hybrid-organization",
];

test("every metadata entry type of Claude Code 2.1.332 (tools-used among them) is skipped by design, each with its reason", () => {
  const r = importClaudeCode(
    session(
      METADATA_TYPES_2_1_332.filter((t) => t !== "queue-operation").map((type) => ({
        type,
        sessionId: SID,
        timestamp: at,
      })),
    ),
    "fresh.jsonl",
  );
  const unknown = r.report.skipped.filter((s) => !s.by_design);
  assert.deepEqual(unknown, [], JSON.stringify(unknown));
  assert.match(r.report.skipped.find((s) => /tools used/.test(s.reason))!.reason, /session metadata/);
  assert.equal(
    r.entries.filter((e) => e.kind === "user" || e.kind === "assistant").length,
    2,
    "no line of them is read as a turn",
  );
});
