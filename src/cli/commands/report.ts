/**
 * `compact-safe report FILE`: a self-contained HTML page (or, with --json,
 * its data model) showing what each compaction on the session's active path
 * kept, bounded, stubbed, summarized and dropped, and what a compaction now
 * would do (a preview, written nowhere).
 */
import type { Command } from "commander";
import { statSync } from "node:fs";
import { basename } from "node:path";
import { renderReportHtml, reportEntries } from "../../report/index.js";
import { DEFAULT_WINDOW } from "../../route/index.js";
import { FORMAT_NAMES } from "../../formats/registry.js";
import { positiveInt, wholeNumber } from "../options.js";
import { usageError } from "../errors.js";
import { sessionWarnings, loadSession, parseFormat, requireFile } from "../io.js";
import { err, num, out, printJson, style } from "../output.js";
import { inputFiles, inputName, STDIO } from "../stdin.js";
import { toStdout, writeOut } from "../write-out.js";

interface ReportCliOptions {
  out?: string;
  compaction?: string;
  format?: string;
  window: number;
  preview: boolean;
  json?: boolean;
  force?: boolean;
  home?: boolean;
  jobs?: number;
  details: number;
  progress?: boolean;
}

/** Whether a path is a folder (anything else, a missing path included, is read as one session). */
function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The default page: FILE's name with `.report.html`, in the current folder. */
export function defaultReportPath(file: string): string {
  return `${basename(file).replace(/\.(jsonl|json|traj)$/i, "")}.report.html`;
}

export function register(program: Command): void {
  program
    .command("report")
    .summary("write a self-contained HTML page showing what each compaction kept")
    .description(
      "Write one self-contained HTML page (no network, opens from disk) for FILE, a journal or any importable " +
        "session: for every compaction on its active path (the agent's own and compact-safe's) and for a " +
        "preview compaction of the live context (the extractive summarizer, written nowhere), the history " +
        "before it as rows marked kept, bounded, stubbed, summarized or dropped, token bars before and after by " +
        "category against --window, the checkpoint as the model sees it, and the contract's verdict (as `audit` " +
        "gives it), with what was lost marked on its rows. Session text is redacted and long texts keep their " +
        "head and tail. --json prints the page's data model instead (the page is drawn from that same model). " +
        "FILE - reads standard input (then --out is needed); --out - writes to standard output. An existing " +
        "page (a file or a symbolic link, the default one included) is refused unless --force, and the page " +
        "is never FILE itself.\n\n" +
        "Several files, a folder or --home write one team page instead (--out, default team.report.html): " +
        "the aggregate of `audit PATH…`, the sessions with a compaction ranked by what they lost, and for the " +
        "first --details of them their own report, one click away.\n\n" +
        "Exit codes: 0 written (whatever the verdict: `audit` exits 1 on a violation); 2 usage or input error.",
    )
    .argument(
      "[paths...]",
      "a journal, or a session file of any importable format, or - for standard input; several files or folders (or --home) write the team page",
    )
    .option(
      "--out <file>",
      "the page to write (default: FILE's name with .report.html, in the current folder; - for standard output); with --json, the model's file (default: standard output)",
    )
    .option("--force", "replace an existing page (or --json file); never FILE itself")
    .option("--compaction <id>", "only this compaction (an id on the active path, or `preview`)")
    .option("--format <format>", `force the input format (${FORMAT_NAMES.join(", ")}); default: detected`)
    .option(
      "--window <tokens>",
      "the model's context window the bars are drawn against",
      positiveInt("--window"),
      DEFAULT_WINDOW,
    )
    .option("--no-preview", "no preview compaction of the live context")
    .option("--json", "print the report's data model (JSON) instead of the page")
    .option("--home", "the team page over the agents' own session folders (see audit --home)")
    .option("--jobs <n>", "team page: worker threads (default: the machine's cores)", positiveInt("--jobs"))
    .option(
      "--details <n>",
      "team page: how many sessions (the worst first) carry their own report in the page",
      wholeNumber("--details"),
      100,
    )
    .option("--no-progress", "team page: no progress bar on standard error")
    .action(async (paths: string[], o: ReportCliOptions) => {
      const file =
        paths.length === 1 && !o.home && (paths[0] === STDIO || !isFolder(paths[0]!)) ? paths[0]! : undefined;
      if (file === undefined) {
        if (o.json)
          throw usageError("--json is one session's model; for many sessions use audit PATH… --json");
        if (o.compaction !== undefined) throw usageError("--compaction names a compaction of one session");
        if (paths.includes(STDIO)) throw usageError("- (standard input) is one session: report on it alone");
        const { reportTeamCommand } = await import("./report-team.js");
        await reportTeamCommand(paths, {
          out: o.out,
          force: o.force,
          home: o.home,
          jobs: o.jobs,
          details: o.details,
          window: o.window,
          format: parseFormat(o.format),
          progress: o.progress,
        });
        return;
      }
      if (file === STDIO && o.out === undefined && !o.json)
        throw usageError(
          `${inputName(file)}: a report of standard input needs --out PAGE (or --out - for standard output)`,
        );
      const bytes = await requireFile(file);
      const session = await loadSession(file, parseFormat(o.format));
      for (const w of sessionWarnings(session))
        err(style.yellow(`compact-safe: warning: ${w}`, process.stderr));
      if (o.compaction === "preview" && !o.preview)
        throw usageError("--compaction preview needs the preview (drop --no-preview)");
      let model;
      try {
        model = await reportEntries(session.entries, {
          source: { file: file === STDIO ? inputName(file) : basename(file), format: session.format, bytes },
          window: o.window,
          preview: o.preview,
          only: o.compaction,
        });
      } catch (e) {
        if (e instanceof Error && e.message.startsWith("no compaction "))
          throw usageError(`${inputName(file)}: ${e.message}`);
        throw e;
      }
      const write = { force: o.force === true, inputs: inputFiles(file) };
      if (o.json) {
        if (o.out === undefined) printJson(model);
        else await writeOut(o.out, `${JSON.stringify(model, null, 2)}\n`, write);
        return;
      }
      const html = renderReportHtml(model);
      const path = o.out ?? defaultReportPath(file);
      await writeOut(path, html, write);
      const kept = model.views.filter((v) => v.verdict.kept).length;
      // With the page on standard output, what was written is said on standard error.
      const say = toStdout(path) ? err : out;
      say(
        `report written to ${toStdout(path) ? "standard output" : path} (${num(Buffer.byteLength(html))} bytes; ${model.views.length} compaction${model.views.length === 1 ? "" : "s"} shown, ${kept} kept the contract; ${num(model.messages.length)} distinct messages)`,
      );
      if (model.preview_note !== null && o.preview) say(`  preview: ${model.preview_note}`);
    });
}
