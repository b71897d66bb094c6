/**
 * The tail read of a session file (tail-read.ts, `importAgentTail`): windows
 * start at a line start, grow by doubling until the caller's check holds,
 * end with the whole file's own import; what is before a window is searched
 * without being parsed; Codex's repeated call ids are renamed in a window as
 * the whole import renames them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lineStartAtOrAfter, TailWindow, windowStarts } from "./tail-read.js";
import { importAgentFile, importAgentTail } from "./import-agent.js";
import { codexPriorCalls, importCodex } from "./import/codex.js";
import type { JournalEntry } from "../model/index.js";

function tempFile(t: { after(fn: () => void): void }, name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "cs-tail-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** A Claude Code transcript of `n` user/assistant exchanges, each line about 100 bytes. */
function transcript(n: number): string {
  const lines: string[] = [];
  let parent: string | null = null;
  for (let i = 0; i < n; i++) {
    for (const type of ["user", "assistant"] as const) {
      const uuid = `${type}-${i}`;
      const message =
        type === "user"
          ? { role: "user", content: `request ${i} ${"x".repeat(40)}` }
          : { role: "assistant", id: `msg_${i}`, content: [{ type: "text", text: `reply ${i}` }] };
      lines.push(JSON.stringify({ parentUuid: parent, type, uuid, sessionId: "s", message }));
      parent = uuid;
    }
  }
  return lines.join("\n") + "\n";
}

const texts = (entries: readonly JournalEntry[]) =>
  entries.flatMap((e) =>
    e.kind === "user" || e.kind === "assistant"
      ? (e.payload.content as { text?: string }[]).map((b) => b.text ?? "")
      : [],
  );

test("a window starts at a line start: one that falls mid-line moves to the next line", () => {
  const b = Buffer.from('{"a":1}\n{"b":2}\n{"c":3}\n');
  assert.equal(lineStartAtOrAfter(b, 0), 0);
  assert.equal(lineStartAtOrAfter(b, 8), 8); // just after a newline: already a line start
  assert.equal(lineStartAtOrAfter(b, 10), 16); // inside `{"b":2}`
  assert.equal(lineStartAtOrAfter(b, b.length - 1), b.length); // inside the last line: nothing of it
  const w = new TailWindow(b, 10);
  assert.equal(w.text(), '{"c":3}\n');
  assert.equal(w.whole, false);
  // A multi-byte character cut by the byte offset: the window still starts on the next whole line.
  const u = Buffer.from('{"t":"é€😀"}\n{"t":"ok"}\n');
  for (let at = 1; at < 16; at++) assert.equal(new TailWindow(u, at).text(), '{"t":"ok"}\n');
});

test("windows double from the first size and end with the whole file; a file smaller than the first window is read whole", () => {
  assert.deepEqual([...windowStarts(10_000, 1000)], [9000, 8000, 6000, 2000, 0]);
  assert.deepEqual([...windowStarts(500, 1000)], [0]);
  assert.deepEqual([...windowStarts(1000, 1000)], [0]);
});

test("a window that does not hold what the answer needs grows until it does; the answer is read from it", async (t) => {
  const text = transcript(200);
  const file = tempFile(t, "s.jsonl", text);
  const seen: number[] = [];
  // The check: the window must hold exchange 150's request.
  const answer = await importAgentTail(
    file,
    "claude-code",
    (r, w) => {
      seen.push(w.start);
      return texts(r.entries).some((x) => x.startsWith("request 150 ")) ? { start: w.start, r } : undefined;
    },
    1024,
  );
  assert.ok(seen.length > 2, `grew: ${seen.join(", ")}`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! < seen[i - 1]!, "each window is larger");
  assert.ok(answer.start > 0 && answer.start < text.length);
  assert.equal(text[answer.start - 1], "\n", "the window starts at a line start");
  // Its entries are the whole file's last ones, read from the window's first line on.
  const whole = texts((await importAgentFile(file, "claude-code")).entries);
  const part = texts(answer.r.entries);
  assert.deepEqual(part, whole.slice(whole.length - part.length));
});

test("when no window holds it, the answer is the whole file's import, as importAgentFile reads it", async (t) => {
  const file = tempFile(t, "s.jsonl", transcript(60));
  const windows: boolean[] = [];
  const r = await importAgentTail(
    file,
    "claude-code",
    (res, w) => (windows.push(w.whole), w.whole ? res : undefined),
    512,
  );
  assert.deepEqual(windows.at(-1), true);
  assert.ok(windows.slice(0, -1).every((x) => !x) && windows.length > 1);
  assert.deepEqual(r.entries, (await importAgentFile(file, "claude-code")).entries);
  // A file smaller than the first window: the first answer is the whole file's.
  const small = tempFile(t, "small.jsonl", transcript(2));
  const first: boolean[] = [];
  await importAgentTail(small, "claude-code", (res, w) => (first.push(w.whole), res));
  assert.deepEqual(first, [true]);
});

test("a window never starts on tool results: it starts at the first line after them", () => {
  const lines = [
    '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1"}]}}',
    '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1"}]}}',
    '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2"}]}}',
    '{"type":"user","message":{"content":"next"}}',
  ];
  const b = Buffer.from(lines.join("\n") + "\n");
  assert.equal(new TailWindow(b, lines[0]!.length + 1).text(), lines[3] + "\n");
});

test("what is before a window: ids written there at any depth (an id not plain always may be), _dup, pi's branches", () => {
  const before = [
    '{"type":"message","id":"e1","parentId":"e0","message":{"content":[{"type":"toolCall","id":"call-a"}]}}',
    '{"type":"message","id":"e2","parentId":"e1","x":{"toolCallId" : "call-b","deep":{"uuid":"u\\u0031"}}}',
    '{"type":"message","id":"e3","parentId":"e1","note":"renamed call-c_dup2"}',
  ];
  const window = '{"type":"message","id":"e4","parentId":"e3"}\n';
  const b = Buffer.from(before.join("\n") + "\n" + window);
  const w = new TailWindow(b, b.length - window.length);
  assert.equal(w.text(), window);
  for (const id of ["e1", "e2", "call-a", "call-b"]) assert.equal(w.idBefore(id), true, id);
  assert.equal(w.idBefore("e4"), false);
  assert.equal(w.idBefore("call-c"), false, "only as a JSON string: a part of one is not it");
  for (const id of ['a"b', "a/b", "é", ""])
    assert.equal(w.idBefore(id), true, `${id}: not plain, may be escaped`);
  assert.equal(w.dupBefore(), true);
  assert.equal(w.branchesBefore(), true, "e1 has two children");
  const linear = Buffer.from(before.slice(0, 2).join("\n") + "\n" + window);
  assert.equal(new TailWindow(linear, linear.length - window.length).branchesBefore(), false);
});

test("Codex: the calls before a window are counted per scope, and a window's repeated call ids are renamed as the whole import renames them", () => {
  const line = (type: string, payload: Record<string, unknown>) =>
    JSON.stringify({ timestamp: "2026-01-01T00:00:00Z", type, payload });
  const round = (i: number) => [
    line("response_item", {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: `do ${i}` }],
    }),
    line("response_item", { type: "function_call", name: "shell", arguments: "{}", call_id: "call_1" }),
    line("response_item", { type: "function_call_output", call_id: "call_1", output: "ok" }),
    line("response_item", { type: "function_call", name: "shell", arguments: "{}", call_id: "call_2" }),
    line("response_item", { type: "function_call_output", call_id: "call_2", output: "ok" }),
    line("response_item", {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: `done ${i}` }],
    }),
  ];
  const lines = [
    line("session_meta", { id: "s" }),
    ...round(1),
    line("compacted", { message: "summary", replacement_history: [] }),
    ...round(2),
    ...round(3),
    ...round(4),
  ];
  const text = lines.join("\n") + "\n";
  const bytes = Buffer.from(text);
  const cut = text.indexOf(lines[lines.length - 6]!); // round 4 starts the window
  const w = new TailWindow(bytes, cut);
  const prior = codexPriorCalls(bytes, w.start, w.callLinesBefore());
  // Since the compaction: rounds 2 and 3 call each id twice (round 1's calls are in the scope before it).
  assert.deepEqual(
    [...prior.calls],
    [
      ["call_1", 2],
      ["call_2", 2],
    ],
  );
  assert.deepEqual(
    [...prior.renamed],
    [
      ["call_1", 1],
      ["call_2", 1],
    ],
  );
  const ids = (entries: readonly JournalEntry[]) =>
    entries.flatMap((e) =>
      e.kind === "assistant" || e.kind === "tool_result"
        ? (e.payload.content as { id?: string; tool_use_id?: string }[]).flatMap(
            (b) => b.id ?? b.tool_use_id ?? [],
          )
        : [],
    );
  const whole = ids(importCodex(text, "r.jsonl").entries);
  const tail = ids(importCodex(w.text(), "r.jsonl", { prior }).entries);
  assert.deepEqual(tail, ["call_1_dup3", "call_1_dup3", "call_2_dup3", "call_2_dup3"]);
  assert.deepEqual(tail, whole.slice(whole.length - tail.length));
  // Without what is before it, the window would keep the ids as written: the whole import does not.
  assert.notDeepEqual(ids(importCodex(w.text(), "r.jsonl").entries), tail);
});
