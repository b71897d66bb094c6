#!/usr/bin/env node
/**
 * The `compact-safe` command line. Only this layer prints or exits.
 * Exit codes: 0 ok; 1 contract violation or compaction refused; 2 usage or
 * input error; 3 summarizer failed; 4 journal locked.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { EXIT, toCliError } from "./errors.js";
import { err, ignoreClosedPipes } from "./output.js";
import * as hook from "./commands/hook.js";

type CommandModule = { register(program: Command, setExit: (code: number) => void): void };

/**
 * The command modules, loaded when needed: `hook` alone when it is the
 * command (an agent runs it on every compaction, so it loads only what it
 * uses), every command otherwise (for their help too).
 */
async function commandModules(argv: readonly string[]): Promise<CommandModule[]> {
  const first = argv.find((a) => !a.startsWith("-"));
  if (first === "hook") return [hook];
  // The guard runs for a whole agent session: it loads its own module only (the rest on demand).
  if (first === "guard") return [await import("./commands/guard.js")];
  return [
    await import("./commands/validate.js"),
    await import("./commands/import.js"),
    await import("./commands/export.js"),
    await import("./commands/compact.js"),
    await import("./commands/context.js"),
    await import("./commands/audit.js"),
    await import("./commands/anchor.js"),
    await import("./commands/restore.js"),
    await import("./commands/report.js"),
    hook,
    await import("./commands/guard.js"),
  ];
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

export async function main(argv: readonly string[]): Promise<number> {
  ignoreClosedPipes();
  let exitCode: number = EXIT.OK;
  const setExit = (code: number) => {
    exitCode = code;
  };
  // --debug is global, but an agent's own arguments (after `guard ... --`) are not ours.
  const cut = argv.indexOf("--");
  const ours = cut < 0 ? argv : argv.slice(0, cut);
  const debug = ours.includes("--debug");
  argv = [...ours.filter((a) => a !== "--debug"), ...(cut < 0 ? [] : argv.slice(cut))];
  const program = new Command();
  program
    .name("compact-safe")
    .description(
      "Compact a coding agent's conversation history safely, and prove that what must survive did survive " +
        "(compaction survival contract, schema version 2).\n\n" +
        "Exit codes: 0 ok; 1 contract violation or compaction refused; 2 usage or input error; " +
        "3 summarizer failed; 4 journal locked.",
    )
    .version(packageVersion(), "-V, --version", "print the version")
    .option("--debug", "print the stack trace of an error")
    .exitOverride()
    .configureOutput({
      writeErr: (s) => process.stderr.write(s),
      outputError: (s, write) => write(`compact-safe: ${s.replace(/^error: /, "")}`),
    });
  for (const mod of await commandModules(argv)) mod.register(program, setExit);
  for (const cmd of program.commands) cmd.exitOverride();

  try {
    // --debug is global: accepted anywhere on the line, before or after the command.
    await program.parseAsync(argv, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (
        e.code === "commander.helpDisplayed" ||
        e.code === "commander.version" ||
        e.code === "commander.help"
      )
        return EXIT.OK;
      // commander has printed its one-line reason already.
      return EXIT.USAGE;
    }
    const ce = toCliError(e);
    // As every printed line: redacted, controls visible (an error may quote session text).
    err(`compact-safe: ${ce.message}`);
    if (debug) {
      const cause = ce.cause instanceof Error ? ce.cause : ce;
      process.stderr.write(`${cause.stack ?? String(cause)}\n`);
    }
    return ce.exitCode;
  }
  return exitCode;
}

const code = await main(process.argv.slice(2));
process.exitCode = code;
