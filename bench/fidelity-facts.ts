/**
 * The facts of a history and whether a summary keeps them, for `npm run
 * bench:fidelity` (pure; defined here from the formats, independently of the
 * extractive summarizer's own extraction code).
 *
 * - Files: every path a modifying tool call names (`modifiedPaths`: Edit,
 *   Write, MultiEdit, NotebookEdit, apply_patch, pi's edit/write, patch
 *   headers), kept three ways: by basename (as a whole name), by the path
 *   relative to the session's cwd (as written when no cwd is known), by the
 *   absolute path (the path joined to the cwd).
 * - User directions: every plain user text message (not tool results, not a
 *   checkpoint or branch summary, not an agent's meta message such as an
 *   expanded slash-command prompt or a local-command caveat, not command
 *   output, not the interruption marker), with slash-command wrappers
 *   unwrapped to `/name args` and system reminders removed; kept when its
 *   first 60 normalised characters appear.
 * - Errors: the first non-blank line of every error tool result (Codex's
 *   output wrapper and Claude Code's `<tool_use_error>` tag removed; results
 *   an importer synthesised are left out); kept when its first 200
 *   normalised characters appear. A call the user rejected or interrupted
 *   is not an error of the work: the words they gave with the rejection
 *   count as a user direction, and the agent's boilerplate around them as
 *   nothing.
 * - Commands: every shell command run (Bash/bash/shell/exec_command inputs,
 *   and the commands the user ran with `!`); kept when its first 200
 *   normalised characters appear.
 * - The last instruction: the last user direction, kept when its whole text
 *   appears (whitespace collapsed: a Markdown note may re-flow it).
 * - The next step: the text of a summary's "next step" (see `nextStepText`),
 *   a hit when it names work the session did right after the cut (see
 *   `continuationCues`, `nextStepHit`).
 *
 * "Appears" compares normalised text (`loose`: NFKC, straight quotes,
 * whitespace collapsed, lower case) and needs the match to stand as its own
 * word at both ends, so that "ok" is not found in "look".
 */
import { basename, isAbsolute, join, posix, relative } from "node:path";
import type { Block, Message } from "../src/model/index.js";
import { isCheckpoint, isBranchSummary } from "../src/contract/classify.js";
import { modifiedPaths } from "./retention.js";
import { rejectionOf } from "../src/summarizers/extractive/user-text.js";
import { FOLLOWING_WORK } from "./fidelity-second.js";

export const USER_HEAD = 60;
export const LINE_HEAD = 200;
/** Tool calls after the cut that say what the session continued with. */
export const CONTINUATION_CALLS = 5;
/** A distinctive word has at least this many letters. */
export const MIN_WORD = 6;

/** Whitespace collapsed and trimmed, NFKC, straight quotes (case kept). */
export function norm(s: string): string {
  return s
    .normalize("NFKC")
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201C\u201D]/g, '"')
    .replace(/\s+/g, " ")
    .trim();
}

/** `norm`, lower case. */
export const loose = (s: string): string => norm(s).toLowerCase();

const WORD_CHAR = /[\p{L}\p{N}_]/u;

/**
 * Whether `needle` occurs in `hay` standing on its own: a needle that starts
 * (ends) with a word character must not be preceded (followed) by one; with
 * `cutEnd` (the needle is the head of a longer text) its end may run on.
 * Both are compared as given (callers normalise).
 */
export function appears(needle: string, hay: string, cutEnd = false): boolean {
  if (needle === "") return false;
  const startsWord = WORD_CHAR.test(needle[0]!);
  const endsWord = !cutEnd && WORD_CHAR.test(needle[needle.length - 1]!);
  for (let at = hay.indexOf(needle); at !== -1; at = hay.indexOf(needle, at + 1)) {
    const before = at > 0 ? hay[at - 1]! : "";
    const after = hay[at + needle.length] ?? "";
    if (startsWord && before !== "" && WORD_CHAR.test(before)) continue;
    if (endsWord && after !== "" && WORD_CHAR.test(after)) continue;
    return true;
  }
  return false;
}

// ---------------------------------------------------------------- user directions

/** Texts that are output or markers, not the user's words. */
const NOT_WORDS =
  /^(?:\[Request interrupted by user[^\]]*\]|<(local-command-stdout|local-command-stderr|local-command-caveat|bash-stdout|bash-stderr)>[\s\S]*<\/\1>(?:\s*<(?:bash-stderr|bash-stdout)>[\s\S]*<\/(?:bash-stderr|bash-stdout)>)?)$/;

function tag(text: string, name: string): string | undefined {
  const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(text);
  return m ? m[1]!.trim() : undefined;
}

/**
 * A user text as the user's direction: slash-command wrappers unwrapped to
 * `/name args`, system reminders removed; undefined when it holds no words of
 * the user (command output, a caveat, the interruption marker, a user-run
 * shell command: that one is a command, see `userShellCommand`).
 */
export function userDirection(text: string): string | undefined {
  const t = text.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, "").trim();
  if (t === "" || NOT_WORDS.test(t) || /^<bash-input>[\s\S]*<\/bash-input>$/.test(t)) return undefined;
  const name = tag(t, "command-name");
  if (name !== undefined) {
    const args = tag(t, "command-args") ?? "";
    const slash = name.startsWith("/") ? name : `/${name}`;
    return args === "" ? slash : `${slash} ${args}`;
  }
  return t;
}

/** The command of a shell command the user ran themselves (Claude Code's `!`, pi's bash execution). */
export function userShellCommand(m: Message): string | undefined {
  const bash = m.meta?.bash_execution as { command?: unknown } | undefined;
  if (bash && typeof bash.command === "string") return bash.command;
  for (const b of m.content)
    if (b.type === "text") {
      const t = (b as { text: string }).text.trim();
      const input = /^<bash-input>([\s\S]*)<\/bash-input>$/.exec(t);
      if (input) return input[1]!.trim();
    }
  return undefined;
}

function textsOf(m: Message): string[] {
  return m.content.filter((b) => b.type === "text").map((b) => (b as { text: string }).text);
}

/** The user's directions in a user message, joined, or undefined when it holds none. */
export function directionOf(m: Message): string | undefined {
  if (m.role !== "user" || isCheckpoint(m) || isBranchSummary(m)) return undefined;
  if (m.meta?.is_meta === true || m.meta?.custom_type !== undefined || m.meta?.is_compact_summary === true)
    return undefined;
  if (userShellCommand(m) !== undefined) return undefined;
  const parts = textsOf(m)
    .map(userDirection)
    .filter((s): s is string => s !== undefined);
  return parts.length > 0 ? parts.join("\n") : undefined;
}

// ---------------------------------------------------------------- tools

const SHELL = /^(bash|shell|exec_command|local_shell|run_shell_command|execute_command)$/i;

/** The shell command a tool call runs, or undefined. */
export function shellCommand(name: string, input: unknown): string | undefined {
  if (!SHELL.test(name) || !input || typeof input !== "object" || Array.isArray(input)) return undefined;
  const rec = input as Record<string, unknown>;
  const c = rec.command ?? rec.cmd;
  if (typeof c === "string") return c;
  if (Array.isArray(c) && c.every((x) => typeof x === "string")) {
    // Codex's shell: ["bash", "-lc", "the command"].
    const a = c as string[];
    return a.length === 3 && /(^|\/)(ba|z)?sh$/.test(a[0]!) && a[1] === "-lc" ? a[2] : a.join(" ");
  }
  return undefined;
}

/** An error result's first non-blank line (the wrappers named in the module comment removed). */
export function errorFirstLine(content: string): string | undefined {
  let text = content;
  if (text.startsWith('{"output"')) {
    try {
      const o = JSON.parse(text) as { output?: unknown };
      if (typeof o.output === "string") text = o.output;
    } catch {
      // not the wrapper after all
    }
  }
  const exit = /^Exit code: -?\d+[\s\S]*?\nOutput:\n?/.exec(text);
  if (exit) text = text.slice(exit[0].length);
  text = text.replace(/<\/?tool_use_error>/g, "");
  const line = text.split("\n").find((l) => l.trim() !== "");
  return line === undefined ? undefined : line.trim();
}

// ---------------------------------------------------------------- the facts

export interface FileFact {
  /** As the tool input wrote it. */
  path: string;
  base: string;
  /** Relative to the cwd (as written when there is no cwd, or the path is outside it). */
  rel: string;
  /** Absolute (the cwd joined to a relative path; as written when there is no cwd). */
  abs: string;
}

export function fileFact(path: string, cwd: string | undefined): FileFact {
  const p = path.trim();
  const abs = isAbsolute(p) || cwd === undefined ? p : join(cwd, p);
  let rel = p;
  if (cwd !== undefined && isAbsolute(abs)) {
    const r = relative(cwd, abs);
    if (r !== "" && !r.startsWith("..") && !isAbsolute(r)) rel = r.split("\\").join(posix.sep);
  }
  return { path: p, base: basename(p), rel, abs };
}

export interface HistoryFacts {
  files: FileFact[];
  directions: string[];
  errors: string[];
  commands: string[];
  /** The last user direction, whole (null when there is none). */
  lastInstruction: string | null;
}

function uniquePush(list: string[], seen: Set<string>, key: string, value: string): void {
  if (seen.has(key)) return;
  seen.add(key);
  list.push(value);
}

/** The facts of a history (see the module comment), each once, in order of first occurrence. */
export function historyFacts(messages: readonly Message[], cwd: string | undefined): HistoryFacts {
  const files: FileFact[] = [];
  const directions: string[] = [];
  const errors: string[] = [];
  const commands: string[] = [];
  const seen = {
    files: new Set<string>(),
    dirs: new Set<string>(),
    errs: new Set<string>(),
    cmds: new Set<string>(),
  };
  let lastInstruction: string | null = null;
  for (const m of messages) {
    const direction = directionOf(m);
    if (direction !== undefined) {
      lastInstruction = direction;
      const head = loose(direction).slice(0, USER_HEAD);
      uniquePush(directions, seen.dirs, head, direction);
    }
    const own = m.role === "user" ? userShellCommand(m) : undefined;
    if (own !== undefined && own.trim() !== "") uniquePush(commands, seen.cmds, norm(own), own);
    for (const b of m.content) {
      if (b.type === "tool_use") {
        const t = b as Block & { name: string; input: unknown };
        for (const p of modifiedPaths(t.name, t.input)) {
          const f = fileFact(p, cwd);
          if (!seen.files.has(f.abs)) {
            seen.files.add(f.abs);
            files.push(f);
          }
        }
        const c = shellCommand(t.name, t.input);
        if (c !== undefined && c.trim() !== "") uniquePush(commands, seen.cmds, norm(c), c);
      } else if (b.type === "tool_result") {
        const r = b as Block & { content: string; is_error?: boolean; synthetic?: boolean };
        if (r.is_error !== true || r.synthetic === true) continue;
        const said = rejectionOf(r.content);
        if (said !== undefined) {
          if (!said.startsWith("(")) uniquePush(directions, seen.dirs, loose(said).slice(0, USER_HEAD), said);
          continue;
        }
        const line = errorFirstLine(r.content);
        if (line !== undefined) uniquePush(errors, seen.errs, norm(line), line);
      }
    }
  }
  return { files, directions, errors, commands, lastInstruction };
}

// ---------------------------------------------------------------- what a text keeps

export interface Count {
  kept: number;
  total: number;
}

export interface Kept {
  files_basename: Count;
  files_relative: Count;
  files_absolute: Count;
  directions: Count;
  errors: Count;
  commands: Count;
  /** null when the history has no user direction. */
  last_instruction: boolean | null;
  /** The facts not kept (files by relative path), for the JSON report. */
  missed: { files: string[]; directions: string[]; errors: string[]; commands: string[] };
}

function count<T>(
  items: readonly T[],
  isKept: (x: T) => boolean,
  missed: string[],
  show: (x: T) => string,
): Count {
  let kept = 0;
  for (const x of items)
    if (isKept(x)) kept++;
    else missed.push(show(x));
  return { kept, total: items.length };
}

/** What of `facts` the text `kept` (a summary, or everything a replacement holds) keeps. */
export function keptFacts(facts: HistoryFacts, text: string): Kept {
  const exact = norm(text);
  const lower = exact.toLowerCase();
  const missed: Kept["missed"] = { files: [], directions: [], errors: [], commands: [] };
  /** Whether the first `n` normalised characters of `s` appear in the lower-cased text. */
  const headAppears = (s: string, n: number): boolean => {
    const l = loose(s);
    return appears(l.slice(0, n).trim(), lower, l.length > n);
  };
  return {
    files_basename: count(
      facts.files,
      (f) => appears(norm(f.base), exact),
      [],
      (f) => f.base,
    ),
    files_relative: count(
      facts.files,
      (f) => appears(norm(f.rel), exact),
      missed.files,
      (f) => f.rel,
    ),
    files_absolute: count(
      facts.files,
      (f) => appears(norm(f.abs), exact),
      [],
      (f) => f.abs,
    ),
    directions: count(
      facts.directions,
      (d) => headAppears(d, USER_HEAD),
      missed.directions,
      (d) => d,
    ),
    errors: count(
      facts.errors,
      (e) => headAppears(e, LINE_HEAD),
      missed.errors,
      (e) => e,
    ),
    commands: count(
      facts.commands,
      (c) => headAppears(c, LINE_HEAD),
      missed.commands,
      (c) => c,
    ),
    last_instruction: facts.lastInstruction === null ? null : appears(norm(facts.lastInstruction), exact),
    missed,
  };
}

/** Every text a message array carries: text blocks, tool inputs' strings, tool results. */
export function messagesText(messages: readonly Message[]): string {
  const out: string[] = [];
  for (const m of messages)
    for (const b of m.content) {
      if (b.type === "text") out.push((b as { text: string }).text);
      else if (b.type === "tool_use") stringLeaves((b as { input: unknown }).input, out);
      else if (b.type === "tool_result") out.push(String((b as { content: unknown }).content ?? ""));
    }
  return out.join("\n");
}

function stringLeaves(v: unknown, out: string[]): void {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) stringLeaves(x, out);
  else if (v && typeof v === "object") for (const x of Object.values(v)) stringLeaves(x, out);
}

// ---------------------------------------------------------------- the next step

/**
 * A heading line: its title, the text after it on the same line, and its
 * level (Markdown `#`..`######` are 1 to 6, a numbered `N. Title:` line 7, a
 * whole bold line 8, a bold lead-in `**Title**: text` 9). Undefined for other
 * lines.
 */
export function heading(line: string): { title: string; rest: string; level: number } | undefined {
  const t = line.trim();
  let m = /^(#{1,6})\s+(.+?)\s*#*$/.exec(t);
  if (m) return { title: m[2]!.replace(/\*\*/g, ""), rest: "", level: m[1]!.length };
  m = /^\d+\.\s+([A-Z][^:`]{0,60}):$/.exec(t);
  if (m) return { title: m[1]!, rest: "", level: 7 };
  m = /^(?:\d+\.\s*|[-*]\s+)?\*\*([^*]{1,80})\*\*(.*)$/.exec(t);
  if (!m) return undefined;
  const title = m[1]!.trim().replace(/:$/, "");
  const after = m[2]!.trim();
  if (after === "" || after === ":") return { title, rest: "", level: 8 };
  if (after.startsWith(":")) return { title, rest: after.slice(1).trim(), level: 9 };
  if (m[1]!.trim().endsWith(":")) return { title, rest: after, level: 9 };
  return undefined;
}

/** Lines an agent appends to every summary (Claude Code's resume instructions), not part of its next step. */
const AGENT_BOILERPLATE = [
  /^\s*If you need specific details from before compaction\b/,
  /^\s*Please continue the conversation from where we left it off\b/,
];

/**
 * A summary's next step (an agent's fixed resume instructions left out): the
 * text under its last heading that names the next step ("next step"); failing
 * that, under its last heading naming pending or current work ("pending",
 * "current work"); failing that, its last paragraph. Of such headings the
 * outermost level wins (a note's own `## Next step` over the numbered "Next
 * Step" of an earlier summary it quotes further down). A section runs to the
 * next heading of its level or a higher one.
 */
export function nextStepText(summary: string): string {
  const lines = summary.split("\n").filter((l) => !AGENT_BOILERPLATE.some((re) => re.test(l)));
  const headings: { at: number; title: string; rest: string; level: number }[] = [];
  lines.forEach((l, at) => {
    const h = heading(l);
    if (h) headings.push({ at, ...h });
  });
  const sectionOf = (h: { at: number; rest: string; level: number }): string => {
    const next = headings.find((x) => x.at > h.at && x.level <= h.level);
    return [h.rest, ...lines.slice(h.at + 1, next ? next.at : lines.length)].join("\n").trim();
  };
  for (const re of [/next step/i, /pending|current work/i]) {
    const named = headings.filter((x) => re.test(x.title));
    const outer = Math.min(...named.map((x) => x.level));
    const h = named.filter((x) => x.level === outer).at(-1);
    if (h) return sectionOf(h);
  }
  const paragraphs = lines
    .join("\n")
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p !== "");
  return paragraphs.at(-1) ?? "";
}

/** Words too common to say what work is meant. */
const STOP_WORDS = new Set(
  (
    "about above across actually additional after again against already also although always another " +
    "anything around assistant because before behind being below between beyond better cannot change " +
    "changes changed checking completed complete context continue continued continuing conversation " +
    "could current currently different during either enough especially everything example except " +
    "further having however including inside instead itself latest likely little making maybe might " +
    "myself needed needs neither nothing number others otherwise outside please possible previous " +
    "probably rather really remaining result results return returns second session should similar " +
    "simply since something specific started status steps still summary sure themselves therefore " +
    "things though through together toward towards unless update updated updates user users using " +
    "whatever whether which within without working would yourself verify implement implementation " +
    "correctly properly everywhere ensure anyway " +
    // Words of any code or tool output, not of one piece of work.
    "function return import export default string strings number boolean undefined promise private " +
    "public static struct constructor content length include create creating adding running fixing " +
    "issues format output errors"
  ).split(" "),
);

/** What the session did right after the cut: the first tool calls' paths, commands and distinctive words. */
export interface ContinuationCues {
  calls: number;
  paths: string[];
  commands: string[];
  words: string[];
}

const PATH_KEYS = ["file_path", "path", "filename", "notebook_path"];

/** The cues of the first `limit` tool calls of `after` (the messages after the cut, in order). */
export function continuationCues(after: readonly Message[], limit = CONTINUATION_CALLS): ContinuationCues {
  const paths = new Set<string>();
  const commands = new Set<string>();
  const words = new Set<string>();
  let calls = 0;
  for (const m of after) {
    if (m.role !== "assistant") continue;
    for (const b of m.content) {
      if (b.type !== "tool_use" || calls >= limit) continue;
      calls++;
      const t = b as Block & { name: string; input: unknown };
      const rec =
        t.input && typeof t.input === "object" && !Array.isArray(t.input)
          ? (t.input as Record<string, unknown>)
          : {};
      for (const k of PATH_KEYS) if (typeof rec[k] === "string" && rec[k] !== "") paths.add(rec[k] as string);
      for (const p of modifiedPaths(t.name, t.input)) paths.add(p);
      const c = shellCommand(t.name, t.input);
      if (c !== undefined && c.trim() !== "") commands.add(c);
      const strings: string[] = [];
      stringLeaves(t.input, strings);
      for (const s of strings) for (const w of distinctiveWords(s)) words.add(w);
    }
  }
  return { calls, paths: [...paths], commands: [...commands], words: [...words] };
}

/**
 * The distinctive words of a text: identifier-like runs (letters, digits,
 * `_`) with at least `MIN_WORD` letters, lower case, not stop words, outside
 * paths (a path's folders are not a piece of work; paths count by their
 * basename, see `nextStepHit`).
 */
export function distinctiveWords(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.replace(/[^\s`'"()]*\/[^\s`'"()]*/g, " ").matchAll(/[\p{L}\p{N}_]+/gu)) {
    const w = m[0].toLowerCase();
    if ((w.match(/\p{L}/gu)?.length ?? 0) >= MIN_WORD && !STOP_WORDS.has(w)) out.add(w);
  }
  return [...out];
}

/**
 * Whether a next step names work the session continued with: it mentions a
 * path of the cues (by basename), one of their commands (its first 200
 * normalised characters), or one of their distinctive words. What matched is
 * returned (undefined: no hit).
 */
export function nextStepHit(nextStep: string, cues: ContinuationCues): string | undefined {
  const exact = norm(nextStep);
  const lower = exact.toLowerCase();
  for (const p of cues.paths) if (appears(norm(basename(p)), exact)) return `path ${basename(p)}`;
  for (const c of cues.commands) {
    const l = loose(c);
    if (appears(l.slice(0, LINE_HEAD).trim(), lower, l.length > LINE_HEAD)) return `command ${c}`;
  }
  const own = new Set(distinctiveWords(nextStep));
  for (const w of cues.words) if (own.has(w)) return `word ${w}`;
  return undefined;
}

/**
 * The text of a summary that says what comes next: every section (any
 * level) whose title names a next step, pending or remaining work, current
 * work, a plan or a to-do list (`FOLLOWING_WORK`), joined in order; failing
 * any, `nextStepText`. Both sides are read so (the agent's "Pending Tasks",
 * "Current Work" and "Optional Next Step"; compact-safe's "Next step" and any
 * plan or pending list).
 */
export function followingWorkText(summary: string): string {
  const lines = summary.split("\n").filter((l) => !AGENT_BOILERPLATE.some((re) => re.test(l)));
  const headings: { at: number; title: string; rest: string; level: number }[] = [];
  lines.forEach((l, at) => {
    const h = heading(l);
    if (h) headings.push({ at, ...h });
  });
  const parts: string[] = [];
  let coveredTo = -1;
  for (const h of headings) {
    if (!FOLLOWING_WORK.test(h.title) || h.at <= coveredTo) continue;
    const next = headings.find((x) => x.at > h.at && x.level <= h.level);
    const end = next ? next.at : lines.length;
    parts.push([h.rest, ...lines.slice(h.at + 1, end)].join("\n").trim());
    coveredTo = end - 1;
  }
  return parts.length > 0 ? parts.join("\n") : nextStepText(summary);
}

/**
 * The strict next-step check: the text names a file of the first calls after
 * the cut (by basename) or one of their commands (its first 200 normalised
 * characters, or its first two words when they are a program and an argument,
 * e.g. `npm test`, `go build`). Distinctive words do not count here. What
 * matched is returned (undefined: not named).
 */
export function nextStepNamed(text: string, cues: ContinuationCues): string | undefined {
  const exact = norm(text);
  const lower = exact.toLowerCase();
  for (const p of cues.paths) if (appears(norm(basename(p)), exact)) return `path ${basename(p)}`;
  for (const c of cues.commands) {
    const l = loose(c);
    if (appears(l.slice(0, LINE_HEAD).trim(), lower, l.length > LINE_HEAD)) return `command ${c}`;
    // The command's own program and first argument (after any `cd … &&`), when the argument is a word.
    const own = l.replace(/^cd\s+\S+\s*&&\s*/, "");
    const m = /^([a-z][\w.-]*)\s+([a-z][\w:.-]*)(?=\s|$)/.exec(own);
    if (m && m[2]!.length >= 3 && appears(`${m[1]} ${m[2]}`, lower)) return `command ${m[1]} ${m[2]}`;
  }
  return undefined;
}
