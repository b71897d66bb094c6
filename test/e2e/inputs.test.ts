/**
 * Inputs that are not regular files (a FIFO, a character device, a folder)
 * get a one-line error naming the file and exit 2 at once, from every
 * command that reads a session, a journal or a side file. A FIFO used to
 * hang every command; each run here is killed after a few seconds, so a hang
 * fails the test instead of stalling the suite.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliPath, exampleSession } from "../support.js";
import { oneLineError, run, tempDir } from "./helpers.js";

const small = exampleSession;
/** A hung command (a FIFO read blocks forever) is killed after this: far longer than any loaded machine takes. */
const TIMEOUT_MS = 60_000;

test("a FIFO, a character device or a folder as input: exit 2 at once with one line naming it", async (t) => {
  const { dir, cleanup } = tempDir("cs-inputs-");
  t.after(cleanup);
  const fifo = join(dir, "session.fifo");
  execFileSync("mkfifo", [fifo]);
  const folder = join(dir, "folder.jsonl");
  mkdirSync(folder);
  const j = join(dir, "j.jsonl");
  assert.equal((await run(["import", small, "--out", j])).code, 0);
  const m = join(dir, "messages.json");
  writeFileSync(m, JSON.stringify([{ role: "user", content: [{ type: "text", text: "hi" }] }]));

  const kinds: [string, RegExp][] = [
    [fifo, /is a named pipe \(FIFO\), not a regular file/],
    ["/dev/zero", /is a character device, not a regular file/],
    ["/dev/null", /is a character device, not a regular file/],
    [folder, /is a folder, not a file/],
  ];
  for (const [input, reason] of kinds) {
    const out = join(dir, "out.jsonl");
    const every: string[][] = [
      ["import", input, "--out", out],
      ["import", input, "--out", out, "--format", "claude-code"],
      ["export", input, "--to", "anthropic"],
      ["compact", input, "--out", out],
      ["compact", input, "--in-place"],
      ["compact", input, "--dry-run", "--format", "journal"],
      ["context", input],
      ["context", input, "--format", "journal"],
      ["restore", input],
      ["validate", input, m],
      ["validate", m, input],
      ["validate", "--matrix", input],
      ["validate", m, m, "--anchors-file", input],
      ["compact", j, "--in-place", "--dry-run", "--background", input],
    ];
    // every command for the FIFO (the case that hung); one per reader for the others
    const commands = input === fifo ? every : every.filter((_, i) => [0, 3, 6, 9].includes(i));
    for (const args of commands) {
      const t0 = Date.now();
      const r = await run(args, { timeoutMs: TIMEOUT_MS, cwd: dir });
      const what = `${args.join(" ")} (${Date.now() - t0} ms)`;
      assert.notEqual(r.signal, "SIGKILL", `${what}: hung`);
      assert.equal(r.code, 2, `${what}: ${r.stderr}`);
      const line = oneLineError(r.stderr);
      assert.ok(line.includes(input), `${what}: the error names the file: ${line}`);
      assert.match(line, reason, what);
    }
  }
});

test("import --force over an existing FIFO refuses instead of blocking on its backup", async (t) => {
  const { dir, cleanup } = tempDir("cs-inputs-");
  t.after(cleanup);
  const fifo = join(dir, "out.fifo");
  execFileSync("mkfifo", [fifo]);
  const r = await run(["import", small, "--out", fifo, "--force"], { timeoutMs: TIMEOUT_MS });
  assert.notEqual(r.signal, "SIGKILL", "hung");
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    oneLineError(r.stderr),
    /out\.fifo: is a named pipe \(FIFO\), not a regular file; refusing to write to it/,
  );
});

test("a journal whose first line is longer than 64 KiB is still recognised as a journal (compact --in-place)", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const ms: unknown[] = [{ role: "user", content: "x".repeat(100_000) }];
  for (let k = 0; k < 6; k++) {
    const args = JSON.stringify({ command: `ls ${k}` });
    ms.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id: `c${k}`, type: "function", function: { name: "bash", arguments: args } }],
    });
    ms.push({ role: "tool", tool_call_id: `c${k}`, content: "out ".repeat(3000) });
  }
  ms.push({ role: "user", content: "thanks" });
  writeFileSync(join(dir, "m.json"), JSON.stringify(ms));
  const j = join(dir, "j.jsonl");
  assert.equal((await run(["import", join(dir, "m.json"), "--out", j])).code, 0);
  // Without its header line, the journal's first line is the 100 KB user entry.
  const lines = readFileSync(j, "utf8").split("\n");
  const noHeader = join(dir, "no-header.jsonl");
  writeFileSync(noHeader, lines.slice(1).join("\n"));
  const r = await run(["compact", noHeader, "--in-place", "--json", "--workspace", dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { journal: string }).journal, noHeader);
});

test("import of a journal reads it as the journal reader does: a line of invalid UTF-8 is a broken line, and the imported journal exports the same live context", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const ms = [
    { role: "user", content: "first request" },
    { role: "assistant", content: "first answer" },
    { role: "user", content: "second request" },
    { role: "assistant", content: "second answer" },
  ];
  writeFileSync(join(dir, "m.json"), JSON.stringify(ms));
  const j = join(dir, "j.jsonl");
  assert.equal((await run(["import", join(dir, "m.json"), "--out", j])).code, 0);
  // Line 3 (the first answer) gets a byte that is not UTF-8: its child's parent is then missing.
  const lines = readFileSync(j).toString("latin1").split("\n");
  lines[2] = lines[2]!.replace("first answer", "first \xff answer");
  const src = join(dir, "src.jsonl");
  writeFileSync(src, Buffer.from(lines.join("\n"), "latin1"));
  const imp = await run(["import", src, "--out", join(dir, "copy.jsonl"), "--json"]);
  assert.equal(imp.code, 0, imp.stderr);
  const { report } = JSON.parse(imp.stdout) as { report: { skipped: { line: number; reason: string }[] } };
  assert.deepEqual(
    report.skipped.filter((s) => s.reason.includes("UTF-8")).map((s) => s.line),
    [3],
  );
  const a = await run(["export", src, "--to", "anthropic"]);
  const b = await run(["export", join(dir, "copy.jsonl"), "--to", "anthropic"]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.stdout, a.stdout);
});

test("a reader that closes the pipe early (| head) gets no stack trace; the command ends with its own code", async () => {
  const child = spawn(process.execPath, [cliPath, "context", exampleSession], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdout.destroy(); // the reader is gone before the first line is written
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  assert.doesNotMatch(stderr, /EPIPE| {4}at /);
  assert.equal(code, 0);
});
