/**
 * Check outcomes as the note reports them, against what the check printed:
 * a check (tests, build, lint: by the program it runs) that the note's
 * "Commands run" lists as `→ ok` while the output of its latest run says it
 * failed is a wrong outcome (a pipe hid the exit status: `go test ./... |
 * tail` exits 0 when tests fail). What the output says is read here with
 * the bench's own patterns, not the engine's recogniser, so the engine is
 * not graded by itself.
 */
import type { Message } from "../src/model/index.js";
import { isToolResult, isToolUse } from "../src/model/blocks.js";
import { shellCommandOf, oneLine } from "../src/summarizers/transcript.js";
import { checkOf } from "../src/summarizers/extractive/checks.js";
import { splitSections } from "../src/summarizers/extractive/index.js";

/** A line of a check's output that says it failed (a count of zero is no failure). */
const SAYS_FAILED =
  /^\s*(?:--- FAIL\b|FAIL\b|FAILED\b|ERROR\b|error(?:\[\w+\])?:|panic:|Traceback \(most recent call last\)|npm ERR!|npm error\b|not ok \d)|\b[1-9]\d* (?:failed|failing|errors?)\b|#\s*fail\s+[1-9]|error TS\d+|Error [1-9]\d*$/m;

export interface CheckOutcomes {
  /** Checks the note's "Commands run" lists whose latest run's output says they failed. */
  failed_listed: number;
  /** Of those, the ones the note reports `→ ok` (the command as listed). */
  reported_ok: string[];
}

/** The checks of `before` whose latest run's output says they failed, and how the note lists them. */
export function checkOutcomes(before: readonly Message[], note: string): CheckOutcomes {
  const latest = new Map<string, { output: string; error: boolean }>();
  const calls = new Map<string, string>();
  for (const m of before)
    for (const b of m.content) {
      if (isToolUse(b)) {
        const cmd = shellCommandOf(b);
        if (cmd !== undefined && checkOf(cmd) !== undefined) calls.set(b.id, cmd);
      } else if (isToolResult(b)) {
        const cmd = calls.get(b.tool_use_id);
        if (cmd !== undefined)
          latest.set(oneLine(cmd).trim(), { output: String(b.content ?? ""), error: b.is_error === true });
      }
    }
  const listed = (splitSections(note).sections.get("Commands run") ?? "").split("\n");
  const out: CheckOutcomes = { failed_listed: 0, reported_ok: [] };
  for (const [cmd, run] of latest) {
    if (run.error || !SAYS_FAILED.test(run.output)) continue;
    // The note writes a command on one line, cut to its width at a word end (with `…`), then its count and outcome.
    const line = listed.find((l) => {
      const m = /^- \$ (.*?)(?: \(×\d+\))? → /.exec(l);
      if (m === null) return false;
      const shown = m[1]!;
      return shown === cmd || (shown.endsWith("…") && cmd.startsWith(shown.slice(0, -1).trimEnd()));
    });
    if (line === undefined) continue;
    out.failed_listed++;
    if (/→ ok$/.test(line)) out.reported_ok.push(cmd.slice(0, 120));
  }
  return out;
}
