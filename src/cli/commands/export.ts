/** `compact-safe export FILE --to TARGET` (a format with an exporter): the live context as a request body or a journal. */
import type { Command } from "commander";
import { Option } from "commander";
import {
  EXPORT_TARGETS,
  FORMAT_NAMES,
  exportLive,
  formatEntry,
  type FormatName,
} from "../../formats/registry.js";
import { usageError } from "../errors.js";
import { sessionWarnings, loadSession, parseFormat, sessionLive } from "../io.js";
import { err, style } from "../output.js";
import { inputFiles } from "../stdin.js";
import { writeOut } from "../write-out.js";

/** What `export --to` writes: the formats of the table that have an exporter. */
export { EXPORT_TARGETS };

interface ExportOptions {
  to: FormatName;
  out?: string;
  format?: string;
  force?: boolean;
}

/** `--to NAME: what it writes`, for every target, from the format table. */
function targetsHelp(): string {
  return EXPORT_TARGETS.map((t) => `--to ${t}: ${formatEntry(t).export!.help}`).join("; ");
}

export function register(program: Command): void {
  program
    .command("export")
    .summary("print the live context as a provider request body")
    .description(
      "Print (or write) the live context of FILE, a journal or any importable session: with no " +
        "compaction on its active path, the whole path; with one, the projection (the replacement of " +
        "the latest compaction, then what came after it). " +
        `${targetsHelp()}. ` +
        "FILE - reads standard input. --out writes a file instead of standard output (--out -: standard " +
        "output): an existing one (a file or a symbolic link) is refused unless --force, and never FILE itself.\n\n" +
        "Exit codes: 0 ok; 2 usage or input error.",
    )
    .argument("<file>", "a journal or a session file, or - for standard input")
    .addOption(
      new Option("--to <target>", "what to write").choices([...EXPORT_TARGETS]).makeOptionMandatory(),
    )
    .option("--out <file>", "write to this file instead of standard output (- for standard output)")
    .option("--force", "with --out: replace an existing file (never FILE itself)")
    .option("--format <format>", `force the input format (${FORMAT_NAMES.join(", ")}); default: detected`)
    .action(async (file: string, o: ExportOptions) => {
      if (o.force && o.out === undefined) throw usageError("--force applies to --out only");
      const session = await loadSession(file, parseFormat(o.format));
      for (const w of sessionWarnings(session))
        err(style.yellow(`compact-safe: warning: ${w}`, process.stderr));
      const live = sessionLive(session);
      const text = exportLive(o.to, live, session);
      await writeOut(o.out ?? "-", text, { force: o.force === true, inputs: inputFiles(file) });
    });
}
