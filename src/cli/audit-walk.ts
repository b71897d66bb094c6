/**
 * Finding the sessions a batch (`audit PATH…`, `report PATH…`) reads: files named on the command
 * line, the session files under a folder (searched recursively), and the agents' own folders
 * (`--home`). A found file is named by its path relative to the argument it was found under
 * (`/`-separated), which is what `--shard` hashes: the same archive mounted elsewhere splits the same.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { opendir, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, join, relative, sep } from "node:path";
import { usageError } from "./errors.js";

/** One file to read: where it is, the argument it was found under, its path relative to that. */
export interface Found {
  file: string;
  root: string;
  path: string;
  /** Named on the command line (then a file no format reads is skipped as unreadable, not ignored). */
  named: boolean;
}

/** A session file's name: what the agents and the formats compact-safe reads write. */
const SESSION_NAME = /\.(jsonl|json|traj)$/i;
/** Folders never searched: version control and package trees. */
const SKIP_DIRS = new Set([".git", "node_modules"]);

/** The agents' session folders: Claude Code's projects, Codex's sessions, pi's sessions. */
export function homeFolders(
  env: NodeJS.ProcessEnv = process.env,
  home = homedir(),
): { agent: string; dir: string }[] {
  const set = (v: string | undefined) => (v !== undefined && v !== "" ? v : undefined);
  const tilde = (p: string) => (p === "~" ? home : p.startsWith("~/") ? join(home, p.slice(2)) : p);
  const claude = tilde(set(env.CLAUDE_CONFIG_DIR) ?? join(home, ".claude"));
  const codex = tilde(set(env.CODEX_HOME) ?? join(home, ".codex"));
  const piAgent = tilde(set(env.PI_CODING_AGENT_DIR) ?? join(home, ".pi", "agent"));
  return [
    { agent: "claude-code", dir: join(claude, "projects") },
    { agent: "codex", dir: join(codex, "sessions") },
    {
      agent: "pi",
      dir: tilde(set(env.PI_CODING_AGENT_SESSION_DIR) ?? piSettingsDir(piAgent) ?? join(piAgent, "sessions")),
    },
  ];
}

/** pi's `sessionDir` setting (`settings.json` of its agent folder), when it sets one. */
function piSettingsDir(agentDir: string): string | undefined {
  const file = join(agentDir, "settings.json");
  if (!existsSync(file)) return undefined;
  try {
    const dir = (JSON.parse(readFileSync(file, "utf8")) as { sessionDir?: unknown }).sessionDir;
    return typeof dir === "string" && dir !== "" ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** How a root is written in records: under the home folder as `~/…`, else as given. */
export function rootName(dir: string, home = homedir()): string {
  const rel = relative(home, dir);
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith(sep) ? `~/${rel.split(sep).join("/")}` : dir;
}

/** Every session file under `dir`, depth first, each folder's names in order; symbolic links to folders not followed. */
async function* under(dir: string, base: string, root: string): AsyncGenerator<Found> {
  let handle;
  try {
    handle = await opendir(dir);
  } catch {
    return; // a folder that went away or cannot be listed: nothing in it is read
  }
  const names: { name: string; dir: boolean; link: boolean }[] = [];
  for await (const e of handle) names.push({ name: e.name, dir: e.isDirectory(), link: e.isSymbolicLink() });
  names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of names) {
    const p = join(dir, e.name);
    if (e.dir) {
      if (!SKIP_DIRS.has(e.name)) yield* under(p, base, root);
    } else if (SESSION_NAME.test(e.name)) {
      if (e.link) {
        const st = await stat(p).catch(() => undefined);
        if (st === undefined || !st.isFile()) continue;
      }
      yield { file: p, root, path: relative(base, p).split(sep).join("/"), named: false };
    }
  }
}

/**
 * The files of the arguments: a file as itself (its path its own name), a folder's session files
 * searched recursively; with `home`, the agents' folders that exist. An argument that does not exist
 * is a usage error (a typo must not read as "no session").
 */
export async function* findSessions(
  paths: readonly string[],
  home: boolean,
  env: NodeJS.ProcessEnv = process.env,
): AsyncGenerator<Found> {
  for (const p of paths) {
    const st = await stat(p).catch(() => undefined);
    if (st === undefined) throw usageError(`${p}: no such file or folder`);
    if (st.isDirectory()) yield* under(p, p, p);
    else yield { file: p, root: p, path: basename(p), named: true };
  }
  if (home)
    for (const { dir } of homeFolders(env)) if (existsSync(dir)) yield* under(dir, dir, rootName(dir));
}

/** Parses `--shard K/N` (1 ≤ K ≤ N). */
export function parseShard(value: string): { k: number; n: number } {
  const m = /^(\d+)\/(\d+)$/.exec(value.trim());
  const k = m ? Number(m[1]) : NaN;
  const n = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(n) || n < 1 || k < 1 || k > n)
    throw usageError(`--shard ${JSON.stringify(value)}: expected K/N with 1 ≤ K ≤ N (e.g. 2/8)`);
  return { k, n };
}

/** The shard (1…n) of a path: the first 4 bytes of its SHA-256, modulo n. Stable across runs and machines. */
export function shardOf(path: string, n: number): number {
  return (createHash("sha256").update(path, "utf8").digest().readUInt32BE(0) % n) + 1;
}
