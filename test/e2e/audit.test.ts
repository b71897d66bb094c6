/** `compact-safe audit`: one line per compaction, a summary line, exit 0/1, --json and stdin. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliPath, exampleSession } from "../support.js";
import { run, tempDir } from "./helpers.js";

test("audit: compact-safe's own compaction of the example keeps the contract (exit 0); --json and stdin agree", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const j = join(dir, "j.jsonl");
  assert.equal((await run(["import", exampleSession, "--out", j])).code, 0);
  const none = await run(["audit", j]);
  assert.equal(none.code, 0);
  assert.match(none.stdout, /no compaction recorded in this session/);
  assert.equal((await run(["compact", j, "--workspace", dir])).code, 0);
  const r = await run(["audit", j]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, /\(compact-safe, summary, \d+ → \d+ messages\): kept the contract/);
  assert.equal(lines[1], "1 of 1 compaction kept the survival contract");
  const json = await run(["audit", j, "--json"]);
  const audit = JSON.parse(json.stdout) as { kept: number; compactions: { kept: boolean; source: string }[] };
  assert.equal(audit.kept, 1);
  assert.equal(audit.compactions[0]!.source, "compact-safe");
  const piped = spawnSync(process.execPath, [cliPath, "audit", "-", "--json"], {
    input: readFileSync(j),
    encoding: "utf8",
  });
  assert.equal(piped.status, 0, piped.stderr);
  assert.deepEqual(JSON.parse(piped.stdout), audit);
});

test("audit: a compaction that lost the protected round exits 1 and names what it lost", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const j = join(dir, "j.jsonl");
  assert.equal((await run(["import", exampleSession, "--out", j])).code, 0);
  const lines = readFileSync(j, "utf8").trim().split("\n");
  const leaf = (JSON.parse(lines.at(-1)!) as { id: string }).id;
  // A compaction that keeps only a summary, as an agent's own compaction may.
  const lossy = {
    id: "lossy",
    parent_id: leaf,
    kind: "compaction",
    created_at: "2026-12-01T00:00:00Z",
    payload: {
      summary: "s",
      tokens_before: 1000,
      tokens_after: 10,
      model: "m",
      path: "summary",
      coverage: null,
      trigger: "auto",
      replacement: [{ role: "user", content: [{ type: "text", text: "Summary of the session so far." }] }],
    },
  };
  writeFileSync(j, `${lines.join("\n")}\n${JSON.stringify(lossy)}\n`);
  const r = await run(["audit", j]);
  assert.equal(r.code, 1, r.stdout);
  assert.match(
    r.stdout,
    /lossy \(compact-safe, summary, \d+ → 1 messages\): VIOLATION: .* \(lost \d+ user texts?, /,
  );
  assert.match(r.stdout, /0 of 1 compaction kept the survival contract/);
});
