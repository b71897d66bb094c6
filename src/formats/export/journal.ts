/** Journal entries as JSONL lines (compact-safe's own format, one entry a line). */
import type { JournalEntry } from "../../model/index.js";

export function toJournalLines(entries: readonly JournalEntry[]): string {
  return entries.map((e) => JSON.stringify(e)).join("\n") + (entries.length > 0 ? "\n" : "");
}
