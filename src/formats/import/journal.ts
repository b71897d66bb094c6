/**
 * compact-safe's own journal JSONL, imported: read by the journal layer's one
 * tolerant reader (`parseJournal`), every line accounted for in the import
 * report; broken lines, invalid entries and duplicate ids are reported and
 * skipped. Repeated tool ids are kept as written and reported
 * as warnings (a journal is the user's history: reading it never rewrites
 * it, and an import of it must read the same history as `export` and
 * `compact` do); `toolIds: "repair"` renames them as the other importers do.
 */
import { parseJournal } from "../../journal/read.js";
import { ReportBuilder } from "../common/report.js";
import { SourceLines, toolIdWarning, uniqueToolIds, type ToolIdOptions } from "../../model/tool-ids.js";
import type { ImportResult } from "../common/types.js";

/** Imports a journal through the journal layer's one tolerant reader, reporting every line. */
export function importJournal(
  text: string | Uint8Array,
  file: string,
  options: ToolIdOptions = {},
): ImportResult {
  const rb = new ReportBuilder("journal", file);
  const lines = new SourceLines();
  const { entries } = parseJournal(text, file, {
    onLine: (line, o) => {
      rb.line(o.kind);
      if (o.problem === undefined) {
        lines.entry(o.id, line);
        rb.imported();
      } else rb.skip(line, o.problem, o.kind === "blank");
    },
  });
  const keep = options.toolIds !== "repair";
  const unique = uniqueToolIds(entries, file, lines, keep ? "report" : "repair");
  for (const f of unique.findings) rb.warn(f.line, toolIdWarning(f, keep));
  return { entries: unique.entries, report: rb.finish(unique.entries) };
}
