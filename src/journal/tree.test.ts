import { test } from "node:test";
import assert from "node:assert/strict";
import { BRANCH_SUMMARY_MARKER } from "../contract/markers.js";
import type { CompactionEntry, JournalEntry, Message } from "../model/index.js";
import { parseJournalEntry } from "../model/index.js";
import {
  activePath,
  childrenIndex,
  indexEntries,
  latestCompaction,
  leafMoveEntry,
  liveContext,
  newEntryId,
  nowIso,
  UnknownLeafError,
} from "./tree.js";

const T = "2025-01-01T00:00:00.000Z";
const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const asst = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });

function msg(id: string, parent: string | null, m: Message): JournalEntry {
  return {
    id,
    parent_id: parent,
    kind: m.role === "assistant" ? "assistant" : "user",
    created_at: T,
    payload: m,
  };
}
function header(id: string): JournalEntry {
  return {
    id,
    parent_id: null,
    kind: "header",
    created_at: T,
    payload: { session_id: "s", created_at: T, schema_version: 2, source_format: "journal" },
  };
}
function compaction(id: string, parent: string, replacement: Message[]): CompactionEntry {
  return {
    id,
    parent_id: parent,
    kind: "compaction",
    created_at: T,
    payload: {
      summary: "sum",
      tokens_before: 100,
      tokens_after: 10,
      model: "extractive",
      path: "summary",
      coverage: null,
      trigger: "auto",
      replacement,
    },
  };
}
const texts = (ms: Message[]) => ms.map((m) => (m.content[0] as { text: string }).text);
const ids = (es: JournalEntry[]) => es.map((e) => e.id);

test("activePath follows parent_id from the last entry back to the root, skipping side branches", () => {
  const es = [
    header("h"),
    msg("u1", "h", user("one")),
    msg("a1", "u1", asst("two")),
    msg("side", "u1", asst("sidechain")), // a side branch off u1
    msg("u2", "a1", user("three")),
  ];
  assert.deepEqual(ids(activePath(es)), ["h", "u1", "a1", "u2"]);
  assert.deepEqual(ids(activePath(es, "side")), ["h", "u1", "side"]);
  assert.deepEqual(activePath([]), []);
  assert.throws(() => activePath(es, "nope"), UnknownLeafError);
});

test("activePath stops at a missing parent and at a cycle instead of looping", () => {
  const orphan = [msg("a", null, user("a")), msg("b", "ghost", user("b")), msg("c", "b", user("c"))];
  assert.deepEqual(ids(activePath(orphan)), ["b", "c"]);
  const cyc = [msg("x", "y", user("x")), msg("y", "x", user("y"))];
  assert.deepEqual(ids(activePath(cyc)), ["x", "y"]);
});

test("liveContext without a compaction is every message on the path; header adds nothing", () => {
  const es = [
    header("h"),
    msg("u1", "h", user("one")),
    msg("a1", "u1", asst("two")),
    msg("x", "u1", asst("off")),
  ];
  assert.deepEqual(texts(liveContext(es, "a1")), ["one", "two"]);
  assert.deepEqual(texts(liveContext(es)), ["one", "off"]);
});

test("liveContext with compactions is the latest replacement plus what follows it", () => {
  const es: JournalEntry[] = [
    header("h"),
    msg("u1", "h", user("one")),
    msg("a1", "u1", asst("two")),
    compaction("c1", "a1", [user("R1")]),
    msg("u2", "c1", user("three")),
    compaction("c2", "u2", [user("R2a"), asst("R2b")]),
    msg("u3", "c2", user("four")),
    msg("a3", "u3", asst("five")),
  ];
  const before = JSON.stringify(es);
  assert.deepEqual(texts(liveContext(es)), ["R2a", "R2b", "four", "five"]);
  assert.equal(latestCompaction(activePath(es))?.id, "c2");
  // leaf on the older branch: only the first compaction is on its path
  assert.deepEqual(texts(liveContext(es, "u2")), ["R1", "three"]);
  assert.equal(latestCompaction(activePath(es, "a1")), undefined);
  assert.equal(JSON.stringify(es), before, "input must not be mutated");
  // the result array is new: changing it does not change the compaction entry
  const live = liveContext(es);
  live.pop();
  assert.equal((es[5] as CompactionEntry).payload.replacement.length, 2);
});

test("branch_summary contributes a marked user message; leaf_only contributes nothing", () => {
  const es: JournalEntry[] = [
    header("h"),
    msg("u1", "h", user("one")),
    {
      id: "b1",
      parent_id: "u1",
      kind: "branch_summary",
      created_at: T,
      payload: { branch_id: "br", summary: "tried X, failed", parent_branch_id: null },
    },
    msg("u2", "b1", user("two")),
  ];
  const live = liveContext(es);
  assert.deepEqual(live[1], {
    role: "user",
    content: [{ type: "text", text: `${BRANCH_SUMMARY_MARKER}\ntried X, failed` }],
  });
  assert.deepEqual(texts(live), ["one", `${BRANCH_SUMMARY_MARKER}\ntried X, failed`, "two"]);
  // the same entry with leaf_only only moves the leaf
  const moved = es.map((e) =>
    e.kind === "branch_summary" ? { ...e, payload: { ...e.payload, leaf_only: true } } : e,
  ) as JournalEntry[];
  assert.deepEqual(texts(liveContext(moved)), ["one", "two"]);
});

test("leafMoveEntry moves the leaf back to an earlier entry (restore before a compaction)", () => {
  const es: JournalEntry[] = [
    header("h"),
    msg("u1", "h", user("one")),
    msg("a1", "u1", asst("two")),
    compaction("c1", "a1", [user("R")]),
    msg("u2", "c1", user("three")),
  ];
  const move = leafMoveEntry("a1", "restore before compaction c1", "main");
  assert.equal(move.kind, "branch_summary");
  assert.equal(move.parent_id, "a1");
  assert.equal(move.payload.leaf_only, true);
  assert.doesNotThrow(() => parseJournalEntry(JSON.parse(JSON.stringify(move))));
  const after = [...es, move];
  assert.deepEqual(texts(liveContext(after)), ["one", "two"]);
  assert.deepEqual(ids(activePath(after)), ["h", "u1", "a1", move.id]);
  // appending after the move continues the restored branch
  const next = [...after, msg("u9", move.id, user("new"))];
  assert.deepEqual(texts(liveContext(next)), ["one", "two", "new"]);
});

test("indexEntries keeps the first of duplicate ids; childrenIndex groups by parent", () => {
  const a = msg("a", null, user("first"));
  const a2 = msg("a", null, user("second"));
  const b = msg("b", "a", user("b"));
  const idx = indexEntries([a, a2, b]);
  assert.equal(idx.get("a"), a);
  assert.equal(idx.size, 2);
  const ch = childrenIndex([a, b, msg("c", "a", user("c"))]);
  assert.deepEqual(ch.get("a"), ["b", "c"]);
  assert.deepEqual(ch.get(null), ["a"]);
});

test("newEntryId is unique and nowIso is an ISO timestamp", () => {
  const set = new Set(Array.from({ length: 100 }, newEntryId));
  assert.equal(set.size, 100);
  assert.match(nowIso(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});
