/**
 * What a tool result says, as the extractive note quotes it: the first line
 * of an error result, and the outcome of a shell command (`ok`, or
 * `exit N: first line`). Codex wraps shell output as
 * `{"output": ..., "metadata": {"exit_code": N}}` (or writes `Exit code: N`
 * ... `Output:` before it); the line worth quoting is in that output.
 */
import { firstLine } from "../transcript.js";
import { clipWords } from "./whole.js";
import { redactedHead } from "../../redact/redact.js";
import { quoteData } from "./quote.js";

/** An error line is cut to this many characters. */
export const ERROR_LINE_CHARS = 300;
/** How much of an error output is redacted before its first lines are read. */
const ERROR_WINDOW = 1024;
/** Read past ERROR_WINDOW to the end of its line (at most this far) before redacting: a secret there is seen whole. */
const ERROR_MARGIN = 1024;

/** The text an error result reports: the output inside Codex's wrapper, else the content itself. */
export function errorOutput(content: string): string {
  if (content.startsWith('{"output"')) {
    try {
      const o = JSON.parse(content) as { output?: unknown };
      if (typeof o.output === "string") return o.output;
    } catch {
      return content;
    }
  }
  if (content.startsWith("Exit code: ")) {
    const at = content.indexOf("\nOutput:");
    if (at !== -1) return content.slice(content.startsWith("\n", at + 8) ? at + 9 : at + 8);
  }
  return content;
}

/**
 * The first line of an error result (of its output, for Codex's wrapper). A short first line that says little on
 * its own (`Exit code 1`) is followed by the next non-blank line, after ` — `,
 * so the first line itself stays a prefix of what is written. The output's head
 * is redacted before its lines are taken (a PEM header never joins its key's
 * first line).
 */
export function errorLine(raw: string): string {
  const content = redactedHead(errorOutput(raw), ERROR_WINDOW, ERROR_MARGIN);
  const first = firstLine(content);
  if (first === "") return "(empty error result)";
  if (first.length >= 40) return first;
  const at = content.indexOf(first);
  const second = firstLine(content.slice(at + first.length, at + first.length + 4096));
  return second === "" ? first : `${first} — ${second}`;
}

/** The first line of a command's output, redacted and quoted as data. */
function outputLine(out: string): string {
  const line = clipWords(firstLine(redactedHead(out, ERROR_WINDOW, ERROR_MARGIN)), ERROR_LINE_CHARS);
  return line === "" ? "(no output)" : quoteData(line);
}

/**
 * The outcome of a command whose result is not flagged as an error: `ok`, or
 * `exit N: first line` when the output reports a non-zero exit code (Codex
 * writes `{"output": ..., "metadata": {"exit_code": N}}`, or `Exit code: N`
 * followed by `Output:` in newer versions).
 */
export function commandOutcome(content: string): string {
  if (content.startsWith('{"output"')) {
    // Codex wraps outputs as {"output": ..., "metadata": {"exit_code": N, ...}}: read the code from
    // the tail without parsing the whole output, and parse only when the command failed.
    const at = content.lastIndexOf('"exit_code":');
    if (at !== -1 && /^"exit_code":\s*0\b/.test(content.slice(at, at + 20))) return "ok";
    try {
      const o = JSON.parse(content) as { output?: unknown; metadata?: { exit_code?: unknown } };
      const code = o.metadata?.exit_code;
      if (typeof code === "number" && code !== 0) {
        return `exit ${code}: ${outputLine(typeof o.output === "string" ? o.output : "")}`;
      }
    } catch {
      return "ok";
    }
    return "ok";
  }
  const m = /^Exit code: (-?\d+)\b/.exec(content);
  if (m && m[1] !== "0") {
    const at = content.indexOf("\nOutput:");
    const out = at === -1 ? content.slice(m[0].length) : content.slice(at + 8, at + 8 + 4096);
    return `exit ${m[1]}: ${outputLine(out)}`;
  }
  return "ok";
}
