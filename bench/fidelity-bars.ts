/**
 * The totals of `npm run bench:fidelity` and the bars on them (pure): issue
 * 12's at the agent's summary size (`bars`), issue 24's at the command
 * line's default target and on second compactions (`defaultBars`). The rows
 * are what `fidelity.ts` measured, one per compaction.
 */
import type { QueuedMeasure } from "./fidelity-queued.js";
import type { CheckOutcomes } from "./fidelity-checks.js";
import type { ContinuationCues, Count, Kept } from "./fidelity-facts.js";
import type { SectionChange } from "./fidelity-second.js";
import type { PlanRow } from "./fidelity-plan.js";

/** One side (compact-safe or the agent) of one compaction. */
export interface Side {
  /** What the whole replacement keeps. */
  kept: Kept;
  /** What the summary alone keeps. */
  note: Kept;
  summary_chars: number;
  summary_tokens: number;
  next_step: string;
  /** What the next step matched of the work after the cut (null: no hit). */
  next_step_hit: string | null;
  /** What the next step and pending work named of the first calls' files and commands (null: none). */
  next_step_named?: string | null;
}

/** compact-safe's run at the command line's default target. */
export interface DefaultRun extends Side {
  path: string;
  target: number;
  tokens_after: number;
  target_reached: boolean;
  target_missed: string | null;
  summary_budget: number | null;
  /** Whether a note was written (false: prune-only reached the target, no summary). */
  has_note: boolean;
  /** The note's Objective and Next step sections that hold a cut marker. */
  cut_in: string[];
  /** Checks whose output says they failed, as the note's "Commands run" lists them (null: no note). */
  checks?: CheckOutcomes | null;
}

/** The second compaction: the default run's replacement plus what the session did next, compacted again. */
export interface SecondRun {
  /** Messages appended after the first replacement. */
  appended: number;
  /** Tool calls and user directions among them (what "still true" reads). */
  continuation: { calls: number; directions: number };
  path: string | null;
  error: string | null;
  sections: SectionChange[];
  /** Titles of the sections still true that the second note made shorter. */
  shorter: string[];
  /** Plan items the continuation completed that the second note still shows open (see `fidelity-plan.ts`). */
  stale?: string[];
}

export interface Row {
  session: string;
  compaction: string;
  agent: string;
  messages_before: number;
  /** What the session did right after the cut (the next step is compared with it). */
  after_cut: ContinuationCues;
  summary_max_tokens: number;
  target: number;
  compact_safe: (Side & { path: string; tokens_after: number; target_reached: boolean }) | null;
  /** Why compact-safe returned no replacement (null when it did). */
  error: string | null;
  agent_side: Side;
  /** compact-safe's summary tokens / the agent's. */
  size_ratio: number | null;
  /** At the command line's default target (absent: not run; null: no replacement, see `default_error`). */
  default_target?: DefaultRun | null;
  default_error?: string | null;
  /** A second compaction after the default run (null: none, e.g. the default run wrote no note). */
  second?: SecondRun | null;
  /** Prompts queued while the agent worked, named or not (`fidelity-queued.ts`). */
  queued?: QueuedMeasure;
  /** The plan at the cut and the earlier summary opening the span (null: neither; see `fidelity-plan.ts`). */
  plan?: PlanRow | null;
}

export interface Skipped {
  session: string;
  compaction: string;
  reason: string;
}

export type CountKey =
  "files_basename" | "files_relative" | "files_absolute" | "directions" | "errors" | "commands";
export const COUNT_KEYS: CountKey[] = [
  "files_basename",
  "files_relative",
  "files_absolute",
  "directions",
  "errors",
  "commands",
];

type SideTotals = Record<CountKey, Count> & {
  last_instruction: Count;
  next_step_hits: number;
  /** Strict: the next step or pending work names a file or command of the first calls after the cut. */
  next_step_named: number;
};

export interface Totals {
  compact_safe: SideTotals;
  agent: SideTotals;
  summary_chars: { compact_safe: number; agent: number };
  summary_tokens: { compact_safe: number; agent: number };
  /** Compactions after which the session made a tool call (the next step can only be judged there). */
  next_step_cases: number;
}

export interface Bar {
  name: string;
  compact_safe: string;
  agent: string;
  met: boolean;
}

export const FILES_BAR = 0.98;
export const DIRECTIONS_BAR = 1;
export const ERRORS_BAR = 0.95;
export const SIZE_BAR = 1.2;

const zero = (): Count => ({ kept: 0, total: 0 });

function emptyTotals(): Totals["agent"] {
  return {
    files_basename: zero(),
    files_relative: zero(),
    files_absolute: zero(),
    directions: zero(),
    errors: zero(),
    commands: zero(),
    last_instruction: zero(),
    next_step_hits: 0,
    next_step_named: 0,
  };
}

/**
 * The totals over the rows where compact-safe produced a replacement, in scope `kept` or `note`;
 * `pick` chooses compact-safe's run (default: at the agent's size).
 */
export function totals(
  rows: readonly Row[],
  scope: "kept" | "note",
  pick: (r: Row) => Side | null | undefined = (r) => r.compact_safe,
): Totals {
  const t: Totals = {
    compact_safe: emptyTotals(),
    agent: emptyTotals(),
    summary_chars: { compact_safe: 0, agent: 0 },
    summary_tokens: { compact_safe: 0, agent: 0 },
    next_step_cases: 0,
  };
  for (const row of rows) {
    const run = pick(row);
    if (!run) continue;
    if (row.after_cut.calls > 0) t.next_step_cases++;
    for (const [name, s] of [
      ["compact_safe", run],
      ["agent", row.agent_side],
    ] as const) {
      const into = t[name];
      const k = s[scope];
      for (const key of COUNT_KEYS) {
        into[key].kept += k[key].kept;
        into[key].total += k[key].total;
      }
      if (k.last_instruction !== null) {
        into.last_instruction.total++;
        if (k.last_instruction) into.last_instruction.kept++;
      }
      if (s.next_step_hit !== null) into.next_step_hits++;
      if (row.after_cut.calls > 0 && s.next_step_named != null) into.next_step_named++;
      t.summary_chars[name] += s.summary_chars;
      t.summary_tokens[name] += s.summary_tokens;
    }
  }
  return t;
}

export const rate = (c: Count): number => (c.total === 0 ? 1 : c.kept / c.total);
export const pct = (c: Count): string => `${(rate(c) * 100).toFixed(1)} %`;

/** The issue's bars, on the `kept` totals and the rows. */
export function bars(rows: readonly Row[], t: Totals): Bar[] {
  const measured = rows.filter((r) => r.compact_safe !== null);
  const failed = rows.length - measured.length;
  const ratios = measured.map((r) => r.size_ratio ?? Infinity);
  const worst = ratios.length > 0 ? Math.max(...ratios) : 0;
  const overall =
    t.summary_tokens.agent > 0 ? t.summary_tokens.compact_safe / t.summary_tokens.agent : Infinity;
  const cs = t.compact_safe;
  const ag = t.agent;
  const share = (c: Count) => `${pct(c)} (${c.kept}/${c.total})`;
  return [
    {
      name: `compact-safe returns a replacement for every compaction`,
      compact_safe: `${measured.length}/${rows.length}`,
      agent: "-",
      met: failed === 0 && rows.length > 0,
    },
    {
      name: `modified files kept by relative path >= ${FILES_BAR * 100} %`,
      compact_safe: share(cs.files_relative),
      agent: share(ag.files_relative),
      met: rate(cs.files_relative) >= FILES_BAR,
    },
    {
      name: `user directions kept = ${DIRECTIONS_BAR * 100} %`,
      compact_safe: share(cs.directions),
      agent: share(ag.directions),
      met: rate(cs.directions) >= DIRECTIONS_BAR,
    },
    {
      name: `error first lines kept >= ${ERRORS_BAR * 100} %`,
      compact_safe: share(cs.errors),
      agent: share(ag.errors),
      met: rate(cs.errors) >= ERRORS_BAR,
    },
    {
      name: "the last instruction verbatim in every case",
      compact_safe: `${cs.last_instruction.kept}/${cs.last_instruction.total}`,
      agent: `${ag.last_instruction.kept}/${ag.last_instruction.total}`,
      met: cs.last_instruction.kept === cs.last_instruction.total,
    },
    {
      name: `summary size <= ${SIZE_BAR}x the agent's in every case (tokens)`,
      compact_safe: `worst ${worst.toFixed(2)}x, overall ${overall.toFixed(2)}x`,
      agent: "1.00x",
      met: measured.length > 0 && worst <= SIZE_BAR,
    },
    {
      name: "next step names the work done after the cut, at least as often as the agent's",
      compact_safe: `${cs.next_step_hits}/${t.next_step_cases}`,
      agent: `${ag.next_step_hits}/${t.next_step_cases}`,
      met: cs.next_step_hits >= ag.next_step_hits,
    },
  ];
}

/**
 * Issue 24's bars: at the command line's default target (`t` = the `kept` totals of the default runs),
 * and on the second compactions.
 */
export function defaultBars(rows: readonly Row[], t: Totals): Bar[] {
  const runs = rows.map((r) => r.default_target).filter((r): r is DefaultRun => r != null);
  const notes = runs.filter((r) => r.has_note);
  const withCut = notes.filter((r) => r.cut_in.length > 0);
  const seconds = rows.map((r) => r.second).filter((s): s is SecondRun => s != null);
  const compared = seconds.flatMap((s) => s.sections.filter((c) => c.still_true));
  const shorter = seconds.flatMap((s) => s.shorter);
  const failedSeconds = seconds.filter((s) => s.error !== null).length;
  const cs = t.compact_safe;
  const ag = t.agent;
  const share = (c: Count) => `${pct(c)} (${c.kept}/${c.total})`;
  // The next step is judged where a note was written: on prune-only the whole conversation stays live
  // (old tool results stubbed) and there is no note to name it.
  const next = totals(rows, "kept", (r) => (r.default_target?.has_note ? r.default_target : null));
  const n = next.next_step_cases;
  const pruneOnlyCases = rows.filter(
    (r) => r.default_target && !r.default_target.has_note && r.after_cut.calls > 0,
  ).length;
  return [
    {
      name: "default target: compact-safe returns a replacement for every compaction",
      compact_safe: `${runs.length}/${rows.length} (${notes.length} with a note, ${runs.length - notes.length} prune-only)`,
      agent: "-",
      met: rows.length > 0 && runs.length === rows.length,
    },
    {
      name: "default target: no cut marker in any Objective or Next step",
      compact_safe: `${withCut.length}/${notes.length} notes with one`,
      agent: "-",
      met: withCut.length === 0,
    },
    {
      name: "default target: files by relative path kept at least as often as the agent's summary",
      compact_safe: share(cs.files_relative),
      agent: share(ag.files_relative),
      met: rate(cs.files_relative) >= rate(ag.files_relative),
    },
    {
      name: "default target: error first lines kept at least as often as the agent's summary",
      compact_safe: share(cs.errors),
      agent: share(ag.errors),
      met: rate(cs.errors) >= rate(ag.errors),
    },
    {
      name: "default target: next step names a file or command of the work that followed, at least as often as the agent's",
      compact_safe: `${next.compact_safe.next_step_named}/${n} notes (${pruneOnlyCases} more cases prune-only, no note)`,
      agent: `${next.agent.next_step_named}/${n}`,
      met: n > 0 && next.compact_safe.next_step_named >= next.agent.next_step_named,
    },
    checkOutcomesBar(notes),
    {
      name: "second compaction: no section shorter than after the first while still true",
      compact_safe: `${shorter.length} of ${compared.length} sections still true shorter, in ${seconds.length} second compactions${failedSeconds > 0 ? ` (${failedSeconds} failed)` : ""}`,
      agent: "-",
      met: seconds.length > 0 && failedSeconds === 0 && shorter.length === 0,
    },
  ];
}

/** The bar on check outcomes: no check the note lists as `→ ok` whose latest output says it failed. */
export function checkOutcomesBar(notes: readonly DefaultRun[]): Bar {
  let listed = 0;
  const wrong: string[] = [];
  for (const r of notes) {
    listed += r.checks?.failed_listed ?? 0;
    wrong.push(...(r.checks?.reported_ok ?? []));
  }
  return {
    name: "default target: no check reported ok whose output says it failed",
    compact_safe: `${wrong.length} of ${listed} listed checks whose output says they failed reported ok${wrong.length > 0 ? ` (${wrong.slice(0, 3).join("; ")})` : ""}`,
    agent: "-",
    met: wrong.length === 0,
  };
}
