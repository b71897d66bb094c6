/** `compact-safe export FILE --to anthropic|openai|responses|journal`: the live context as a provider request body. */
import type { Command } from "commander";
import { Option } from "commander";
import type { HeaderEntry, JournalEntry, Message, MessageEntry } from "../../model/index.js";
import { kindForMessage } from "../../model/index.js";
import { headerEntry, newEntryId, nowIso } from "../../journal/index.js";
import { toAnthropicRequest } from "../../formats/export/anthropic.js";
import { toOpenAIRequest } from "../../formats/export/openai.js";
import { toResponsesRequest } from "../../formats/import/responses.js";
import { toJournalLines } from "../../formats/export/journal.js";
import { FORMAT_NAMES } from "../../formats/shared/types.js";
import { usageError } from "../errors.js";

/** What `export --to` writes. */
export const EXPORT_TARGETS = ["anthropic", "openai", "responses", "journal"] as const;
import { sessionWarnings, loadSession, parseFormat, sessionLive, type Session } from "../io.js";
import { err, style } from "../output.js";
import { inputFiles } from "../stdin.js";
import { writeOut } from "../write-out.js";

interface ExportOptions {
  to: "anthropic" | "openai" | "responses" | "journal";
  out?: string;
  format?: string;
  force?: boolean;
}

/** The live context as a new linear journal: a header, then one entry per message. */
export function liveJournal(session: Session, live: readonly Message[]): JournalEntry[] {
  const old = session.entries[0];
  const created = nowIso();
  const header: HeaderEntry =
    old?.kind === "header"
      ? {
          ...old,
          id: newEntryId(),
          created_at: created,
          payload: { ...old.payload, exported_from: session.file, created_at: created },
        }
      : headerEntry({
          session_id: newEntryId(),
          created_at: created,
          schema_version: 2,
          source_format: session.format,
          exported_from: session.file,
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

export function register(program: Command): void {
  program
    .command("export")
    .summary("print the live context as a provider request body")
    .description(
      "Print (or write) the live context of FILE, a journal or any importable session: with no " +
        "compaction on its active path, the whole path; with one, the projection (the replacement of " +
        "the latest compaction, then what came after it). " +
        "--to anthropic: an Anthropic Messages body { system, messages }; --to openai: an OpenAI Chat " +
        "Completions body { messages }; --to responses: an OpenAI Responses body { input } (items read " +
        "from Responses items come back as they were); --to journal: the live context as a new linear journal (JSONL). " +
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
      let text: string;
      if (o.to === "anthropic") text = `${JSON.stringify(toAnthropicRequest(live), null, 2)}\n`;
      else if (o.to === "openai") text = `${JSON.stringify(toOpenAIRequest(live), null, 2)}\n`;
      else if (o.to === "responses") text = `${JSON.stringify(toResponsesRequest(live), null, 2)}\n`;
      else text = toJournalLines(liveJournal(session, live));
      await writeOut(o.out ?? "-", text, { force: o.force === true, inputs: inputFiles(file) });
    });
}
