/**
 * One pi reader: the session importer (`convertMessage`, what `importPi` and
 * `importPiMessages` read messages with) and the adapter (`fromPiMessage`)
 * read every pi message alike, field by field, where they used to differ;
 * what pi leaves out of the conversation is said once and each caller decides
 * (the importer leaves it out, the adapter gives it back to pi).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "../model/index.js";
import { convertMessage } from "../formats/import/pi.js";
import { importPiMessages } from "../formats/import/pi-messages.js";
import { fromPiMessage, fromPiMessages, piSendsAsConversation, readPiMessage, toPiMessages } from "./pi.js";

type Rec = Record<string, unknown>;

const bare = (m: Message): Message => {
  const { meta: _meta, ...rest } = m;
  return rest;
};

/** What the importer and the adapter read of one pi message (the importer's skip, or its message without meta). */
function both(m: Rec): { imported: Message | { skip: string; byDesign: boolean }; adapter: Message } {
  const imported = convertMessage(m, {});
  return { imported: "skip" in imported ? imported : bare(imported), adapter: bare(fromPiMessage(m)) };
}

test("pi: an empty thinkingSignature is no signature for both readers, and pi's message comes back exactly", () => {
  const m = {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "plan", thinkingSignature: "" },
      { type: "text", text: "done" },
    ],
    stopReason: "stop",
    timestamp: 1,
  };
  const { imported, adapter } = both(m);
  const want = {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "plan" },
      { type: "text", text: "done" },
    ],
  };
  assert.deepEqual(imported, want);
  assert.deepEqual(adapter, want);
  assert.deepEqual(toPiMessages(fromPiMessages([m])), [m]);
});

test("pi: a tool call without arguments is a call with input {} (as pi-ai sends it), and comes back exactly", () => {
  const m = { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "ls" }], timestamp: 2 };
  const { imported, adapter } = both(m);
  const want = { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "ls", input: {} }] };
  assert.deepEqual(imported, want);
  assert.deepEqual(adapter, want);
  assert.deepEqual(toPiMessages(fromPiMessages([m])), [m]);
});

test("pi: an unknown or malformed block is kept whole (pi_block) by both readers, never given made-up fields", () => {
  const audio = { type: "audio", data: "QUJD", mimeType: "audio/wav" };
  const badImage = { type: "image", data: "QUJD" }; // no mimeType: not an image pi can send
  const m = { role: "user", content: [audio, badImage], timestamp: 3 };
  const { imported, adapter } = both(m);
  const want = {
    role: "user",
    content: [
      { type: "pi_block", block: audio },
      { type: "pi_block", block: badImage },
    ],
  };
  assert.deepEqual(imported, want);
  assert.deepEqual(adapter, want);
  assert.deepEqual(toPiMessages(fromPiMessages([m])), [m]);
});

test("pi: a pi 1.x system message is the prompt: the importer leaves it out, the adapter reads it as system and gives it back", () => {
  const m = { role: "system", content: "You are pi.", timestamp: 4 };
  const { imported, adapter } = both(m);
  assert.deepEqual(imported, {
    skip: "system message (pi 1.x's prompt and tool declarations)",
    byDesign: true,
  });
  assert.deepEqual(adapter, { role: "system", content: [{ type: "text", text: "You are pi." }] });
  assert.equal(piSendsAsConversation(m), false);
  assert.deepEqual(toPiMessages(fromPiMessages([m])), [m]);
});

test("pi: a !! command is outside the conversation: the importer skips it by design, the adapter keeps it for pi", () => {
  const m = {
    role: "bashExecution",
    command: "ls",
    output: "a",
    exitCode: 0,
    excludeFromContext: true,
    timestamp: 5,
  };
  const r = readPiMessage(m);
  assert.deepEqual(r.outside, {
    reason: "bashExecution excluded from the model's context (!! command)",
    byDesign: true,
  });
  assert.equal(piSendsAsConversation(m), false);
  const report = importPiMessages(JSON.stringify([m]), "m.json").report;
  assert.equal(report.skipped.length, 1);
  assert.deepEqual(toPiMessages(fromPiMessages([m])), [m]);
  assert.equal(piSendsAsConversation({ ...m, excludeFromContext: false }), true);
});

test("pi: a role the reader does not know is reported by the importer (not by design) and read as user content by the adapter", () => {
  const m = { role: "notification", content: "hi", timestamp: 6 };
  const { imported, adapter } = both(m);
  assert.deepEqual(imported, { skip: 'message with unknown role "notification"', byDesign: false });
  assert.deepEqual(adapter, { role: "user", content: [{ type: "text", text: "hi" }] });
  assert.equal(piSendsAsConversation(m), true);
});
