/**
 * The live state around a session, its one home: what it is (`LiveState`), how it is read at
 * compaction time (git branch, worktree root and HEAD, and the background-work handles a host
 * reports, a JSON file for the command line) and how every checkpoint restates it
 * (`renderLiveState`; re-read, never copied from a summary). I/O at the edge; nothing here prints
 * or exits.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { z } from "zod";
import type { BackgroundHandle } from "../summarizers/types.js";
import { JsonDepthError, parseJsonLimited } from "../model/depth.js";
import { CompactSafeError } from "../model/errors.js";

/** The live state restated in every checkpoint (re-read at compaction time, never copied from a summary). */
export interface LiveState {
  /** Current git branch (or `HEAD (detached)`), when the workspace is a git repository. */
  gitBranch?: string;
  /** Worktree root path. */
  worktree?: string;
  /** HEAD commit id. */
  head?: string;
  /** The host's background-work handles. */
  background?: readonly BackgroundHandle[];
}

export function renderLiveState(state: LiveState | undefined): string {
  const lines: string[] = [];
  if (state?.gitBranch !== undefined) lines.push(`- git branch: ${state.gitBranch}`);
  if (state?.worktree !== undefined) lines.push(`- worktree: ${state.worktree}`);
  if (state?.head !== undefined) lines.push(`- HEAD: ${state.head}`);
  if (state?.gitBranch === undefined && state?.worktree === undefined && state?.head === undefined) {
    lines.push("- git: not a git repository (or not read)");
  }
  const bg = state?.background ?? [];
  if (bg.length === 0) lines.push("- background work: none reported by the host");
  for (const h of bg) {
    const parts = [h.kind, h.status].filter((p) => p !== undefined && p !== "").join(", ");
    lines.push(`- background: ${h.id}${parts ? ` (${parts})` : ""}${h.command ? `: ${h.command}` : ""}`);
  }
  return lines.join("\n");
}

/** A background-work file that is not a valid list of handles; the message names the path and JSON path. */
export class BackgroundFileError extends CompactSafeError {
  readonly file: string;
  constructor(file: string, message: string) {
    super("invalid_background", `${file}: ${message}`);
    this.name = "BackgroundFileError";
    this.file = file;
  }
}

function git(workspace: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile("git", ["-C", workspace, ...args], { timeout: 10_000, windowsHide: true }, (err, stdout) => {
      resolve(err ? undefined : stdout.trim());
    });
  });
}

/**
 * The live state of a workspace, re-read now: git branch (or `HEAD (detached)`),
 * worktree root and HEAD when the workspace is a git repository (nothing
 * when it is not, or git is missing), plus the background handles passed in.
 * git runs through `execFile` (no shell).
 */
export async function readLiveState(
  workspace: string,
  background?: readonly BackgroundHandle[],
): Promise<LiveState> {
  const state: LiveState = {};
  const root = await git(workspace, ["rev-parse", "--show-toplevel"]);
  if (root !== undefined && root !== "") {
    state.worktree = root;
    const branch = await git(workspace, ["rev-parse", "--abbrev-ref", "HEAD"]);
    if (branch !== undefined && branch !== "")
      state.gitBranch = branch === "HEAD" ? "HEAD (detached)" : branch;
    const head = await git(workspace, ["rev-parse", "HEAD"]);
    // A repository without commits has no HEAD yet; `rev-parse --abbrev-ref` then fails too.
    if (head !== undefined && /^[0-9a-f]{7,64}$/.test(head)) state.head = head;
    else if (state.gitBranch === undefined) {
      const unborn = await git(workspace, ["symbolic-ref", "--short", "HEAD"]);
      if (unborn) state.gitBranch = `${unborn} (no commits yet)`;
    }
  }
  if (background !== undefined && background.length > 0) state.background = [...background];
  return state;
}

/**
 * The background-file schema, built on first use: zod (about a hundred modules) is loaded only when a
 * background file is read, not by every command that imports the workspace layer for its anchors.
 */
let backgroundSchema: ReturnType<typeof buildBackgroundSchema> | undefined;
function buildBackgroundSchema(zod: typeof z) {
  const handleSchema = zod.object({
    id: zod.string().min(1),
    kind: zod.string().min(1),
    command: zod.string().optional(),
    status: zod.string().optional(),
  });
  return zod.array(handleSchema);
}

function issueText(issue: z.core.$ZodIssue, data: unknown): string {
  const path = issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
  const where = path === "" ? "(root)" : path.replace(/^\./, "");
  if (issue.code === "invalid_type") {
    let parent: unknown = data;
    for (const p of issue.path.slice(0, -1))
      parent = (parent as Record<PropertyKey, unknown> | undefined)?.[p as PropertyKey];
    const last = issue.path[issue.path.length - 1];
    if (
      last !== undefined &&
      parent !== null &&
      typeof parent === "object" &&
      !(last in (parent as object))
    ) {
      const container = issue.path
        .slice(0, -1)
        .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
        .join("")
        .replace(/^\./, "");
      return `${container === "" ? "(root)" : container}: missing ${JSON.stringify(String(last))}`;
    }
    return `${where}: expected ${issue.expected}`;
  }
  return `${where}: ${issue.message}`;
}

/**
 * Reads a JSON list of background-work handles `{ id, kind, command?, status? }`.
 * Errors name the file and the JSON path, e.g. `background.json: [2]: missing "id"`.
 */
export async function readBackgroundFile(file: string): Promise<BackgroundHandle[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new BackgroundFileError(
      file,
      code === "ENOENT" ? "no such file" : `cannot be read (${code ?? (e as Error).message})`,
    );
  }
  let data: unknown;
  try {
    data = parseJsonLimited(text);
  } catch (e) {
    if (e instanceof JsonDepthError)
      throw new BackgroundFileError(
        file,
        `line ${e.line}: JSON nested deeper than ${e.limit} levels (the limit)`,
      );
    throw new BackgroundFileError(file, `not JSON (${(e as Error).message})`);
  }
  backgroundSchema ??= buildBackgroundSchema(
    (createRequire(import.meta.url)("zod") as typeof import("zod")).z,
  );
  const r = backgroundSchema.safeParse(data);
  if (!r.success) {
    const first = r.error.issues[0]!;
    if (first.path.length === 0 && !Array.isArray(data))
      throw new BackgroundFileError(file, "expected a JSON array of { id, kind, command?, status? }");
    throw new BackgroundFileError(file, issueText(first, data));
  }
  return r.data.map((h) => {
    const out: BackgroundHandle = { id: h.id, kind: h.kind };
    if (h.command !== undefined) out.command = h.command;
    if (h.status !== undefined) out.status = h.status;
    return out;
  });
}
