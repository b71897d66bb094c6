/**
 * Installs the pinned agent clients for the real-client tests into a cache
 * folder outside the tree (they are large downloads: the native binaries of
 * Claude Code and Codex come inside their registry packages):
 * `$COMPACT_SAFE_CLIENTS_DIR`, else `$XDG_CACHE_HOME/compact-safe/clients`,
 * else `~/.cache/compact-safe/clients`, one subfolder per set of pins (and
 * one, `claude-code-VERSION`, for the newest Claude Code the registry serves,
 * which the guard checks run beside the pinned one; one, `pi-coding-agent-VERSION`,
 * for pi 1.x, which needs Node >= 22.19 and runs on the pinned Node 22 of
 * scripts/node-version.mjs beside pi 0.73 on the suite's Node). An install that
 * finished writes a stamp; a folder without it is reinstalled.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
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

export function clientsRoot(): string {
  return (
    process.env.COMPACT_SAFE_CLIENTS_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "compact-safe", "clients")
  );
}

export function clientsDir(): string {
  const key = createHash("sha256").update(JSON.stringify(PINNED_CLIENTS)).digest("hex").slice(0, 12);
  return join(clientsRoot(), key);
}

const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/**
 * Installs `deps` into `dir` unless its stamp says they are there (a folder
 * without the stamp, or with other deps in it, is reinstalled); returns the
 * folder of their binaries.
 */
export async function installInto(
  dir: string,
  deps: Readonly<Record<string, string>>,
  log: (line: string) => void,
): Promise<string> {
  const stamp = join(dir, "installed.json");
  const bin = join(dir, "node_modules", ".bin");
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === JSON.stringify(deps)) {
    log(`clients: using ${dir}`);
    return bin;
  }
  log(
    `clients: installing ${Object.entries(deps)
      .map(([n, v]) => `${n}@${v}`)
      .join(", ")} into ${dir}`,
  );
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify(
      { private: true, description: "compact-safe real-client tests", dependencies: deps },
      null,
      2,
    ),
  );
  const r = await runProcess(npm, ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: dir,
    env: { HOME: homedir() },
    timeoutMs: 15 * 60_000,
  });
  if (r.code !== 0)
    throw new Error(`npm install in ${dir} failed (exit ${r.code}): ${r.stderr.trim().slice(-500)}`);
  writeFileSync(stamp, JSON.stringify(deps));
  return bin;
}

/** Installs the pinned clients unless the cache already holds them; returns the folder of their binaries. */
export function installClients(log: (line: string) => void): Promise<string> {
  return installInto(clientsDir(), PINNED_CLIENTS, log);
}

const CLAUDE_PACKAGE = "@anthropic-ai/claude-code";

/** The newest Claude Code the registry serves: installed, or why it is not checked. */
export type NewestClaude = { bin: string; version: string; pinned: boolean } | { skipped: string };

/**
 * Asks the registry for the newest Claude Code (`npm view`, 30 s at most)
 * and installs it into its own cache folder (`claude-code-VERSION`, the same
 * stamp as the pinned set), then checks its `--version`. The pinned version
 * reuses the pinned install (`pinned`: its checks are the pinned ones). A
 * registry that cannot be reached (or answers no version) is `skipped`, with
 * the reason; an install or a binary that fails throws.
 */
export async function installNewestClaude(log: (line: string) => void): Promise<NewestClaude> {
  let r;
  try {
    r = await runProcess(npm, ["view", CLAUDE_PACKAGE, "version", "--fetch-retries=0"], {
      env: { HOME: homedir() },
      timeoutMs: 30_000,
    });
  } catch (e) {
    return { skipped: `npm view ${CLAUDE_PACKAGE} could not run: ${(e as Error).message}` };
  }
  const version = r.stdout.trim();
  if (r.code !== 0 || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
    const lines = `${r.stderr}\n${r.stdout}`
      .split("\n")
      .map((l) => l.replace(/^npm (error|ERR!)\s*/, "").trim())
      .filter((l) => l !== "");
    const why =
      r.code === null
        ? "no answer within 30 s"
        : (lines.find((l) => /FetchError|request to|\bE\d{3}\b|ENOTFOUND|ETIMEDOUT/.test(l)) ??
          lines[0] ??
          `exit ${r.code}, no output`);
    return { skipped: `npm view ${CLAUDE_PACKAGE} version: ${why.slice(0, 200)}` };
  }
  if (version === PINNED_CLIENTS[CLAUDE_PACKAGE]) {
    log(
      `clients: the newest ${CLAUDE_PACKAGE} the registry serves is the pinned ${version}: its install is reused`,
    );
    return { bin: join(clientsDir(), "node_modules", ".bin"), version, pinned: true };
  }
  log(`clients: the newest ${CLAUDE_PACKAGE} the registry serves is ${version}`);
  const bin = await installInto(
    join(clientsRoot(), `claude-code-${version}`),
    { [CLAUDE_PACKAGE]: version },
    log,
  );
  const v = await runProcess(join(bin, "claude"), ["--version"], {
    env: { HOME: homedir() },
    timeoutMs: 60_000,
  });
  const line = v.stdout.trim().split("\n")[0] ?? "";
  if (v.code !== 0 || !line.startsWith(`${version} (Claude Code)`))
    throw new Error(
      `the newest claude --version printed ${JSON.stringify(line)}; expected "${version} (Claude Code)"`,
    );
  log(`clients: claude ${line}`);
  return { bin, version, pinned: false };
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

/** pi 1.x, published under its new name (needs Node >= 22.19): checked beside the pinned pi 0.73. */
export const PI1_PACKAGE = "@earendil-works/pi-coding-agent";
export const PI1_VERSION = "1.6.0";

/** pi 1.x installed: the Node 22 that runs it, and the command (`node cli.js`) that runs pi. */
export interface Pi1Install {
  /** The installed package's folder's node_modules (for modules that import pi or pi-ai). */
  nodeModules: string;
  /** The Node 22 binary. */
  node: string;
  /** pi's entry point (`bin.pi` of its package.json), run with `node`. */
  cli: string;
  /** What `pi --version` printed. */
  versionLine: string;
}

/**
 * Installs pi 1.x into its own cache folder (`pi-coding-agent-VERSION`, the same stamp as the pinned
 * set) and the pinned Node 22 (scripts/node-version.mjs), then checks pi's `--version` on that Node.
 */
export async function installPi1(log: (line: string) => void): Promise<Pi1Install> {
  const dir = join(clientsRoot(), `pi-coding-agent-${PI1_VERSION}`);
  await installInto(dir, { [PI1_PACKAGE]: PI1_VERSION }, log);
  const nodeModules = join(dir, "node_modules");
  const pkgDir = join(nodeModules, ...PI1_PACKAGE.split("/"));
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as {
    bin?: Record<string, string>;
  };
  if (!pkg.bin?.pi) throw new Error(`${PI1_PACKAGE}@${PI1_VERSION} declares no pi binary`);
  const cli = join(pkgDir, pkg.bin.pi);
  const script = join(import.meta.dirname, "..", "..", "..", "scripts", "node-version.mjs");
  const { ensureNode22 } = (await import(pathToFileURL(script).href)) as { ensureNode22: () => string };
  const node = ensureNode22();
  const v = await runProcess(node, [cli, "--version"], { env: { HOME: homedir() }, timeoutMs: 60_000 });
  const versionLine = (v.stdout.trim() || v.stderr.trim()).split("\n")[0] ?? "";
  if (v.code !== 0 || !versionLine.startsWith(PI1_VERSION))
    throw new Error(`pi 1.x --version printed ${JSON.stringify(versionLine)}; expected ${PI1_VERSION}`);
  return { nodeModules, node, cli, versionLine };
}
