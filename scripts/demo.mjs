#!/usr/bin/env node
// The quick-start demo (`npm run demo`, after the build): a real Claude Code
// session from examples/ is imported into a temporary journal, inspected,
// compacted with the embedded extractive summarizer (offline) to about 30 %
// of its live size, inspected and audited, restored; then a copy is compacted
// into a new Claude Code session (write-back). examples/ is never modified.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "dist", "src", "cli", "main.js");
const session = join(root, "examples", "entire-1a-8a83a35a9b-0.jsonl");
const work = mkdtempSync(join(tmpdir(), "compact-safe-demo-"));
const journal = join(work, "session.journal.jsonl");

function cs(args, { capture = false } = {}) {
  const shown = args.map((a) =>
    a.startsWith(work) ? `$TMP${a.slice(work.length)}` : a.startsWith(root) ? relative(root, a) : a,
  );
  if (!capture) console.log(`\n$ compact-safe ${shown.join(" ")}`);
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", cwd: work });
  if (r.status !== 0) {
    process.stderr.write(r.stderr);
    console.error(`demo: compact-safe ${args[0]} exited ${r.status}`);
    rmSync(work, { recursive: true, force: true });
    process.exit(r.status ?? 1);
  }
  if (!capture) process.stdout.write(r.stdout);
  return r.stdout;
}

console.log("compact-safe demo: a real Claude Code session (examples/README.md), compacted offline.");
console.log(`(temporary folder $TMP = ${work})`);
cs(["import", session, "--out", journal]);
cs(["context", journal, "--window", "200000"]);
const live = JSON.parse(cs(["context", journal, "--json"], { capture: true })).estimated_tokens;
const target = Math.floor(live * 0.3);
cs(["compact", journal, "--in-place", "--target", String(target), "--workspace", work, "--json"]);
cs(["context", journal, "--window", "200000"]);
cs(["audit", journal]);
cs(["restore", journal]);
cs(["context", journal, "--window", "200000"]);
// Write-back: the same session compacted into a NEW Claude Code session that `claude --resume` loads.
const copy = join(work, "claude-session.jsonl");
copyFileSync(session, copy);
cs(["compact", copy, "--fork", "--workspace", work]);
rmSync(work, { recursive: true, force: true });
console.log(
  "\nDone: the journal kept every original entry; the compaction was appended, `audit` checked it, and `restore` moved the leaf back.",
);
console.log("The fork is a new Claude Code session beside the original; the original was not modified.");
