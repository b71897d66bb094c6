/**
 * One route for a compaction of a file, as one library call:
 *
 *   lock → tolerant read → active path → live context → pressure and the
 *   threshold → `compactMessagesSafe` → the `compaction` entry → fsynced
 *   append → receipt.
 *
 * The command line's `compact` is argument parsing, this, and printing; a
 * host that embeds the library gets exactly what the command line does. This
 * layer composes the ones below it (journal I/O, the engine, the exporters'
 * request measure); it prints nothing and never exits the process.
 */
import type { CompactionEntry, JournalEntry } from "../model/index.js";
import { CompactSafeError } from "../model/errors.js";
import {
  activePath,
  appendEntries,
  compactionEntry,
  formatProblems,
  projectPath,
  readJournal,
  realJournalPath,
  withJournalLock,
} from "../journal/index.js";
import { readAnchors, readLiveState } from "../workspace/index.js";
import {
  compactMessagesSafe,
  DEFAULT_LADDER_BUDGET_MS,
  type CompactError,
  type CompactOptions,
  type CompactSuccess,
} from "../engine/compact.js";
import { defaultTarget, shouldCompact, type CompactDecision } from "../engine/pressure.js";
import { fastEstimator } from "../engine/tokens.js";
import type { LiveState } from "../workspace/live-state.js";
import type { BackgroundHandle } from "../summarizers/types.js";
import { providerRequestTokens } from "../formats/export/request-size.js";
import { CONSTANTS } from "../model/constants.js";

/** The model's context window assumed when none is given (tokens). */
export const DEFAULT_WINDOW = CONSTANTS.window;
/** The pressure, as a fraction of the window, at which `ifNeeded` compacts. */
export const DEFAULT_THRESHOLD = CONSTANTS.threshold;

export interface CompactJournalOptions extends Omit<
  CompactOptions,
  "window" | "trigger" | "anchors" | "liveState" | "requestSizes"
> {
  /** The model's context window in tokens (default 200,000): the default target is half of it. */
  window?: number;
  /** With `ifNeeded`: the pressure, as a fraction of the window in (0, 1], that calls for compaction (default 0.8). */
  threshold?: number;
  /** Compact only when the pressure reaches the threshold (the trigger is then `auto`, else `manual`). */
  ifNeeded?: boolean;
  /**
   * Where the pinned anchors (`.codewhale/anchors.md`) and the live state (git branch, worktree, HEAD)
   * are read from, unless `anchors` / `liveState` are given. Default: neither is read.
   */
  workspace?: string;
  /** The pinned anchors, restated verbatim in the checkpoint (default: read from `workspace`). */
  anchors?: string;
  /** Live state re-read at compaction time (default: read from `workspace`, with `background`). */
  liveState?: LiveState;
  /** Background-work handles to restate in the live state (with `workspace`). */
  background?: readonly BackgroundHandle[];
  /**
   * The timeout of one summarizer request, in ms, when the summarizer has one: the ladder's budget
   * (`budgetMs`, default 5 minutes) is never shorter than it, so that one slow request is not cut by
   * the budget before its own timeout.
   */
  requestTimeoutMs?: number;
  /** Decide and compact, but write nothing (no lock is taken). */
  dryRun?: boolean;
  /** Each problem the tolerant reader reports (a broken line, a missing parent), one line each. */
  onProblem?: (problem: string) => void;
  /** Progress: called as each step starts. */
  onStep?: (step: "reading" | "compacting" | "writing") => void;
}

/** What a compaction of a session's entries came to (nothing written yet). */
export type EntriesOutcome =
  | {
      kind: "compacted";
      result: CompactSuccess;
      /** The `compaction` entry, child of the leaf it compacts. */
      entry: CompactionEntry;
      decision: CompactDecision;
    }
  /** `ifNeeded` and the pressure is under the threshold. */
  | { kind: "not-needed"; decision: CompactDecision }
  /** Not a failure: the history cannot shrink (the reason names the sizes). */
  | { kind: "nothing"; reason: string; decision: CompactDecision; target: number }
  /** The engine refused (contract violation, unusable summary) or the summarizer failed. */
  | { kind: "refused"; error: CompactError; decision: CompactDecision };

export type JournalOutcome = EntriesOutcome & {
  /** The journal the entry was appended to; null when nothing was written (dry run, or not compacted). */
  journal: string | null;
};

/** The anchors and live state the options give, else read from `workspace` (neither when there is none). */
async function readWorkspace(
  options: CompactJournalOptions,
): Promise<Pick<CompactJournalOptions, "anchors" | "liveState">> {
  const ws = options.workspace;
  return {
    anchors: options.anchors ?? (ws !== undefined ? ((await readAnchors(ws))?.text ?? "") : undefined),
    liveState:
      options.liveState ?? (ws !== undefined ? await readLiveState(ws, options.background) : undefined),
  };
}

/** The ladder's time budget: the one given (default 5 minutes), never shorter than one request's timeout. */
export function ladderBudget(options: Pick<CompactJournalOptions, "budgetMs" | "requestTimeoutMs">): number {
  return Math.max(options.budgetMs ?? DEFAULT_LADDER_BUDGET_MS, options.requestTimeoutMs ?? 0);
}

/**
 * Decides and compacts the live context of `entries` (their active path);
 * never writes. With `ifNeeded` the pressure must reach the threshold first.
 */
export async function compactEntries(
  entries: readonly JournalEntry[],
  options: CompactJournalOptions = {},
): Promise<EntriesOutcome> {
  const path = activePath(entries);
  const leaf = path[path.length - 1];
  if (leaf === undefined) throw new CompactSafeError("empty_session", "the session holds no entries");
  const live = projectPath(path);
  const window = options.window ?? DEFAULT_WINDOW;
  const decision = shouldCompact(
    { messages: live, estimator: options.estimator },
    { window, threshold: options.threshold ?? DEFAULT_THRESHOLD },
  );
  if (options.ifNeeded && !decision.compact) return { kind: "not-needed", decision };
  const { anchors, liveState } = await readWorkspace(options);
  const estimator = options.estimator ?? fastEstimator;
  const result = await compactMessagesSafe(live, {
    ...options,
    window,
    anchors,
    liveState,
    trigger: options.ifNeeded ? "auto" : "manual",
    budgetMs: ladderBudget(options),
    // Shrinking is judged on the requests the exporters would send, too.
    requestSizes: (ms) => providerRequestTokens(ms, estimator.text),
  });
  if (!result.ok) {
    if (result.error.kind === "nothing_to_compact")
      return {
        kind: "nothing",
        reason: result.error.message,
        decision,
        target: options.target ?? defaultTarget(decision.estimate, window),
      };
    return { kind: "refused", error: result.error, decision };
  }
  return { kind: "compacted", result, entry: compactionEntry(result.payload, leaf.id), decision };
}

/**
 * Compacts a compact-safe journal in place: under its lock (a held lock
 * throws `JournalLockedError` at once), reads it tolerantly, compacts its
 * live context and appends ONE `compaction` entry, fsynced. Nothing is
 * written unless the compaction is `ok`; a dry run takes no lock and writes
 * nothing.
 */
export async function compactJournal(
  named: string,
  options: CompactJournalOptions = {},
): Promise<JournalOutcome> {
  // One file for the lock, the read and the append: the journal's real path, resolved once (a symbolic
  // link to it shares its lock, and a link changed meanwhile cannot send the append elsewhere).
  const file = await realJournalPath(named);
  // The workspace (anchors, git state) is read before the lock is taken: the lock covers the journal only.
  const withWorkspace = { ...options, ...(await readWorkspace(options)) };
  const run = async (): Promise<JournalOutcome> => {
    options.onStep?.("reading");
    const { entries, report } = await readJournal(file);
    for (const p of formatProblems(report)) options.onProblem?.(p);
    options.onStep?.("compacting");
    const outcome = await compactEntries(entries, withWorkspace);
    if (outcome.kind !== "compacted" || options.dryRun) return { ...outcome, journal: null };
    options.onStep?.("writing");
    // Through a copy renamed over the journal: a kill mid-write never leaves a torn compaction line.
    await appendEntries(file, [outcome.entry], { lock: false, atomic: true });
    return { ...outcome, journal: named };
  };
  return options.dryRun ? run() : withJournalLock(file, run);
}
