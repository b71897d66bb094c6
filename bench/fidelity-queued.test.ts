import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../src/model/index.js";
import {
  measureQueued,
  promptNamed,
  queuedAtEnd,
  queuedAtEndBar,
  queuedBars,
  queuedPrompts,
} from "./fidelity-queued.js";

const user = (text: string, meta: Record<string, unknown> = {}): Message => ({
  role: "user",
  content: [{ type: "text", text }],
  meta,
});
const before: Message[] = [
  user("implement the lookup"),
  user("did we create any new unit tests?", { queued: true }),
  user("<task-notification><task-id>a1</task-id></task-notification>", { queued: true, is_meta: true }),
  user("please don't amend commits, ever: make a new commit for each fix you make today", { queued: true }),
];

test("queuedPrompts: the user's delivered queued prompts, not typed prompts nor the harness's notifications", () => {
  assert.deepEqual(queuedPrompts(before), [
    "did we create any new unit tests?",
    "please don't amend commits, ever: make a new commit for each fix you make today",
  ]);
});

test("promptNamed: by the prompt's opening, spaces folded and case ignored", () => {
  assert.ok(
    promptNamed("did we create any new unit tests?", 'User asked: "Did we create any new\nunit tests?"'),
  );
  assert.ok(
    promptNamed(
      "please don't amend commits, ever: make a new commit for each fix you make today",
      '- Constraint (kept word for word above this note, 80 characters: "please don\'t amend commits, ever: make a…")',
    ),
  );
  assert.ok(!promptNamed("did we create any new unit tests?", "The user asked about tests."));
});

test("queuedBars: met when compact-safe names as many as the agent; missed (exit 1 in the bench) when fewer", () => {
  const named = measureQueued(
    before,
    { kept: "did we create any new unit tests? please don't amend commits, ever: make a new", note: "" },
    { kept: "did we create any new unit tests?", note: "did we create any new unit tests?" },
  );
  assert.deepEqual(named.compact_safe, { kept: 2, note: 0 });
  assert.deepEqual(named.agent, { kept: 1, note: 1 });
  assert.equal(queuedBars([named])[0]!.met, true);
  const missed = measureQueued(
    before,
    { kept: "", note: "" },
    { kept: "did we create any new unit tests?", note: "" },
  );
  const bar = queuedBars([missed, null, undefined])[0]!;
  assert.equal(bar.met, false);
  assert.match(bar.compact_safe, /^0\/2/);
  assert.match(bar.agent, /^1\/2/);
});

test("queuedAtEnd / queuedAtEndBar: a session's end with queued prompts, every one named or the bar is missed", async () => {
  assert.equal(await queuedAtEnd("s", [user("plain")], () => Promise.resolve(null)), null);
  const all = await queuedAtEnd("s", before, (ms) =>
    Promise.resolve({ kept: ms.map((m) => (m.content[0] as { text: string }).text).join("\n"), note: "" }),
  );
  assert.deepEqual(all!.compact_safe, { kept: 2, note: 0 });
  assert.equal(queuedAtEndBar([all, null]).met, true);
  const none = await queuedAtEnd("s", before, () => Promise.resolve(null));
  assert.equal(queuedAtEndBar([all, none]).met, false);
});
