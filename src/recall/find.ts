/**
 * Which session file the recall server reads: the one named; the newest
 * session journal of the guard's state folder (a `.jsonl` file whose first
 * line is a journal's header: never its sessions index or any
 * other file put there); or, by default, the newest session an
 * agent (Claude Code, Codex, pi) recorded for the project folder. Found again
 * on every question, so that a session started after the server is found.
 */
import { open, readdir, realpath, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export type HistorySource =
  | { kind: "file"; file: string }
  | { kind: "state"; dir: string }
  | { kind: "project"; dir: string; env: NodeJS.ProcessEnv; home: string };

/** A session file found, or why none was. */
export type Found = { file: string } | { missing: string };

/** How many Codex rollouts (newest first by name) are opened to find the project's. */
const CODEX_SCAN = 200;

const nonEmpty = (s: string | undefined) => (s !== undefined && s !== "" ? s : undefined);

async function mtimeOf(file: string): Promise<number | undefined> {
  try {
    const st = await stat(file);
    return st.isFile() ? st.mtimeMs : undefined;
  } catch {
    return undefined;
  }
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

/** The newest `*.jsonl` file of a folder, with its time. */
async function newestIn(dir: string): Promise<{ file: string; mtime: number } | undefined> {
  let best: { file: string; mtime: number } | undefined;
  for (const name of await listDir(dir)) {
    if (!name.endsWith(".jsonl")) continue;
    const file = join(dir, name);
    const mtime = await mtimeOf(file);
    if (mtime !== undefined && (best === undefined || mtime > best.mtime)) best = { file, mtime };
  }
  return best;
}

/** Whether a file is a session journal: its first line is a journal's header entry. */
async function isJournal(file: string): Promise<boolean> {
  try {
    const o = JSON.parse(await firstLine(file)) as {
      kind?: unknown;
      parent_id?: unknown;
      payload?: { session_id?: unknown };
    };
    return o.kind === "header" && o.parent_id === null && typeof o.payload?.session_id === "string";
  } catch {
    return false;
  }
}

/** The newest session journal of a folder (other `.jsonl` files are passed over), with its time. */
async function newestJournalIn(dir: string): Promise<{ file: string; mtime: number } | undefined> {
  const found: { file: string; mtime: number }[] = [];
  for (const name of await listDir(dir)) {
    if (!name.endsWith(".jsonl")) continue;
    const file = join(dir, name);
    const mtime = await mtimeOf(file);
    if (mtime !== undefined) found.push({ file, mtime });
  }
  found.sort((a, b) => b.mtime - a.mtime);
  for (const f of found) if (await isJournal(f.file)) return f;
  return undefined;
}

/** Claude Code's folder for a project: the path with every character but letters and digits as `-`. */
export const claudeProjectFolder = (dir: string) => dir.replace(/[^A-Za-z0-9]/g, "-");
/** pi's folder for a project: `--path-with-dashes--`. */
export const piProjectFolder = (dir: string) => `--${dir.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;

/** The first line of a file (at most 64 KiB of it). */
async function firstLine(file: string): Promise<string> {
  const fh = await open(file, "r");
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const text = buf.subarray(0, bytesRead).toString("utf8");
    const nl = text.indexOf("\n");
    return nl >= 0 ? text.slice(0, nl) : text;
  } catch {
    return "";
  } finally {
    await fh.close();
  }
}

async function codexRolloutCwd(file: string): Promise<string | undefined> {
  try {
    const o = JSON.parse(await firstLine(file)) as { payload?: { cwd?: unknown }; cwd?: unknown };
    const cwd = o.payload?.cwd ?? o.cwd;
    return typeof cwd === "string" ? cwd : undefined;
  } catch {
    return undefined;
  }
}

/** The newest Codex rollout whose session ran in one of `dirs` (by its `session_meta`). */
async function newestCodex(sessions: string, dirs: ReadonlySet<string>) {
  const desc = async (d: string) => (await listDir(d)).sort().reverse();
  let scanned = 0;
  for (const y of await desc(sessions))
    for (const m of await desc(join(sessions, y)))
      for (const d of await desc(join(sessions, y, m)))
        for (const name of await desc(join(sessions, y, m, d))) {
          if (!/^rollout-.*\.jsonl$/.test(name)) continue;
          if (++scanned > CODEX_SCAN) return undefined;
          const file = join(sessions, y, m, d, name);
          const cwd = await codexRolloutCwd(file);
          const mtime = cwd !== undefined && dirs.has(resolve(cwd)) ? await mtimeOf(file) : undefined;
          if (mtime !== undefined) return { file, mtime };
        }
  return undefined;
}

/** The project folder as given and as its real path (an agent may record either). */
async function projectNames(dir: string): Promise<Set<string>> {
  const names = new Set([resolve(dir)]);
  try {
    names.add(await realpath(dir));
  } catch {
    // A folder that does not exist has only its given name.
  }
  return names;
}

async function newestOfProject(dir: string, env: NodeJS.ProcessEnv, home: string): Promise<Found> {
  const names = await projectNames(dir);
  const claude = nonEmpty(env.CLAUDE_CONFIG_DIR) ?? join(home, ".claude");
  const codex = nonEmpty(env.CODEX_HOME) ?? join(home, ".codex");
  const pi = nonEmpty(env.PI_CODING_AGENT_DIR) ?? join(home, ".pi", "agent");
  const found: { file: string; mtime: number }[] = [];
  for (const name of names) {
    const c = await newestIn(join(claude, "projects", claudeProjectFolder(name)));
    const p = await newestIn(join(pi, "sessions", piProjectFolder(name)));
    for (const f of [c, p]) if (f !== undefined) found.push(f);
  }
  const x = await newestCodex(join(codex, "sessions"), names);
  if (x !== undefined) found.push(x);
  found.sort((a, b) => b.mtime - a.mtime);
  if (found[0] !== undefined) return { file: found[0].file };
  return {
    missing: `no session of Claude Code, Codex or pi recorded for the project ${[...names][0]} yet (looked in ${claude}, ${codex} and ${pi}); name a session file or --state DIR`,
  };
}

/** The session file a source names now. */
export async function findSessionFile(source: HistorySource): Promise<Found> {
  if (source.kind === "file") {
    const mtime = await mtimeOf(source.file);
    return mtime !== undefined ? { file: source.file } : { missing: `${source.file}: no such session file` };
  }
  if (source.kind === "state") {
    const f = await newestJournalIn(source.dir);
    return f !== undefined
      ? { file: f.file }
      : { missing: `${source.dir}: no session journal in the guard's state folder yet` };
  }
  return newestOfProject(source.dir, source.env, source.home);
}

/** The default source: the newest session of the project folder (`dir`, default the current one). */
export function projectSource(dir = process.cwd(), env = process.env, home = homedir()): HistorySource {
  return { kind: "project", dir: resolve(dir), env, home };
}
