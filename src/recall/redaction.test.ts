/**
 * What the recall tools answer never leaks a secret, whole or cut: a call's
 * input in `recall tool:ID`'s head line, a search hit's snippet cut at its
 * either end through a secret, a query or ref echoed in an answer or an
 * error, a verdict in the outline quoting a lost instruction; every answer
 * stays in its 8 KiB bound however long what it echoes; and `--state DIR`
 * serves only session journals, never the followed-sessions index or
 * another `.jsonl` file put in the folder.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CompactionEntry, JournalEntry, Message } from "../model/types.js";
import { headerEntry } from "../journal/write.js";
import { newEntryId } from "../journal/tree.js";
import { utf8Length } from "../contract/bounds.js";
import { findSessionFile } from "./find.js";
import { indexHistory } from "./history.js";
import {
  ANSWER_BOUND_BYTES,
  ECHO_CHARS,
  historyOutline,
  recall,
  searchHistory,
  type ToolAnswer,
} from "./tools.js";
import { leakedFragments, SECRET_SAMPLES, type SecretSample } from "../../test/secret-samples.js";

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const say = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });
const callOf = (id: string, input: unknown): Message => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "Bash", input }],
});
const resultOf = (id: string, content: string): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content }],
});

/** A journal of `messages`, then (with `replacement`) a compaction whose replacement is it. */
function journal(messages: Message[], replacement?: Message[]): JournalEntry[] {
  const header = headerEntry({
    session_id: "s",
    created_at: "2026-01-01T00:00:00.000Z",
    schema_version: 1,
    source_format: "test",
  });
  const entries: JournalEntry[] = [header];
  let parent = header.id;
  for (const m of messages) {
    const e = {
      id: newEntryId(),
      parent_id: parent,
      kind:
        m.role === "assistant"
          ? "assistant"
          : m.content.some((b) => b.type === "tool_result")
            ? "tool_result"
            : "user",
      created_at: "2026-01-01T00:00:01.000Z",
      payload: m,
    } as JournalEntry;
    entries.push(e);
    parent = e.id;
  }
  if (replacement !== undefined) {
    const c: CompactionEntry = {
      id: newEntryId(),
      parent_id: parent,
      kind: "compaction",
      created_at: "2026-01-01T00:00:02.000Z",
      payload: {
        summary: "s",
        tokens_before: 1,
        tokens_after: 1,
        model: "m",
        path: "summary",
        coverage: null,
        trigger: "manual",
        replacement,
      },
    };
    entries.push(c);
  }
  return entries;
}

const all = (a: ToolAnswer) => a.texts.join("\n");
const noLeak = (a: ToolAnswer, s: SecretSample, what: string) =>
  assert.deepEqual(leakedFragments(all(a), s), [], `${s.kind}: ${what}`);
const inBound = (a: ToolAnswer, what: string) =>
  assert.ok(
    utf8Length(a.texts.join("")) <= ANSWER_BOUND_BYTES,
    `${what}: ${utf8Length(a.texts.join(""))} bytes`,
  );

test("recall tool:ID: the call's input in the head line is redacted, also where the head's cut falls in a secret", () => {
  for (const s of SECRET_SAMPLES)
    for (const k of [0, 5, 20, 280, 295]) {
      // The input as JSON: {"command":"<k filler>SECRET..."}: the head quotes 300 characters of it.
      const input = { command: `${"x".repeat(k)} ${s.text} done` };
      const ix = indexHistory(journal([user("go"), callOf("t1", input), resultOf("t1", "ok")]));
      const a = recall(ix, "tool:t1");
      assert.equal(a.isError, false);
      assert.match(a.texts[0]!, /^tool:t1: the original result of Bash /);
      noLeak(a, s, `head, ${k} before it`);
    }
  // A key=value shape only the JSON shows (the key and its value are two strings of the input).
  const json = SECRET_SAMPLES.find((s) => s.kind === "json-secret")!;
  const ix = indexHistory(
    journal([user("go"), callOf("t1", { password: "correctHorse9Battery" }), resultOf("t1", "ok")]),
  );
  noLeak(recall(ix, "tool:t1"), json, "an input's password field");
});

test("search_history: a hit's snippet is cut from its text redacted whole, at either end through a secret", () => {
  for (const s of SECRET_SAMPLES) {
    const len = s.text.replace(/\s+/g, " ").length;
    for (const k of [1, 4, 11, 25, 60].filter((n) => n < len)) {
      // The snippet runs 240 characters from the text's start: the secret starts 240 - k characters in.
      const tail = `needle ${"x".repeat(240 - k - 8)} ${s.text} after`;
      // The snippet starts 80 characters before the match: inside the secret, k characters before its end.
      const head = `${s.text} ${"y".repeat(Math.max(0, 78 - k))} needle after`;
      for (const [what, text] of [
        ["the snippet's end", tail],
        ["the snippet's start", head],
      ] as const) {
        const ix = indexHistory(journal([user(text), say("ok")]));
        const a = searchHistory(ix, "needle");
        assert.match(a.texts[0]!, /^1 match for "needle"/, a.texts[0]);
        noLeak(a, s, `${what} ${k} into it`);
      }
    }
  }
});

test("a query or ref echoed in an answer or an error: redacted, then cut; the answer in its bound", () => {
  const ix = indexHistory(journal([user("needle in the history"), say("ok")]));
  for (const s of SECRET_SAMPLES)
    for (const k of [0, 3, 9, 30]) {
      const filler = "q".repeat(Math.max(0, ECHO_CHARS - k - 1));
      const query = `${filler} ${s.text}`;
      noLeak(searchHistory(ix, query), s, `no-match query, cut ${k} into it`);
      noLeak(searchHistory(ix, `needle ${query}`, 10, 5), s, "a query past its matches");
      noLeak(recall(ix, `not a ref ${filler} ${s.text}`), s, "a bad ref");
      // An id holds no space: the kinds written without one, after a character no key runs on from.
      if (!/\s/.test(s.text)) {
        noLeak(recall(ix, `tool:${filler}:${s.text}`), s, "an unknown tool id");
        noLeak(recall(ix, `compaction:${filler}:${s.text}`), s, "an unknown compaction id");
      }
    }
  // Bounds: a huge query of wide characters, and a match, still fit.
  const wide = "é🧪".repeat(50_000);
  inBound(searchHistory(ix, wide), "a huge query, no match");
  const many = indexHistory(
    journal(Array.from({ length: 60 }, (_, i) => user(`needle ${i} ${"ü".repeat(400)}`))),
  );
  inBound(searchHistory(many, `needle ${"\u0001".repeat(5000)}`), "a huge query with control characters");
  inBound(searchHistory(many, "needle", 50), "many hits");
  // A call whose input is long and wide: the head, the page and the paging line together in the bound.
  const big = indexHistory(
    journal([
      user("go"),
      callOf("t1", { command: "é\u0001".repeat(10_000) }),
      resultOf("t1", "ü".repeat(20_000)),
    ]),
  );
  const page = recall(big, "tool:t1");
  inBound(page, "a paged original with a long head");
  assert.match(page.texts.at(-1)!, /more characters: call recall with ref "tool:t1" and offset \d+/);
});

test("history_outline: a verdict quoting a lost instruction, cut through a secret, is redacted before the cut", () => {
  for (const s of SECRET_SAMPLES)
    for (const k of [2, 8, 20]) {
      const instruction = `${"a".repeat(60 - k - 1)} ${s.text} then test`;
      const ix = indexHistory(
        journal(
          [user("old"), say("ok"), user(instruction), callOf("t1", { command: "ls" }), resultOf("t1", "ok")],
          [user("[compact-safe checkpoint]\nthe summary"), user("next")],
        ),
      );
      const a = historyOutline(ix);
      assert.match(all(a), /VIOLATION: /);
      noLeak(a, s, `outline, cut ${k} into it`);
    }
});

test("mcp --state DIR: the newest session journal, never the followed-sessions index or another .jsonl file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cs-recall-state-"));
  try {
    const j = join(dir, "pi_h-abc-0123456789ab.jsonl");
    writeFileSync(
      j,
      journal([user("hi")])
        .map((e) => JSON.stringify(e))
        .join("\n") + "\n",
    );
    utimesSync(j, new Date(1_000_000), new Date(1_000_000));
    // Newer than the journal: the guard's index, and a file that is no journal.
    writeFileSync(join(dir, "followed-sessions.jsonl"), '{"system":"abc","session":"pi:h-abc"}\n');
    writeFileSync(join(dir, "notes.jsonl"), `{"token":"${SECRET_SAMPLES[4]!.text}"}\n`);
    assert.deepEqual(await findSessionFile({ kind: "state", dir }), { file: j });
    const empty = mkdtempSync(join(tmpdir(), "cs-recall-state-"));
    try {
      writeFileSync(join(empty, "followed-sessions.jsonl"), '{"system":"abc","session":"x"}\n');
      const f = await findSessionFile({ kind: "state", dir: empty });
      assert.ok("missing" in f && /no session journal/.test(f.missing));
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
