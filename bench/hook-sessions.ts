/**
 * The 5 MB sessions the hook benchmarks run on (`bench:hooks`, `bench:host`):
 * corpus files of one agent end to end, repeated until 5 MB, each ending as
 * that agent's hook finds it after a compaction.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { corpusDir } from "../test/support.js";
import { piSessionText } from "../test/pi-session.js";

export const MIN_BYTES = 5 * 1024 * 1024;

/** Corpus files of one agent, end to end (repeated until MIN_BYTES), then `tail`; written in `dir`. */
function endToEnd(dir: string, name: string, files: string[], tail: string): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < MIN_BYTES; i++) {
    const text = readFileSync(join(corpusDir, files[i % files.length]!), "utf8");
    parts.push(text.endsWith("\n") ? text : `${text}\n`);
    size += Buffer.byteLength(text);
  }
  const file = join(dir, name);
  writeFileSync(file, parts.join("") + tail);
  return file;
}

/**
 * Claude Code: ends with a session whose last round holds an instruction (Claude Code runs its
 * SessionStart hook before it records its compaction, so the hook restates that round).
 */
export function claudeCodeSession(dir: string): string {
  return endToEnd(
    dir,
    "cc.jsonl",
    ["claude-code/entire-cd-95adddad32-0.jsonl", "claude-code/entire-98-78b713483d-0.jsonl"],
    "",
  );
}

/** Codex: ends with a compaction that kept nothing but its summary, as Codex records one. */
export function codexSession(dir: string): string {
  return endToEnd(
    dir,
    "rollout.jsonl",
    [
      "codex/openprintkit-rollout-2025-10-31T19-02-58.jsonl",
      "codex/coda-rollout-2025-10-04T22-31-15.jsonl",
      "codex/moonmind-rollout-2025-11-12T17-48-11.jsonl",
    ],
    JSON.stringify({
      timestamp: "2026-12-01T00:00:00.000Z",
      type: "compacted",
      payload: { message: "summary", replacement_history: [] },
    }) + "\n",
  );
}

/** pi: a generated session of about 5 MB ending with its compaction; returns its path and text. */
export function piSession(dir: string): { file: string; text: string } {
  const file = join(dir, "pi.jsonl");
  const text = piSessionText({ cwd: dir, rounds: 490, resultBytes: 6000, compactAfter: 480 });
  writeFileSync(file, text);
  return { file, text };
}
