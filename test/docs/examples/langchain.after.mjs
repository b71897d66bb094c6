// What the README's LangChain example must have done.
/* global result, model -- the README block and the before-file define them */
import assert from "node:assert/strict";
import { fromLangChainMessages } from "compact-safe/langchain";
import { isCheckpoint } from "compact-safe";

const after = fromLangChainMessages(result.messages);
// Compacted: exactly one checkpoint, with the summarizer's text.
const checkpoints = after.filter(isCheckpoint);
assert.equal(checkpoints.length, 1);
assert.match(JSON.stringify(checkpoints[0].content), /Read a\.ts and b\.ts/);
// The user's instruction and the answer are there; the summarizer saw compact-safe's prompt.
assert.ok(JSON.stringify(after).includes("Read a.ts, b.ts, c.ts and d.ts."));
assert.equal(result.messages.at(-1).content, "All four files are read.");
assert.ok(model.calls.length === 5);
// The last model call saw one checkpoint and the newest exchange, verbatim.
const lastCall = fromLangChainMessages(model.calls[4].messages);
assert.equal(lastCall.filter(isCheckpoint).length, 1);
assert.ok(lastCall.some((m) => m.content.some((b) => b.type === "tool_use" && b.id === "call_d")));
