/** Builds an ImportReport while an importer walks its input. */
import type { JournalEntry } from "../../model/index.js";
import type { FormatName, ImportReport } from "./types.js";

export class ReportBuilder {
  readonly report: ImportReport;
  constructor(format: FormatName, file: string) {
    this.report = {
      format,
      file,
      total: 0,
      imported: 0,
      skipped: [],
      by_source_kind: {},
      by_entry_kind: {},
      synthetic_results: 0,
      in_flight_calls: 0,
      notes: [],
      warnings: [],
    };
  }
  /** Counts one input line of the given source kind. */
  line(kind: string): void {
    this.report.total++;
    this.report.by_source_kind[kind] = (this.report.by_source_kind[kind] ?? 0) + 1;
  }
  imported(): void {
    this.report.imported++;
  }
  skip(line: number, reason: string, byDesign: boolean): void {
    this.report.skipped.push({ line, reason, by_design: byDesign });
  }
  note(text: string): void {
    this.report.notes.push(text);
  }
  warn(line: number | undefined, message: string): void {
    this.report.warnings.push(line === undefined ? { message } : { line, message });
  }
  finish(entries: readonly JournalEntry[]): ImportReport {
    const r = this.report;
    r.by_entry_kind = {};
    for (const e of entries) r.by_entry_kind[e.kind] = (r.by_entry_kind[e.kind] ?? 0) + 1;
    r.skipped.sort((a, b) => a.line - b.line);
    if (r.imported + r.skipped.length !== r.total) {
      // An importer bug, never user input: fail loudly rather than return a report that does not add up.
      throw new Error(
        `internal: report for ${r.file} does not add up (imported ${r.imported} + skipped ${r.skipped.length} != total ${r.total})`,
      );
    }
    return r;
  }
}
