/**
 * `compact-safe hook AGENT` (the built CLI) behind a small shell wrapper, for the
 * real-client tests: the agent runs the wrapper as its hook command, and the
 * wrapper keeps what the agent gave the hook (stdin) and what the hook
 * answered (stdout), so a test can check both.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliPath } from "../support.js";
import { shellQuote } from "../../src/formats/write-back/writers.js";

export interface TeeHook {
  /** The command to register with the agent. */
  command: string;
  /** Where the hook's input lands. */
  input: string;
  /** Where the hook's answer lands. */
  output: string;
}

/** Writes the wrapper for `compact-safe hook <agent>` into `dir` (files named after `name`). */
export function teeHook(dir: string, name: string, agent: "claude-code" | "codex"): TeeHook {
  const input = join(dir, `${name}.in.json`);
  const output = join(dir, `${name}.out.json`);
  const command = join(dir, `${name}-hook.sh`);
  writeFileSync(
    command,
    `#!/bin/sh\ntee ${shellQuote(input)} | ${shellQuote(process.execPath)} ${shellQuote(cliPath)} hook ${agent} | tee ${shellQuote(output)}\n`,
    {
      mode: 0o755,
    },
  );
  return { command, input, output };
}
