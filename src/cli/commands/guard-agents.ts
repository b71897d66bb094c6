/**
 * How `compact-safe guard -- COMMAND` points each agent at the guard, and
 * where the upstream is when `--upstream` is not given. The agent is known by
 * the command's base name:
 *
 * - `claude` (Claude Code): `ANTHROPIC_BASE_URL` = the guard. Upstream by
 *   default: the `ANTHROPIC_BASE_URL` it replaces, else api.anthropic.com.
 * - `codex`: the built-in `openai` provider honours `OPENAI_BASE_URL`, which
 *   is set to the guard's `/v1`; upstream by default the `OPENAI_BASE_URL` it
 *   replaces, else api.openai.com. A provider configured in config.toml
 *   (`model_provider = "ID"` in `$CODEX_HOME/config.toml`, or `-c
 *   model_provider=ID` on the command) gets `-c
 *   model_providers.ID.base_url="GUARD/PATH"` put first on its command line;
 *   upstream by default the provider's own `base_url`.
 * - `pi`: pi reads its providers from `models.json` in its agent folder
 *   (`PI_CODING_AGENT_DIR`, default `~/.pi/agent`). The guard writes a
 *   temporary agent folder whose `models.json` is the user's with the
 *   provider's `baseUrl` set to the guard (the provider of `--provider ID`,
 *   else settings.json's `defaultProvider`, else `anthropic`), every other
 *   entry a symbolic link to the real one (sessions, auth and settings are
 *   written where they always are), points `PI_CODING_AGENT_DIR` at it and
 *   removes it when pi ends. Upstream by default the provider's `baseUrl`
 *   from models.json, else its public endpoint (anthropic, openai). The
 *   folder (its models.json holds the user's keys) is made in a per-user,
 *   owner-only parent, `compact-safe-guard-UID` in the temporary folder, and
 *   named `pi-PID-…` after the guard's process: a guard killed before it
 *   could remove it (SIGKILL) leaves it behind, and the next guard started
 *   removes every such folder whose guard is no longer running
 *   (`removeStaleAgentFolders`).
 * - anything else: `ANTHROPIC_BASE_URL` = the guard and `OPENAI_BASE_URL` =
 *   the guard's `/v1`.
 *
 * The base URL handed to the agent is the guard's URL plus the upstream's
 * path prefix, so that the agent's request paths already carry the prefix
 * and the guard sends them to the upstream's origin as they are (see
 * `upstreamTarget` in src/guard/server/server.ts).
 */
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir, userInfo } from "node:os";
import { basename, join } from "node:path";
import { GuardOptionError, parseUpstream } from "../../guard/server/server.js";

export type AgentName = "claude-code" | "codex" | "pi" | "other";

export interface AgentLaunch {
  /** Environment variables to set on the child (on top of the guard's own environment). */
  env: Record<string, string>;
  /** The command's arguments (after the program), possibly with options put first. */
  args: string[];
  /** What was pointed at the guard, for the log: `ANTHROPIC_BASE_URL`, `models.json provider anthropic`, ... */
  how: string;
  /** Removes what was written for the launch (pi's temporary agent folder). */
  cleanup(): void;
}

export interface AgentPlan {
  agent: AgentName;
  /** The upstream to use when `--upstream` is not given (undefined: by wire). */
  upstream: string | undefined;
  /** The launch, once the guard's URL is known. */
  launch(guardUrl: string, upstream: string | undefined): AgentLaunch;
}

export function agentOf(program: string): AgentName {
  const name = basename(program).replace(/\.(exe|cmd|js|mjs)$/i, "");
  if (name === "claude") return "claude-code";
  if (name === "codex") return "codex";
  if (name === "pi") return "pi";
  return "other";
}

const prefixOf = (upstream: string | undefined): string =>
  upstream === undefined ? "" : parseUpstream(upstream).pathname.replace(/\/+$/, "");
/** Anthropic clients append `/v1/messages` to their base URL: the prefix without its `/v1`. */
const anthropicBase = (guard: string, upstream: string | undefined) =>
  guard + prefixOf(upstream).replace(/\/v1$/, "");
/** OpenAI clients append `/responses` or `/chat/completions`: the prefix, or `/v1`. */
const openaiBase = (guard: string, upstream: string | undefined) => guard + (prefixOf(upstream) || "/v1");

const nonEmpty = (v: string | undefined): string | undefined =>
  v !== undefined && v.trim() !== "" ? v.trim() : undefined;

// ---- Codex -------------------------------------------------------------------------------------------------

/** A TOML string value: `"..."` (basic, with the common escapes) or `'...'` (literal). */
function tomlString(raw: string): string | undefined {
  const t = raw.trim();
  const basic = /^"((?:[^"\\]|\\.)*)"/.exec(t);
  if (basic)
    return basic[1].replace(
      /\\(["\\/bfnrt])/g,
      (_m, c: string) => ({ b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" })[c] ?? c,
    );
  const literal = /^'([^']*)'/.exec(t);
  return literal ? literal[1] : undefined;
}

/**
 * What the guard needs of a Codex config.toml: the top-level `model_provider`
 * and `openai_base_url` (the built-in openai provider's URL, which Codex
 * prefers to `OPENAI_BASE_URL`), and each provider's `base_url`.
 */
export function readCodexConfig(text: string): {
  provider?: string;
  openaiBaseUrl?: string;
  baseUrls: Map<string, string>;
} {
  let section = "";
  let provider: string | undefined;
  let openaiBaseUrl: string | undefined;
  const baseUrls = new Map<string, string>();
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === "" || line.startsWith("#")) continue;
    const header = /^\[([^\]]+)\]\s*(#.*)?$/.exec(line);
    if (header) {
      section = header[1].trim();
      continue;
    }
    const kv = /^([A-Za-z0-9_."'-]+)\s*=\s*(.*)$/.exec(line);
    if (!kv) continue;
    const key = (section === "" ? kv[1] : `${section}.${kv[1]}`).replace(/\s/g, "");
    const value = tomlString(kv[2]);
    if (value === undefined) continue;
    if (key === "model_provider") provider = value;
    if (key === "openai_base_url") openaiBaseUrl = value;
    const m = /^model_providers\.(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_-]+))\.base_url$/.exec(key);
    if (m) baseUrls.set(m[1] ?? m[2] ?? m[3], value);
  }
  return { provider, ...(openaiBaseUrl !== undefined ? { openaiBaseUrl } : {}), baseUrls };
}

/** The command line without its `-c KEY=…` / `--config KEY=…` / `--config=KEY=…` overrides of `key`. */
function withoutOverride(args: readonly string[], key: string): string[] {
  const out: string[] = [];
  const isKey = (pair: string) => pair.includes("=") && pair.slice(0, pair.indexOf("=")).trim() === key;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") {
      out.push(...args.slice(i));
      break;
    }
    if ((a === "-c" || a === "--config") && i + 1 < args.length && isKey(args[i + 1])) i++;
    else if (!(a.startsWith("--config=") && isKey(a.slice("--config=".length)))) out.push(a);
  }
  return out;
}

/** `-c key=value` / `--config key=value` / `--config=key=value` pairs on a Codex command line. */
function codexOverrides(args: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    let pair: string | undefined;
    if ((a === "-c" || a === "--config") && i + 1 < args.length) pair = args[++i];
    else if (a.startsWith("--config=")) pair = a.slice("--config=".length);
    else if (a === "--") break;
    if (pair === undefined || !pair.includes("=")) continue;
    const at = pair.indexOf("=");
    const value = pair.slice(at + 1);
    out.set(pair.slice(0, at).trim(), tomlString(value) ?? value.trim());
  }
  return out;
}

function codexPlan(args: readonly string[], env: NodeJS.ProcessEnv): AgentPlan {
  const home = nonEmpty(env.CODEX_HOME) ?? join(homedir(), ".codex");
  const configFile = join(home, "config.toml");
  const config: ReturnType<typeof readCodexConfig> = existsSync(configFile)
    ? readCodexConfig(readFileSync(configFile, "utf8"))
    : { baseUrls: new Map() };
  const overrides = codexOverrides(args);
  const provider = overrides.get("model_provider") ?? config.provider ?? "openai";
  if (provider === "openai") {
    // `openai_base_url` (config.toml, or -c on the command) wins over OPENAI_BASE_URL in Codex: where the
    // user set it, the guard's URL is given the same way, in place of theirs.
    const configured = overrides.get("openai_base_url") ?? config.openaiBaseUrl;
    return {
      agent: "codex",
      upstream: nonEmpty(configured) ?? nonEmpty(env.OPENAI_BASE_URL),
      launch: (guard, upstream) => {
        const base = openaiBase(guard, upstream);
        return {
          env: { OPENAI_BASE_URL: base },
          args:
            configured === undefined
              ? [...args]
              : [
                  "-c",
                  `openai_base_url=${JSON.stringify(base)}`,
                  ...withoutOverride(args, "openai_base_url"),
                ],
          how:
            configured === undefined
              ? "OPENAI_BASE_URL (Codex's built-in openai provider)"
              : "-c openai_base_url and OPENAI_BASE_URL (Codex's built-in openai provider)",
          cleanup: () => {},
        };
      },
    };
  }
  const configured = overrides.get(`model_providers.${provider}.base_url`) ?? config.baseUrls.get(provider);
  return {
    agent: "codex",
    upstream: configured,
    launch: (guard, upstream) => {
      if (upstream === undefined)
        throw new GuardOptionError(
          `codex: provider ${JSON.stringify(provider)} has no base_url in ${configFile}; give --upstream URL`,
        );
      const base = openaiBase(guard, upstream);
      return {
        env: {},
        args: ["-c", `model_providers.${provider}.base_url=${JSON.stringify(base)}`, ...args],
        how: `-c model_providers.${provider}.base_url (Codex provider ${provider})`,
        cleanup: () => {},
      };
    },
  };
}

// ---- pi ----------------------------------------------------------------------------------------------------

const PI_BUILT_IN: Record<string, { baseUrl: string; anthropic: boolean }> = {
  anthropic: { baseUrl: "https://api.anthropic.com", anthropic: true },
  openai: { baseUrl: "https://api.openai.com/v1", anthropic: false },
};

function expandTilde(p: string): string {
  return p === "~" ? homedir() : p.startsWith("~/") ? join(homedir(), p.slice(2)) : p;
}

function optionValue(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === name && i + 1 < args.length) return args[i + 1];
    if (args[i].startsWith(`${name}=`)) return args[i].slice(name.length + 1);
  }
  return undefined;
}

function readJsonObject(file: string): Record<string, unknown> | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const v = JSON.parse(readFileSync(file, "utf8")) as unknown;
    if (v !== null && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  throw new GuardOptionError(`${file}: not a JSON object; the guard cannot point pi at itself through it`);
}

type PiProvider = { baseUrl?: unknown; api?: unknown };

/** The parent of the guard's temporary agent folders: one per user, in the temporary folder. */
export function agentTempParent(base: string = tmpdir()): string {
  const who = typeof process.getuid === "function" ? String(process.getuid()) : userInfo().username;
  return join(base, `compact-safe-guard-${who}`);
}

/** The parent, created owner-only; refused when it is not a folder of the user's own (a link, another's). */
function ownParent(parent: string): string {
  mkdirSync(parent, { recursive: true, mode: 0o700 });
  const st = lstatSync(parent);
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid))
    throw new GuardOptionError(
      `${parent}: not a folder of your own; the guard will not put pi's temporary agent folder (a copy of models.json) there`,
    );
  if ((st.mode & 0o077) !== 0) chmodSync(parent, 0o700);
  return parent;
}

/** Whether a process with this id runs (one of another user's counts: it cannot be signalled, but it is there). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes the temporary agent folders (`pi-PID-…` in `parent`) of guards no
 * longer running: a guard killed with SIGKILL could not remove its own. A
 * folder's links are removed, never followed. Returns the folders removed.
 */
export function removeStaleAgentFolders(parent: string = agentTempParent()): string[] {
  // Only a folder of the user's own, not a link to one (whose entries would be someone else's to remove).
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  let names: string[];
  try {
    const st = lstatSync(parent);
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) return [];
    names = readdirSync(parent);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = /^pi-(\d+)-/.exec(name);
    if (m === null) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || running(pid)) continue;
    const dir = join(parent, name);
    try {
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // one that cannot be removed now is left for a later start: starting the guard matters more
    }
  }
  return removed;
}

function piPlan(args: readonly string[], env: NodeJS.ProcessEnv): AgentPlan {
  const agentDir = expandTilde(nonEmpty(env.PI_CODING_AGENT_DIR) ?? join(homedir(), ".pi", "agent"));
  const modelsFile = join(agentDir, "models.json");
  const models = readJsonObject(modelsFile) ?? {};
  const settings = (() => {
    try {
      return readJsonObject(join(agentDir, "settings.json")) ?? {};
    } catch {
      return {};
    }
  })();
  const providers = (
    models.providers !== null && typeof models.providers === "object" ? models.providers : {}
  ) as Record<string, PiProvider>;
  const provider =
    optionValue(args, "--provider") ??
    (typeof settings.defaultProvider === "string" ? settings.defaultProvider : undefined) ??
    "anthropic";
  const own = providers[provider] ?? {};
  const ownBase = typeof own.baseUrl === "string" ? own.baseUrl : undefined;
  const anthropicApi =
    own.api === "anthropic-messages" || (own.api === undefined && PI_BUILT_IN[provider]?.anthropic === true);
  return {
    agent: "pi",
    upstream: ownBase ?? PI_BUILT_IN[provider]?.baseUrl,
    launch: (guard, upstream) => {
      if (upstream === undefined)
        throw new GuardOptionError(
          `pi: provider ${JSON.stringify(provider)} has no baseUrl in ${modelsFile} and no known public endpoint; give --upstream URL`,
        );
      const base = anthropicApi ? anthropicBase(guard, upstream) : openaiBase(guard, upstream);
      const parent = ownParent(agentTempParent());
      removeStaleAgentFolders(parent);
      const dir = mkdtempSync(join(parent, `pi-${process.pid}-`));
      try {
        // Sessions, auth and settings stay in the real folder: every entry is a link to it (created there first
        // when missing, as pi itself would), so what pi writes lands where it always does.
        mkdirSync(join(agentDir, "sessions"), { recursive: true });
        const names = new Set([...readdirSync(agentDir), "auth.json", "settings.json", "sessions"]);
        names.delete("models.json");
        for (const name of names) symlinkSync(join(agentDir, name), join(dir, name));
        const written = { ...models, providers: { ...providers, [provider]: { ...own, baseUrl: base } } };
        writeFileSync(join(dir, "models.json"), `${JSON.stringify(written, null, 2)}\n`, { mode: 0o600 });
      } catch (e) {
        rmSync(dir, { recursive: true, force: true });
        throw e;
      }
      return {
        env: { PI_CODING_AGENT_DIR: dir },
        args: [...args],
        how: `models.json provider ${provider} (a temporary PI_CODING_AGENT_DIR)`,
        cleanup: () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  };
}

// ---- all ---------------------------------------------------------------------------------------------------

/** How to run `command` through the guard. Throws a GuardOptionError for a config it cannot use. */
export function planAgent(command: readonly string[], env: NodeJS.ProcessEnv = process.env): AgentPlan {
  const [program, ...args] = command;
  const agent = agentOf(program);
  if (agent === "codex") return codexPlan(args, env);
  if (agent === "pi") return piPlan(args, env);
  if (agent === "claude-code")
    return {
      agent,
      upstream: nonEmpty(env.ANTHROPIC_BASE_URL),
      launch: (guard, upstream) => ({
        env: { ANTHROPIC_BASE_URL: anthropicBase(guard, upstream) },
        args: [...args],
        how: "ANTHROPIC_BASE_URL",
        cleanup: () => {},
      }),
    };
  return {
    agent,
    upstream: undefined,
    launch: (guard, upstream) => ({
      env: {
        ANTHROPIC_BASE_URL: anthropicBase(guard, upstream),
        OPENAI_BASE_URL: openaiBase(guard, upstream),
      },
      args: [...args],
      how: "ANTHROPIC_BASE_URL and OPENAI_BASE_URL",
      cleanup: () => {},
    }),
  };
}
