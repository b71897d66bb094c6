/**
 * `compact-safe report` as one library call: the preview compaction (a dry
 * run of the safe pass on the live context, written nowhere) and the data
 * model of every compaction on the active path; `renderReportHtml` turns the
 * model into the self-contained page.
 */
import type { JournalEntry } from "../model/index.js";
import { compactEntries } from "../route/compact-journal.js";
import { defaultSummarizer } from "../summarizers/factory.js";
import type { Summarizer } from "../summarizers/types.js";
import { activeCompactions, buildReportModel, type ReportModel, type ReportOptions } from "./model.js";

export * from "./model.js";
export {
  renderReportHtml,
  escapeHtml,
  scriptSafeJson,
  contentSecurityPolicy,
  reportTemplates,
} from "./html.js";

export interface ReportEntriesOptions extends Omit<ReportOptions, "preview" | "previewNote"> {
  /** Build the preview compaction of the live context (default true). */
  preview?: boolean;
  /** Who writes the preview's summary (default: the embedded extractive summarizer, offline). */
  summarizer?: Summarizer;
}

/** The report's data model of `entries`, with a preview compaction of the live context unless `preview` is false. */
export async function reportEntries(
  entries: readonly JournalEntry[],
  options: ReportEntriesOptions,
): Promise<ReportModel> {
  const { preview = true, summarizer, ...rest } = options;
  // The dry run is skipped when one recorded compaction is asked for (an unknown id still lists `preview`).
  const wantPreview =
    preview && (rest.only === undefined || !activeCompactions(entries).some((c) => c.id === rest.only));
  if (!wantPreview)
    return buildReportModel(entries, { ...rest, previewNote: preview ? undefined : "not asked for" });
  const outcome = await compactEntries(entries, {
    summarizer: summarizer ?? defaultSummarizer(),
    window: rest.window,
    dryRun: true,
  });
  if (outcome.kind === "compacted") return buildReportModel(entries, { ...rest, preview: outcome.entry });
  const note =
    outcome.kind === "nothing"
      ? outcome.reason
      : outcome.kind === "refused"
        ? `refused (${outcome.error.kind}): ${outcome.error.message}`
        : "not needed";
  return buildReportModel(entries, { ...rest, previewNote: note });
}
