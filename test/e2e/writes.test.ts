/**
 * The one rule for every file a command writes, through the built binary: an
 * existing target (a file or a symbolic link, dangling or not) is refused
 * unless --force, the input is never the output (under any name, even with
 * --force), and what is written goes through a temporary file and a rename
 * (a link at the target is replaced, never written through).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  linkSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { exampleSession } from "../support.js";
import { copy, oneLineError, run, tempDir, type RunResult } from "./helpers.js";

function refused(r: RunResult, pattern: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  assert.match(oneLineError(r.stderr), pattern);
}

const IS_INPUT = /is the input/;
const EXISTS = /already exists \(use --force to replace it/;

test("report S --out S is refused, with or without --force, and the session is untouched", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const s = copy(exampleSession, join(dir, "S.jsonl"));
  const before = readFileSync(s);
  refused(await run(["report", s, "--out", s]), IS_INPUT);
  refused(await run(["report", s, "--out", s, "--force"]), IS_INPUT);
  refused(await run(["report", s, "--json", "--out", s, "--force"]), IS_INPUT);
  assert.deepEqual(readFileSync(s), before);
});

test("export J --to journal --out J is refused (also through a symbolic or hard link), and restore still finds the compaction", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const j = join(dir, "J.jsonl");
  assert.equal((await run(["import", exampleSession, "--out", j])).code, 0);
  assert.equal((await run(["compact", j, "--workspace", dir])).code, 0);
  const before = readFileSync(j);
  symlinkSync("J.jsonl", join(dir, "sym.jsonl"));
  linkSync(j, join(dir, "hard.jsonl"));
  for (const out of [j, join(dir, "sym.jsonl"), join(dir, "hard.jsonl"), join(dir, ".", "J.jsonl")])
    for (const force of [[], ["--force"]])
      refused(await run(["export", j, "--to", "journal", "--out", out, ...force]), IS_INPUT);
  assert.deepEqual(readFileSync(j), before);
  assert.ok(lstatSync(join(dir, "sym.jsonl")).isSymbolicLink());
  const r = await run(["restore", j]);
  assert.equal(r.code, 0, r.stderr);
});

test("report FILE twice: the second is refused without --force (the page kept), and replaces it with --force", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const first = await run(["report", exampleSession], { cwd: dir });
  assert.equal(first.code, 0, first.stderr);
  const page = join(dir, "entire-1a-8a83a35a9b-0.report.html");
  writeFileSync(page, "mine");
  refused(await run(["report", exampleSession], { cwd: dir }), EXISTS);
  assert.equal(readFileSync(page, "utf8"), "mine");
  const forced = await run(["report", exampleSession, "--force"], { cwd: dir });
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(readFileSync(page, "utf8"), /^<!doctype html>/i);
  // --json --out follows the same rule.
  refused(await run(["report", exampleSession, "--json", "--out", page]), EXISTS);
});

test("export --out LINK, a dangling symbolic link, is refused; with --force the link is replaced, not written through", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const link = join(dir, "link");
  symlinkSync("nowhere.json", link);
  refused(await run(["export", exampleSession, "--to", "anthropic", "--out", link]), EXISTS);
  assert.equal(readlinkSync(link), "nowhere.json");
  assert.equal(existsSync(join(dir, "nowhere.json")), false);
  // A link to a file elsewhere: refused, then replaced by --force with that file untouched.
  writeFileSync(join(dir, "other.txt"), "keep me");
  symlinkSync("other.txt", join(dir, "to-other"));
  refused(await run(["export", exampleSession, "--to", "openai", "--out", join(dir, "to-other")]), EXISTS);
  const r = await run(["export", exampleSession, "--to", "anthropic", "--out", link, "--force"]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(lstatSync(link).isFile());
  assert.equal(existsSync(join(dir, "nowhere.json")), false);
  assert.ok(Array.isArray((JSON.parse(readFileSync(link, "utf8")) as { messages: unknown[] }).messages));
  const again = await run([
    "export",
    exampleSession,
    "--to",
    "openai",
    "--out",
    join(dir, "to-other"),
    "--force",
  ]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(readFileSync(join(dir, "other.txt"), "utf8"), "keep me");
  assert.deepEqual(
    readdirSync(dir).filter((n) => n.includes(".tmp-")),
    [],
  );
  refused(
    await run(["export", exampleSession, "--to", "openai", "--force"]),
    /--force applies to --out only/,
  );
});

test("import and compact --out: an existing journal or link refused, --force keeps a backup, never over the input", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const s = copy(exampleSession, join(dir, "S.jsonl"));
  const j = join(dir, "J.jsonl");
  assert.equal((await run(["import", s, "--out", j])).code, 0);
  refused(await run(["import", s, "--out", j]), /journal already exists \(use --force/);
  const forced = await run(["import", s, "--out", j, "--force"]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.ok(
    readdirSync(dir).some((n) => n.startsWith("J.jsonl.bak-")),
    "a backup of the replaced journal",
  );
  symlinkSync("gone.jsonl", join(dir, "dangling.jsonl"));
  refused(await run(["import", s, "--out", join(dir, "dangling.jsonl")]), /journal already exists/);
  const before = readFileSync(s);
  refused(await run(["import", s, "--out", s, "--force"]), IS_INPUT);
  refused(await run(["compact", s, "--out", s, "--force", "--workspace", dir]), IS_INPUT);
  const jBefore = readFileSync(j);
  refused(await run(["compact", j, "--out", j, "--force", "--workspace", dir]), IS_INPUT);
  assert.deepEqual(readFileSync(s), before);
  assert.deepEqual(readFileSync(j), jBefore);
});

test("compact --fork --out: an existing file refused, the session itself refused even with --force", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const s = copy(exampleSession, join(dir, "S.jsonl"));
  const before = readFileSync(s);
  writeFileSync(join(dir, "taken.jsonl"), "mine");
  refused(await run(["compact", s, "--fork", "--out", join(dir, "taken.jsonl"), "--workspace", dir]), EXISTS);
  assert.equal(readFileSync(join(dir, "taken.jsonl"), "utf8"), "mine");
  refused(await run(["compact", s, "--fork", "--out", s, "--force", "--workspace", dir]), IS_INPUT);
  assert.deepEqual(readFileSync(s), before);
});
