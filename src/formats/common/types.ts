/**
 * Shared types of the importers: the per-line report and the import result.
 */
import type { JournalEntry } from "../../model/index.js";
import type { FormatName } from "./format-names.js";

/** A format's `--format` name (./format-names.ts, the format table's names). */
export type { FormatName };

/** One input line (or, for a JSON file, one message) that did not become part of an entry. */
export interface SkippedLine {
  /** 1-based line number (for JSON array formats: 1-based message index). */
  line: number;
  /** One-line reason, e.g. `progress event (not part of the conversation)`. */
  reason: string;
  /** True when the line is skipped on purpose (UI events, snapshots); false for broken or unusable lines. */
  by_design: boolean;
}

/**
 * Accounts for every input line: `imported + skipped.length === total`.
 * For JSONL formats a line is one line of the file (blank lines included,
 * except the empty string after a final newline); for JSON formats
 * (`openai`, `anthropic`, `opencode`, a `gemini-cli` JSON document) a
 * "line" is one message of the array, for `openhands` one event of the
 * trajectory, for `langchain` one stored message of the dump, and for
 * `responses` one item.
 */
export interface ImportReport {
  format: FormatName;
  file: string;
  /**
   * What `line` numbers count, when the format alone does not say (a Gemini
   * CLI session is a JSON document or a JSONL); see `reportUnit` (../registry.ts).
   */
  unit?: "line" | "message";
  total: number;
  imported: number;
  skipped: SkippedLine[];
  /** Input lines per source kind (e.g. `assistant`, `system:compact_boundary`, `response_item:function_call`). */
  by_source_kind: Record<string, number>;
  /** Journal entries produced, per journal kind. */
  by_entry_kind: Record<string, number>;
  /** Synthetic results written to close abandoned calls. */
  synthetic_results: number;
  /** Calls left without a result at the end of a branch (in flight). */
  in_flight_calls: number;
  /** Other observations (e.g. a compaction whose kept range could not be found). */
  notes: string[];
  /** What the import changed in the history, with the source line (e.g. a repeated tool call id made unique). */
  warnings: ImportWarning[];
}

/** A change the import made to the history, e.g. a repeated tool call id renamed. */
export interface ImportWarning {
  /** 1-based source line (JSON formats: message number); absent when the importer does not know it. */
  line?: number;
  /** One line, without the file name. */
  message: string;
}

export interface ImportResult {
  entries: JournalEntry[];
  report: ImportReport;
}

/** A user-caused import error (unknown format, missing file); the message is one line. */
export { FormatError } from "../../model/errors.js";
