/**
 * Installs the pinned agent clients for the real-client tests into a cache
 * folder outside the tree (they are large downloads: the native binaries of
 * Claude Code and Codex come inside their registry packages):
 * `$COMPACT_SAFE_CLIENTS_DIR`, else `$XDG_CACHE_HOME/compact-safe/clients`,
 * else `~/.cache/compact-safe/clients`, one subfolder per set of pins. An
 * install that finished writes a stamp; a folder without it is reinstalled.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { runProcess } from "./run-process.js";

/** The versions the tests are pinned to (and the README publishes verdicts for). */
export const PINNED_CLIENTS = {
  "@anthropic-ai/claude-code": "2.1.328",
  "@openai/codex": "0.169.0",
  "@mariozechner/pi-coding-agent": "0.73.1",
} as const;

/** What each binary prints for `--version` at the pinned version. */
export const PINNED_VERSION_LINES = {
  claude: /^2\.1\.328 \(Claude Code\)/,
  codex: /^codex-cli 0\.169\.0/,
  pi: /^0\.73\.1/,
} as const;

export function clientsDir(): string {
  const key = createHash("sha256").update(JSON.stringify(PINNED_CLIENTS)).digest("hex").slice(0, 12);
  const root =
    process.env.COMPACT_SAFE_CLIENTS_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "compact-safe", "clients");
  return join(root, key);
}

/** Installs the pinned clients unless the cache already holds them; returns the folder of their binaries. */
export async function installClients(log: (line: string) => void): Promise<string> {
  const dir = clientsDir();
  const stamp = join(dir, "installed.json");
  const bin = join(dir, "node_modules", ".bin");
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === JSON.stringify(PINNED_CLIENTS)) {
    log(`clients: using ${dir}`);
    return bin;
  }
  log(
    `clients: installing ${Object.entries(PINNED_CLIENTS)
      .map(([n, v]) => `${n}@${v}`)
      .join(", ")} into ${dir}`,
  );
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify(
      { private: true, description: "compact-safe real-client tests", dependencies: PINNED_CLIENTS },
      null,
      2,
    ),
  );
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const r = await runProcess(npm, ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: dir,
    env: { HOME: homedir() },
    timeoutMs: 15 * 60_000,
  });
  if (r.code !== 0)
    throw new Error(`npm install in ${dir} failed (exit ${r.code}): ${r.stderr.trim().slice(-500)}`);
  writeFileSync(stamp, JSON.stringify(PINNED_CLIENTS));
  return bin;
}

/** Checks that each binary answers `--version` with its pinned version. */
export async function checkVersions(bin: string): Promise<string[]> {
  const seen: string[] = [];
  for (const [name, pattern] of Object.entries(PINNED_VERSION_LINES)) {
    const r = await runProcess(join(bin, name), ["--version"], {
      env: { HOME: homedir() },
      timeoutMs: 60_000,
    });
    const line = (r.stdout.trim() || r.stderr.trim()).split("\n")[0] ?? ""; // pi prints it on stderr
    if (r.code !== 0 || !pattern.test(line))
      throw new Error(`${name} --version printed ${JSON.stringify(line)}; expected ${pattern}`);
    seen.push(`${name} ${line}`);
  }
  return seen;
}
