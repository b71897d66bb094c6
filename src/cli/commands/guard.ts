/**
 * `compact-safe guard [--upstream URL] [--listen 127.0.0.1:PORT] [--state DIR] [--mode audit|repair]
 * [--anchors FILE] [--summarizer extractive] [--workspace DIR] [--log FILE] [--json] [--max-body SIZE] [-- COMMAND ARGS…]`: the guard, a local proxy on the agent's base-URL
 * seam (src/guard/server/server.ts). Its first line on stderr is the URL it listens on (with --json, a
 * `{ "event": "listening", "url" }` object). Without a command it serves until SIGINT or SIGTERM and exits 0;
 * with one it runs the command pointed at the guard (guard-agents.ts), passes SIGTERM and SIGHUP to it (and
 * SIGINT when standard input is not a terminal: on a terminal the agent gets Ctrl-C from the terminal
 * itself), stops when it ends and exits with its exit code (128 + the signal's number when it was killed).
 *
 * State: with a command, the guard keeps its journals in the per-user state folder by default
 * (`defaultStateDir`: `$COMPACT_SAFE_STATE_DIR`, else `$XDG_STATE_HOME/compact-safe/guard`, else
 * `~/.local/state/compact-safe/guard`, made owner-only), so that two runs of the one-liner share what they
 * saw; `--state DIR` overrides it, `--no-state` keeps it in memory. Without a command: in memory unless
 * `--state DIR`.
 */
import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { constants } from "node:os";
import { resolve } from "node:path";
import type { Command } from "commander";
import { EXIT, usageError } from "../errors.js";
import { err } from "../output.js";
import { defaultStateDir, registerStatus } from "./guard-status.js";
import { OFFLINE_SUMMARIZER_NAMES, type OfflineSummarizerName } from "../../summarizers/factory.js";

export { defaultStateDir };

/**
 * The first line, the URL the guard listens on; then, with an OTLP endpoint in the environment, where the
 * verdicts and metrics go (docs/GUARD.md, "Telemetry").
 */
async function listening(url: string, json: boolean, log: (line: string) => void): Promise<void> {
  err(json ? JSON.stringify({ event: "listening", url }) : url);
  const { planLines, telemetryPlan } = await import("../../guard/server/telemetry.js");
  for (const line of planLines(telemetryPlan()))
    log(json ? JSON.stringify({ event: "note", message: `guard: ${line}` }) : `guard: ${line}`);
}

interface GuardFlags {
  upstream?: string;
  listen?: string;
  /** A folder, `false` for `--no-state`, undefined when neither was given. */
  state?: string | false;
  mode?: string;
  anchors?: string;
  summarizer?: string;
  workspace?: string;
  log?: string;
  json?: boolean;
  maxBody?: string;
}

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** The anchors of `--anchors FILE` (undefined without it: the guard then reads the agent's workspace's at each repair). */
async function anchorsText(file: string | undefined): Promise<string | undefined> {
  const { MAX_ANCHORS_BYTES, escapeControlCharacters } = await import("../../workspace/anchors.js");
  if (file === undefined) return undefined;
  const st = statSync(file);
  if (!st.isFile()) throw usageError(`--anchors ${file}: not a regular file`);
  if (st.size > MAX_ANCHORS_BYTES)
    throw usageError(`--anchors ${file}: larger than the ${MAX_ANCHORS_BYTES / 1024} KiB limit for anchors`);
  return escapeControlCharacters(readFileSync(file, "utf8")).text;
}

/**
 * Where the guard keeps its state: `--state DIR`; `--no-state` (in memory); else, with a command, the
 * per-user folder (made if missing, owner-only: mode 0700); else in memory.
 */
export function stateDirFor(state: string | false | undefined, withCommand: boolean): string | undefined {
  if (state === false) return undefined;
  if (state !== undefined) return state;
  if (!withCommand) return undefined;
  const dir = defaultStateDir();
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw usageError(
      `guard: the state folder ${dir} could not be made (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); give --state DIR or --no-state`,
    );
  }
  return dir;
}

const PROXY_VARS = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

/** `--summarizer`: one of the offline summarizers of the factory (the guard answers in the request), or none. */
function guardSummarizer(name: string | undefined): OfflineSummarizerName | undefined {
  const offline: readonly string[] = OFFLINE_SUMMARIZER_NAMES;
  if (name !== undefined && name !== "none" && !offline.includes(name))
    throw usageError(
      `--summarizer: expected ${[...OFFLINE_SUMMARIZER_NAMES, "none"].join(" or ")}, got ${JSON.stringify(name)}`,
    );
  return OFFLINE_SUMMARIZER_NAMES.find((n) => n === name);
}

/**
 * The command's environment, with the guard's loopback host added to `NO_PROXY` and `no_proxy` when the
 * environment names a proxy: an agent that honours the proxy variables would otherwise send its requests
 * for the guard (on 127.0.0.1) to the proxy, which cannot reach this machine's loopback.
 */
export function withGuardNoProxy(env: NodeJS.ProcessEnv, guardUrl: string): NodeJS.ProcessEnv {
  if (!PROXY_VARS.some((k) => (env[k] ?? "") !== "")) return env;
  const host = new URL(guardUrl).hostname;
  const hosts = host.startsWith("[") ? [host.slice(1, -1), host] : [host];
  const out = { ...env };
  for (const k of ["NO_PROXY", "no_proxy"]) {
    const list = (env[k] ?? env.NO_PROXY ?? env.no_proxy ?? "").split(/[\s,]+/).filter((h) => h !== "");
    for (const h of hosts) if (!list.includes(h)) list.push(h);
    out[k] = list.join(",");
  }
  return out;
}

export async function runGuard(flags: GuardFlags, command: string[], dashDash: boolean): Promise<number> {
  if (flags.mode !== undefined && flags.mode !== "audit" && flags.mode !== "repair")
    throw usageError(`--mode: expected audit or repair, got ${JSON.stringify(flags.mode)}`);
  const summarizer = guardSummarizer(flags.summarizer);
  if (dashDash && command.length === 0) throw usageError("guard: no command after --");
  if (!dashDash && command.length > 0)
    throw usageError(`guard: put the command after -- (compact-safe guard -- ${command.join(" ")})`);
  const { startGuard, parseUpstream, parseByteSize } = await import("../../guard/server/server.js");
  const maxBodyBytes = flags.maxBody === undefined ? undefined : parseByteSize(flags.maxBody);
  const { planAgent, removeStaleAgentFolders } = await import("./guard-agents.js");
  // A guard killed before it could clean up (SIGKILL) left pi's temporary agent folder: removed now.
  removeStaleAgentFolders();
  if (flags.upstream !== undefined) parseUpstream(flags.upstream);
  const plan = command.length > 0 ? planAgent(command) : undefined;
  const upstream = flags.upstream ?? plan?.upstream;
  if (upstream !== undefined) parseUpstream(upstream);
  const workspace = resolve(flags.workspace ?? process.cwd());
  if (flags.workspace !== undefined && !statSync(workspace, { throwIfNoEntry: false })?.isDirectory())
    throw usageError(`--workspace ${flags.workspace}: not a folder`);
  const anchors = await anchorsText(flags.anchors);
  const stateDir = stateDirFor(flags.state, plan !== undefined);

  const logFile = flags.log;
  const log = (line: string) => {
    // Created owner-only (the log names sessions and what their compactions lost, redacted).
    if (logFile !== undefined) appendFileSync(logFile, `${line}\n`, { mode: 0o600 });
    else err(line);
  };
  const guard = await startGuard({
    upstream,
    listen: flags.listen ?? "127.0.0.1:0",
    mode: (flags.mode as "audit" | "repair" | undefined) ?? "repair",
    stateDir,
    anchors,
    anchorsFromWorkspace: anchors === undefined,
    summarizer,
    workspace,
    json: flags.json === true,
    log,
    maxBodyBytes,
    // One line when it stops: sessions seen, compactions, kept, repaired, not repaired.
    summary: true,
  });
  await listening(guard.url, flags.json === true, log);

  if (plan === undefined) {
    const where = upstream ?? "by wire (api.anthropic.com, api.openai.com)";
    if (!flags.json)
      err(
        `guard: forwarding to ${where}; mode ${flags.mode ?? "repair"}${summarizer ? "; summarization requests answered extractively" : ""}; Ctrl-C stops it`,
      );
    await new Promise<void>((resolve) => {
      const stop = () => {
        for (const s of SIGNALS) process.off(s, stop);
        resolve();
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
    await guard.close();
    return EXIT.OK;
  }

  let launch;
  try {
    launch = plan.launch(guard.url, upstream);
  } catch (e) {
    await guard.close();
    throw e;
  }
  const [program] = command;
  if (flags.json)
    err(
      JSON.stringify({
        event: "started",
        agent: plan.agent,
        command: program,
        via: launch.how,
        upstream: upstream ?? null,
        state: stateDir ?? null,
      }),
    );
  else
    err(
      `guard: running ${program} (${plan.agent}) through it via ${launch.how}; upstream ${upstream ?? "by wire"}; state ${stateDir ?? "in memory"}`,
    );

  const child = spawn(program, launch.args, {
    stdio: "inherit",
    env: withGuardNoProxy({ ...process.env, ...launch.env }, guard.url),
  });
  const forward = (signal: NodeJS.Signals) => {
    // On a terminal, Ctrl-C reaches the agent from the terminal itself: a second SIGINT would be two presses.
    if (signal === "SIGINT" && process.stdin.isTTY) return;
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const s of SIGNALS) process.on(s, forward);
  const ended = await new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    error?: NodeJS.ErrnoException;
  }>((resolve) => {
    child.once("error", (error: NodeJS.ErrnoException) => resolve({ code: null, signal: null, error }));
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  for (const s of SIGNALS) process.off(s, forward);
  launch.cleanup();
  await guard.close();
  if (ended.error !== undefined)
    throw usageError(
      ended.error.code === "ENOENT"
        ? `guard: ${program}: command not found`
        : `guard: ${program}: could not be started (${ended.error.code ?? ended.error.message})`,
    );
  if (ended.signal !== null) return 128 + (constants.signals[ended.signal] ?? 0);
  return ended.code ?? 1;
}

export function register(program: Command, setExit: (code: number) => void): void {
  const guard = program
    .command("guard")
    .summary(
      "a local proxy between an agent and its model that enforces the contract on the agent's own compactions",
    )
    .description(
      "A local proxy on the agent's base-URL seam: it forwards every request and stream untouched, recognises " +
        "the agent's compactions on the wire, judges them with the survival contract and (mode repair) puts back " +
        "what a compaction lost into every later request. It listens on loopback only and prints its URL as the " +
        "first line on standard error. Without a command it serves until SIGINT or SIGTERM. With one " +
        "(after --) it runs the command pointed at the guard: claude via ANTHROPIC_BASE_URL, codex via " +
        "OPENAI_BASE_URL or -c model_providers.ID.base_url, pi via a temporary models.json, anything else " +
        "via ANTHROPIC_BASE_URL and OPENAI_BASE_URL; it passes signals and the exit code through. With a " +
        "command it keeps its state (a journal per session) in the per-user state folder unless --state or " +
        "--no-state; without one, in memory unless --state. `guard status` lists the sessions of a state folder. When " +
        "it stops it logs one summary line (sessions seen, compactions, kept, repaired, not repaired). " +
        "See the README's Guard section.\n\n" +
        "Exit codes: without a command 0 once stopped; with one, the command's exit code (128 + signal when it " +
        "was killed); 2 usage error (a bad address or upstream, a port in use, no command after --).",
    )
    .usage("[options] [-- COMMAND ARGS...]")
    .option(
      "--upstream <url>",
      "where requests go: an origin and optional path prefix (default: the agent's configured endpoint, else by wire: api.anthropic.com or api.openai.com)",
    )
    .option(
      "--listen <host:port>",
      "loopback address to listen on (127.0.0.1, [::1] or localhost)",
      "127.0.0.1:0",
    )
    .option(
      "--state <dir>",
      "keep the guard's state (a journal per session) in DIR; default with a command: the per-user folder " +
        "($COMPACT_SAFE_STATE_DIR, else $XDG_STATE_HOME/compact-safe/guard, else ~/.local/state/compact-safe/guard); " +
        "without one: in memory",
    )
    .option("--no-state", "keep the state in memory only, even with a command")
    .option("--mode <mode>", "audit (judge and record) or repair (also splice back what was lost)", "repair")
    .option(
      "--anchors <file>",
      "pinned anchors to restate after a repaired compaction (default: the agent's workspace's, read at each repair)",
    )
    .option(
      "--summarizer <name>",
      "extractive: answer the agent's own summarization request at once, offline, with compact-safe's checkpoint (no model call); none (the default): forward it",
    )
    .option(
      "--workspace <dir>",
      "workspace for anchors and live state where the request names none (default: the current folder); the agent's working folder, where its requests name it, comes first; its live state (git branch, worktree, HEAD) is read at each compaction the guard repairs",
    )
    .option(
      "--log <file>",
      "append the log lines (verdicts, notes, errors) to FILE instead of standard error",
    )
    .option("--json", "log lines as JSON objects, one per line")
    .option(
      "--max-body <size>",
      "the largest request body the guard reads, in bytes or with a unit (64MiB, 32MB); a larger one is answered 413 (default 64MiB)",
    )
    .argument("[command...]", "the agent to run through the guard, after --")
    .action(async function (this: Command, command: string[], o: GuardFlags) {
      // commander keeps the arguments it was given (untyped): whether `--` was among them.
      const raw = (this.parent as unknown as { rawArgs?: string[] } | null)?.rawArgs ?? process.argv;
      setExit(await runGuard(o, command, raw.includes("--")));
    });
  registerStatus(guard, setExit, (command) => runGuard(guard.opts<GuardFlags>(), command, true));
}
