/** Journal entries as JSONL lines (compact-safe's own format, one entry a line), and the live context as a new journal. */
import { CONSTANTS } from "../../model/constants.js";
import type { HeaderEntry, JournalEntry, Message, MessageEntry } from "../../model/index.js";
import { kindForMessage } from "../../model/index.js";
import { headerEntry } from "../../journal/write.js";
import { newEntryId, nowIso } from "../../journal/tree.js";
import type { FormatName } from "../common/types.js";

export function toJournalLines(entries: readonly JournalEntry[]): string {
  return entries.map((e) => JSON.stringify(e)).join("\n") + (entries.length > 0 ? "\n" : "");
}

/** Where an exported live context came from: the file, its format and its entries (imported or read). */
export interface ExportSource {
  file: string;
  format: FormatName;
  entries: readonly JournalEntry[];
}

/** The live context as a new linear journal: a header, then one entry per message. */
export function liveJournal(source: ExportSource, live: readonly Message[]): JournalEntry[] {
  const old = source.entries[0];
  const created = nowIso();
  const header: HeaderEntry =
    old?.kind === "header"
      ? {
          ...old,
          id: newEntryId(),
          created_at: created,
          payload: { ...old.payload, exported_from: source.file, created_at: created },
        }
      : headerEntry({
          session_id: newEntryId(),
          created_at: created,
          schema_version: CONSTANTS.schemaVersion,
          source_format: source.format,
          exported_from: source.file,
        });
  const entries: JournalEntry[] = [header];
  let parent = header.id;
  for (const m of live) {
    const e: MessageEntry = {
      id: newEntryId(),
      parent_id: parent,
      kind: kindForMessage(m),
      created_at: created,
      payload: m,
    };
    entries.push(e);
    parent = e.id;
  }
  return entries;
}
