/**
 * `compact-safe compact FILE`: compacts the live context of a session. A
 * journal gets ONE `compaction` entry appended (under its lock, fsynced);
 * any other format is imported and written to `--out` as a new journal with
 * the compaction entry. Nothing is written unless the compaction is `ok`.
 */
import type { Command } from "commander";
import { Option } from "commander";
import { readFile } from "node:fs/promises";
import type { CoverageReceipt, Message } from "../../model/index.js";
import { isProviderCompaction } from "../../model/index.js";
import { FORMAT_NAMES, forkFormats, type FormatName } from "../../formats/registry.js";
import { readBackgroundFile } from "../../workspace/index.js";
import { formatReceipt } from "../../engine/replacement.js";
import type { BackgroundHandle, Summarizer } from "../../summarizers/types.js";
import { createSummarizer, SUMMARIZER_NAMES, type SummarizerName } from "../../summarizers/factory.js";
import { percent, positiveInt, timeoutSeconds, wholeNumber } from "../options.js";
import {
  compactJournal,
  compactSession,
  DEFAULT_THRESHOLD,
  DEFAULT_WINDOW,
  ForkFormatError,
  type CompactJournalOptions,
  type EntriesOutcome,
} from "../../route/index.js";
import { CliError, EXIT, usageError } from "../errors.js";
import { loadSession, looksLikeJournal, parseFormat, looksLikeJournalText, requireFile } from "../io.js";
import { inputName, readStdin, STDIN_NAME, STDIO } from "../stdin.js";
import { toStdout, worded as wordedWrite, writeStdout } from "../write-out.js";
import {
  err,
  num,
  out as print,
  printJson,
  progress,
  PROGRESS_MIN_BYTES,
  style,
  type Progress,
} from "../output.js";

interface CompactCliOptions {
  format?: string;
  out?: string;
  inPlace?: boolean;
  force?: boolean;
  summarizer: SummarizerName | "openai-native";
  prefixFrom?: string;
  nativeMode?: "on-demand" | "threshold";
  model?: string;
  baseUrl?: string;
  timeout?: number;
  window: number;
  threshold: number;
  target?: number;
  summaryTokens?: number;
  keepRecentTokens?: number;
  ifNeeded?: boolean;
  workspace?: string;
  background?: string;
  focus?: string;
  pruneOnly?: boolean;
  foldProviderCompaction?: boolean;
  dryRun?: boolean;
  fork?: boolean;
  json?: boolean;
}

/** How many provider compactions (Anthropic compaction blocks, OpenAI compaction items) `messages` hold. */
function compactionsIn(messages: readonly Message[]): number {
  let n = 0;
  for (const m of messages) for (const b of m.content) if (isProviderCompaction(b)) n++;
  return n;
}

/** The `--json` receipt of `compact`. */
export interface CompactReceipt {
  path: "summary" | "prune-only";
  tokens_before: number;
  tokens_after: number;
  target: number;
  target_reached: boolean;
  /** Why the target was not reached; null when it was. */
  target_missed: string | null;
  /** The summary's size bound in tokens: --summary-tokens, or what the target left; null on prune-only. */
  summary_budget: number | null;
  coverage: CoverageReceipt;
  /**
   * A provider's own compaction in the history (an Anthropic compaction block, an OpenAI compaction
   * item): how many the replacement keeps (the prefix after the system content, or in place on the
   * prune-only path), and how many it folded into the checkpoint, which names each.
   */
  provider_compactions: { kept: number; folded: number };
  /** Id of the new compaction entry; null on --dry-run (nothing was written). */
  checkpoint_id: string | null;
  /** The journal written; null on --dry-run. */
  journal: string | null;
  /** With --fork: the agent session written, its id, and the command that resumes it. */
  fork?: ForkReceipt;
}

export interface ForkReceipt {
  path: string;
  session_id: string;
  resume: string;
}

/** Backoff of the summarizer's retry ladder: COMPACT_SAFE_BACKOFF_MS (milliseconds), default the engine's (1,000). */
function backoffFromEnv(): number | undefined {
  const raw = process.env.COMPACT_SAFE_BACKOFF_MS;
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0)
    throw usageError(
      `COMPACT_SAFE_BACKOFF_MS: expected a number of milliseconds, got ${JSON.stringify(raw)}`,
    );
  return n;
}

async function makeSummarizer(o: CompactCliOptions): Promise<Summarizer> {
  if (o.prefixFrom !== undefined && o.summarizer !== "anthropic-native")
    throw usageError("--prefix-from applies to --summarizer anthropic-native only");
  if (o.nativeMode !== undefined && o.summarizer !== "anthropic-native")
    throw usageError("--native-mode applies to --summarizer anthropic-native only");
  if (o.summarizer === "extractive") {
    if (o.model !== undefined || o.baseUrl !== undefined || o.timeout !== undefined)
      throw usageError(
        "--model, --base-url and --timeout apply to --summarizer openai or anthropic, not extractive",
      );
    return createSummarizer({ name: "extractive" });
  }
  if (o.summarizer === "openai-native") throw usageError(OPENAI_NATIVE_REFUSAL);
  const envName = o.summarizer === "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
  const key = process.env[envName];
  if (key === undefined || key.trim() === "") {
    throw usageError(
      `${envName} is not set (--summarizer ${o.summarizer} needs an API key; for a local server that needs none, set it to any placeholder)`,
    );
  }
  if (o.model === undefined || o.model.trim() === "")
    throw usageError(`--summarizer ${o.summarizer} needs --model (the model that writes the summary)`);
  // The one factory (summarizers/factory.ts) loads the SDK (an optional peer dependency) here, before any
  // input is read, so that a missing one is a one-line error.
  const llm = { model: o.model, baseURL: o.baseUrl, apiKey: key, timeoutMs: o.timeout };
  if (o.summarizer === "anthropic-native") {
    const prefix = o.prefixFrom === undefined ? {} : await readPrefix(o.prefixFrom);
    const { toAnthropicRequest } = await import("../../formats/export/anthropic.js");
    return createSummarizer({
      name: "anthropic-native",
      ...llm,
      mode: o.nativeMode,
      ...prefix,
      wire: toAnthropicRequest,
    });
  }
  return createSummarizer({ name: o.summarizer, ...llm });
}

/**
 * Why `--summarizer openai-native` is refused (docs/DECISIONS.md): the Responses API's
 * `/responses/compact` answers with an encrypted `compaction` item and no visible text.
 */
export const OPENAI_NATIVE_REFUSAL =
  "--summarizer openai-native: OpenAI's POST /responses/compact answers with an encrypted compaction item and no " +
  "visible text, so it cannot be the checkpoint's summary (the survival contract reads the summary, and the " +
  "endpoint takes no summarization instructions); use --summarizer openai or anthropic-native";

/** The `system` and `tools` of a Messages API request body (--prefix-from), as the session's requests send them. */
async function readPrefix(
  file: string,
): Promise<{ system?: string | Record<string, unknown>[]; tools?: Record<string, unknown>[] }> {
  await requireFile(file);
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(file, "utf8"));
  } catch (e) {
    throw usageError(`--prefix-from ${file}: not JSON (${(e as Error).message})`);
  }
  const isObject = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === "object" && !Array.isArray(v);
  if (!isObject(doc))
    throw usageError(`--prefix-from ${file}: expected a Messages API request body { system?, tools?, ... }`);
  const out: { system?: string | Record<string, unknown>[]; tools?: Record<string, unknown>[] } = {};
  if (doc.system !== undefined) {
    if (typeof doc.system !== "string" && !(Array.isArray(doc.system) && doc.system.every(isObject)))
      throw usageError(`--prefix-from ${file}: system must be a string or an array of blocks`);
    out.system = doc.system as string | Record<string, unknown>[];
  }
  if (doc.tools !== undefined) {
    if (!Array.isArray(doc.tools) || !doc.tools.every(isObject))
      throw usageError(`--prefix-from ${file}: tools must be an array of tool definitions`);
    out.tools = doc.tools as Record<string, unknown>[];
  }
  return out;
}

/** The CLI's options as the library route takes them. */
function routeOptions(
  o: CompactCliOptions,
  summarizer: Summarizer,
  workspace: string,
  background: BackgroundHandle[] | undefined,
): CompactJournalOptions {
  return {
    summarizer,
    target: o.target,
    summaryMaxTokens: o.summaryTokens,
    keepRecentTokens: o.keepRecentTokens,
    window: o.window,
    threshold: o.threshold / 100,
    ifNeeded: o.ifNeeded === true,
    focus: o.focus,
    workspace,
    background,
    pruneOnly: o.pruneOnly === true,
    providerCompaction: o.foldProviderCompaction === true ? "fold" : "keep",
    dryRun: o.dryRun === true,
    backoffMs: backoffFromEnv(),
    // The route holds the ladder's budget (5 minutes) to no less than one request's timeout.
    requestTimeoutMs: o.timeout,
  };
}

/** Exit codes for what the route refused; `nothing` and `not-needed` are not failures. */
function throwIfRefused(outcome: EntriesOutcome): void {
  if (outcome.kind !== "refused") return;
  const { kind, message } = outcome.error;
  if (kind === "summarizer_failed") throw new CliError(`summarizer failed: ${message}`, EXIT.SUMMARIZER);
  throw new CliError(`compaction refused (${kind}): ${message}`, EXIT.VIOLATION);
}

function report(
  outcome: EntriesOutcome,
  o: CompactCliOptions,
  source: string,
  journal: string | null,
  appended: boolean,
  fork?: ForkReceipt,
): void {
  // With the journal on standard output (--out -), the human receipt goes to standard error.
  const out = toStdout(o.out) ? err : print;
  if (outcome.kind === "nothing") {
    if (o.json)
      printJson({
        path: "none",
        compacted: false,
        reason: outcome.reason,
        tokens_before: outcome.decision.estimate,
        target: outcome.target,
        journal: null,
      });
    else out(`${outcome.reason} (nothing written)`);
    return;
  }
  if (outcome.kind === "not-needed") {
    const d = outcome.decision;
    const msg = `no compaction needed: ${num(d.tokens)} tokens is under the threshold (${num(d.thresholdTokens)} = ${o.threshold}% of ${num(o.window)})`;
    if (o.json)
      printJson({
        compacted: false,
        reason: msg,
        tokens: d.tokens,
        threshold_tokens: d.thresholdTokens,
      });
    else out(msg);
    return;
  }
  if (outcome.kind === "refused") return;
  const r = outcome.result;
  if (o.json) {
    const receipt: CompactReceipt = {
      path: r.path,
      tokens_before: r.tokens_before,
      tokens_after: r.tokens_after,
      target: r.target,
      target_reached: r.target_reached,
      target_missed: r.target_missed ?? null,
      summary_budget: r.summary_budget ?? null,
      coverage: r.coverage,
      provider_compactions: {
        kept: compactionsIn(r.replacement),
        folded: r.coverage.provider_compactions_folded ?? 0,
      },
      checkpoint_id: journal === null ? null : outcome.entry.id,
      journal,
      ...(fork ? { fork } : {}),
    };
    printJson(receipt);
    return;
  }
  const pct = r.tokens_before > 0 ? Math.round((1 - r.tokens_after / r.tokens_before) * 100) : 0;
  out(
    `${o.dryRun ? style.yellow("dry run: ") : ""}${style.bold(`compacted ${source}`)} (path ${r.path}, summarizer ${r.model})`,
  );
  out(
    `  tokens: ${num(r.tokens_before)} → ${num(r.tokens_after)} (−${pct}%), target ${num(r.target)} ${r.target_reached ? style.green("reached") : style.yellow("not reached")}`,
  );
  if (r.target_missed !== undefined) out(`  target not reached: ${r.target_missed}`);
  if (r.summary_budget !== undefined)
    out(`  note: ${num(r.summary_budget)}-token budget, ${num(r.summary.length)} characters`);
  out(`  coverage: ${formatReceipt(r.coverage)}`);
  const kept = compactionsIn(r.replacement);
  const folded = r.coverage.provider_compactions_folded ?? 0;
  if (kept + folded > 0)
    out(
      `  provider compaction: ${kept > 0 ? `${kept} kept${r.path === "summary" ? " first, before the checkpoint" : " in place"}` : ""}` +
        `${kept > 0 && folded > 0 ? "; " : ""}${folded > 0 ? `${folded} folded into the checkpoint, which names ${folded === 1 ? "it" : "them"}` : ""}`,
    );
  if (r.path === "prune-only")
    out(
      `  pruned: ${r.prune.stubbed} results stubbed, ${r.prune.deduplicated} repeated reads dropped, ${num(r.prune.bytesRemoved)} bytes removed`,
    );
  if (fork) {
    out(`  fork: new session ${fork.session_id} written to ${fork.path} (the original is untouched)`);
    out(`  resume it with: ${style.bold(fork.resume)}`);
    return;
  }
  if (journal === null) out(`  nothing written (--dry-run)`);
  else
    out(
      `  checkpoint: compaction entry ${outcome.entry.id} ${appended ? "appended to" : "written in the new journal"} ${journal}`,
    );
}

/** The `compact` command with its help text and options (no action yet). */
function defineCommand(program: Command): Command {
  return program
    .command("compact")
    .summary("compact a session's live context (journal: append one compaction entry)")
    .description(
      "Compact the live context of FILE with the safe pass (prune-only first, then a summary), validated " +
        "against the survival contract before anything is written. " +
        "A journal gets ONE `compaction` entry appended, under its lock, fsynced (default: in place). " +
        "Any other format is imported and written to --out as a new journal (the source is never modified). " +
        "FILE - reads standard input (then --out is needed: --out - writes the journal to standard output). " +
        "An existing --out (a file or a symbolic link) is refused unless --force, and --out is never FILE itself.\n\n" +
        "Target: --target N, else half of --window; when the live context is already at or under that, " +
        "half the live size (a manual compaction always shrinks). " +
        "--threshold only matters with --if-needed (compact only when the pressure reaches it). " +
        "Summarizer retries back off from COMPACT_SAFE_BACKOFF_MS milliseconds (default 1000); a server's " +
        "retry-after is honoured up to 60 s; each request is cut after --timeout seconds (body included), and " +
        "the whole ladder of calls, retries and waits after 5 minutes (or one --timeout, if longer). " +
        "Anchors are read from WORKSPACE/.codewhale/anchors.md (or the legacy .deepseek/anchors.md), and the " +
        "live state (git branch, worktree, HEAD) from WORKSPACE.\n\n" +
        'Exit codes: 0 ok, or nothing to compact (the reason is printed; --json: path "none"); 1 compaction refused (contract_violation, ' +
        "unusable_summary); 2 usage or input error; 3 summarizer failed; 4 journal locked (never waits).",
    )
    .argument("<file>", "a journal, or a session file of any importable format, or - for standard input")
    .option("--format <format>", `force the input format (${FORMAT_NAMES.join(", ")}); default: detected`)
    .option(
      "--out <journal>",
      "write a new journal (required for a non-journal FILE and for -; never FILE itself; - for standard output)",
    )
    .option("--in-place", "append to the journal FILE itself (the default for a journal)")
    .option(
      "--force",
      "with --out: replace an existing journal (backed up first) or --fork file; never FILE itself",
    )
    .addOption(
      new Option("--summarizer <name>", "who writes the summary")
        .choices([...SUMMARIZER_NAMES, "openai-native"])
        .default("extractive"),
    )
    .option(
      "--prefix-from <request.json>",
      "anthropic-native: a Messages API request body the session sent; its system and tools are sent as they are, so the prompt cache pays",
    )
    .addOption(
      new Option(
        "--native-mode <mode>",
        "anthropic-native: on-demand (the compaction parameter, any span size; the default) or threshold (the older compact_20260112 edit, spans of at least 50,000 input tokens)",
      ).choices(["on-demand", "threshold"]),
    )
    .option("--model <model>", "model of the openai/anthropic summarizer (required for them)")
    .option(
      "--base-url <url>",
      "API root of the openai/anthropic summarizer (e.g. http://localhost:11434/v1)",
    )
    .option(
      "--timeout <seconds>",
      "per-request timeout of the openai/anthropic summarizer, body included (default 120)",
      timeoutSeconds,
    )
    .option("--window <tokens>", "the model's context window", positiveInt("--window"), DEFAULT_WINDOW)
    .option(
      "--threshold <pct>",
      "pressure threshold in percent of the window, for --if-needed",
      percent,
      DEFAULT_THRESHOLD * 100,
    )
    .option(
      "--target <tokens>",
      "size to reach, in estimated tokens (default: see above)",
      positiveInt("--target"),
    )
    .option(
      "--summary-tokens <tokens>",
      "size bound of the summary note (default: what --target leaves after the kept messages, 1,200 to 2,000; 2,000 when the kept messages alone reach the target)",
      positiveInt("--summary-tokens"),
    )
    .option(
      "--keep-recent-tokens <tokens>",
      "on the summary path, keep the newest whole messages before the protected last round verbatim too, up to this many tokens with the round (default 20,000, within what --target leaves after the note; 0: the round only)",
      wholeNumber("--keep-recent-tokens"),
    )
    .option(
      "--if-needed",
      "compact only when the pressure reaches --threshold of --window (exit 0 otherwise)",
    )
    .option("--workspace <dir>", "workspace for anchors and live state (default: the current folder)")
    .option("--background <file>", "JSON list of background-work handles { id, kind, command?, status? }")
    .option("--focus <text>", "what the summary should keep in focus")
    .option("--prune-only", "only try the prune-only path (no summary)")
    .option(
      "--fold-provider-compaction",
      "fold a provider's own compaction (an Anthropic compaction block, an OpenAI compaction item) into the " +
        "checkpoint, which names it, instead of keeping it first: the result can then go to any provider " +
        "(an encrypted summary's content is lost)",
    )
    .option(
      "--fork",
      `write the result back as a NEW session of the agent FILE came from (${forkFormats()}), beside FILE or at --out, ` +
        "and print the command that resumes it; FILE is never modified",
    )
    .option("--dry-run", "print what would happen; write nothing")
    .option("--json", "print the receipt as JSON");
}

/** What the checks of the request found: whether FILE is standard input, its size, whether it is a journal. */
interface CheckedRequest {
  readonly piped: boolean;
  readonly size: number;
  readonly isJournal: boolean;
}

/** Refuses option combinations that do not fit FILE (usage errors); reads only what deciding needs. */
async function checkRequest(
  file: string,
  o: CompactCliOptions,
  format: FormatName | undefined,
): Promise<CheckedRequest> {
  if (o.inPlace && o.out !== undefined) throw usageError("give --in-place or --out, not both");
  const piped = file === STDIO;
  if (piped && (o.inPlace || o.fork))
    throw usageError(
      `${inputName(file)}: ${o.fork ? "--fork writes beside the agent's session file" : "--in-place appends to a journal file"}, ` +
        "and standard input is none; use --out JOURNAL (or --out - for standard output)",
    );
  if (toStdout(o.out) && o.json)
    throw usageError("--out - writes the journal to standard output; --json cannot go there too");
  if (toStdout(o.out) && o.fork)
    throw usageError("--fork writes a session file the agent resumes; give --out FILE, not -");
  const size = await requireFile(file);
  const journalText = async () =>
    piped ? looksLikeJournalText((await readStdin()).toString("utf8")) : looksLikeJournal(file);
  const isJournal = format === "journal" || (format === undefined && (await journalText()));
  // A forced --format journal on a file that is not one: reading it gives the error that says what it is.
  if (format === "journal" && !(await journalText())) await loadSession(file, "journal");
  if (!isJournal && o.inPlace) {
    throw usageError(
      `${file}: --in-place appends to compact-safe journals only and this is a session file; use --out JOURNAL to write a new journal (the source is never modified)`,
    );
  }
  if (o.fork && (isJournal || o.inPlace))
    throw usageError(
      `${file}: --fork writes an agent's own session (${forkFormats()}) from its session file; ` +
        "for a compact-safe journal use --in-place or --out",
    );
  if (piped && o.out === undefined && !o.dryRun)
    throw usageError(
      `${inputName(file)}: a session from standard input is written to --out JOURNAL (or --out - for standard output)`,
    );
  if (!isJournal && o.out === undefined && !o.dryRun && !o.fork)
    throw usageError(
      `${file}: not a journal; use --out JOURNAL to write the compacted session as a new journal`,
    );
  if (o.force && o.out === undefined) throw usageError("--force applies to --out only");
  return { piped, size, isJournal };
}

/** The action of `compact`: checks the request, then compacts in place or out of place and reports. */
async function compactAction(file: string, o: CompactCliOptions): Promise<void> {
  const format = parseFormat(o.format);
  const { piped, size, isJournal } = await checkRequest(file, o, format);
  const summarizer = await makeSummarizer(o);
  const workspace = o.workspace ?? process.cwd();
  if (o.background !== undefined) await requireFile(o.background);
  const background = o.background !== undefined ? await readBackgroundFile(o.background) : undefined;
  const bar = progress(3, { json: o.json === true, show: size >= PROGRESS_MIN_BYTES });
  const warn = (p: string) => err(style.yellow(`compact-safe: warning: ${p} (skipped)`, process.stderr));
  const route: CompactJournalOptions = {
    ...routeOptions(o, summarizer, workspace, background),
    onStep: (step) => bar.step(step),
  };

  try {
    if (isJournal && o.out === undefined && !piped) {
      // In place: the lock is held from reading the journal to the append; a held lock fails at once (exit 4).
      let shown = 0;
      const outcome = await compactJournal(file, {
        ...route,
        onProblem: (p) => {
          if (shown++ < 5) warn(p);
        },
      });
      bar.done();
      throwIfRefused(outcome);
      report(outcome, o, file, outcome.journal, true);
      return;
    }
    await compactOutOfPlace(file, o, format, isJournal, route, bar, warn);
  } finally {
    bar.done();
  }
}

/** The library's refusals of a fork, worded for the command line (naming its options). */
function worded(e: unknown): unknown {
  if (e instanceof ForkFormatError)
    return usageError(
      `${e.file}: --fork writes agent sessions (${forkFormats()}); this file is ${e.format}, ` +
        "so use --out JOURNAL to write a compact-safe journal instead",
    );
  return wordedWrite(e);
}

/**
 * Compaction of a session read whole (any format, standard input, --fork, --out, --dry-run): the
 * route writes the result as a new journal or a fork, never into FILE; `--out -` prints the journal.
 */
async function compactOutOfPlace(
  file: string,
  o: CompactCliOptions,
  format: FormatName | undefined,
  isJournal: boolean,
  route: CompactJournalOptions,
  bar: Progress,
  warn: (problem: string) => void,
): Promise<void> {
  let problems = 0;
  let warnings = 0;
  const outcome = await compactSession(file === STDIO ? STDIN_NAME : file, {
    ...route,
    format,
    journal: isJournal,
    content: file === STDIO ? await readStdin() : undefined,
    out: toStdout(o.out) ? undefined : o.out,
    fork: o.fork === true,
    force: o.force === true,
    onProblem: (p) => {
      if (problems++ < 5) warn(p);
    },
    onWarning: (w) => {
      if (warnings++ < 5) err(style.yellow(`compact-safe: warning: ${w}`, process.stderr));
    },
  }).catch((e: unknown) => {
    throw worded(e);
  });
  throwIfRefused(outcome);
  const output = outcome.output;
  if (output?.kind === "journal" && output.path === null && toStdout(o.out)) {
    bar.step("writing");
    await writeStdout(output.text);
  }
  bar.done();
  if (output?.kind === "fork") {
    report(outcome, o, file, null, false, {
      path: output.path,
      session_id: output.sessionId,
      resume: output.resume,
    });
    return;
  }
  report(outcome, o, outcome.file, output === null ? null : (output.path ?? "(stdout)"), false);
}

export function register(program: Command): void {
  defineCommand(program).action(compactAction);
}
