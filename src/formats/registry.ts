/**
 * The one table of session formats. Each entry says everything the code, the
 * command line's help and the README's format table say about a format: its
 * name, how it is detected, its importer, what its report counts, its
 * exporter (`export --to`) and its fork writer (`compact --fork`), when it has
 * them. Every list of formats is derived from this table: `FORMAT_NAMES`, the
 * detection order, the import dispatch, `reportUnit`, the export targets, the
 * formats write-back is built for, and the help texts (the README's table is
 * checked against it by test/docs/format-table.test.ts).
 *
 * Adding a format: one entry here, its importer in `import/`, its tests (see
 * docs/ADDING_A_FORMAT.md).
 */
import type { Message } from "../model/index.js";
import { looksLikeJournalEntry } from "../model/schema.js";
import type { ToolIdOptions } from "../model/tool-ids.js";
import { FormatError, type ImportReport, type ImportResult } from "./common/types.js";
import type { FormatName } from "./common/format-names.js";
import type { ParsedHead, RawLine } from "./common/lines.js";
import { importJournal } from "./import/journal.js";
import { importClaudeCode, isClaudeCodeRecord } from "./import/claude-code.js";
import { importCodex, isCodexRecord } from "./import/codex.js";
import { importPi, isPiRecord } from "./import/pi.js";
import {
  importAnthropic,
  importOpenAI,
  isAnthropicMessages,
  isMessageDocument,
  isOpenAITrajectory,
} from "./import/messages-json.js";
import { importGeminiCli, isGeminiDocument, isGeminiRecord } from "./import/gemini-cli.js";
import { importOpencode, isOpencodeExport, isOpencodeExportText } from "./import/opencode.js";
import { importOpenHands, openHandsEvents } from "./import/openhands.js";
import { importLangChain, langChainDumpMessages } from "./import/langchain.js";
import { importResponses } from "./import/responses.js";
import { looksLikeResponses, toResponsesRequest } from "../wire/responses.js";
import { importAiSdk, looksLikeAiSdk } from "./import/ai-sdk.js";
import { importPiMessages, looksLikePiMessages } from "./import/pi-messages.js";
import { toAnthropicRequest } from "./export/anthropic.js";
import { toOpenAIRequest } from "./export/openai.js";
import { liveJournal, toJournalLines, type ExportSource } from "./export/journal.js";
import {
  claudeCodeWriter,
  codexWriter,
  piWriter,
  type ForkInput,
  type ForkWriter,
  type WrittenFork,
} from "./write-back/writers.js";

/** An importer: the text of a session (named `fileName` in every message) as journal entries and a report. */
/** An importer of a text; `head`: the first lines as format detection parsed them, for a JSONL importer to take over. */
export type Importer = (
  text: string,
  fileName: string,
  options: ToolIdOptions,
  head?: ParsedHead,
) => ImportResult;

/**
 * How a format is recognised from content. Each test has a rank: all the
 * formats' tests of one kind run in rank order (lower first), and the first
 * that says yes wins. `text` tests run on the raw text before anything else;
 * `document` tests on a text that parses as one JSON document; `record` tests
 * on a JSON document that is one record, and on every record of a JSONL file
 * (the format most of the first 200 records vote for wins).
 */
export interface Detection {
  text?: { rank: number; test: (text: string) => boolean };
  document?: readonly { rank: number; test: (doc: unknown, fileName: string) => boolean }[];
  record?: { rank: number; test: (o: Record<string, unknown>) => boolean };
}

/** `export --to NAME`: the live context as what this format's API (or reader) accepts. */
export interface Exporter {
  /** The text written (a JSON body, or JSONL). */
  write: (live: readonly Message[], source: ExportSource) => string;
  /** One phrase for `export --help`: what the body is. */
  help: string;
}

/** `compact --fork`: the compacted history written as a new session the agent resumes. */
export interface ForkSupport {
  writer: ForkWriter;
  /** The agent's resume command, as the README's table shows it (`claude --resume`). */
  resumes: string;
}

export interface FormatEntry {
  /** The `--format` name (one of common/format-names.ts). */
  name: FormatName;
  /** Who writes it, for prose ("Claude Code"). */
  title: string;
  /** What it reads: the README table's cell (Markdown), and the help line (without the backticks). */
  reads: string;
  /** What a report's line numbers count (a format may set `report.unit` itself when it varies). */
  unit: "line" | "message";
  /** How messages name one unit and several, when not "line" or "message" (OpenHands: events). */
  unitNames?: readonly [one: string, many: string];
  detect: Detection;
  importer: Importer;
  /** Reads the bytes itself (the journal: a line of invalid UTF-8 is a broken line, not replacement characters). */
  importBytes?: (bytes: Uint8Array, fileName: string, options: ToolIdOptions) => ImportResult;
  /** A JSON Lines format's importer of its lines as `byteLines` decodes them (the file's bytes never decoded whole). */
  importLines?: (
    lines: readonly RawLine[],
    fileName: string,
    options: ToolIdOptions,
    head?: ParsedHead,
  ) => ImportResult;
  export?: Exporter;
  fork?: ForkSupport;
}

const json = (body: unknown): string => `${JSON.stringify(body, null, 2)}\n`;

/** The formats, in the order the README, the help and the error messages list them. */
export const FORMATS = [
  {
    name: "journal",
    title: "a compact-safe journal",
    reads: "compact-safe's own append-only JSONL session tree",
    unit: "line",
    detect: { record: { rank: 10, test: looksLikeJournalEntry } },
    importer: importJournal,
    importBytes: importJournal,
    export: {
      write: (live, source) => toJournalLines(liveJournal(source, live)),
      help: "the live context as a new linear journal (JSONL)",
    },
  },
  {
    name: "claude-code",
    title: "Claude Code",
    reads: "Claude Code transcripts (`~/.claude/projects/*/*.jsonl`)",
    unit: "line",
    detect: { record: { rank: 40, test: isClaudeCodeRecord } },
    importer: importClaudeCode,
    importLines: importClaudeCode,
    fork: { writer: claudeCodeWriter, resumes: "claude --resume" },
  },
  {
    name: "codex",
    title: "Codex CLI",
    reads: "Codex CLI rollouts (`~/.codex/sessions/**/rollout-*.jsonl`)",
    unit: "line",
    detect: { record: { rank: 20, test: isCodexRecord } },
    importer: importCodex,
    importLines: importCodex,
    fork: { writer: codexWriter, resumes: "codex resume" },
  },
  {
    name: "pi",
    title: "pi",
    reads: "pi sessions (`~/.pi/agent/sessions/**/*.jsonl`), versions 1–3",
    unit: "line",
    detect: { record: { rank: 30, test: isPiRecord } },
    importer: importPi,
    importLines: importPi,
    fork: { writer: piWriter, resumes: "pi --session" },
  },
  {
    name: "openai",
    title: "OpenAI Chat Completions messages",
    reads: "Chat Completions message arrays or request bodies (`{ messages }`), SWE-agent `.traj` histories",
    unit: "message",
    detect: {
      document: [
        { rank: 30, test: isOpenAITrajectory },
        // After the Anthropic test (rank 90): a message array that is not Anthropic's.
        { rank: 91, test: isMessageDocument },
      ],
    },
    importer: importOpenAI,
    export: {
      write: (live) => json(toOpenAIRequest(live)),
      help: "an OpenAI Chat Completions body { messages }",
    },
  },
  {
    name: "anthropic",
    title: "Anthropic messages (Cline / Roo Code histories)",
    reads:
      "Messages API arrays or bodies (`{ system, messages }`), Cline / Roo Code `api_conversation_history.json`",
    unit: "message",
    detect: { document: [{ rank: 90, test: isAnthropicMessages }] },
    importer: importAnthropic,
    export: {
      write: (live) => json(toAnthropicRequest(live)),
      help: "an Anthropic Messages body { system, messages }",
    },
  },
  {
    name: "gemini-cli",
    title: "Gemini CLI",
    reads: "Gemini CLI saved sessions, JSON and JSONL",
    // A JSON document's report says `message` itself (report.unit).
    unit: "line",
    detect: {
      document: [{ rank: 40, test: isGeminiDocument }],
      record: { rank: 50, test: isGeminiRecord },
    },
    importer: importGeminiCli,
  },
  {
    name: "opencode",
    title: "opencode",
    reads: "`opencode export` JSON",
    unit: "message",
    detect: {
      text: { rank: 10, test: isOpencodeExportText },
      document: [{ rank: 50, test: isOpencodeExport }],
    },
    importer: importOpencode,
  },
  {
    name: "openhands",
    title: "OpenHands",
    reads: "OpenHands trajectories (event arrays)",
    unit: "message",
    unitNames: ["event", "events"],
    detect: { document: [{ rank: 10, test: (doc) => openHandsEvents(doc) !== undefined }] },
    importer: importOpenHands,
  },
  {
    name: "langchain",
    title: "LangChain",
    reads:
      'LangChain message dumps (`[{ type, data }]` as `mapChatMessagesToStoredMessages` writes them, or `[{ lc: 1, type: "constructor", id, kwargs }]` as `JSON.stringify` writes the messages)',
    unit: "message",
    detect: { document: [{ rank: 20, test: (doc) => langChainDumpMessages(doc) !== undefined }] },
    importer: importLangChain,
  },
  {
    name: "responses",
    title: "OpenAI Responses items",
    reads:
      "OpenAI Responses API input items: an item array, a request body `{ input }` or a response `{ output }`",
    unit: "message",
    unitNames: ["item", "items"],
    detect: { document: [{ rank: 60, test: looksLikeResponses }] },
    importer: importResponses,
    export: {
      write: (live) => json(toResponsesRequest(live)),
      help: "an OpenAI Responses body { input } (items read from Responses items come back as they were)",
    },
  },
  {
    name: "ai-sdk",
    title: "AI SDK messages",
    reads:
      'AI SDK `ModelMessage[]` (or `{ messages }`), as apps built on the AI SDK store them (`tool-call` / `tool-result` parts, `role: "tool"`)',
    unit: "message",
    detect: { document: [{ rank: 70, test: looksLikeAiSdk }] },
    importer: importAiSdk,
  },
  {
    name: "pi-messages",
    title: "pi agent messages",
    reads:
      "pi agent messages (`AgentMessage[]`, or `{ messages }`: `toolCall` parts, `toolResult` / `bashExecution` messages), as the pi adapter converts them",
    unit: "message",
    detect: { document: [{ rank: 80, test: looksLikePiMessages }] },
    importer: importPiMessages,
  },
] as const satisfies readonly FormatEntry[];

export type { FormatName };

/** Every name of common/format-names.ts has an entry in the table (a compile-time check). */
type NamesWithoutEntry = Exclude<FormatName, (typeof FORMATS)[number]["name"]>;
const everyNameHasAnEntry: [NamesWithoutEntry] extends [never] ? true : NamesWithoutEntry = true;
void everyNameHasAnEntry;

/** Every format's name, in the table's order. */
export const FORMAT_NAMES: readonly FormatName[] = FORMATS.map((f) => f.name);

const BY_NAME = new Map<string, FormatEntry>(FORMATS.map((f) => [f.name, f]));

export function isFormatName(name: string): name is FormatName {
  return BY_NAME.has(name);
}

/** The table's entry for `format`; a `FormatError` listing the formats for an unknown name. */
export function formatEntry(format: string): FormatEntry {
  const entry = BY_NAME.get(format);
  if (entry === undefined)
    throw new FormatError(
      `unknown format ${JSON.stringify(format)} (expected one of ${FORMAT_NAMES.join(", ")})`,
    );
  return entry;
}

/** Every format's detection test of one kind, in rank order. */
function byRank<T>(
  pick: (f: FormatEntry) => readonly { rank: number; test: T }[],
): { name: FormatName; test: T }[] {
  return FORMATS.flatMap((f: FormatEntry) =>
    pick(f).map((d) => ({ rank: d.rank, name: f.name as FormatName, test: d.test })),
  )
    .sort((a, b) => a.rank - b.rank)
    .map(({ name, test }) => ({ name, test }));
}

/** The detection order, derived from the entries' ranks. */
export const DETECTION = {
  text: byRank((f) => (f.detect.text ? [f.detect.text] : [])),
  document: byRank((f) => f.detect.document ?? []),
  record: byRank((f) => (f.detect.record ? [f.detect.record] : [])),
};

/** What a report's line numbers count: lines of a JSONL file, or messages of a JSON document. */
export function reportUnit(report: Pick<ImportReport, "format" | "unit">): "line" | "message" {
  return report.unit ?? formatEntry(report.format).unit;
}

/** How an error names one unit of a report and several ("event", "events" for OpenHands). */
export function unitNames(report: Pick<ImportReport, "format" | "unit">): readonly [string, string] {
  return (
    formatEntry(report.format).unitNames ??
    (reportUnit(report) === "message" ? ["message", "messages"] : ["line", "lines"])
  );
}

/** The formats `export --to` writes, in the table's order. */
export const EXPORT_TARGETS: readonly FormatName[] = FORMATS.filter(
  (f: FormatEntry) => f.export !== undefined,
).map((f) => f.name);

/** The live context as `export --to format` writes it. */
export function exportLive(format: FormatName, live: readonly Message[], source: ExportSource): string {
  const exporter = formatEntry(format).export;
  if (exporter === undefined)
    throw new FormatError(`export to ${format} is not built (it is for: ${EXPORT_TARGETS.join(", ")})`);
  return exporter.write(live, source);
}

/** The writer for `format`, or undefined when write-back into that format is not built. */
export function forkWriterFor(format: FormatName): ForkWriter | undefined {
  return formatEntry(format).fork?.writer;
}

/** The formats that have a writer, for messages ("claude-code, codex, pi"). */
export function forkFormats(): string {
  return FORMATS.filter((f: FormatEntry) => f.fork !== undefined)
    .map((f) => f.name)
    .join(", ");
}

/** One row per format for the command line's help: `  name  what it reads`, wrapped at 80 columns. */
export function formatsHelp(): string {
  const width = Math.max(...FORMAT_NAMES.map((n) => n.length));
  const indent = " ".repeat(width + 4);
  return FORMATS.map((f) => {
    const rows: string[] = [];
    let row = `  ${f.name.padEnd(width)} `;
    for (const word of f.reads.replace(/`/g, "").split(" ")) {
      if (row.length + 1 + word.length > 80 && row.trim() !== f.name) {
        rows.push(row);
        row = indent.slice(1);
      }
      row += ` ${word}`;
    }
    return [...rows, row].join("\n");
  }).join("\n");
}

/**
 * The library's write-back: `input.replacement` (a compaction's result) as a
 * new session of the agent `format` names, to be written as a new file (at
 * `defaultPath`, beside the original, or anywhere the agent looks). Pure: it
 * reads and writes nothing. Throws a `FormatError` for a format that has no
 * writer.
 */
export function writeFork(format: FormatName, input: ForkInput): WrittenFork {
  const writer = forkWriterFor(format);
  if (writer === undefined)
    throw new FormatError(`write-back into ${format} sessions is not built (it is for: ${forkFormats()})`);
  return writer(input);
}

export type { ExportSource, ForkInput, ForkWriter, WrittenFork };
