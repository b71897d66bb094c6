/**
 * The direct checks of the fuzz oracle can fail: each one is shown a
 * deliberately broken replacement and must name it. The base case is a
 * hand-built correct compaction that every check accepts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Block, Message } from "../../src/model/types.js";
import {
  boundProblem,
  directChecks,
  protectedRegion,
  sameButRedacted,
  type CompactionUnderTest,
} from "./oracle.js";

const big = "0123456789abcdef\n".repeat(1300); // 22,100 bytes of ASCII
const bigBytes = Buffer.byteLength(big);
const marker = `\n[compact-safe: tool result truncated; original ${bigBytes} bytes of UTF-8, kept head and tail]\n`;
const bounded = big.slice(0, 6000) + marker + big.slice(-2000);
const image: Block = { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } };

const original: Message[] = [
  { role: "system", content: [{ type: "text", text: "sys" }] },
  { role: "user", content: [{ type: "text", text: "old request" }] },
  {
    role: "assistant",
    content: [
      { type: "text", text: "doing" },
      { type: "tool_use", id: "c1", name: "Read", input: { p: "a" } },
    ],
  },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "old output ".repeat(400) }] },
  { role: "user", content: [{ type: "text", text: "please fix the bug" }] },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "plan", signature: "sig==" },
      { type: "text", text: "looking" },
      { type: "tool_use", id: "c2", name: "Bash", input: { command: "ls" } },
    ],
  },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "c2", content: big, is_error: true, content_blocks: [image] },
    ],
  },
  {
    role: "assistant",
    content: [
      { type: "text", text: "now" },
      { type: "tool_use", id: "c3", name: "Read", input: { p: "b" } },
    ],
  },
  {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "c3", content: "b contents", is_error: false }],
  },
  { role: "assistant", content: [{ type: "text", text: "done" }] },
];

const checkpoint: Message = {
  role: "user",
  content: [
    {
      type: "text",
      text: "[compact-safe checkpoint]\nThe user asked for a fix.\n\n## Coverage\nsummary; last round kept: 0 messages (0 tool results, 0 assistant); anchors 0 chars\n\n## Anchors\nANCHOR",
    },
  ],
};

function goodReplacement(): Message[] {
  return structuredClone([
    original[0]!,
    original[1]!,
    checkpoint,
    original[4]!,
    original[5]!,
    { role: "user", content: [{ type: "tool_result", tool_use_id: "c2", content: bounded, is_error: true }] },
    original[7]!,
    original[8]!,
    original[9]!,
  ]);
}

function check(replacement: Message[], over: Partial<CompactionUnderTest> = {}): string[] {
  return directChecks({ original, replacement, path: "summary", checkpoint, anchors: "ANCHOR", ...over }).map(
    (f) => `${f.check}: ${f.message}`,
  );
}

function expectCaught(
  name: string,
  check_: string,
  broken: Message[],
  over: Partial<CompactionUnderTest> = {},
) {
  test(`the direct checks catch: ${name}`, () => {
    const found = check(broken, over);
    assert.ok(
      found.some((f) => f.startsWith(`${check_}:`)),
      `expected a ${check_} failure, got ${JSON.stringify(found)}`,
    );
  });
}

test("the hand-built compaction passes every direct check", () => {
  assert.equal(protectedRegion(original).start, 4);
  assert.deepEqual(check(goodReplacement()), []);
});

const edit = (f: (r: Message[]) => void): Message[] => {
  const r = goodReplacement();
  f(r);
  return r;
};
const resultBlock = (r: Message[]) => r[5]!.content[0] as Record<string, unknown>;

expectCaught(
  "a protected message dropped",
  "protected-message",
  edit((r) => r.splice(6, 1)),
);
expectCaught(
  "protected assistant text changed by one byte",
  "protected-message",
  edit((r) => {
    (r[8]!.content[0] as { text: string }).text = "donE";
  }),
);
expectCaught(
  "a signature altered",
  "protected-message",
  edit((r) => {
    (r[4]!.content[0] as { signature: string }).signature = "sig=";
  }),
);
expectCaught(
  "protected messages out of order",
  "protected-message",
  edit((r) => {
    [r[6], r[7]] = [r[7]!, r[6]!];
  }),
);
expectCaught(
  "is_error dropped from a protected result",
  "protected-message",
  edit((r) => {
    delete (r[7]!.content[0] as { is_error?: boolean }).is_error;
  }),
);
expectCaught(
  "is_error dropped from a bounded result",
  "protected-message",
  edit((r) => {
    delete resultBlock(r).is_error;
  }),
);
expectCaught(
  "a result over 8 KiB kept whole",
  "bound",
  edit((r) => {
    resultBlock(r).content = big;
  }),
);
expectCaught(
  "content_blocks kept on a bounded result",
  "bound",
  edit((r) => {
    resultBlock(r).content_blocks = [image];
  }),
);
expectCaught(
  "a bound whose marker gives the wrong size",
  "bound",
  edit((r) => {
    resultBlock(r).content = bounded.replace(String(bigBytes), String(bigBytes - 1));
  }),
);
expectCaught(
  "a bound keeping more than 8 KiB",
  "bound",
  edit((r) => {
    resultBlock(r).content = big.slice(0, 7000) + marker + big.slice(-2000);
  }),
);
expectCaught(
  "a bound whose head is not a prefix",
  "bound",
  edit((r) => {
    resultBlock(r).content = "X" + bounded.slice(1);
  }),
);
test("the direct checks catch: a bound that splits a surrogate pair", () => {
  const emoji = "😀".repeat(6000);
  const orig = structuredClone(original);
  (orig[6]!.content[0] as { content: string }).content = emoji;
  const m = `\n[compact-safe: tool result truncated; original ${Buffer.byteLength(emoji)} bytes of UTF-8, kept head and tail]\n`;
  const r = goodReplacement();
  resultBlock(r).content = emoji.slice(0, 2001) + m + emoji.slice(-100);
  const found = directChecks({ original: orig, replacement: r, path: "summary", checkpoint, anchors: "" });
  assert.ok(
    found.some((f) => f.check === "bound" && /surrogate/.test(f.message)),
    JSON.stringify(found),
  );
});
expectCaught(
  "the current instruction dropped",
  "instruction",
  edit((r) => r.splice(3, 1)),
);
expectCaught(
  "no checkpoint",
  "one-checkpoint",
  edit((r) => r.splice(2, 1)),
);
expectCaught(
  "two checkpoints",
  "one-checkpoint",
  edit((r) => r.splice(2, 0, structuredClone(checkpoint))),
);
expectCaught(
  "a checkpoint with another agent's marker",
  "one-checkpoint",
  edit((r) => {
    (r[2]!.content[0] as { text: string }).text =
      "Another language model started to solve this problem: x\n\n## Anchors\nANCHOR";
  }),
);
expectCaught(
  "anchors not restated",
  "one-checkpoint",
  edit((r) => {
    (r[2]!.content[0] as { text: string }).text =
      "[compact-safe checkpoint]\nsummary\n\n## Coverage\nsummary; last round kept: 0 messages (0 tool results, 0 assistant); anchors 0 chars";
  }),
);
expectCaught("prune-only writing a checkpoint", "one-checkpoint", goodReplacement(), { path: "prune-only" });
expectCaught(
  "an invented call",
  "invented-call",
  edit((r) => {
    r.splice(
      3,
      0,
      { role: "assistant", content: [{ type: "tool_use", id: "zz", name: "Bash", input: {} }] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "zz", content: "" }],
      },
    );
  }),
);
expectCaught(
  "a call with another input",
  "invented-call",
  edit((r) => {
    r.splice(
      3,
      0,
      { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "Read", input: { p: "other" } }] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "c1", content: "x" }],
      },
    );
  }),
);
expectCaught(
  "an invented result",
  "invented-call",
  edit((r) => {
    r[7]!.content.push({ type: "tool_result", tool_use_id: "nope", content: "" });
  }),
);
expectCaught(
  "a call without its result",
  "pairing",
  edit((r) => {
    r.splice(3, 0, {
      role: "assistant",
      content: [{ type: "tool_use", id: "c1", name: "Read", input: { p: "a" } }],
    });
  }),
);
expectCaught(
  "a result before its call",
  "pairing",
  edit((r) => {
    r.splice(
      3,
      0,
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "x" }] },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "c1", name: "Read", input: { p: "a" } }],
      },
    );
  }),
);
expectCaught(
  "a request that grows",
  "request-size",
  edit((r) => {
    (r[1]!.content[0] as { text: string }).text = "old request ".repeat(5000);
  }),
);

test("the oracle's region protects the one complete exchange before a round that holds only an in-flight call", () => {
  const ms: Message[] = [
    { role: "user", content: [{ type: "text", text: "first" }] },
    { role: "assistant", content: [{ type: "tool_use", id: "a", name: "Read", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: "x" }] },
    { role: "user", content: [{ type: "text", text: "second" }] },
    { role: "assistant", content: [{ type: "tool_use", id: "b", name: "Bash", input: {} }] },
  ];
  // The batch in flight at the end is in no request, so it does not count for the round: the tail
  // ("second", then the call) walks back to the round of the complete exchange, from "first".
  assert.deepEqual(protectedRegion(ms), { roundStart: 0, start: 0, instructions: [0, 3] });
  // Once the conversation goes on after the call (an assistant message), it is abandoned, not in
  // flight: the round starts at "second" and the complete exchange before it is still protected.
  const goesOn: Message[] = [...ms, { role: "assistant", content: [{ type: "text", text: "stopped" }] }];
  assert.deepEqual(protectedRegion(goesOn), { roundStart: 3, start: 1, instructions: [3] });
});

test("the oracle's region: a toolless tail walks back to the last exchanges; chat-only keeps the latest turn", () => {
  const ms: Message[] = [
    { role: "user", content: [{ type: "text", text: "a" }] },
    { role: "user", content: [{ type: "text", text: "b" }] },
    { role: "assistant", content: [{ type: "tool_use", id: "x", name: "Read", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "x", content: "x" }] },
    { role: "assistant", content: [{ type: "text", text: "ok" }] },
    { role: "user", content: [{ type: "text", text: "thanks" }] },
    { role: "assistant", content: [{ type: "text", text: "bye" }] },
  ];
  assert.deepEqual(protectedRegion(ms), { roundStart: 1, start: 1, instructions: [1, 5] });
  const chat = ms.filter((m) => !m.content.some((b) => b.type === "tool_use" || b.type === "tool_result"));
  assert.equal(protectedRegion(chat).start, 3); // a, b, ok, thanks, bye: from "thanks"
});

test("a kept input may carry secret-redaction markers, and nothing else may differ", () => {
  const orig = '{"command":"POSTHOG_API_KEY=phc_xxx entire help"}';
  assert.ok(sameButRedacted(orig, orig));
  assert.ok(sameButRedacted(orig, '{"command":"POSTHOG_API_KEY=[REDACTED:env-secret] entire help"}'));
  assert.ok(sameButRedacted(orig, '{"command":"[REDACTED:a] entire [REDACTED:b]"}'));
  // a marker stands for at least one character
  assert.ok(!sameButRedacted(orig, '{"command":"POSTHOG_API_KEY=phc_xxx[REDACTED:x] entire help"}'));
  // the text around the markers must be the original's
  assert.ok(!sameButRedacted(orig, '{"command":"POSTHOG_API_KEY=[REDACTED:env-secret] entire HELP"}'));
  assert.ok(!sameButRedacted(orig, '{"command":"rm -rf / [REDACTED:x]"}'));
  assert.ok(!sameButRedacted(orig, '{"command":"POSTHOG_API_KEY=phc_xxx entire help!"}'));
});

test("a small result whose nested blocks put it over 8 KiB may lose them, content kept whole; a small one may not", () => {
  const heavy = [{ type: "image_url", image_url: { url: "data:image/png;base64," + "A".repeat(9000) } }];
  const light = [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }];
  const orig = (blocks: unknown[]) => ({
    type: "tool_result",
    tool_use_id: "c",
    content: "screenshot",
    content_blocks: blocks,
  });
  assert.equal(
    boundProblem(orig(heavy), { type: "tool_result", tool_use_id: "c", content: "screenshot" }),
    null,
  );
  assert.equal(
    boundProblem(orig(light), { type: "tool_result", tool_use_id: "c", content: "screenshot" }),
    "content_blocks altered",
  );
  assert.equal(
    boundProblem(orig(heavy), { type: "tool_result", tool_use_id: "c", content: "screen" }),
    "content altered",
  );
});
