/**
 * `import` of a session that reuses a tool call id: the journal gets unique
 * ids and stderr names FILE:LINE (exit 0); a second result for one call is
 * refused with one line naming FILE:LINE (exit 2) and no journal is written.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { oneLineError, run, tempDir } from "./helpers.js";

const line = (o: unknown) => JSON.stringify(o);
const item = (payload: Record<string, unknown>) => line({ type: "response_item", timestamp: "t", payload });
const head = [
  line({ type: "session_meta", timestamp: "t", payload: { id: "s", timestamp: "t", cwd: "/w" } }),
  item({ type: "message", role: "user", content: [{ type: "input_text", text: "look" }] }),
  item({ type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: "c1" }),
  item({ type: "function_call_output", call_id: "c1", output: "a.txt" }),
];

test("import: a reused call id is renamed with a warning naming FILE:LINE; a second result is refused (exit 2)", async (t) => {
  const { dir, cleanup } = tempDir("cs-toolids-");
  t.after(cleanup);

  const reused = join(dir, "reused.jsonl");
  writeFileSync(
    reused,
    [
      ...head,
      item({ type: "function_call", name: "shell", arguments: '{"command":["ls","-l"]}', call_id: "c1" }),
      item({ type: "function_call_output", call_id: "c1", output: "-rw a.txt" }),
    ].join("\n") + "\n",
  );
  const journal = join(dir, "j.jsonl");
  const ok = await run(["import", reused, "--out", journal]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(
    ok.stderr,
    new RegExp(
      `^compact-safe: warning: ${reused.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:5: tool call id "c1" already used by the call at line 3; renamed "c1_dup2", with the result that answers it$`,
      "m",
    ),
  );
  assert.match(ok.stdout, /warning: line 5: tool call id "c1"/);
  const written = readFileSync(journal, "utf8");
  assert.match(written, /"id":"c1_dup2"/);
  assert.match(written, /"tool_use_id":"c1_dup2"/);

  const twice = join(dir, "twice.jsonl");
  writeFileSync(
    twice,
    [...head, item({ type: "function_call_output", call_id: "c1", output: "again" })].join("\n") + "\n",
  );
  const out = join(dir, "j2.jsonl");
  const refused = await run(["import", twice, "--out", out]);
  assert.equal(refused.code, 2);
  assert.equal(
    oneLineError(refused.stderr),
    `compact-safe: ${twice}:5: duplicate tool result id "c1": the call at line 3 already has its result at line 4; remove one of the two results`,
  );
  assert.equal(existsSync(out), false);
});

test("compact, export and validate of a journal that reuses a call id: read as written on every side (validate exit 0; it refused when it renamed)", async (t) => {
  const { dir, cleanup } = tempDir("cs-toolids-");
  t.after(cleanup);
  const at = "2026-01-01T00:00:00Z";
  const words = (n: number, seed: number) =>
    Array.from({ length: n }, (_, i) => `w${((i + seed) * 7919) % 10007}`).join(" ");
  const entry = (id: string, parent: string, kind: string, payload: unknown) =>
    line({ id, parent_id: parent, kind, created_at: at, payload });
  const call = (id: string, cmd: string) => ({
    role: "assistant",
    content: [{ type: "tool_use", id, name: "bash", input: { cmd } }],
  });
  const result = (id: string, text: string) => ({
    role: "user",
    content: [{ type: "tool_result", tool_use_id: id, content: text }],
  });
  const journal = join(dir, "session.jsonl");
  writeFileSync(
    journal,
    [
      line({
        id: "h",
        parent_id: null,
        kind: "header",
        created_at: at,
        payload: { session_id: "s", created_at: at, schema_version: 2, source_format: "compact-safe" },
      }),
      entry("e1", "h", "user", { role: "user", content: [{ type: "text", text: `first ${words(300, 1)}` }] }),
      entry("e2", "e1", "assistant", call("x", "ls")),
      entry("e3", "e2", "tool_result", result("x", words(3000, 2))),
      entry("e3a", "e3", "assistant", call("p", "pwd")),
      entry("e3b", "e3a", "tool_result", result("p", words(2000, 5))),
      entry("e3c", "e3b", "assistant", call("q", "id")),
      entry("e3d", "e3c", "tool_result", result("q", words(2000, 7))),
      entry("e4", "e3d", "assistant", { role: "assistant", content: [{ type: "text", text: "listed" }] }),
      entry("e5", "e4", "user", { role: "user", content: [{ type: "text", text: "now cat it" }] }),
      entry("e6", "e5", "assistant", call("x", "cat a")),
      entry("e7", "e6", "tool_result", result("x", "contents of a")),
    ].join("\n") + "\n",
  );
  const before = await run(["export", journal, "--to", "anthropic", "--out", join(dir, "before.json")]);
  assert.equal(before.code, 0, before.stderr);
  assert.match(before.stderr, /session\.jsonl:11: tool call id "x" already used by the call at line 3/);
  const comp = await run(["compact", journal, "--json", "--workspace", dir, "--target", "200"], { cwd: dir });
  assert.equal(comp.code, 0, comp.stderr);
  const receipt = JSON.parse(comp.stdout) as { path: string };
  assert.notEqual(receipt.path, "none");
  const after = await run(["export", journal, "--to", "anthropic", "--out", join(dir, "after.json")]);
  assert.equal(after.code, 0, after.stderr);
  // The first `x` was summarized; the one kept is the last round's, under its own id.
  const kept = readFileSync(join(dir, "after.json"), "utf8");
  assert.doesNotMatch(kept, /_dup|"cmd": "ls"/);
  assert.match(kept, /"id": "x"/);
  const v = await run(
    ["validate", join(dir, "before.json"), join(dir, "after.json"), "--path", receipt.path],
    { cwd: dir },
  );
  assert.equal(v.code, 0, v.stderr + v.stdout);
});
