/**
 * `compact-safe guard status [--state DIR] [--json]`: the sessions the guard's state folder holds (default:
 * the per-user folder the one-liner writes, `defaultStateDir` below), the most recently seen first,
 * each with its agent, when it was last seen, the compactions the guard judged, its verdicts (kept,
 * violations) and its repairs, read from the session journals (`listStateSessions` in src/guard/sessions/state.ts).
 * Exit 0 (a folder that does not exist holds no session); 2 when DIR is not a folder.
 *
 * `guard -- status …` is not this: a `--` before it makes `status` the command the guard runs.
 */
import { statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { Command } from "commander";
import { EXIT, usageError } from "../errors.js";
import { err, out, printJson, style } from "../output.js";

interface StatusFlags {
  state?: string;
  json?: boolean;
}

/**
 * The per-user state folder of the guard: `$COMPACT_SAFE_STATE_DIR`, else `$XDG_STATE_HOME/compact-safe/guard`
 * (an absolute `XDG_STATE_HOME` only, as the XDG base directory specification says), else
 * `~/.local/state/compact-safe/guard`.
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const own = env.COMPACT_SAFE_STATE_DIR;
  if (own !== undefined && own !== "") return resolve(own);
  const xdg = env.XDG_STATE_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, "compact-safe", "guard");
  return join(home, ".local", "state", "compact-safe", "guard");
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export async function runGuardStatus(flags: StatusFlags): Promise<number> {
  const { listStateSessions } = await import("../../guard/sessions/state.js");
  const dir = resolve(flags.state ?? defaultStateDir());
  const st = statSync(dir, { throwIfNoEntry: false });
  if (st !== undefined && !st.isDirectory()) throw usageError(`guard status: ${dir}: not a folder`);
  const { sessions, unreadable } = await listStateSessions(dir);
  for (const name of unreadable.slice(0, 5))
    err(style.yellow(`compact-safe: warning: ${name} is not a guard journal (skipped)`, process.stderr));
  if (flags.json) {
    printJson({ state: dir, sessions, unreadable });
    return EXIT.OK;
  }
  if (sessions.length === 0) {
    out(`no guard session in ${dir}`);
    return EXIT.OK;
  }
  out(`${plural(sessions.length, "guard session")} in ${dir}, the most recently seen first:`);
  for (const s of sessions) {
    const verdicts =
      s.compactions === 0
        ? "no compaction"
        : `${plural(s.compactions, "compaction")} (${s.kept} kept the contract, ${plural(s.violations, "violation")})`;
    out(
      `${s.session} (${s.agent}, ${s.wire}): last seen ${s.last_seen}; ${verdicts}; ${plural(s.repairs, "repair")}`,
    );
  }
  return EXIT.OK;
}

/** `status` under `guard`; `guard -- status ARGS` still runs a command named status through the guard. */
export function registerStatus(
  guard: Command,
  setExit: (code: number) => void,
  runCommand: (command: string[]) => Promise<number>,
): void {
  guard
    .command("status")
    .summary("the sessions in the guard's state folder: agent, last seen, compactions, verdicts, repairs")
    .description(
      "Lists the sessions the guard's state folder holds (default: the per-user folder the one-liner " +
        "`compact-safe guard -- COMMAND` keeps its state in: $COMPACT_SAFE_STATE_DIR, else " +
        "$XDG_STATE_HOME/compact-safe/guard, else ~/.local/state/compact-safe/guard), the most recently " +
        "seen first: session key, agent, wire, last seen, the compactions the guard judged with its verdicts " +
        "(kept, violations), and its repairs, read from each session's journal. `compact-safe audit FILE` " +
        "judges one journal in full.\n\nExit codes: 0 listed (none when the folder does not exist); 2 DIR is " +
        "not a folder.",
    )
    .option("--state <dir>", "the state folder to read (default: the per-user folder)")
    .option(
      "--json",
      "print { state, sessions: [{ session, agent, wire, file, first_seen, last_seen, compactions, kept, violations, repairs }], unreadable }",
    )
    .allowExcessArguments()
    .exitOverride()
    .action(async function (this: Command, o: StatusFlags) {
      // `guard [options] -- status ARGS`: the command after -- is the user's, run through the guard.
      const raw = (this.parent?.parent as unknown as { rawArgs?: string[] } | null)?.rawArgs ?? process.argv;
      if (raw.includes("--")) {
        setExit(await runCommand(["status", ...this.args]));
        return;
      }
      if (this.args.length > 0)
        throw usageError(`guard status: unexpected argument ${JSON.stringify(this.args[0])}`);
      // `guard`'s own --state and --json (the same words) take these wherever they stand on the line.
      const parent = (this.parent?.opts() ?? {}) as { state?: string | false; json?: boolean };
      setExit(
        await runGuardStatus({
          state: o.state ?? (typeof parent.state === "string" ? parent.state : undefined),
          json: o.json === true || parent.json === true,
        }),
      );
    });
}
