/**
 * The pure parts of `npm run bench:peers` (see peers.ts): the shared budget,
 * the stand-in note, the command-line options, the sizes of what each
 * library sends its summarizer, the figures of the child processes gathered
 * into rows, the bar, and the printed table. Nothing here measures, imports a
 * peer or touches the file system.
 */
import { isDeepStrictEqual } from "node:util";
import { median, type Timed } from "./harness.js";
import { CONSTANTS } from "../src/model/constants.js";

export const LIBS = ["compact-safe", "pi", "langchain"] as const;
export type Lib = (typeof LIBS)[number];

/** The budget, as a fraction of the session's size in compact-safe's estimate (`fastEstimator`). */
export const BUDGET_FRACTION = 0.3;

/** The budget in tokens: compact when over it, and keep about that much (see peers.ts for each library's options). */
export function budgetTokens(estimatedTokens: number): number {
  return Math.max(1, Math.floor(estimatedTokens * BUDGET_FRACTION));
}

/**
 * The stand-in summarizer's answer, the same for the three libraries: a
 * short handoff note with the usual sections (not a placeholder, so that
 * compact-safe's engine accepts it).
 */
export const STAND_IN_NOTE = [
  "## Objective",
  "Continue the user's current task in this repository as the kept messages show it.",
  "## Work done",
  "The earlier part of the session was read, edited and tested; the kept messages show where it stands.",
  "## Next step",
  "Resume from the last kept message.",
].join("\n");

/** Cold repetitions (fresh child processes) per input and library. */
export const DEFAULT_COLD_REPS = 3;
export const DEFAULT_SIZES: readonly number[] = [1_000, 10_000, 100_000];

/**
 * Timed cold pairs and warm calls per process: up to 7 of each (3 over 20k messages), within
 * about COLD_BUDGET_MS and WARM_BUDGET_MS of wall-clock time (each with its fresh copy, its
 * conversion and its parse: on the largest histories one pair takes seconds), at least one.
 */
export function repsFor(messages: number): number {
  return messages <= 20_000 ? 7 : 3;
}
export const COLD_BUDGET_MS = 4_000;
export const WARM_BUDGET_MS = 3_000;

export interface PeerArgs {
  json: boolean;
  only: string | undefined;
  sizes: number[];
  coldReps: number;
}

/** The command line (`--json`, `--only S`, `--sizes 1000,10000` (`--sizes none` for none), `--cold-reps N`). */
export function parseArgs(argv: readonly string[]): PeerArgs | { error: string } {
  const out: PeerArgs = {
    json: false,
    only: undefined,
    sizes: [...DEFAULT_SIZES],
    coldReps: DEFAULT_COLD_REPS,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string | undefined => {
      const v = argv[i + 1];
      i++;
      return v === undefined || v.startsWith("--") ? undefined : v;
    };
    if (a === "--json") out.json = true;
    else if (a === "--only") {
      const v = value();
      if (v === undefined) return { error: "--only needs a substring of an input's name" };
      out.only = v;
    } else if (a === "--sizes") {
      const v = value();
      if (v === undefined) return { error: "--sizes needs a list such as 1000,10000 (or none)" };
      if (v === "none") out.sizes = [];
      else {
        const sizes = v.split(",").map((s) => Number(s.trim()));
        const bad = sizes.find((n) => !Number.isInteger(n) || n < 2);
        if (bad !== undefined)
          return { error: `--sizes: ${JSON.stringify(v)} is not a list of integers >= 2` };
        out.sizes = sizes;
      }
    } else if (a === "--cold-reps") {
      const v = value();
      const n = Number(v);
      if (v === undefined || !Number.isInteger(n) || n < 1 || n > 15)
        return { error: "--cold-reps needs an integer from 1 to 15" };
      out.coldReps = n;
    } else
      return { error: `unknown option ${JSON.stringify(a)} (options: --json, --only, --sizes, --cold-reps)` };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// What each library sends its summarizer, as text

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null;

/** The text of a content that is a string or an array of parts (`text` parts; others count as nothing). */
function contentTexts(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const part of content) {
    if (typeof part === "string") out.push(part);
    else if (isRec(part) && typeof part.text === "string") out.push(part.text);
  }
  return out;
}

/** What pi-ai's provider is sent for one request (`Context`): its system prompt and its messages' texts. */
export function piRequestTexts(context: unknown): string[] {
  if (!isRec(context)) return [];
  const out: string[] = [];
  if (typeof context.systemPrompt === "string") out.push(context.systemPrompt);
  if (Array.isArray(context.messages))
    for (const m of context.messages) if (isRec(m)) out.push(...contentTexts(m.content));
  return out;
}

/** What a LangChain chat model is invoked with: its messages' texts. */
export function langChainInputTexts(messages: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const m of messages) if (isRec(m)) out.push(...contentTexts(m.content));
  return out;
}

/** Where two message arrays first differ (index and what), or null when they are deeply equal. */
export function firstDifference(before: readonly unknown[], after: readonly unknown[]): string | null {
  const n = Math.min(before.length, after.length);
  for (let i = 0; i < n; i++) {
    if (isDeepStrictEqual(before[i], after[i])) continue;
    const a = before[i] as Rec;
    const b = after[i] as Rec;
    const keys = [...new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})])];
    const diff = keys.filter((k) => !isDeepStrictEqual(a?.[k], b?.[k]));
    return `message ${i} (${String(a?.role)}) differs in ${diff.join(", ") || "its type"}`;
  }
  if (before.length !== after.length) return `${before.length} messages became ${after.length}`;
  return null;
}

// ---------------------------------------------------------------------------------------------
// Figures

export interface ContractVerdict {
  valid: boolean;
  /** The first violation, null when valid. */
  reason: string | null;
}

/** What one child process reports: one library, one input, one fresh process. */
export interface ChildReport {
  lib: Lib;
  input: string;
  kind: "corpus" | "synthetic";
  rep: number;
  messages: number;
  bytes: number;
  tokens_before: number;
  budget: number;
  /** The process's very first call (it also compiles the library's code), and the parse timed before it. */
  first_ms: number;
  first_parse_ms: number;
  /** Cold: after the warm-up, pairs of a parse and a call on a fresh copy that nothing has touched. */
  cold: Timed;
  /** Warm: after the same warm-up, repeated calls on the same objects (caches filled), interleaved with parses. */
  warm: Timed;
  /** What the stand-in summarizer was sent on the first call (all calls of the compaction). */
  summarizer: { calls: number; chars: number; tokens: number };
  /** `summary`, `prune-only`, or why no new history was made. */
  outcome: string;
  compacted: boolean;
  result_messages: number | null;
  /** compact-safe's validator on the result converted back (null when there is no result). */
  contract: ContractVerdict | null;
  /** Rep 0 of pi and LangChain: whether the conversion gives the compact-safe messages back. */
  roundtrip: { ok: boolean; detail: string | null } | null;
}

export interface ChildFailure {
  lib: Lib;
  input: string;
  kind: "corpus" | "synthetic";
  rep: number;
  failed: string;
}

export function isFailure(r: ChildReport | ChildFailure): r is ChildFailure {
  return "failed" in r;
}

/** One input and one library, its children gathered. */
export interface Row {
  input: string;
  kind: "corpus" | "synthetic";
  lib: Lib;
  messages: number;
  bytes: number;
  tokens_before: number;
  budget: number;
  /** Median over the fresh children of each child's cold ratio (the headline). */
  cold_ratio: number | null;
  /** Children (fresh processes) that reported; and the timed cold pairs in each (the first child's). */
  cold_reps: number;
  cold_pairs: number;
  /** Median over the children of first / its parse. */
  first_ratio: number | null;
  /** Median over the children of each child's warm ratio. */
  warm_ratio: number | null;
  warm_reps: number;
  cold_ms: number | null;
  first_ms: number | null;
  warm_ms: number | null;
  summarizer_calls: number | null;
  summarizer_chars: number | null;
  summarizer_tokens: number | null;
  outcome: string;
  result_messages: number | null;
  contract: ContractVerdict | null;
  roundtrip: { ok: boolean; detail: string | null } | null;
  /** A child that failed (crash, timeout): its reason. */
  failed: string | null;
}

/** The children's reports gathered into one row per input and library, in input order, then library order. */
export function gatherRows(reports: readonly (ChildReport | ChildFailure)[]): Row[] {
  const inputs: string[] = [];
  const byKey = new Map<string, (ChildReport | ChildFailure)[]>();
  for (const r of reports) {
    if (!inputs.includes(r.input)) inputs.push(r.input);
    const key = `${r.input}\u0000${r.lib}`;
    const list = byKey.get(key);
    if (list) list.push(r);
    else byKey.set(key, [r]);
  }
  const rows: Row[] = [];
  for (const input of inputs) {
    for (const lib of LIBS) {
      const list = byKey.get(`${input}\u0000${lib}`);
      if (!list) continue;
      const ok = list.filter((r): r is ChildReport => !isFailure(r)).sort((a, b) => a.rep - b.rep);
      const failures = list.filter(isFailure);
      const first = ok.find((r) => r.rep === 0) ?? ok[0];
      const med = (f: (r: ChildReport) => number): number | null =>
        ok.length > 0 ? median(ok.map(f)) : null;
      rows.push({
        input,
        kind: list[0]!.kind,
        lib,
        messages: first?.messages ?? 0,
        bytes: first?.bytes ?? 0,
        tokens_before: first?.tokens_before ?? 0,
        budget: first?.budget ?? 0,
        cold_ratio: med((r) => r.cold.ratio),
        cold_reps: ok.length,
        cold_pairs: first?.cold.reps ?? 0,
        cold_ms: med((r) => r.cold.compact_ms),
        first_ratio: med((r) => r.first_ms / r.first_parse_ms),
        first_ms: med((r) => r.first_ms),
        warm_ratio: med((r) => r.warm.ratio),
        warm_ms: med((r) => r.warm.compact_ms),
        warm_reps: first?.warm.reps ?? 0,
        summarizer_calls: first ? first.summarizer.calls : null,
        summarizer_chars: first ? first.summarizer.chars : null,
        summarizer_tokens: first ? first.summarizer.tokens : null,
        outcome: first?.outcome ?? "failed",
        result_messages: first?.result_messages ?? null,
        contract: first?.contract ?? null,
        roundtrip: first?.roundtrip ?? null,
        failed: failures.length > 0 ? failures.map((f) => `rep ${f.rep}: ${f.failed}`).join("; ") : null,
      });
    }
  }
  return rows;
}

export interface BarVerdict {
  met: boolean;
  /** One line per corpus session where compact-safe's result does not keep the contract (or was not measured). */
  misses: string[];
  sessions: number;
}

const fmtRatio = (x: number | null): string => (x === null || !Number.isFinite(x) ? "-" : `${x.toFixed(2)}x`);

/**
 * The bar, on every corpus session: compact-safe's result keeps the survival contract. Speed and
 * summarizer input are reported beside pi's and LangChain's, not judged: neither peer does the same
 * work (neither redacts nor keeps the contract), so no ratio to theirs says what compact-safe owes.
 * A failed child or a missing row is a miss.
 */
export function barVerdict(rows: readonly Row[]): BarVerdict {
  const misses: string[] = [];
  const corpus = [...new Set(rows.filter((r) => r.kind === "corpus").map((r) => r.input))];
  for (const input of corpus) {
    const cs = rows.find((r) => r.input === input && r.lib === "compact-safe");
    if (!cs) misses.push(`${input}: compact-safe was not measured`);
    else if (cs.failed) misses.push(`${input}: compact-safe failed (${cs.failed})`);
    else if (!cs.contract) misses.push(`${input}: compact-safe made no result (${cs.outcome})`);
    else if (!cs.contract.valid) misses.push(`${input}: the contract is not kept: ${cs.contract.reason}`);
  }
  return { met: misses.length === 0 && corpus.length > 0, misses, sessions: corpus.length };
}

// ---------------------------------------------------------------------------------------------
// The table

export interface TableMeta {
  versions: Record<string, string>;
  date: string;
  machine: string;
  coldReps: number;
  seconds: number;
}

export const BUDGET_TEXT =
  `budget B = ${Math.round(BUDGET_FRACTION * 100)} % of the session's estimated tokens (compact-safe fastEstimator): ` +
  `compact-safe keepRecentTokens B, target B + the note's cap (${CONSTANTS.summaryMaxTokens}); pi keepRecentTokens B (reserveTokens default); ` +
  `LangChain trigger { tokens: B }, keep { tokens: B } (other options default)`;

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

const shortLib: Record<Lib, string> = { "compact-safe": "compact-safe", pi: "pi", langchain: "langchain" };

function contractText(r: Row): string {
  if (r.failed && r.cold_reps === 0) return `FAILED: ${r.failed}`;
  if (!r.contract) return r.outcome;
  return r.contract.valid ? `valid (${r.outcome})` : `INVALID: ${r.contract.reason}`;
}

function roundtripText(r: Row): string {
  if (r.lib === "compact-safe") return "n/a";
  if (!r.roundtrip) return "-";
  return r.roundtrip.ok ? "ok" : `FAILS: ${r.roundtrip.detail}`;
}

const kb = (bytes: number): string =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.round(bytes / 1024)} KB`;

function medianOf(xs: readonly (number | null)[]): number | null {
  const v = xs.filter((x): x is number => x !== null && Number.isFinite(x));
  return v.length > 0 ? median(v) : null;
}

/** The one table: a line per input, then a row per library; then the medians and the bar. */
export function renderTable(rows: readonly Row[], meta: TableMeta, bar: BarVerdict): string {
  const lines: string[] = [];
  lines.push(
    `bench:peers — ${Object.entries(meta.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  );
  lines.push(`${meta.date}, ${meta.machine}`);
  lines.push(BUDGET_TEXT);
  lines.push(
    `times: the process's CPU time (user + system), as a ratio to JSON.parse of the same input timed beside it in the same process; ` +
      `median over ${meta.coldReps} fresh processes of each process's median`,
  );
  lines.push(
    `  cold (the headline): a call on a fresh copy of the messages that nothing has touched, after untimed warm-up calls ` +
      `on fresh copies (JIT steady state), in pairs with a parse`,
  );
  lines.push(`  first: the process's very first call (it also compiles the library's code: a start-up cost)`);
  lines.push(
    `  warm: repeated calls on the same objects after the same warm-up (caches filled), interleaved with parses`,
  );
  lines.push(`  summarizer input: what the instant stand-in was sent (chars, ~tokens by fastEstimator)`);
  lines.push("");
  const head = [
    pad("library", 15),
    pad("cold", 8, true),
    pad("first", 8, true),
    pad("warm", 8, true),
    pad("cold ms", 9, true),
    pad("first ms", 9, true),
    pad("warm ms", 9, true),
    pad("summ chars", 11, true),
    pad("~tokens", 8, true),
    pad("calls", 5, true),
    pad("msgs out", 8, true),
    "  round-trip",
    "  contract",
  ].join(" ");
  lines.push(head);
  lines.push("-".repeat(head.length + 20));
  const inputs = [...new Set(rows.map((r) => r.input))];
  const ms = (x: number | null): string => (x === null ? "-" : x.toFixed(x < 10 ? 2 : 0));
  for (const input of inputs) {
    const group = rows.filter((r) => r.input === input);
    const g = group[0]!;
    lines.push(
      `${input}  (${g.messages} messages, ${kb(g.bytes)}, ~${g.tokens_before} tokens, B = ${g.budget}; ` +
        `${g.cold_pairs} cold pairs, ${g.warm_reps} warm calls per process)`,
    );
    for (const r of group) {
      lines.push(
        [
          pad(`  ${shortLib[r.lib]}`, 15),
          pad(fmtRatio(r.cold_ratio), 8, true),
          pad(fmtRatio(r.first_ratio), 8, true),
          pad(fmtRatio(r.warm_ratio), 8, true),
          pad(ms(r.cold_ms), 9, true),
          pad(ms(r.first_ms), 9, true),
          pad(ms(r.warm_ms), 9, true),
          pad(r.summarizer_chars === null ? "-" : String(r.summarizer_chars), 11, true),
          pad(r.summarizer_tokens === null ? "-" : String(r.summarizer_tokens), 8, true),
          pad(r.summarizer_calls === null ? "-" : String(r.summarizer_calls), 5, true),
          pad(r.result_messages === null ? "-" : String(r.result_messages), 8, true),
          `  ${pad(roundtripText(r), 10)}`,
          `  ${contractText(r)}${r.failed && r.cold_reps > 0 ? ` (FAILED ${r.failed})` : ""}`,
        ].join(" "),
      );
    }
  }
  lines.push("");
  lines.push("medians over the corpus sessions:");
  const corpus = rows.filter((r) => r.kind === "corpus");
  for (const lib of LIBS) {
    const mine = corpus.filter((r) => r.lib === lib);
    if (mine.length === 0) continue;
    const valid = mine.filter((r) => r.contract?.valid).length;
    const rt = mine.filter((r) => r.roundtrip && !r.roundtrip.ok).length;
    lines.push(
      `  ${pad(lib, 13)} cold ${fmtRatio(medianOf(mine.map((r) => r.cold_ratio)))} (max ${fmtRatio(
        mine.reduce<number | null>(
          (m, r) => (r.cold_ratio === null ? m : Math.max(m ?? 0, r.cold_ratio)),
          null,
        ),
      )}), first ${fmtRatio(medianOf(mine.map((r) => r.first_ratio)))}, warm ${fmtRatio(
        medianOf(mine.map((r) => r.warm_ratio)),
      )}, summarizer input ${
        medianOf(mine.map((r) => r.summarizer_chars))?.toFixed(0) ?? "-"
      } chars, contract valid on ${valid}/${mine.length}${lib === "compact-safe" ? "" : `, round-trip failures ${rt}`}`,
    );
  }
  lines.push("");
  lines.push(
    `bar (every corpus session: compact-safe's result keeps the survival contract; speed and summarizer input ` +
      `reported, not judged): ${bar.met ? "MET" : "NOT MET"} (${bar.sessions - bar.misses.length}/${bar.sessions} sessions)`,
  );
  for (const m of bar.misses) lines.push(`  miss: ${m}`);
  lines.push(`(${meta.seconds.toFixed(0)} s)`);
  return lines.join("\n");
}
