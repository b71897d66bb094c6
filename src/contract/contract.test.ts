import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Message } from "../model/types.js";
import {
  CHECKPOINT_MARKER,
  KIND_RULES,
  BLOCK_RULES,
  LIVE_STATE_FIELDS,
  SCHEMA_VERSION,
  isCheckpoint,
  isPlainUser,
  loadMatrix,
  parseMatrix,
  MatrixError,
  protectedRound,
  currentRoundStart,
  boundResultContent,
  boundedResultContent,
  isAlreadyBounded,
  resultOverBound,
  truncationMarker,
  utf8Head,
  utf8Tail,
  isValidBoundedResult,
  utf8Length,
  placeholderKind,
  isContentFree,
} from "./index.js";
import { MATRIX_CONSTANTS } from "./matrix.js";
import { CONSTANTS } from "../model/constants.js";
import { checkpointSummaryPart } from "./validate.js";
import { projectMatrix, repoRoot } from "../../test/support.js";
import { matrixAgreementTests } from "../../test/matrix-agreement.js";
import fc from "fast-check";

const u = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const a = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });
const call = (id: string, input: unknown = { path: id }): Message => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "Read", input }],
});
const result = (id: string, content = `out ${id}`): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content }],
});

matrixAgreementTests("project matrix", projectMatrix, 40);

test("matrix errors name the file and the JSON path", () => {
  assert.throws(
    () => parseMatrix("{", "m.json"),
    (e: unknown) => e instanceof MatrixError && /^m\.json: not JSON/.test(e.message),
  );
  const bad = JSON.stringify({
    schema_version: 2,
    cases: [
      {
        id: "x",
        expect: "pass",
        original: [{ role: "assistant", content: [{ type: "tool_use", name: "a", input: {} }] }],
        replacement: [],
      },
    ],
  });
  assert.throws(
    () => parseMatrix(bad, "m.json"),
    (e: unknown) =>
      e instanceof MatrixError &&
      e.message === 'm.json: cases[0].original[0].content[0] (tool_use): missing "id"',
  );
  assert.throws(() => loadMatrix("/nonexistent/matrix.json"), /no such file/);
});

test("the project matrix's header carries the contract's numbers this build enforces", () => {
  const m = loadMatrix(projectMatrix);
  assert.deepEqual(m.constants, MATRIX_CONSTANTS);
  assert.deepEqual(MATRIX_CONSTANTS, {
    protected_exchanges: CONSTANTS.protectedExchanges,
    result_bound_bytes: CONSTANTS.resultBoundBytes,
  });
  // A matrix written for other numbers is refused with a reason, never judged by these rules.
  const other = (constants: unknown): string => JSON.stringify({ schema_version: 2, constants, cases: [] });
  assert.throws(
    () => parseMatrix(other({ protected_exchanges: 3 }), "m.json"),
    (e: unknown) =>
      e instanceof MatrixError &&
      e.message ===
        "m.json: constants.protected_exchanges: 3, but this compact-safe enforces 2; use the validator of those rules",
  );
  assert.throws(() => parseMatrix(other({ exchanges: 2 }), "m.json"), /constants\.exchanges: unknown/);
  assert.throws(() => parseMatrix(other([2]), "m.json"), /constants: expected an object/);
});

test("the dependency-free validator reads the contract's numbers from the matrix header", async () => {
  const mjs = (await import(
    pathToFileURL(join(repoRoot, "contract", "validate_survival_contract.mjs")).href
  )) as {
    CONTRACT_CONSTANTS: Record<string, number>;
    validateLastRoundCoverage: (o: Message[], r: Message[], opts?: object) => { valid: boolean };
    matrixConstants: (m: object) => Record<string, number>;
  };
  assert.deepEqual(mjs.CONTRACT_CONSTANTS, MATRIX_CONSTANTS);
  // The round holds one exchange, so the one before the latest instruction is protected too (two
  // kept); with one kept, dropping it is allowed.
  const original = [u("read a"), call("a"), result("a"), u("now read b"), call("b"), result("b")];
  const replacement = original.slice(3);
  const verdict = (constants?: object) =>
    mjs.validateLastRoundCoverage(original, replacement, constants ? { constants } : {}).valid;
  assert.equal(verdict(), false);
  assert.equal(verdict(mjs.matrixConstants({ constants: { protected_exchanges: 2 } })), false);
  assert.equal(verdict(mjs.matrixConstants({ constants: { protected_exchanges: 1 } })), true);
  // The result bound too: a 9,000-byte result cut to 8,192 is a bounded copy only under the default.
  const big = "x".repeat(9000);
  const marker = `\n[compact-safe: tool result truncated; original 9000 bytes of UTF-8, kept head and tail]\n`;
  const cut = [u("go"), call("c"), result("c", big)];
  const kept = [u("go"), call("c"), result("c", big.slice(0, 4096) + marker + big.slice(-4096))];
  assert.equal(mjs.validateLastRoundCoverage(cut, kept).valid, true);
  assert.equal(
    mjs.validateLastRoundCoverage(cut, kept, {
      constants: mjs.matrixConstants({ constants: { result_bound_bytes: 4096 } }),
    }).valid,
    false,
  );
});

test("the rules table and docs/SURVIVAL_CONTRACT.md name the same kinds, blocks, live-state fields and schema version", () => {
  const doc = readFileSync(join(repoRoot, "docs", "SURVIVAL_CONTRACT.md"), "utf8");
  assert.match(doc, new RegExp(`Schema version ${SCHEMA_VERSION}\\.`));
  const section = (title: string): string => {
    const start = doc.indexOf(`## ${title}`);
    assert.ok(start >= 0, `section ${title}`);
    const end = doc.indexOf("\n## ", start + 3);
    return doc.slice(start, end < 0 ? undefined : end);
  };
  const firstColumn = (s: string): string[] =>
    s
      .split("\n")
      .filter((l) => l.startsWith("| `"))
      .map((l) => l.split("|")[1]!.trim().replace(/`/g, ""));
  assert.deepEqual(
    firstColumn(section("Journal kinds")),
    KIND_RULES.map((k) => k.kind),
  );
  assert.deepEqual(
    firstColumn(section("Content blocks")),
    BLOCK_RULES.map((b) => b.type),
  );
  assert.deepEqual(
    firstColumn(section("Live state")),
    LIVE_STATE_FIELDS.map((f) => f.field),
  );
  for (const b of BLOCK_RULES) {
    const row = section("Content blocks")
      .split("\n")
      .find((l) => l.startsWith(`| \`${b.type}\``))!;
    for (const f of b.fields) assert.ok(row.includes(`\`${f}\``), `${b.type} row names field ${f}`);
  }
});

test("a marker is read after leading white space exactly as trimStart removes it", () => {
  const receipt =
    "\n\n## Coverage\nsummary; last round kept: 0 messages (0 tool results, 0 assistant); anchors 0 chars";
  // Every code point trimStart removes, then ones it keeps (zero-width space, joiner, a letter).
  const spaces = [
    "\t",
    "\n",
    "\v",
    "\f",
    "\r",
    " ",
    "\u00a0",
    "\u1680",
    "\u2000",
    "\u200a",
    "\u2028",
    "\u2029",
    "\u202f",
    "\u205f",
    "\u3000",
    "\ufeff",
  ];
  const others = ["\u200b", "\u2060", "\u180e", "x"];
  for (const s of [...spaces, ...others])
    for (const body of [
      `${CHECKPOINT_MARKER}\nsummary${receipt}`,
      "Another language model started to solve this problem: x",
    ]) {
      const text = `${s}${s}${body}`;
      assert.equal(
        isCheckpoint(u(text)),
        text.trimStart() === body,
        `prefix U+${s.charCodeAt(0).toString(16)}`,
      );
    }
});

test("a checkpoint is recognised by the marker opening its first text block, not by a quote", () => {
  assert.ok(
    isCheckpoint(
      u(
        `${CHECKPOINT_MARKER}\nsummary\n\n## Coverage\nsummary; last round kept: 0 messages (0 tool results, 0 assistant); anchors 0 chars`,
      ),
    ),
  );
  // The marker alone, or followed by other text on its line, is the user's own text (no receipt).
  assert.ok(!isCheckpoint(u(`${CHECKPOINT_MARKER}\nsummary`)));
  assert.ok(
    !isCheckpoint(
      u(
        `${CHECKPOINT_MARKER} what does this marker mean?\n\n## Coverage\nsummary; last round kept: 0 messages (0 tool results, 0 assistant); anchors 0 chars`,
      ),
    ),
  );
  assert.ok(isCheckpoint(u("  Another language model started to solve this problem: x")));
  assert.ok(
    isCheckpoint(u("This session is being continued from a previous conversation that ran out of context.")),
  );
  const quoted = u(`Please explain what "${CHECKPOINT_MARKER}" means`);
  assert.ok(!isCheckpoint(quoted));
  assert.ok(isPlainUser(quoted));
  assert.ok(!isCheckpoint(a(`${CHECKPOINT_MARKER} in an assistant message`)));
  const second: Message = {
    role: "user",
    content: [
      { type: "text", text: "hi" },
      { type: "text", text: CHECKPOINT_MARKER },
    ],
  };
  assert.ok(!isCheckpoint(second));
});

test("round segmentation: toolless tail walks back, chat-only keeps the latest turn, long rounds keep two exchanges", () => {
  const toolless = [u("do it"), call("c1"), result("c1"), u("thanks"), a("ok")];
  assert.equal(currentRoundStart(toolless), 0);
  assert.equal(protectedRound(toolless).regionStart, 0);

  const chat = [u("a"), a("b"), u("c"), a("d")];
  assert.equal(protectedRound(chat).regionStart, 2);

  const long = [u("task"), call("c1"), result("c1"), call("c2"), result("c2"), call("c3"), result("c3")];
  const r = protectedRound(long);
  assert.equal(r.roundStart, 0);
  assert.equal(r.regionStart, 3);
  assert.deepEqual(r.instructionIndices, [0]);

  // Two exchanges before the latest user message are still protected.
  const before = [u("one"), call("c1"), result("c1"), u("two"), call("c2"), result("c2")];
  assert.equal(protectedRound(before).regionStart, 1);
});

test("no split between a call and its result, nor after an in-flight call", () => {
  // A result that arrives late (after a newer exchange) pulls the region back to its call.
  const late: Message[] = [
    u("go"),
    {
      role: "assistant",
      content: [
        { type: "tool_use", id: "p1", name: "A", input: {} },
        { type: "tool_use", id: "p2", name: "B", input: {} },
      ],
    },
    result("p1"),
    call("c2"),
    result("c2"),
    call("c3"),
    result("c3"),
    call("c4"),
    result("c4"),
    result("p2"),
  ];
  const r = protectedRound(late);
  assert.equal(r.regionStart, 1);
  // An unresolved call in the middle keeps everything after it.
  const inflight = [
    u("go"),
    call("x"),
    call("c2"),
    result("c2"),
    call("c3"),
    result("c3"),
    call("c4"),
    result("c4"),
  ];
  assert.equal(protectedRound(inflight).regionStart, 1);
});

test("the 8 KiB bound keeps head and tail, never splits a character, and the validator checks it", () => {
  const original = "é😀".repeat(3000) + "tail-end";
  const { content, truncated } = boundResultContent(original);
  assert.ok(truncated);
  assert.ok(isValidBoundedResult(original, content));
  assert.ok(!content.includes("\uFFFD"));
  assert.ok(content.endsWith("tail-end"));
  const [head] = content.split("\n[compact-safe");
  assert.ok(utf8Length(head!) <= 8192);
  // A cut in the middle of a surrogate pair is refused.
  const broken = content.replace(/\n\[compact-safe/, "\uD83D\n[compact-safe");
  assert.ok(!isValidBoundedResult(original, broken));
  // Short results must be identical.
  assert.ok(!isValidBoundedResult("short", "shor"));
});

test("bounding ASCII cuts where the byte counts say, as the character walk does; a copy far over the bound is never taken for a bounded one", () => {
  const limit = 64;
  const walk = (s: string) => {
    const head = utf8Head(s, Math.floor(limit * 0.75));
    return head + truncationMarker(utf8Length(s)) + utf8Tail(s, limit - utf8Length(head));
  };
  fc.assert(
    fc.property(fc.string({ minLength: 0, maxLength: 300 }), (s) => {
      const r = boundResultContent(s, limit);
      if (utf8Length(s) <= limit) return r.content === s && !r.truncated;
      return r.truncated && r.content === walk(s) && isValidBoundedResult(s, r.content, limit);
    }),
  );
  // A bounded copy is left as it is; bounding it again changes nothing.
  const once = boundResultContent("x".repeat(500), limit).content;
  assert.ok(isAlreadyBounded(once, limit));
  assert.deepEqual(boundResultContent(once, limit), { content: once, truncated: false });
  // A marker inside content far over the bound does not make it a bounded copy: it is bounded.
  const big = `${"y".repeat(300)}${truncationMarker(999)}${"z".repeat(300)}`;
  assert.ok(!isAlreadyBounded(big, limit));
  assert.ok(boundResultContent(big, limit).truncated);
});

test("a tool result bounded in one step is what the over-bound check and the content bound give in two", () => {
  const limit = 64;
  const nested = fc.option(
    fc.array(fc.record({ type: fc.constant("text"), text: fc.string({ maxLength: 40 }) })),
    {
      nil: undefined,
    },
  );
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), nested, (content, content_blocks) => {
      const r = content_blocks === undefined ? { content } : { content, content_blocks };
      const once = boundedResultContent(r, limit);
      if (!resultOverBound(r, limit)) return once === undefined;
      return (
        once !== undefined && JSON.stringify(once) === JSON.stringify(boundResultContent(content, limit))
      );
    }),
  );
  // Within the bound by its content, over it with its nested blocks: over, the content kept whole.
  const r = { content: "x".repeat(40), content_blocks: [{ type: "text", text: "y".repeat(40) }] };
  assert.deepEqual(boundedResultContent(r, limit), { content: r.content, truncated: false });
});

test("placeholders and refusals are recognised; substance is not", () => {
  assert.equal(placeholderKind("(no summary available)"), "placeholder");
  assert.equal(placeholderKind("  "), "empty");
  assert.equal(placeholderKind("..."), "punctuation");
  assert.equal(placeholderKind("I'm sorry, but I can't help with that."), "refusal");
  assert.equal(placeholderKind("Fixed the login bug in auth.ts; tests pass."), undefined);
  // A refusal is short: 199 characters between the edges still count, 200 do not.
  const refusal = (n: number) => `  "I'm sorry${"!".repeat(n - 9)}"  `;
  assert.equal(placeholderKind(refusal(199)), "refusal");
  assert.equal(placeholderKind(refusal(200)), undefined);
  // "İ" lower-cases to two characters: the length that counts is the lower-cased one.
  assert.equal(placeholderKind(`I'm sorry ${"İ".repeat(95)}`), undefined);
});

/** Summaries with no substance (labels, joining words, placeholders): refused by the rule, not by a list. */
const CONTENT_FREE = [
  "Summary of the conversation.",
  "Summary of the conversation so far.",
  "Conversation summary",
  "## Summary\n\n(none)",
  "# Handoff notes\n\nTBD",
  "Checkpoint: summary of this session.",
  "Here is a summary of the conversation:",
  "The summary of the previous conversation is below.",
  "Notes: n/a",
  "SUMMARY",
  `${"Summary of the conversation. ".repeat(10)}`,
];
/** Short summaries that say something: accepted. */
const SHORT_REAL = [
  "Fixed the login bug in auth.ts; tests pass.",
  "Summary: the user wants the parser rewritten in Rust.",
  "Conversation summary: added a --json flag to audit.",
  "Renamed foo to bar.",
  "Tests pass.",
  "Summary of the conversation: PR #42 merged.",
  "Nothing to do: the build is green.",
  "User asked about the weather in Paris.",
  "## Summary\n\nDeployed v2.3 to staging.",
];

test("a summary with no substance is a placeholder whatever its words' order; a short real summary is not", () => {
  for (const t of CONTENT_FREE) {
    assert.equal(placeholderKind(t), "placeholder", JSON.stringify(t));
    assert.ok(isContentFree(t), JSON.stringify(t));
  }
  for (const t of SHORT_REAL) assert.equal(placeholderKind(t), undefined, JSON.stringify(t));
});

test("the TypeScript validator and the dependency-free one refuse the same content-free checkpoints", async () => {
  const mjs = (await import(
    pathToFileURL(join(repoRoot, "contract", "validate_survival_contract.mjs")).href
  )) as {
    isPlaceholderOnly: (m: unknown) => boolean;
  };
  for (const t of [...CONTENT_FREE, ...SHORT_REAL]) {
    const m: Message = {
      role: "user",
      content: [
        {
          type: "text",
          text: `${CHECKPOINT_MARKER}\n${t}\n## Coverage\nsummary; last round kept: 2 messages (0 tool results, 1 assistant); anchors 0 chars`,
        },
      ],
    };
    // Claude Code's checkpoint, its opening sentence before the summary.
    const claude: Message = {
      role: "user",
      content: [
        {
          type: "text",
          text: `This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\n${t}`,
        },
      ],
    };
    assert.equal(placeholderKind(checkpointSummaryPart(claude)) !== undefined, CONTENT_FREE.includes(t), t);
    assert.equal(mjs.isPlaceholderOnly(claude), CONTENT_FREE.includes(t), `the .mjs on ${JSON.stringify(t)}`);
    const ts = placeholderKind(checkpointSummaryPart(m)) !== undefined;
    assert.equal(ts, CONTENT_FREE.includes(t), JSON.stringify(t));
    assert.equal(mjs.isPlaceholderOnly(m), ts, `the .mjs disagrees on ${JSON.stringify(t)}`);
  }
});

test("the project matrix exists and holds at least 40 cases", () => {
  assert.ok(existsSync(projectMatrix));
  assert.ok(loadMatrix(projectMatrix).cases.length >= 40);
});
