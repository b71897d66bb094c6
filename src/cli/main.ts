#!/usr/bin/env node
/**
 * The `compact-safe` command line. Only this layer prints or exits.
 * Exit codes: 0 ok; 1 contract violation or compaction refused; 2 usage or
 * input error; 3 summarizer failed; 4 journal locked.
 */
import { existsSync, readFileSync } from "node:fs";
import type { Command } from "commander";

type CommandModule = { register(program: Command, setExit: (code: number) => void): void };

/**
 * The command modules by name, each loaded only when needed: the named
 * command's module alone when the line names one (an agent runs `hook` on
 * every compaction, and no command pays for the others' dependencies), every
 * module otherwise (the top-level help lists them all).
 */
const COMMANDS: Readonly<Record<string, () => Promise<CommandModule>>> = {
  validate: () => import("./commands/validate.js"),
  import: () => import("./commands/import.js"),
  export: () => import("./commands/export.js"),
  compact: () => import("./commands/compact.js"),
  context: () => import("./commands/context.js"),
  audit: () => import("./commands/audit.js"),
  anchor: () => import("./commands/anchor.js"),
  restore: () => import("./commands/restore.js"),
  report: () => import("./commands/report.js"),
  hook: () => import("./commands/hook.js"),
  guard: () => import("./commands/guard.js"),
  mcp: () => import("./commands/mcp.js"),
};

async function commandModules(argv: readonly string[]): Promise<CommandModule[]> {
  const name = argv.find((a) => !a.startsWith("-"));
  const one = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (one) return [await one()];
  const all: CommandModule[] = [];
  for (const load of Object.values(COMMANDS)) all.push(await load());
  return all;
}

/**
 * The hook command as one file (`npm run build` bundles hook-entry.js: scripts/bundle-hook.mjs), else its
 * modules: loading the bundle costs a fraction of resolving and loading its ~40 modules one by one.
 */
async function hookModule(): Promise<typeof import("./hook-entry.js")> {
  const bundle = new URL("./hook-bundle.js", import.meta.url);
  if (existsSync(bundle)) return (await import(bundle.href)) as typeof import("./hook-entry.js");
  return import("./hook-entry.js");
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

export async function main(argv: readonly string[]): Promise<number> {
  // The version alone needs nothing else loaded.
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  // `hook AGENT`, as an agent runs it on every compaction, needs no command parser: the
  // hook module alone (any other line with `hook`, its help too, goes through commander).
  if (argv.length === 2 && argv[0] === "hook" && !argv[1]!.startsWith("-")) {
    const { runHookCommand, ignoreClosedPipes } = await hookModule();
    ignoreClosedPipes();
    await runHookCommand(argv[1]);
    return 0;
  }
  // `guard` runs the guard in this process and nothing else: V8's young generation is kept at its
  // starting size, before anything else is loaded grows it (src/guard/server/process-heap.ts).
  if (argv.find((a) => !a.startsWith("-")) === "guard")
    (await import("../guard/server/process-heap.js")).keepYoungGenerationSmall();
  const [{ Command, CommanderError }, { EXIT, toCliError }, { err, ignoreClosedPipes }] = await Promise.all([
    import("commander"),
    import("./errors.js"),
    import("./output.js"),
  ]);
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
