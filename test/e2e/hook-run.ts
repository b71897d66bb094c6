/** Runs the built `compact-safe hook AGENT` as an agent does, for the hook e2e suites. */
import { spawnSync } from "node:child_process";
import { cliPath } from "../support.js";

/** Runs `compact-safe hook AGENT` in `cwd` with `input` (an object is written as JSON) on stdin. */
export function hook(agent: string, input: unknown, cwd: string) {
  return spawnSync(process.execPath, [cliPath, "hook", agent], {
    input: typeof input === "string" ? input : JSON.stringify(input),
    encoding: "utf8",
    cwd,
  });
}

/** The `hookSpecificOutput` of Claude Code's answer. */
export const additionalContext = (stdout: string) =>
  (JSON.parse(stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } })
    .hookSpecificOutput;
