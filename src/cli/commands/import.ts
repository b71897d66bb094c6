/** `compact-safe import FILE --out JOURNAL`: a session file of any known format becomes a new journal. */
import type { Command } from "commander";
import type { ImportReport } from "../../formats/common/types.js";
import { FORMATS, FORMAT_NAMES, formatsHelp } from "../../formats/registry.js";
import { importWarnings, parseFormat, requireFile, splitHeader, unitOf } from "../io.js";
import { importInput, inputFiles, inputName } from "../stdin.js";
import { toStdout, writeNewJournal } from "../write-out.js";
import { usageError } from "../errors.js";
import { placeOf } from "../../model/tool-ids.js";
import { err, num, out, printJson, progress, PROGRESS_MIN_BYTES, style, table } from "../output.js";

interface ImportOptions {
  format?: string;
  out: string;
  force?: boolean;
  json?: boolean;
}

/** The human summary of an import report. */
export function reportLines(report: ImportReport, journal: string | null): string[] {
  const lines: string[] = [];
  const skippedByDesign = report.skipped.filter((s) => s.by_design).length;
  const broken = report.skipped.length - skippedByDesign;
  lines.push(
    `${style.bold(report.file)} (${report.format}): ${num(report.total)} lines, ${num(report.imported)} imported, ` +
      `${num(skippedByDesign)} skipped by design, ${broken > 0 ? style.yellow(`${num(broken)} broken`) : "0 broken"}`,
  );
  if (journal !== null) lines.push(`journal written: ${journal}`);
  lines.push("entries by kind:");
  lines.push(...table(Object.entries(report.by_entry_kind).map(([k, v]) => [k, num(v)] as const)));
  lines.push("source lines by kind:");
  lines.push(...table(Object.entries(report.by_source_kind).map(([k, v]) => [k, num(v)] as const)));
  if (report.synthetic_results > 0)
    lines.push(`abandoned calls closed with a synthetic result: ${report.synthetic_results}`);
  if (report.in_flight_calls > 0) lines.push(`calls in flight (no result yet): ${report.in_flight_calls}`);
  if (report.skipped.length > 0) {
    lines.push("skipped lines:");
    // By-design skips are grouped by reason; broken lines are listed one by one.
    const byReason = new Map<string, number[]>();
    for (const s of report.skipped.filter((x) => x.by_design)) {
      const list = byReason.get(s.reason) ?? [];
      list.push(s.line);
      byReason.set(s.reason, list);
    }
    for (const [reason, nums] of byReason) {
      const shown = nums.slice(0, 8).join(", ") + (nums.length > 8 ? `, … (${nums.length} lines)` : "");
      lines.push(`  by design: ${reason}: line${nums.length > 1 ? "s" : ""} ${shown}`);
    }
    for (const s of report.skipped.filter((x) => !x.by_design))
      lines.push(style.yellow(`  line ${s.line}: ${s.reason}`));
  }
  for (const n of report.notes) lines.push(`note: ${n}`);
  for (const w of report.warnings)
    lines.push(
      style.yellow(
        `warning: ${w.line === undefined ? "" : `${placeOf(unitOf(report), w.line)}: `}${w.message}`,
      ),
    );
  return lines;
}

/** Who writes each format, for the help's first sentence ("Claude Code, Codex CLI, …, or a compact-safe journal"). */
function formatTitles(): string {
  const titles = FORMATS.filter((f) => f.name !== "journal").map((f) => f.title);
  return `${titles.join(", ")}, or ${FORMATS.find((f) => f.name === "journal")!.title}`;
}

export function register(program: Command): void {
  program
    .command("import")
    .summary("import a session file into a new journal")
    .description(
      `Import a session file (${formatTitles()}; the formats are listed below, detected from the content) ` +
        "into a new compact-safe journal, and print the per-line report: counts per kind, and every " +
        "skipped line with its line number and reason. The source file is never modified. " +
        "FILE - reads standard input; --out - writes the journal to standard output. An existing --out " +
        "(a file or a symbolic link) is refused unless --force, and --out is never FILE itself.\n\n" +
        "Exit codes: 0 ok; 2 usage or input error (missing file, unknown format, journal exists).",
    )
    .addHelpText("after", `\nFormats (--format F forces one):\n${formatsHelp()}`)
    .argument("<file>", "the session file, or - for standard input")
    .option("--format <format>", `force a format (${FORMAT_NAMES.join(", ")}); default: detected`)
    .requiredOption(
      "--out <journal>",
      "the journal to write (never FILE itself; - writes it to standard output, the report then to standard error)",
    )
    .option("--force", "replace an existing journal (its old content is backed up beside it first)")
    .option("--json", "print the report as JSON")
    .action(async (file: string, o: ImportOptions) => {
      const format = parseFormat(o.format);
      if (toStdout(o.out) && o.json)
        throw usageError("--out - writes the journal to standard output; --json cannot go there too");
      const size = await requireFile(file);
      const bar = progress(2, { json: o.json === true, show: size >= PROGRESS_MIN_BYTES });
      bar.step("importing");
      let result;
      try {
        result = await importInput(file, { format });
        bar.step("writing");
        const { header, rest } = splitHeader(result.entries, result.report.format, inputName(file));
        await writeNewJournal(o.out, header, rest, { force: o.force === true, inputs: inputFiles(file) });
      } finally {
        bar.done();
      }
      for (const w of importWarnings(result.report))
        err(style.yellow(`compact-safe: warning: ${w}`, process.stderr));
      const journal = toStdout(o.out) ? "(stdout)" : o.out;
      if (o.json) printJson({ journal, entries: result.entries.length, report: result.report });
      else for (const line of reportLines(result.report, journal)) (toStdout(o.out) ? err : out)(line);
    });
}
