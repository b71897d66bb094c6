/**
 * compact-safe's own journal JSONL, read tolerantly for import/export (the
 * `journal` layer owns writing and locking). Every line is checked with the
 * model's entry schema; broken lines, invalid entries and duplicate ids are
 * reported and skipped. Repeated tool ids are kept as written and reported
 * as warnings (a journal is the user's history: reading it never rewrites
 * it, and an import of it must read the same history as `export` and
 * `compact` do); `toolIds: "repair"` renames them as the other importers do.
 */
import type { JournalEntry } from "../model/index.js";
import { parseJournalEntry } from "../model/index.js";
import { parseLine, splitLines } from "./lines.js";
import { ReportBuilder } from "./report.js";
import { SourceLines, toolIdWarning, uniqueToolIds, type ToolIdOptions } from "./tool-ids.js";
import type { ImportResult } from "./types.js";

export function importJournal(text: string, file: string, options: ToolIdOptions = {}): ImportResult {
  const rb = new ReportBuilder("journal", file);
  const entries: JournalEntry[] = [];
  const ids = new Set<string>();
  const lines = new SourceLines();
  for (const raw of splitLines(text)) {
    if (raw.text.trim() === "") {
      rb.line("blank");
      rb.skip(raw.line, "blank line", true);
      continue;
    }
    const p = parseLine(raw);
    if (!p.ok) {
      rb.line("unparsable");
      rb.skip(raw.line, p.reason, false);
      continue;
    }
    try {
      const e = parseJournalEntry(p.value, `line ${raw.line}`);
      rb.line(e.kind);
      if (ids.has(e.id)) {
        rb.skip(raw.line, `duplicate id ${JSON.stringify(e.id)}`, false);
        continue;
      }
      ids.add(e.id);
      lines.entry(e.id, raw.line);
      entries.push(e);
      rb.imported();
    } catch (err) {
      rb.line("invalid");
      rb.skip(raw.line, err instanceof Error ? err.message : String(err), false);
    }
  }
  const keep = options.toolIds !== "repair";
  const unique = uniqueToolIds(entries, file, lines, keep ? "report" : "repair");
  for (const f of unique.findings) rb.warn(f.line, toolIdWarning(f, keep));
  return { entries: unique.entries, report: rb.finish(unique.entries) };
}
