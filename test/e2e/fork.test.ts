/**
 * `compact --fork` (write-back for Claude Code): a NEW session file beside the
 * original, the original untouched, the resume command printed; its context,
 * read back, keeps what must survive of the original's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exampleSession } from "../support.js";
import { run, tempDir } from "./helpers.js";

test("compact --fork writes a new Claude Code session beside the original and prints how to resume it", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const orig = join(dir, "orig.jsonl");
  copyFileSync(exampleSession, orig);
  const bytes = readFileSync(orig);
  const r = await run(["compact", orig, "--fork", "--json", "--workspace", dir]);
  assert.equal(r.code, 0, r.stderr);
  const receipt = JSON.parse(r.stdout) as {
    path: string;
    fork: { path: string; session_id: string; resume: string };
  };
  assert.equal(receipt.fork.path, join(dir, `${receipt.fork.session_id}.jsonl`));
  assert.equal(receipt.fork.resume, `claude --resume ${receipt.fork.session_id}`);
  assert.deepEqual(readFileSync(orig), bytes, "the original is never modified");
  assert.deepEqual(readdirSync(dir).sort(), [`${receipt.fork.session_id}.jsonl`, "orig.jsonl"].sort());
  // Every line of the fork carries its new session id; the first two are the boundary and the summary.
  const lines = readFileSync(receipt.fork.path, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.ok(lines.every((l) => l.sessionId === receipt.fork.session_id));
  assert.equal(lines[0]!.subtype, "compact_boundary");
  assert.equal(lines[1]!.isCompactSummary, true);
  for (let i = 2; i < lines.length; i++) assert.equal(lines[i]!.parentUuid, lines[i - 1]!.uuid);
  // Read back as the agent's session, its context keeps what must survive of the original's.
  for (const p of ["anthropic", "openai"] as const) {
    const a = join(dir, `a.${p}.json`);
    const b = join(dir, `b.${p}.json`);
    assert.equal((await run(["export", orig, "--to", p, "--out", a])).code, 0);
    assert.equal((await run(["export", receipt.fork.path, "--to", p, "--out", b])).code, 0);
    const v = await run(["validate", a, b, "--path", receipt.path]);
    assert.equal(v.code, 0, `${p}: ${v.stdout} ${v.stderr}`);
  }
});

test("compact --fork: another agent's session, a journal and an existing --out are clear errors that write nothing", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const orig = join(dir, "orig.jsonl");
  copyFileSync(exampleSession, orig);
  const j = join(dir, "j.jsonl");
  assert.equal((await run(["import", orig, "--out", j])).code, 0);
  const journal = await run(["compact", j, "--fork"]);
  assert.equal(journal.code, 2);
  assert.match(journal.stderr, /--fork writes an agent's own session/);
  const codex = join(dir, "rollout.json");
  writeFileSync(
    codex,
    JSON.stringify([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]),
  );
  const other = await run(["compact", codex, "--fork"]);
  assert.equal(other.code, 2);
  assert.match(other.stderr, /--fork writes agent sessions \(claude-code.*\); this file is openai,/);
  writeFileSync(join(dir, "taken.jsonl"), "x");
  const taken = await run(["compact", orig, "--fork", "--out", join(dir, "taken.jsonl"), "--workspace", dir]);
  assert.equal(taken.code, 2);
  assert.match(taken.stderr, /taken\.jsonl: already exists/);
  assert.equal(readFileSync(join(dir, "taken.jsonl"), "utf8"), "x");
});

test("a session forced to another agent's --format is a clear error that names the format it looks like, and writes nothing", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const orig = join(dir, "orig.jsonl");
  copyFileSync(exampleSession, orig);
  const bytes = readFileSync(orig);
  for (const format of ["codex", "pi", "openai", "anthropic", "journal"]) {
    for (const args of [
      ["compact", orig, "--fork", "--format", format, "--workspace", dir],
      ["compact", orig, "--out", join(dir, "j.jsonl"), "--format", format, "--workspace", dir],
      ["import", orig, "--out", join(dir, "j.jsonl"), "--format", format],
    ]) {
      const r = await run(args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(
        r.stderr,
        /it looks like a claude-code session \(give --format claude-code, or leave the format to be detected\)/,
        args.join(" "),
      );
      assert.equal(r.stderr.trim().split("\n").length, 1, "one line");
    }
  }
  assert.deepEqual(readFileSync(orig), bytes);
  assert.deepEqual(readdirSync(dir), ["orig.jsonl"], "nothing written");
});
