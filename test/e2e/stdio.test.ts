/**
 * Standard input and output, through the built binary: `-` as the input of
 * every command that reads a session (read as a file's content is, named
 * `(stdin)` in messages), and `--out -` where a command writes one.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliPath, exampleSession, repoRoot } from "../support.js";
import { oneLineError, run, tempDir, type RunResult } from "./helpers.js";

/** Runs `compact-safe ARGS` with `input` on its standard input. */
function piped(args: readonly string[], input: string | Buffer, cwd?: string): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const session = readFileSync(exampleSession);

async function journalOf(dir: string): Promise<string> {
  const j = join(dir, "j.jsonl");
  const r = await run(["import", exampleSession, "--out", j]);
  assert.equal(r.code, 0, r.stderr);
  return j;
}

test("context - and export -: a session and a journal from standard input read as the files do", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const j = await journalOf(dir);
  for (const [file, bytes] of [
    [exampleSession, session],
    [j, readFileSync(j)],
  ] as const) {
    const a = JSON.parse((await run(["context", file, "--json"])).stdout) as Record<string, unknown>;
    const r = await piped(["context", "-", "--json"], bytes);
    assert.equal(r.code, 0, r.stderr);
    const b = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.equal(b.file, "(stdin)");
    assert.deepEqual({ ...b, file: a.file }, a);
    const e1 = await run(["export", file, "--to", "openai"]);
    const e2 = await piped(["export", "-", "--to", "openai", "--out", "-"], bytes);
    assert.equal(e2.code, 0, e2.stderr);
    assert.equal(e2.stdout, e1.stdout);
  }
});

test("report -: needs --out; --out - writes the page (or --json the model) to standard output", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const none = await piped(["report", "-"], session, dir);
  assert.equal(none.code, 2);
  assert.match(oneLineError(none.stderr), /^compact-safe: \(stdin\): a report of standard input needs --out/);
  const page = join(dir, "p.html");
  const r = await piped(["report", "-", "--out", page], session, dir);
  assert.equal(r.code, 0, r.stderr);
  assert.match(readFileSync(page, "utf8"), /^<!doctype html>/i);
  const html = await run(["report", exampleSession, "--out", "-"], { cwd: dir });
  assert.equal(html.code, 0, html.stderr);
  assert.match(html.stdout, /^<!doctype html>/i);
  assert.match(html.stderr, /report written to standard output/);
  const json = await piped(["report", "-", "--json", "--out", "-"], session, dir);
  assert.equal(json.code, 0, json.stderr);
  assert.equal((JSON.parse(json.stdout) as { source: { file: string } }).source.file, "(stdin)");
  assert.deepEqual(readdirSync(dir), ["p.html"]);
});

test("import - and import --out -: the journal written from standard input, or to standard output (report on stderr)", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const j = join(dir, "j.jsonl");
  const r = await piped(["import", "-", "--out", j], session);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^\(stdin\) \(claude-code\)/);
  const toOut = await run(["import", exampleSession, "--out", "-"]);
  assert.equal(toOut.code, 0, toOut.stderr);
  const lines = toOut.stdout.trim().split("\n");
  assert.equal(lines.length, readFileSync(j, "utf8").trim().split("\n").length);
  assert.equal((JSON.parse(lines[0]!) as { kind: string }).kind, "header");
  assert.match(toOut.stderr, /journal written: \(stdout\)/);
  const both = await run(["import", exampleSession, "--out", "-", "--json"]);
  assert.equal(both.code, 2);
  assert.match(oneLineError(both.stderr), /--json cannot go there too/);
});

test("compact -: --out needed (not --in-place, not --fork); --out - writes the compacted journal to standard output", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const j = await journalOf(dir);
  const jBytes = readFileSync(j);
  for (const args of [
    ["compact", "-"],
    ["compact", "-", "--in-place"],
    ["compact", "-", "--fork"],
  ]) {
    const r = await piped([...args, "--workspace", dir], jBytes);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(oneLineError(r.stderr), /^compact-safe: \(stdin\): .*--out/);
  }
  const out = join(dir, "c.jsonl");
  const r = await piped(["compact", "-", "--out", out, "--workspace", dir], jBytes);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /compacted \(stdin\)/);
  assert.equal(readFileSync(out, "utf8").trim().split("\n").at(-1)!.includes('"kind":"compaction"'), true);
  const toOut = await run(["compact", j, "--out", "-", "--workspace", dir]);
  assert.equal(toOut.code, 0, toOut.stderr);
  assert.match(toOut.stderr, /compacted /);
  const last = JSON.parse(toOut.stdout.trim().split("\n").at(-1)!) as { kind: string };
  assert.equal(last.kind, "compaction");
  assert.deepEqual(readFileSync(j), jBytes, "the journal itself is untouched");
});

test("validate - REPLACEMENT, audit -, and the errors: named (stdin); restore - refused", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const msgs = [
    { role: "user", content: [{ type: "text", text: "Fix the tests." }] },
    { role: "assistant", content: [{ type: "text", text: "Done." }] },
  ];
  const file = join(dir, "m.json");
  writeFileSync(file, JSON.stringify(msgs));
  const v = await piped(["validate", "-", file, "--path", "prune-only", "--json"], JSON.stringify(msgs));
  assert.equal(v.code, 0, v.stderr);
  assert.equal((JSON.parse(v.stdout) as { valid: boolean }).valid, true);
  const twice = await piped(["validate", "-", "-"], "[]");
  assert.equal(twice.code, 2);
  const a = await piped(["audit", "-"], session);
  assert.equal(a.code, 0, a.stderr);
  for (const cmd of [
    ["context", "-"],
    ["export", "-", "--to", "openai"],
    ["audit", "-"],
    ["import", "-", "--out", join(dir, "x.jsonl")],
  ]) {
    const r = await piped(cmd, "[");
    assert.equal(r.code, 2, cmd.join(" "));
    assert.match(oneLineError(r.stderr), /^compact-safe: \(stdin\)/, cmd.join(" "));
  }
  const bad = await piped(["validate", "-", file], "[");
  assert.match(oneLineError(bad.stderr), /^compact-safe: \(stdin\):1: truncated JSON/);
  const restore = await piped(["restore", "-"], "");
  assert.equal(restore.code, 2);
  assert.match(oneLineError(restore.stderr), /^compact-safe: \(stdin\): restore appends to a journal file/);
});

test("validate --matrix -: the fixture matrix from standard input; a broken one named (stdin)", async () => {
  const matrix = readFileSync(join(repoRoot, "contract", "fixtures", "matrix.json"));
  const r = await piped(["validate", "--matrix", "-"], matrix);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^ok \d+ survival-contract fixtures$/m);
  const bad = await piped(["validate", "--matrix", "-"], "{");
  assert.equal(bad.code, 2);
  assert.match(oneLineError(bad.stderr), /^compact-safe: \(stdin\): not JSON/);
});
