/**
 * `compact --fork` on a pi session (write-back for pi): a NEW pi session file
 * beside the original, named as pi names sessions, the original untouched,
 * `pi --session FILE` printed; read back through the importer, its context
 * keeps what must survive of the original's (`validate` A → B).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { piSessionText, PI_TEST_SESSION_ID } from "../pi-session.js";
import { run, tempDir, assertForkKeepsContract, forkOf } from "./helpers.js";

test("compact --fork writes a new pi session beside the original and prints `pi --session FILE`", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const orig = join(dir, "2026-11-30T10-00-00-000Z_orig.jsonl");
  writeFileSync(orig, piSessionText({ cwd: dir, rounds: 8, compactAfter: 4 }));
  const bytes = readFileSync(orig);
  const receipt = await forkOf(orig, dir);
  assert.notEqual(receipt.fork.session_id, PI_TEST_SESSION_ID);
  assert.match(
    receipt.fork.path,
    new RegExp(
      `^${dir}/\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d-\\d{3}Z_${receipt.fork.session_id}\\.jsonl$`,
    ),
  );
  assert.equal(receipt.fork.resume, `pi --session ${receipt.fork.path}`);
  assert.deepEqual(readFileSync(orig), bytes, "the original is never modified");
  assert.equal(readdirSync(dir).length, 2);
  const header = JSON.parse(readFileSync(receipt.fork.path, "utf8").split("\n")[0]!) as Record<
    string,
    unknown
  >;
  assert.deepEqual(
    [header.type, header.version, header.id, header.cwd, header.parentSession],
    ["session", 3, receipt.fork.session_id, dir, orig],
  );
  // Read back through the pi importer, the fork's context keeps what must survive of the original's.
  await assertForkKeepsContract(dir, orig, receipt.fork.path, receipt.path);
  // The human-readable form prints the same resume line.
  const again = await run(["compact", orig, "--fork", "--workspace", dir]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /resume it with: pi --session \S+\.jsonl\n/);
});

test("a pi session given --format codex is a clear error that writes nothing", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const orig = join(dir, "s.jsonl");
  writeFileSync(orig, piSessionText({ cwd: dir, rounds: 3 }));
  for (const args of [
    ["compact", orig, "--fork", "--format", "codex"],
    ["compact", orig, "--out", join(dir, "j.jsonl"), "--format", "codex"],
  ]) {
    const r = await run(args);
    assert.equal(r.code, 2, r.stdout);
    assert.equal(
      r.stderr,
      `compact-safe: ${orig}: none of its 19 lines reads as codex; it looks like a pi session (give --format pi, or leave the format to be detected)\n`,
    );
    assert.deepEqual(readdirSync(dir), ["s.jsonl"]);
  }
});
