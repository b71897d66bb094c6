/**
 * Fact retention over the summarized span, measured from the definitions and
 * independently of the summarizer's own extraction code.
 *
 * The span is what the note summarized: everything before the verbatim part
 * that ends the replacement after its checkpoint (the protected last round,
 * `protectedRound(original).regionStart`, and the recent tail before it that
 * is kept word for word too).
 * - (a) Modified file paths: from the inputs of modifying tools in the span
 *   (Edit, Write, MultiEdit, NotebookEdit, apply_patch,
 *   str_replace_based_edit_tool / str_replace_editor except `view`, create*,
 *   pi's edit/write): the `file_path` / `path` / `filename` / `notebook_path`
 *   fields, and the file headers of any apply_patch or unified diff found in
 *   a tool input (`*** Add|Update|Delete File:`, `*** Move to:`, `+++ b/`,
 *   `--- a/`), including a patch passed to a shell tool. Found when the
 *   checkpoint text contains the path.
 * - (b) Plain user messages of the span: the first 200 characters of the
 *   user's own words in them (the contract's `ownUserWords`: a text the
 *   harness wrote, such as an environment context, an instructions file, a
 *   system reminder, an interruption marker or a prompt the agent expanded,
 *   is not the user's, and the note leaves it out on purpose), found in the
 *   checkpoint or in a retained user message of the replacement. A message
 *   with no words of the user's counts for nothing.
 * - (c) Error first lines: the first non-empty line of every `is_error`
 *   tool result in the span (of its output, for Codex's
 *   `{"output": ..., "metadata": ...}` wrapper or `Exit code: N ... Output:` form) (results that an importer synthesised to close
 *   an abandoned call are left out), found in the checkpoint; lines are
 *   compared on their first 200 characters. For a call the user rejected,
 *   the first line of the words they gave stands for it (a bare rejection
 *   or interruption counts for nothing).
 * All comparisons collapse runs of whitespace and trim, since a Markdown note
 * may re-flow a quote. On the prune-only path no checkpoint is written and
 * nothing is summarized: the facts are looked up in the whole replacement.
 */
import type { Block, Message } from "../src/model/index.js";
import { isCheckpoint, isPlainUser, ownUserWords } from "../src/contract/classify.js";
import { protectedRound } from "../src/contract/rounds.js";
import { rejectionOf } from "../src/summarizers/extractive/user-text.js";

export interface RetentionFigure {
  total: number;
  found: number;
  /** found / total (1 when total is 0). */
  rate: number;
  missed: string[];
}

export interface Retention {
  span_messages: number;
  paths: RetentionFigure;
  user_messages: RetentionFigure;
  errors: RetentionFigure;
}

const USER_HEAD = 200;
const ERROR_HEAD = 200;

const norm = (s: string): string => s.replace(/\s+/g, " ").trim();

const MODIFYING =
  /^(edit|write|multiedit|multi_edit|notebookedit|notebook_edit|apply_patch|applypatch|str_replace_based_edit_tool|str_replace_editor|create\w*)$/i;
const PATH_KEYS = ["file_path", "path", "filename", "notebook_path"];

function patchHeaders(text: string, out: Set<string>): void {
  for (const line of text.split("\n")) {
    let m = /^\*\*\* (?:Add|Update|Delete) File: (.+)$/.exec(line) ?? /^\*\*\* Move to: (.+)$/.exec(line);
    if (m) {
      out.add(m[1]!.trim());
      continue;
    }
    m = /^(?:\+\+\+|---) (?:[ab]\/)?(\S.*)$/.exec(line);
    if (!m) continue;
    const p = m[1]!.replace(/\t.*$/, "").trim();
    if (p !== "/dev/null" && p !== "" && !/^-+$/.test(p)) out.add(p);
  }
}

/** Keys whose values are file contents, not patches (a diff quoted inside an edited file is not a change to that file). */
const CONTENT_KEYS = new Set([
  "old_string",
  "new_string",
  "content",
  "file_text",
  "new_source",
  "old_str",
  "new_str",
]);

function stringsIn(v: unknown, out: string[]): void {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) stringsIn(x, out);
  else if (v && typeof v === "object")
    for (const [k, x] of Object.entries(v)) if (!CONTENT_KEYS.has(k)) stringsIn(x, out);
}

const looksLikePatch = (s: string): boolean =>
  s.includes("*** Begin Patch") || (/^--- \S/m.test(s) && /^\+\+\+ \S/m.test(s) && /^@@ /m.test(s));

/** Paths that a tool call modifies, from its name and input. */
export function modifiedPaths(name: string, input: unknown): string[] {
  const out = new Set<string>();
  if (MODIFYING.test(name)) {
    const rec =
      input && typeof input === "object" && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
    const command = typeof rec.command === "string" ? rec.command : undefined;
    const viewOnly = /^str_replace/.test(name) && command === "view";
    if (!viewOnly)
      for (const k of PATH_KEYS) if (typeof rec[k] === "string" && rec[k] !== "") out.add(rec[k] as string);
  }
  // apply_patch (as its own tool, or a patch passed to a shell) and unified diffs.
  const strings: string[] = [];
  stringsIn(input, strings);
  for (const s of strings) if (looksLikePatch(s)) patchHeaders(s, out);
  return [...out];
}

function textOfBlocks(blocks: readonly Block[]): string {
  const parts: string[] = [];
  for (const b of blocks) if (b.type === "text") parts.push((b as { text: string }).text);
  return parts.join("\n");
}

function figure(items: readonly string[], isFound: (s: string) => boolean): RetentionFigure {
  const missed: string[] = [];
  for (const it of items) if (!isFound(it)) missed.push(it);
  const total = items.length;
  return {
    total,
    found: total - missed.length,
    rate: total === 0 ? 1 : (total - missed.length) / total,
    missed,
  };
}

/** The output an error result reports (Codex wraps it; see the module comment). Written here from the format, not imported from the summarizer. */
function errorText(content: string): string {
  if (content.startsWith('{"output"')) {
    try {
      const o = JSON.parse(content) as { output?: unknown };
      return typeof o.output === "string" ? o.output : content;
    } catch {
      return content;
    }
  }
  const m = /^Exit code: -?\d+[\s\S]*?\nOutput:\n?/.exec(content);
  return m ? content.slice(m[0].length) : content;
}

/**
 * Where the part of `original` that the replacement keeps word for word after its checkpoint starts
 * (the original's checkpoints in it are folded into the new note, not kept): the original's length when
 * there is no checkpoint.
 */
function verbatimStart(
  original: readonly Message[],
  replacement: readonly Message[],
  checkpoint: Message | null,
): number {
  const at = checkpoint ? replacement.indexOf(checkpoint) : -1;
  if (at < 0) return original.length;
  let kept = replacement.length - at - 1;
  let i = original.length;
  while (i > 0 && kept > 0) {
    i--;
    if (!isCheckpoint(original[i]!)) kept--;
  }
  return i;
}

export function measureRetention(
  original: readonly Message[],
  replacement: readonly Message[],
  checkpoint: Message | null,
): Retention {
  const round = protectedRound(original);
  const span = original.slice(
    0,
    Math.min(round.regionStart, verbatimStart(original, replacement, checkpoint)),
  );
  const paths = new Set<string>();
  const users = new Set<string>();
  const errors = new Set<string>();
  for (const m of span) {
    if (isPlainUser(m)) {
      const head = norm(textOfBlocks(ownUserWords(m))).slice(0, USER_HEAD);
      if (head !== "") users.add(head);
    }
    for (const b of m.content) {
      if (b.type === "tool_use") {
        const t = b as { name: string; input: unknown };
        for (const p of modifiedPaths(t.name, t.input)) paths.add(p);
      } else if (b.type === "tool_result") {
        const r = b as { content: string; is_error?: boolean; synthetic?: boolean };
        if (r.is_error !== true || r.synthetic === true) continue;
        // A rejected or interrupted call is the user's word (quoted among the constraints), not an error line:
        // its reason is looked for instead, and a bare rejection or interruption has nothing to find.
        const said = rejectionOf(r.content);
        if (said !== undefined) {
          if (!said.startsWith("(")) errors.add(norm(said.split("\n")[0]!).slice(0, ERROR_HEAD));
          continue;
        }
        const first = errorText(r.content)
          .split("\n")
          .find((l) => l.trim() !== "");
        if (first !== undefined) errors.add(norm(first).slice(0, ERROR_HEAD));
      }
    }
  }
  const checkpointText = norm(
    checkpoint
      ? textOfBlocks(checkpoint.content)
      : replacement.map((m) => textOfBlocks(m.content) + "\n" + JSON.stringify(m.content)).join("\n"),
  );
  const retainedUsers = replacement
    .filter((m) => m !== checkpoint && m.role === "user")
    .map((m) => norm(textOfBlocks(m.content)));
  return {
    span_messages: span.length,
    paths: figure([...paths], (p) => checkpointText.includes(norm(p))),
    user_messages: figure(
      [...users],
      (u) => checkpointText.includes(u) || retainedUsers.some((r) => r.includes(u)),
    ),
    errors: figure([...errors], (e) => checkpointText.includes(e)),
  };
}
