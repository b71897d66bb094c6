/** Item keys (`history.ts`): digests of the raw values, cache markers aside; keys an earlier version wrote read as this one makes them. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { currentKey, rawKey } from "./history.js";

test("a key is a short digest of the raw values' JSON, cache markers aside", () => {
  const el = { role: "user", content: [{ type: "text", text: "x".repeat(100_000) }] };
  const marked = {
    role: "user",
    content: [{ type: "text", text: "x".repeat(100_000), cache_control: { type: "ephemeral" } }],
  };
  assert.equal(rawKey([el]), rawKey([marked]));
  assert.notEqual(rawKey([el]), rawKey([{ ...el, role: "assistant" }]));
  assert.ok(rawKey([el]).length < 64, "held per message: tens of bytes, not the message");
});

test("a key an earlier version wrote (the JSON itself) is read as this version makes it; a current key is kept", () => {
  const raw = [{ role: "user", content: "the summary" }];
  assert.equal(currentKey(JSON.stringify(raw)), rawKey(raw));
  assert.equal(currentKey(rawKey(raw)), rawKey(raw));
  const content = [{ type: "text", text: "You are an agent." }];
  assert.equal(currentKey(`system:${JSON.stringify([content])}`), `system:${rawKey([content])}`);
  assert.equal(currentKey(`system:${rawKey([content])}`), `system:${rawKey([content])}`);
});
