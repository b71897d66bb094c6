/**
 * pi's adapter given what pi would never send, or a host's bug sends: a branch that is not an array,
 * an entry that is not an object or has no type or id, a message entry without its message, options
 * that are not an object, a null message, a session text that is not text. Each is refused with
 * compact-safe's own error (`ModelError`, code `invalid_message`) on one line naming the place, never a
 * raw TypeError from deep inside; the extension answers pi with a cancel and says why in those words.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ExtensionAPI, SessionEntry } from "@mariozechner/pi-coding-agent";
import { ModelError } from "../model/schema.js";
import {
  auditPiCompaction,
  compactSafeExtension,
  fromPiMessage,
  piLiveContext,
  planPiCompaction,
  type PiAgentMessage,
} from "./pi.js";

const CASES: Record<string, { call: () => unknown; place: RegExp }> = {
  "a branch that is not an array": {
    call: () => planPiCompaction(null as never, { tokensBefore: 1 }),
    place: /^branchEntries: /,
  },
  "a branch entry that is null": {
    call: () => planPiCompaction([null] as never, { tokensBefore: 1 }),
    place: /^branchEntries\[0\]: /,
  },
  "a branch entry without an id": {
    call: () =>
      planPiCompaction([{ type: "message", message: { role: "user", content: "hi" } }] as never, {
        tokensBefore: 1,
      }),
    place: /^branchEntries\[0\]: .*id/,
  },
  "a message entry without its message": {
    call: () => planPiCompaction([{ type: "message", id: "a" }] as never, { tokensBefore: 1 }),
    place: /^branchEntries\[0\]\.message: /,
  },
  "options that are not an object": {
    call: () => planPiCompaction([], null as never),
    place: /^options: /,
  },
  "a null message": { call: () => fromPiMessage(null as unknown as PiAgentMessage), place: /^message: / },
  "piLiveContext of a non-array": {
    call: () => piLiveContext(undefined as unknown as SessionEntry[]),
    place: /^branch: /,
  },
  "a session text that is not text": {
    call: () => auditPiCompaction(null as unknown as string, "x"),
    place: /^sessionText: /,
  },
};

describe("pi's adapter refuses hostile inputs with compact-safe's own error", () => {
  for (const [name, { call, place }] of Object.entries(CASES)) {
    test(name, async () => {
      let thrown: unknown;
      try {
        await call();
      } catch (e) {
        thrown = e;
      }
      assert.ok(thrown instanceof ModelError, `expected a ModelError, got ${String(thrown)}`);
      assert.equal(thrown.code, "invalid_message");
      assert.doesNotMatch(thrown.message, /\n|Cannot read properties/);
      assert.match(thrown.message, place);
    });
  }
});

test("the extension cancels a malformed event and says why in one clear line", async () => {
  const said: string[] = [];
  const entries: unknown[] = [];
  let handler: ((event: unknown, ctx: unknown) => Promise<unknown>) | undefined;
  const pi = {
    on(name: string, f: (event: unknown, ctx: unknown) => Promise<unknown>) {
      if (name === "session_before_compact") handler = f;
    },
    appendEntry(type: string, data: unknown) {
      entries.push({ type, data });
    },
  } as unknown as ExtensionAPI;
  compactSafeExtension({ workspace: false, audit: false, notify: (text) => said.push(text) })(pi);
  for (const event of [null, { preparation: {}, branchEntries: "no" }]) {
    said.length = 0;
    const answer = await handler!(event, { cwd: "/nowhere", hasUI: false });
    assert.deepEqual(answer, { cancel: true });
    assert.equal(said.length, 1);
    assert.match(said[0]!, /^compact-safe: compaction cancelled, nothing committed: (event|branchEntries): /);
    assert.doesNotMatch(said[0]!, /Cannot read properties/);
  }
  assert.equal(entries.length, 2);
  assert.deepEqual(
    entries.map((e) => (e as { data: { kind: string } }).data.kind),
    ["error", "error"],
  );
});
