/**
 * `compact --fork` (write-back for Claude Code): a NEW session file beside the
 * original, the original untouched, the resume command printed; its context,
 * read back, keeps what must survive of the original's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, copyFileSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exampleSession } from "../support.js";
import { run, tempDir } from "./helpers.js";
import { openaiReply, startFakeProvider } from "../../src/summarizers/testing/index.js";

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

/** The example session's lines, without the empty string after the final newline. */
function exampleLines(): string[] {
  return readFileSync(exampleSession, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
}

test("compact --fork refuses a session whose last line is cut off (the agent still writing it): one line naming it, nothing written", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const lines = exampleLines();
  const cut = join(dir, "cut.jsonl");
  writeFileSync(cut, lines.join("\n") + "\n" + lines.at(-1)!.slice(0, 200));
  const bytes = readFileSync(cut);
  const r = await run(["compact", cut, "--fork", "--workspace", dir]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(
      `cut\\.jsonl:${lines.length + 1}: truncated last line .*a fork would lose that line, so nothing was written`,
    ),
  );
  assert.equal(r.stderr.trim().split("\n").length, 1);
  assert.deepEqual(readFileSync(cut), bytes);
  assert.deepEqual(readdirSync(dir), ["cut.jsonl"]);
});

test("compact --fork keeps a last tool call still in flight: the fork ends with that call, unanswered, as the original does", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const lines = exampleLines();
  const calls = lines.map((l) => JSON.parse(l) as { type?: string; message?: { content?: unknown } });
  const last = calls.findLastIndex(
    (o) =>
      o.type === "assistant" &&
      Array.isArray(o.message?.content) &&
      (o.message.content as Array<{ type?: string }>).some((b) => b.type === "tool_use"),
  );
  const file = join(dir, "inflight.jsonl");
  writeFileSync(file, lines.slice(0, last + 1).join("\n") + "\n");
  const r = await run(["compact", file, "--fork", "--json", "--target", "2000", "--workspace", dir]);
  assert.equal(r.code, 0, r.stderr);
  const receipt = JSON.parse(r.stdout) as { fork: { path: string } };
  const forkLast = JSON.parse(readFileSync(receipt.fork.path, "utf8").trim().split("\n").at(-1)!) as {
    message: { content: Array<{ type: string; id?: string }> };
  };
  const original = calls[last]!.message!.content as Array<{ type: string; id?: string }>;
  assert.deepEqual(
    forkLast.message.content.filter((b) => b.type === "tool_use").map((b) => b.id),
    original.filter((b) => b.type === "tool_use").map((b) => b.id),
  );
});

test("compact --fork refuses when the session grows while it is compacted (the agent appending): nothing written, the original as the agent left it", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const orig = join(dir, "orig.jsonl");
  copyFileSync(exampleSession, orig);
  const appended = JSON.stringify({
    type: "queue-operation",
    operation: "enqueue",
    timestamp: "2026-12-01T00:00:00Z",
  });
  // The summarizer's request arrives while compact-safe is at work: the agent appends a line then.
  const provider = await startFakeProvider(() => {
    appendFileSync(orig, appended + "\n");
    return openaiReply.text("## Objective\nFix the git status breakage.\n\n## Next step\nDocument it.");
  });
  t.after(() => provider.close());
  const before = readFileSync(orig, "utf8");
  const r = await run(
    [
      "compact",
      orig,
      "--fork",
      "--summarizer",
      "openai",
      "--model",
      "fake",
      "--base-url",
      provider.openaiBaseURL,
      "--target",
      "2000",
      "--workspace",
      dir,
    ],
    { env: { OPENAI_API_KEY: "sk-test" } },
  );
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /orig\.jsonl: the session changed while it was compacted \(is the agent still writing it\?\); nothing written/,
  );
  assert.ok(provider.requestCount >= 1);
  assert.equal(readFileSync(orig, "utf8"), before + appended + "\n", "only the agent's line was added");
  assert.deepEqual(readdirSync(dir), ["orig.jsonl"]);
});
