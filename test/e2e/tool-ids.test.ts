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
