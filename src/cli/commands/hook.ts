/**
 * `compact-safe hook claude-code|codex|pi`: an agent's compaction hook, run by
 * the agent with its hook JSON on stdin; prints the JSON object the agent
 * expects (or nothing). It never fails the agent's session: whatever goes
 * wrong (bad input, a missing transcript, an unknown agent, an internal error)
 * is one line on stderr and exit 0. The hook's modules are loaded in the
 * action (a hook runs on every compaction; start-up counts).
 */
import type { Command } from "commander";
import { EXIT, oneLine, toCliError } from "../errors.js";
import { err, out } from "../output.js";

const AGENTS = ["claude-code", "codex", "pi"] as const;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Runs the hook of `agent`; never throws. */
export async function runHookCommand(agent: string | undefined): Promise<void> {
  const name = agent === undefined ? "hook" : `hook ${agent}`;
  try {
    if (agent === undefined || !(AGENTS as readonly string[]).includes(agent))
      throw new Error(
        `${agent === undefined ? "no agent given" : `unknown agent ${JSON.stringify(agent)}`} (expected one of ${AGENTS.join(", ")})`,
      );
    if (process.stdin.isTTY) throw new Error("expects its agent's hook JSON on standard input");
    const { runHook } = await import("../../route/hooks.js");
    const answer = await runHook(agent as (typeof AGENTS)[number], await readStdin());
    for (const w of answer.warnings) err(`compact-safe ${name}: ${oneLine(w)}`);
    if (answer.output !== undefined) out(JSON.stringify(answer.output));
  } catch (e) {
    err(`compact-safe ${name}: ${toCliError(e).message}`);
  }
}

export function register(program: Command, setExit: (code: number) => void): void {
  program
    .command("hook")
    .summary("an agent's compaction hook (claude-code, codex, pi): reads its hook JSON on stdin")
    .description(
      "The compaction hook of an agent, run by the agent with its hook JSON on standard input. " +
        "claude-code (SessionStart, matcher compact): prints { hookSpecificOutput: { additionalContext } } " +
        "with the last round's instructions as written and the pinned anchors. codex (PostCompact): prints " +
        "{ systemMessage } with the contract's verdict on the compaction. pi (the extension in the package's " +
        "extensions/ sends { session_file, compaction_id, cwd }): prints { line, kept, record, restatement }. " +
        "Prints nothing when there is nothing to say. See the README's Hooks section and docs/COMMANDS.md.\n\n" +
        "Exit code: always 0 (a hook never fails the agent's session); a problem is one line on stderr.",
    )
    .argument("[agent]", AGENTS.join(" | "))
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (agent: string | undefined) => {
      await runHookCommand(agent);
      setExit(EXIT.OK);
    });
}
