/**
 * Secrets near the end of a session: the summary path keeps the newest
 * messages before the protected round verbatim (the recent tail), and they
 * are redacted like everything else `compact` writes. Every output holds
 * none of the planted secrets: the journal's compaction entry, `--out`, and
 * the `--fork` session.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { leakedFragments, SECRET_SAMPLES } from "../secret-samples.js";
import { run, tempDir } from "./helpers.js";

/** A Claude Code session: old reads, then every sample in an assistant text, a call's input and its result; then a last round. */
function sessionWithSecretsNearTheEnd(file: string): void {
  const sid = "11111111-2222-4333-8444-555555555555";
  const lines: object[] = [];
  let parent: string | null = null;
  const line = (type: string, message: object): void => {
    const uuid = `00000000-0000-4000-8000-${String(lines.length + 1).padStart(12, "0")}`;
    const timestamp = new Date(Date.UTC(2026, 0, 1, 0, 0, lines.length)).toISOString();
    lines.push({
      parentUuid: parent,
      isSidechain: false,
      userType: "external",
      cwd: "/w",
      sessionId: sid,
      version: "2.1.33",
      type,
      message,
      uuid,
      timestamp,
    });
    parent = uuid;
  };
  const assistant = (content: object[]): void =>
    line("assistant", { role: "assistant", model: "m", content });
  const result = (id: string, content: string, isError = false): void =>
    line("user", {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: id, content, is_error: isError }],
    });
  line("user", { role: "user", content: "Set up the deploy scripts for the service." });
  for (let i = 0; i < 30; i++) {
    assistant([
      { type: "text", text: `Looking at part ${i}. ${"words ".repeat(200)}` },
      { type: "tool_use", id: `old${i}`, name: "Read", input: { file_path: `/w/f${i}.ts` } },
    ]);
    result(`old${i}`, `content ${i} ${"x".repeat(3000)}`);
  }
  SECRET_SAMPLES.forEach((s, i) => {
    assistant([
      { type: "text", text: `Found this:\n${s.text}` },
      { type: "tool_use", id: `s${i}`, name: "Bash", input: { command: `deploy --key '${s.text}'` } },
    ]);
    result(`s${i}`, `loaded\n${s.text}\nok`, i % 3 === 0);
  });
  line("user", { role: "user", content: "Now run the tests and report." });
  assistant([{ type: "tool_use", id: "p1", name: "Bash", input: { command: "npm test" } }]);
  result("p1", "all passed");
  assistant([{ type: "tool_use", id: "p2", name: "Bash", input: { command: "git status" } }]);
  result("p2", "clean");
  assistant([{ type: "text", text: "Tests pass." }]);
  writeFileSync(file, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
}

function assertNoSecret(what: string, text: string): void {
  const leaked = SECRET_SAMPLES.filter((s) => leakedFragments(text, s).length > 0).map((s) => s.kind);
  assert.deepEqual(leaked, [], `${what}: ${leaked.join(", ")}`);
  // The recent tail is there (the newest planted exchange), redacted.
  assert.ok(text.includes(`s${SECRET_SAMPLES.length - 1}`), `${what}: the recent tail is kept`);
  assert.ok(text.includes("[REDACTED:"), `${what}: redaction markers`);
}

test("compact: secrets in the recent tail reach no output (journal entry, --out, --fork)", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const session = join(dir, "s.jsonl");
  sessionWithSecretsNearTheEnd(session);
  const target = ["--target", "12000", "--workspace", dir];

  const out = join(dir, "out.jsonl");
  const r1 = await run(["compact", session, "--out", out, "--json", ...target]);
  assert.equal(r1.code, 0, r1.stderr);
  assert.equal((JSON.parse(r1.stdout) as { path: string }).path, "summary");
  const entry = readFileSync(out, "utf8").trim().split("\n").at(-1)!;
  assert.match(entry, /"kind":"compaction"/);
  assertNoSecret("--out (the compaction entry)", entry);

  const journal = join(dir, "j.jsonl");
  assert.equal((await run(["import", session, "--out", journal])).code, 0);
  const r2 = await run(["compact", journal, "--json", ...target]);
  assert.equal(r2.code, 0, r2.stderr);
  assertNoSecret("journal in place", readFileSync(journal, "utf8").trim().split("\n").at(-1)!);

  const fork = join(dir, "fork.jsonl");
  const r3 = await run(["compact", session, "--fork", "--out", fork, "--json", ...target]);
  assert.equal(r3.code, 0, r3.stderr);
  assertNoSecret("--fork", readFileSync(fork, "utf8"));
});
