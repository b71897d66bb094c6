/**
 * Helpers the tree-shaped importers share (Claude Code `uuid`/`parentUuid`,
 * pi `id`/`parentId`): the header entry they start from, and the mapping of a
 * source parent onto the nearest imported entry.
 */
import { CONSTANTS } from "../../model/constants.js";
import type { Block, HeaderEntry, JournalEntry, Message } from "../../model/index.js";
import {
  JsonDepthError,
  kindForMessage,
  ModelError,
  parseJournalEntry,
  parseJsonLimited,
  providerCompactionIn,
} from "../../model/index.js";
import { closeAbandonedInEntries } from "./abandoned.js";
import { importedCompactionEntry } from "./imported-compaction.js";
import type { ReportBuilder } from "./report.js";
import {
  filePlace,
  SourceLines,
  toolIdWarning,
  uniqueToolIds,
  type ToolIdOptions,
} from "../../model/tool-ids.js";
import { FormatError, type FormatName, type ImportResult } from "./types.js";

/** The header entry an importer starts from; it fills in the identity as it reads. */
export function startHeader(sourceFormat: string): HeaderEntry {
  return {
    id: "header",
    parent_id: null,
    kind: "header",
    created_at: "",
    payload: {
      session_id: "",
      created_at: "",
      schema_version: CONSTANTS.schemaVersion,
      source_format: sourceFormat,
    },
  };
}

/**
 * The journal entry that stands for a source id: the entry imported from it,
 * or else from its nearest ancestor that was imported (skipped lines such as
 * progress events are walked through). Null when none was imported; cycles
 * in the source links end the walk.
 */
export function nearestImported(
  sourceId: unknown,
  entryFor: ReadonlyMap<string, string>,
  parentOf: ReadonlyMap<string, string | null>,
): string | null {
  const seen = new Set<string>();
  let cur: unknown = sourceId;
  while (typeof cur === "string" && !seen.has(cur)) {
    seen.add(cur);
    const hit = entryFor.get(cur);
    if (hit !== undefined) return hit;
    cur = parentOf.get(cur);
  }
  return null;
}

/**
 * The records of a tree-shaped session read by id, once each: a resumed
 * session repeats earlier lines, and the same record read again is one entry
 * (its tool ids are not repeats), skipped by design; another record under an
 * id already read is a broken line, and the first is kept.
 */
export class ReadOnce {
  /**
   * The first line of each id, with its record's form as read: computed only when the id comes back
   * (a string kept for every line of a 5 MB session was a large part of a hook's garbage).
   */
  private readonly first = new Map<string, { line: number; asRead: () => string }>();
  /** `key` names the id in messages ("uuid"), `noun` the record ("message"). */
  constructor(
    private readonly key: string,
    private readonly noun: string,
  ) {}

  /** True when `id` is read for the first time (and remembers it); else the repeat is skipped on `rb`. */
  read(id: string, asRead: () => string, line: number, rb: ReportBuilder): boolean {
    const read = this.first.get(id);
    if (read === undefined) {
      this.first.set(id, { line, asRead });
      return true;
    }
    if (read.asRead() === asRead())
      rb.skip(
        line,
        `repeated line: ${this.key} ${id} was read at line ${read.line} (same ${this.noun})`,
        true,
      );
    else
      rb.skip(
        line,
        `${this.key} ${id} was read at line ${read.line} with another ${this.noun}; the first is kept`,
        false,
      );
    return false;
  }
}

/** A record whose parent is missing from the file (e.g. its line was broken) hangs off the previous entry; noted. */
export function attachToPrevious(rb: ReportBuilder, line: number, parent: unknown, previous: string): string {
  rb.note(
    `line ${line}: parent ${String(parent)} is not in the file; attached to the previous entry ${previous}`,
  );
  return previous;
}

/**
 * The end of every import: repeated tool call ids made unique (a warning with
 * the line for each; a second result for one call is refused, see
 * tool-ids.ts; with `toolIds: "keep"` they are only reported), then abandoned calls closed with synthetic results (a call at
 * the very end stays in flight), counted in the report, which then accounts
 * for every line.
 */
export function finishImport(
  entries: JournalEntry[],
  rb: ReportBuilder,
  lines: SourceLines = new SourceLines(),
  options: ToolIdOptions = {},
): ImportResult {
  for (const e of entries) validateImported(e, rb.report.file, lines);
  const keep = options.toolIds === "keep";
  const unique = uniqueToolIds(entries, rb.report.file, lines, keep ? "report" : "repair", options.prior);
  for (const f of unique.findings) rb.warn(f.line, toolIdWarning(f, keep));
  const closed = closeAbandonedInEntries(unique.entries);
  rb.report.synthetic_results = closed.closed;
  rb.report.in_flight_calls = closed.inFlight;
  return { entries: closed.value, report: rb.finish(closed.value) };
}

/**
 * Every route that takes messages validates them first (shape and nesting):
 * a block an importer passed through as found (a text block without `text`)
 * is refused here, named by the input's own place (`FILE:LINE:`, or `FILE:
 * message N:` for a JSON message array) and the block's path in its message,
 * never by the journal entry it became.
 */
/** An imported block that is not valid: the input's own fault at that place, not a wrong format. */
export class InvalidBlockError extends FormatError {}

function validateImported(e: JournalEntry, file: string, lines: SourceLines): void {
  try {
    parseJournalEntry(e, "entry");
  } catch (err) {
    if (!(err instanceof ModelError)) throw err;
    const content = (e.payload as { content?: unknown }).content;
    const at = /^entry\.payload\.content\[(\d+)\]/.exec(err.message);
    const block = Array.isArray(content) && at ? (content[Number(at[1])] as Block | undefined) : undefined;
    // The failing block's own line where the importer recorded one, else its entry's.
    const line = lines.lineOf(block !== null && typeof block === "object" ? block : ({} as Block), e.id);
    const what = err.message.replace(/^entry\.payload\./, "").replace(/^entry\b/, `the ${e.kind} read there`);
    throw new InvalidBlockError(`${filePlace(file, lines.unit, line)} ${what}`);
  }
}

/** Fills in the header's identity when the source did not record it (the file name; the first entry's time). */
export function completeHeader(header: JournalEntry, entries: readonly JournalEntry[], file: string): void {
  const hp = header.payload as Record<string, unknown>;
  if (!hp.session_id) hp.session_id = file;
  if (!hp.created_at) hp.created_at = entries[1]?.created_at ?? new Date(0).toISOString();
  header.created_at = String(hp.created_at);
}

/** One message read from the source, at its line (JSON: message number); `part` numbers the messages one source record became. */
export interface SourceMessage {
  line: number;
  message: Message;
  part?: number;
  createdAt?: string;
}

/**
 * The journal of a linear history: a header (`headerExtra` merged into its
 * payload), then one entry per message, `m<line>` (`m<line>.<part>`), each
 * the child of the one before; then `finishImport`.
 *
 * A message that holds a provider's native compaction (an Anthropic
 * `compaction` block, an OpenAI `compaction` item) is where the provider's
 * context restarts: what comes before the block is an entry as usual, and
 * the block on is the replacement of a `compaction` entry `c<line>`
 * (`source_agent` the provider), after the system messages before it (see
 * `providerReplacement`), so `context`, `audit` and `report` see the
 * compaction there and the live context is what the provider keeps.
 */
export function linearImport(
  rb: ReportBuilder,
  messages: readonly SourceMessage[],
  format: FormatName,
  header: { session_id?: string; created_at?: string; extra?: Record<string, unknown> },
  lines: SourceLines,
  options: ToolIdOptions,
): ImportResult {
  const now = new Date().toISOString();
  const created = header.created_at ?? messages.find((m) => m.createdAt)?.createdAt ?? now;
  const head: JournalEntry = {
    id: "header",
    parent_id: null,
    kind: "header",
    created_at: created,
    payload: {
      session_id: header.session_id || rb.report.file,
      created_at: created,
      schema_version: CONSTANTS.schemaVersion,
      source_format: format,
      ...(header.created_at === undefined && created === now ? { created_at_is_import_time: true } : {}),
      ...header.extra,
    },
  };
  const entries: JournalEntry[] = [head];
  let last = head.id;
  let time = created;
  let live: Message[] = [];
  const push = (e: JournalEntry, line: number, blocks: readonly Block[]): void => {
    lines.entry(e.id, line);
    lines.blocks(blocks, line);
    entries.push(e);
    last = e.id;
  };
  for (const { line, message, part, createdAt } of messages) {
    if (createdAt) time = createdAt;
    const suffix = part ? `${line}.${part}` : `${line}`;
    const native = providerCompactionIn(message);
    const before = native ? message.content.slice(0, native.at) : message.content;
    if (before.length > 0 || !native) {
      const payload = native ? { ...message, content: before } : message;
      push(
        { id: `m${suffix}`, parent_id: last, kind: kindForMessage(payload), created_at: time, payload },
        line,
        before,
      );
      live.push(payload);
    }
    if (!native) continue;
    const replacement = providerReplacement(live, { ...message, content: message.content.slice(native.at) });
    const c = importedCompactionEntry({
      id: `c${suffix}`,
      parentId: last,
      createdAt: time,
      sourceAgent: native.block.provider,
      summary: native.block.summary,
      tokensBefore: live,
      model: typeof message.meta?.model === "string" ? message.meta.model : "unknown",
      trigger: "auto",
      triggerRecorded: false,
      replacement,
    });
    push(c, line, replacement.at(-1)!.content);
    live = [...replacement];
  }
  return finishImport(entries, rb, lines, options);
}

/**
 * The replacement a provider's own compaction installs: the system messages of the context before
 * it (the request's system prompt or instructions: the provider summarizes the conversation, never
 * them, and they go with every request), then the message that opens with the block or item. The
 * number of conversation messages it summarized is recorded on that message's `meta`
 * (`compacted_messages`, when there were any in the file), so that a later compaction that has to
 * fold it can say what stood there.
 */
export function providerReplacement(before: readonly Message[], opening: Message): Message[] {
  const system = before.filter((m) => m.role === "system");
  const earlier = before.length - system.length;
  const first =
    earlier > 0 ? { ...opening, meta: { ...opening.meta, compacted_messages: earlier } } : opening;
  return [...system, first];
}

/**
 * A JSON session document, parsed within the nesting limit; a FormatError
 * naming the file (and the line where the nesting went too deep) otherwise.
 */
export function parseJsonDocument(text: string, file: string): unknown {
  if (text.trim() === "") throw new FormatError(`${file}: empty file`);
  try {
    return parseJsonLimited(text);
  } catch (e) {
    if (e instanceof JsonDepthError)
      throw new FormatError(`${file}:${e.line}: JSON nested deeper than ${e.limit} levels (the limit)`);
    const { line, what } = jsonSyntaxProblem(text, e);
    throw new FormatError(`${file}:${line}: ${what}`);
  }
}

/**
 * What is wrong with a JSON document `JSON.parse` refused, and the line
 * (1-based) where: `truncated JSON (…)` when the text ends before the
 * document does (a file cut while being written), at its last line;
 * `not valid JSON (…)` otherwise, at the line of the position the parser
 * names.
 */
export function jsonSyntaxProblem(text: string, error: unknown): { line: number; what: string } {
  const message = error instanceof Error ? error.message : String(error);
  const end = text.trimEnd().length;
  const at = /at position (\d+)/.exec(message);
  const pos = at ? Number(at[1]) : undefined;
  const truncated = /end of JSON input/i.test(message) || (pos !== undefined && pos >= end);
  const lineAt = (p: number): number => {
    let line = 1;
    for (let i = text.indexOf("\n"); i >= 0 && i < p; i = text.indexOf("\n", i + 1)) line++;
    return line;
  };
  if (truncated)
    return {
      line: lineAt(Math.max(0, end - 1)),
      what: `truncated JSON (the document ends before it is complete: ${message})`,
    };
  return { line: pos !== undefined ? lineAt(pos) : 1, what: `not valid JSON (${message})` };
}
