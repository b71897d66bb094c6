/* eslint-disable no-control-regex -- the tests look for control characters */
/**
 * Everything a command prints is redacted, `--json` included, and shows the
 * control characters of session text instead of sending them to the
 * terminal: a lost last-round user text with planted secrets of every kind.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exampleSession } from "../support.js";
import { leakedFragments, SECRET_SAMPLES } from "../secret-samples.js";
import { run, tempDir } from "./helpers.js";

const HOSTILE = "\u001b]0;pwned\u0007 \u001b[2J abc\u202edcba\u2066x\u2069";

/** A journal of the example session whose last round (a user text with every secret) a compaction then lost. */
async function lossyJournal(dir: string): Promise<string> {
  const j = join(dir, "j.jsonl");
  assert.equal((await run(["import", exampleSession, "--out", j])).code, 0);
  const lines = readFileSync(j, "utf8").trim().split("\n");
  const leaf = (JSON.parse(lines.at(-1)!) as { id: string }).id;
  const text = `Use these:\n${SECRET_SAMPLES.map((s) => s.text).join("\n")}\n${HOSTILE}`;
  const user = {
    id: "secret-round",
    parent_id: leaf,
    kind: "user",
    created_at: "2026-12-01T00:00:00Z",
    payload: { role: "user", content: [{ type: "text", text }] },
  };
  const lossy = {
    id: "lossy",
    parent_id: "secret-round",
    kind: "compaction",
    created_at: "2026-12-01T00:00:01Z",
    payload: {
      summary: "s",
      tokens_before: 1000,
      tokens_after: 10,
      model: "m",
      path: "summary",
      coverage: null,
      trigger: "auto",
      replacement: [{ role: "user", content: [{ type: "text", text: "The user set up the worktree." }] }],
    },
  };
  writeFileSync(j, `${lines.join("\n")}\n${JSON.stringify(user)}\n${JSON.stringify(lossy)}\n`);
  return j;
}

function assertClean(what: string, output: string): void {
  for (const s of SECRET_SAMPLES) assert.deepEqual(leakedFragments(output, s), [], `${what}: ${s.kind}`);
  assert.ok(
    !/[\u001b\u0007\u202a-\u202e\u2066-\u2069]/.test(output),
    `${what}: a control character printed as is`,
  );
}

test("audit --json prints a lost last-round user text redacted (every kind) and inert", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const j = await lossyJournal(dir);
  const json = await run(["audit", j, "--json"]);
  assert.equal(json.code, 1, json.stderr);
  const audit = JSON.parse(json.stdout) as {
    compactions: { id: string; losses: { user_texts: string[] } }[];
  };
  const lost = audit.compactions.find((c) => c.id === "lossy")!;
  assert.ok(
    lost.losses.user_texts.some((t) => t.startsWith("Use these:")),
    json.stdout,
  );
  assert.match(json.stdout, /\[REDACTED:private-key\]/);
  assertClean("audit --json", json.stdout);
  // The bidi controls are JSON escapes, read back as they were.
  assert.ok(json.stdout.includes("\\u202e"), json.stdout);
  const human = await run(["audit", j]);
  assert.equal(human.code, 1);
  assertClean("audit", human.stdout + human.stderr);
});

test("report --json and context --json print the session redacted", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const j = await lossyJournal(dir);
  for (const args of [
    ["report", j, "--json", "--no-preview"],
    ["context", j, "--json"],
    ["context", j],
  ]) {
    const r = await run(args);
    assert.ok(r.code === 0 || r.code === 1, `${args.join(" ")}: ${r.stderr}`);
    assertClean(args.join(" "), r.stdout + r.stderr);
  }
});

test("data is not display: the pinned anchors print as they are, --json too (checkpoints restate them verbatim)", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const anchors = `keep DB_PASSWORD=${["hunter2", "Qx7Zp9Lm4Rt"].join("")} as is`;
  assert.equal((await run(["anchor", "set", anchors, "--workspace", dir])).code, 0);
  const human = await run(["anchor", "show", "--workspace", dir]);
  assert.equal(human.stdout, `${anchors}\n`);
  const json = await run(["anchor", "show", "--json", "--workspace", dir]);
  assert.equal((JSON.parse(json.stdout) as { text: string }).text.trimEnd(), anchors);
});
