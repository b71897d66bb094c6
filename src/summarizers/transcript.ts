/**
 * Helpers shared by the summarizers: recognising checkpoints and plain user
 * messages, reading shell commands and modified file paths out of tool inputs,
 * and bounding strings. All functions are pure and linear in their input.
 */
import type { ToolUseBlock } from "../model/index.js";
import {
  allText as textOf,
  checkpointMarkerOf,
  isCheckpoint as isCheckpointMessage,
  isPlainUser as isPlainUserMessage,
  ownUserWords,
} from "../contract/classify.js";
import { headWindow, redactedHead, redactedTail, safeHead, safeTail } from "../redact/redact.js";

// Checkpoint and plain-user recognition are contract rules: one implementation, in src/contract.
export { checkpointMarkerOf, isCheckpointMessage, isPlainUserMessage, ownUserWords, textOf };

/** The first non-blank line of a string, trimmed, without scanning past it. */
export function firstLine(s: string): string {
  let start = 0;
  const n = s.length;
  for (;;) {
    while (start < n && (s[start] === " " || s[start] === "\t" || s[start] === "\r")) start++;
    if (start >= n) return "";
    const nl = s.indexOf("\n", start);
    const end = nl === -1 ? n : nl;
    const line = s.slice(start, end).trim();
    if (line !== "") return line;
    if (nl === -1) return "";
    start = nl + 1;
  }
}

/** Cut a string to at most `max` characters (UTF-16 units, never splitting a surrogate pair), adding `…` when cut. */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  if (max <= 1) return max === 1 ? "…" : "";
  let end = max - 1;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return s.slice(0, end) + "…";
}

// Cuts of redacted text: one implementation, in src/redact/redact.ts.
export { redactedHead, redactedTail, safeHead, safeTail };

/** Longest output `oneLine` builds: every caller clips its result far below this. */
const ONE_LINE_MAX = 1024;

/** 1 for the characters JavaScript's `\s` matches (Unicode spaces, line breaks, the BOM), by code unit. */
const SPACE = new Uint8Array(0x10000);
for (const ch of " \t\n\v\f\r\u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") SPACE[ch.charCodeAt(0)] = 1;
for (let c = 0x2000; c <= 0x200a; c++) SPACE[c] = 1;

/**
 * Collapse whitespace runs (including newlines) to one space and trim, building
 * at most `max` characters: `s.replace(/\s+/g, " ").trim()` cut to `max`
 * (never inside a surrogate pair). One pass that copies the text between
 * runs by slices and stops once `max` characters are built, so a long input
 * costs no more than its head (three times faster than the regular
 * expression on the corpus's shell commands, which a note keys by this view).
 */
export function oneLine(s: string, max = ONE_LINE_MAX): string {
  const n = s.length;
  let i = 0;
  while (i < n && SPACE[s.charCodeAt(i)] === 1) i++;
  let out = "";
  let start = i;
  while (i < n) {
    if (SPACE[s.charCodeAt(i)] !== 1) {
      i++;
      if (out.length + (i - start) > max) return safeHead(out + s.slice(start, i), max);
      continue;
    }
    // A single space between words is kept as it is, without a copy.
    if (s.charCodeAt(i) === 32 && i + 1 < n && SPACE[s.charCodeAt(i + 1)] !== 1) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < n && SPACE[s.charCodeAt(j)] === 1) j++;
    out += s.slice(start, i);
    if (j >= n) return safeHead(out, max); // a run at the end is trimmed
    out += " ";
    // Past `max`, the rest cannot change the result (what is built is longer than `max`, so `safeHead` cuts it).
    if (out.length > max) return safeHead(out, max);
    start = i = j;
  }
  return safeHead(out + s.slice(start, n), max);
}

/** Characters of the one-line view read past a cut at first: enough for the word the cut falls in, most times. */
const WORD_ROOM = 64;

/**
 * What to redact of a text shown on one line and cut to `cut` characters:
 * the one-line view on to the end of the word the cut falls in (at most
 * `margin` past it), so that a secret across the cut is seen whole. The view
 * is built WORD_ROOM past the cut, and further only when that word goes on.
 */
export function oneLineWindow(raw: string, cut: number, margin: number): string {
  const room = Math.min(WORD_ROOM, margin);
  const view = oneLine(raw, cut + room);
  // Shorter than asked (a surrogate pair dropped at the end aside): the whole text's view.
  if (view.length < cut + room - 1 || view.indexOf(" ", cut) !== -1)
    return headWindow(view, cut, margin, " ");
  return headWindow(oneLine(raw, cut + margin), cut, margin, " ");
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

/**
 * Tool inputs sometimes arrive as a JSON string (OpenAI `arguments`); parse
 * those that look like an object so the same field rules apply.
 */
export function normalizeInput(input: unknown): unknown {
  if (typeof input === "string") {
    const t = input.trimStart();
    if (t.startsWith("{")) {
      try {
        return JSON.parse(input) as unknown;
      } catch {
        return input;
      }
    }
  }
  return input;
}

/** The shells whose `-c` argv (`["bash", "-lc", "..."]`) is read as the command line it runs. */
const SHELLS = new Set(["bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash"]);

/**
 * The shell command of a tool call, from `command` or `cmd` (a string, or an
 * argv array such as Codex's `["bash", "-lc", "..."]`). Undefined when the call
 * carries no command. An `apply_patch` argv is reported as `apply_patch`.
 */
export function shellCommandOf(tool: ToolUseBlock): string | undefined {
  const input = asRecord(normalizeInput(tool.input));
  if (!input) return undefined;
  const raw = input.command ?? input.cmd;
  if (typeof raw === "string") {
    // str_replace_editor-style tools use `command` for a sub-command (view, create, ...), not a shell line.
    if (typeof input.path === "string" || typeof input.file_path === "string") return undefined;
    return raw.trim() === "" ? undefined : raw;
  }
  if (Array.isArray(raw) && raw.length > 0 && raw.every((x) => typeof x === "string")) {
    const argv = raw as string[];
    if (argv[0] === "apply_patch" || argv[0] === "applypatch") return "apply_patch";
    if (argv.length >= 3 && SHELLS.has(argv[0]) && /^-\w*c$/.test(argv[1])) return argv.slice(2).join(" ");
    return argv.join(" ");
  }
  return undefined;
}

/** Field names whose string value is a file path. */
export const PATH_FIELDS = ["file_path", "path", "filename", "notebook_path"] as const;

const READ_ONLY_WORDS = new Set([
  "read",
  "view",
  "get",
  "list",
  "ls",
  "search",
  "grep",
  "glob",
  "find",
  "cat",
  "fetch",
  "open",
  "show",
  "stat",
  "output",
]);
const MODIFYING_WORDS = new Set([
  "edit",
  "multiedit",
  "write",
  "create",
  "insert",
  "replace",
  "patch",
  "applypatch",
  "notebookedit",
  "delete",
  "remove",
  "rename",
  "move",
  "append",
  "overwrite",
  "save",
]);
/** Sub-commands (`input.command`) of editor tools that only read. */
const READ_ONLY_SUBCOMMANDS = new Set(["view", "read", "show", "undo_edit"]);

/** Split a tool name into lowercase words: `str_replace_based_edit_tool` → str, replace, based, edit, tool; `MultiEdit` → multi, edit. */
/** Tool names repeat across a session: their word splits are computed once each. */
const nameWordsCache = new Map<string, string[]>();

function nameWords(name: string): string[] {
  let words = nameWordsCache.get(name);
  if (!words) {
    words = splitNameWords(name);
    if (nameWordsCache.size < 10_000) nameWordsCache.set(name, words);
  }
  return words;
}

function splitNameWords(name: string): string[] {
  const base = name.replace(/^.*(?:__|\.|:)/, "");
  const words = base
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
  const joined = words.join("");
  if (joined !== "" && !words.includes(joined)) words.push(joined);
  return words;
}

/**
 * Whether a tool call modifies files. The rule (documented in
 * src/summarizers/README.md): the tool's name, split into words (namespace prefixes
 * such as `mcp__server__` dropped), contains a modifying word (edit, write,
 * create, insert, replace, patch, delete, rename, move, ...) and no read-only
 * word (read, view, list, grep, ...); and for editor tools that take a
 * sub-command in `input.command`, the sub-command is not a read (`view`).
 */
export function isModifyingTool(tool: ToolUseBlock): boolean {
  const words = nameWords(tool.name ?? "");
  if (words.some((w) => READ_ONLY_WORDS.has(w))) return false;
  if (!words.some((w) => MODIFYING_WORDS.has(w))) return false;
  const input = asRecord(normalizeInput(tool.input));
  const sub = input?.command;
  if (typeof sub === "string" && READ_ONLY_SUBCOMMANDS.has(sub.trim().toLowerCase())) return false;
  return true;
}

/**
 * `*** Update File: x` / `*** Add File:` / `*** Delete File:` / `*** Move to:`
 * (apply_patch), `+++ b/x` (git diff), and `+++ x` right after a `--- ` line
 * (plain unified diff).
 */
const PATCH_PREFIXES = [
  "*** Update File: ",
  "*** Add File: ",
  "*** Delete File: ",
  "*** Move to: ",
  "+++ b/",
];

/**
 * File paths named by apply_patch headers (`*** Update File: x`, `*** Add File:`,
 * `*** Delete File:`, `*** Move to:`) and unified-diff headers (`+++ b/x`, or
 * `+++ x` right after a `--- ` line). Linear in the input: the search jumps
 * from one `*** ` or `+++ ` to the next (a patch's many added lines, which
 * open with `+`, are not read one by one), and only those at a line's start
 * are headers.
 */
export function patchPaths(s: string): string[] {
  const out: string[] = [];
  let stars = s.indexOf("*** ");
  let pluses = s.indexOf("+++ ");
  while (stars !== -1 || pluses !== -1) {
    const star = pluses === -1 || (stars !== -1 && stars < pluses);
    const at = star ? stars : pluses;
    if (star) stars = s.indexOf("*** ", at + 1);
    else pluses = s.indexOf("+++ ", at + 1);
    if (at > 0 && s.charCodeAt(at - 1) !== 0x0a /* \n */) continue;
    let end = s.indexOf("\n", at);
    if (end === -1) end = s.length;
    const prefix = PATCH_PREFIXES.find((x) => s.startsWith(x, at));
    let p: string | undefined;
    if (prefix) p = s.slice(at + prefix.length, end);
    else if (!star && at > 0 && s.startsWith("--- ", s.lastIndexOf("\n", at - 2) + 1))
      p = s.slice(at + 4, end);
    if (p === undefined) continue;
    // `+++ b/x\t2024-01-01 ...` (diff -u timestamps)
    const tab = p.indexOf("\t");
    if (tab !== -1) p = p.slice(0, tab);
    p = p.trim();
    if (p !== "" && p !== "/dev/null") out.push(p);
  }
  return out;
}

/** The strings of a tool input that may carry a patch (the input itself, its string fields and string arrays). */
function patchCarriers(input: unknown): string[] {
  if (typeof input === "string") return [input];
  const rec = asRecord(input);
  if (!rec) return [];
  const out: string[] = [];
  for (const v of Object.values(rec)) {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) for (const x of v) if (typeof x === "string") out.push(x);
  }
  return out;
}

/**
 * Paths that a tool call modifies: the path fields of a modifying tool
 * (`file_path`, `path`, `filename`, `notebook_path`, also inside an `edits`
 * array), plus the headers of any apply_patch or unified-diff text in its
 * input (an apply_patch argv or heredoc counts, whatever the tool's name).
 */
export function modifiedPathsOf(tool: ToolUseBlock): string[] {
  const input = normalizeInput(tool.input);
  const out: string[] = [];
  if (isModifyingTool(tool)) {
    const rec = asRecord(input);
    if (rec) {
      for (const f of PATH_FIELDS) {
        const v = rec[f];
        if (typeof v === "string" && v.trim() !== "") out.push(v.trim());
      }
      for (const key of ["edits", "files", "changes"]) {
        const arr = rec[key];
        if (Array.isArray(arr)) {
          for (const e of arr) {
            const er = asRecord(e);
            if (!er) continue;
            for (const f of PATH_FIELDS) {
              const v = er[f];
              if (typeof v === "string" && v.trim() !== "") out.push(v.trim());
            }
          }
        }
      }
    }
  }
  for (const s of patchCarriers(input)) {
    for (const p of patchPaths(s)) out.push(p);
  }
  return out;
}
