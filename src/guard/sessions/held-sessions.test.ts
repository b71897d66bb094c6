/**
 * The sessions the guard core holds are bounded by the bytes of their last
 * bodies (issue 43: 8 sessions of 60 MB took the guard to 1.7 GB): beyond
 * `maxHeldBytes` the least recently used are let go of, never one with work
 * queued and never the last one used; one let go of comes back from the
 * state folder (its compaction still judged), and its next request takes the
 * synchronous path, not the fast one.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CODEX_SUMMARY_PREFIX } from "../../formats/import/codex.js";
import { createGuardCore } from "../core.js";
import { HeldSessions, heldBytes, type Session } from "./held-sessions.js";
import type { WireHistory } from "../reading/history.js";
import type { WireRequest } from "../types.js";

/** A held session whose last body is `bytes` long (the history does not matter to the bounds). */
function sessionOf(key: string, bytes: number): Session {
  const history: WireHistory = { wire: "openai-chat", doc: {}, listKey: "messages", list: [], items: [] };
  return {
    key,
    agent: "pi",
    wire: "openai-chat",
    hist: { heads: [] },
    conv_ids: [],
    had_tools: false,
    toScan: { body: Buffer.alloc(bytes), history },
  };
}

const keys = (h: HeldSessions) => [...h.sessions.keys()];

test("beyond maxHeldBytes the least recently used sessions are let go of; a session used moves to the end", () => {
  const held = new HeldSessions({ maxHeldBytes: 2_500 });
  held.remember(sessionOf("a", 1_000));
  held.remember(sessionOf("b", 1_000));
  assert.deepEqual(keys(held), ["a", "b"]);
  // `a` is used again: `b` is now the least recent.
  void held.load({ key: "a", agent: "pi", source: "header" }, "openai-chat");
  held.remember(sessionOf("c", 1_000));
  assert.deepEqual(keys(held), ["a", "c"]);
  assert.equal(held.heldBytes(), 2_000);
  // One session over the bound alone is kept while it is the last one used.
  held.remember(sessionOf("d", 5_000));
  assert.deepEqual(keys(held), ["d"]);
  assert.equal(heldBytes(held.sessions.get("d")!), 5_000);
});

test("a session with a request in its queue is let go of only once that request is done", async () => {
  const held = new HeldSessions({ maxHeldBytes: 1_500 });
  let finish!: () => void;
  const busy = held.serial("a", async () => {
    held.remember(sessionOf("a", 1_000));
    await new Promise<void>((r) => (finish = r));
  });
  await new Promise((r) => setImmediate(r));
  held.remember(sessionOf("b", 1_000));
  assert.deepEqual(keys(held), ["a", "b"], "a is busy: kept for now");
  finish();
  await busy;
  await held.drain();
  assert.deepEqual(keys(held), ["b"]);
});

// ---------------------------------------------------------------- through the core (Codex, Responses)

function responses(session: string, input: unknown[]): WireRequest {
  return {
    method: "POST",
    url: "/v1/responses",
    headers: { session_id: session, originator: "codex_cli_rs" },
    body: Buffer.from(
      JSON.stringify({ model: "gpt-x", instructions: "You are Codex.", input, tools: [], stream: true }),
    ),
  };
}
const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
const say = (text: string) => ({
  type: "message",
  role: "assistant",
  content: [{ type: "output_text", text }],
});
const call = (id: string) => ({ type: "function_call", call_id: id, name: "shell", arguments: "{}" });
const out = (id: string) => ({ type: "function_call_output", call_id: id, output: `out ${id}` });

const HISTORY = [user("fix the parser"), call("c1"), out("c1"), call("c2"), out("c2"), say("fixed")];

test("an evicted session is read back from the state folder: its next turn is read whole, its compaction still judged", async () => {
  const dir = mkdtempSync(join(tmpdir(), "guard-held-"));
  try {
    // Room for one session's body: a second session's first request lets go of the first.
    const core = createGuardCore({ stateDir: dir, maxHeldBytes: 1 });
    assert.equal((await core.handle(responses("conv-1", HISTORY))).deferred, undefined);
    await core.idle();
    const more = [...HISTORY, user("and the lexer")];
    assert.equal(
      (await core.handle(responses("conv-1", more))).deferred,
      true,
      "held: the turn takes the fast path",
    );
    await core.idle();
    await core.handle(responses("conv-2", HISTORY));
    await core.idle();
    const evenMore = [...more, say("on it")];
    const read = await core.handle(responses("conv-1", evenMore));
    assert.equal(read.deferred, undefined, "let go of: the turn is read whole before it goes out");
    assert.equal(read.session, "codex:conv-1");
    await core.idle();
    await core.handle(responses("conv-2", [...HISTORY, user("next")]));
    await core.idle();
    const compacted = await core.handle(
      responses("conv-1", [
        user("fix the parser"),
        user(`${CODEX_SUMMARY_PREFIX}\nparser fixed`),
        user("go on"),
      ]),
    );
    assert.equal(compacted.verdict?.session, "codex:conv-1");
    assert.equal(compacted.verdict?.kept, false);
    await core.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("with the default bound, the same sessions stay held (their turns take the fast path)", async () => {
  const core = createGuardCore({});
  await core.handle(responses("conv-1", HISTORY));
  await core.idle();
  await core.handle(responses("conv-2", HISTORY));
  await core.idle();
  assert.equal((await core.handle(responses("conv-1", [...HISTORY, user("and the lexer")]))).deferred, true);
  await core.close();
});
