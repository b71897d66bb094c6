/**
 * `npm run bench:fidelity`: compact-safe's extractive note against the agents'
 * own summaries, on every compaction that a corpus session records (Claude
 * Code's `compact_boundary` + compact summary, pi's and gjc's `compaction`
 * entries). For each one, the live context just before it is compacted again
 * with the extractive summarizer at the size of the agent's summary
 * (`summaryMaxTokens` = the summary's estimated tokens, target = that plus
 * what the replacement keeps verbatim), and the facts of that context
 * (`fidelity-facts.ts`) are looked up in both outputs:
 * - "kept" (the table's rows and the bars): what the resumed agent reads,
 *   i.e. the whole replacement (compact-safe: retained user messages, the
 *   note, the protected last round; the agent: its summary, and for pi the
 *   messages it kept);
 * - "note" (a second totals row): the summaries alone (compact-safe's
 *   checkpoint message, the agent's summary text).
 * The next step is read from the summaries; it is a hit when it names work
 * the session did right after the cut (its first tool calls there).
 *
 * Each compaction is also compacted at the command line's default target
 * (half the 200,000-token window assumed, or half the live size when that is
 * smaller; sizes judged on the exporters' request bodies too), which is what
 * a user gets from `compact-safe compact`. There the bars (`defaultBars`)
 * compare with the agent's own summary: no cut marker in any Objective or
 * Next step; files by relative path and error first lines kept at least as
 * often; the next step and pending work naming a file or command of the
 * first calls after the cut (`nextStepNamed`) at least as often, judged on
 * the notes (a prune-only run writes none). When that run wrote a note, its
 * replacement plus what the session did next (up to its next compaction) is
 * compacted again, and no section of the second note may be shorter than in
 * the first while still true (`fidelity-second.ts` defines "still true").
 *
 * Prints a table and the issue's bars (`--json`: the same as JSON). Exits 1
 * when a bar is not met, 0 when all are, 2 when the corpus is missing.
 */
import { existsSync } from "node:fs";
import { basename, dirname } from "node:path";
import { importFile } from "../src/formats/index.js";
import type { CompactionEntry, JournalEntry, Message } from "../src/model/index.js";
import { activePath, childrenIndex, projectPath } from "../src/journal/tree.js";
import { compactMessagesSafe, fastEstimator, replacementParts, verbatimTokens } from "../src/engine/index.js";
import { extractiveSummarizer } from "../src/summarizers/index.js";
import { protectedRound } from "../src/contract/rounds.js";
import { providerRequestTokens } from "../src/formats/export/request-size.js";
import { CONSTANTS } from "../src/model/constants.js";
import { corpusDir, corpusFiles } from "../test/support.js";
import {
  continuationCues,
  directionOf,
  followingWorkText,
  historyFacts,
  keptFacts,
  messagesText,
  nextStepHit,
  nextStepNamed,
  nextStepText,
  type ContinuationCues,
  type Count,
  type Kept,
} from "./fidelity-facts.js";
import { checkOutcomes } from "./fidelity-checks.js";
import { compareSections, cutInObjectiveOrNextStep, shorterStillTrue } from "./fidelity-second.js";
import { measureQueued, queuedAtEnd, queuedAtEndBar, queuedBars } from "./fidelity-queued.js";
import { planAt, planBars, planRow, staleItems } from "./fidelity-plan.js";
import {
  bars,
  COUNT_KEYS,
  defaultBars,
  type DefaultRun,
  type SecondRun,
  pct,
  totals,
  type Row,
  type Side,
  type Skipped,
  type Totals,
} from "./fidelity-bars.js";

/** The messages after a compaction: the path from it to its last descendant in file order. */
function afterCut(entries: readonly JournalEntry[], c: CompactionEntry): Message[] {
  const children = childrenIndex(entries);
  const order = new Map(entries.map((e, i) => [e.id, i]));
  let leaf = c.id;
  const stack = [c.id];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (order.get(id)! > order.get(leaf)!) leaf = id;
    for (const k of children.get(id) ?? []) stack.push(k);
  }
  const path = activePath(entries, leaf);
  const out: Message[] = [];
  for (const e of path.slice(path.findIndex((x) => x.id === c.id) + 1)) {
    if (e.kind === "compaction") break;
    if (e.kind === "user" || e.kind === "assistant" || e.kind === "tool_result" || e.kind === "message")
      out.push(e.payload as Message);
  }
  return out;
}

function side(kept: Kept, note: Kept, summary: string, cues: ContinuationCues): Side {
  const next = nextStepText(summary);
  return {
    kept,
    note,
    summary_chars: summary.length,
    summary_tokens: fastEstimator.text(summary),
    next_step: next,
    next_step_hit: nextStepHit(next, cues) ?? null,
    next_step_named: nextStepNamed(followingWorkText(summary), cues) ?? null,
  };
}

/** The command line's defaults: half the assumed window as target, sizes judged on the exporters' bodies. */
const cliDefaults = {
  window: CONSTANTS.window,
  requestSizes: (ms: readonly Message[]) => providerRequestTokens(ms, fastEstimator.text),
};

/** What `compact` at the default target gives the resumed agent to read, and its note alone (null: no replacement). */
async function defaultTexts(ms: readonly Message[]): Promise<{ kept: string; note: string } | null> {
  const d = await compactMessagesSafe([...ms], { summarizer: extractiveSummarizer(), ...cliDefaults });
  return d.ok
    ? { kept: messagesText(d.replacement), note: d.checkpoint ? messagesText([d.checkpoint]) : "" }
    : null;
}

/** The second compaction: `first`'s replacement, then what the session did next, compacted again. */
async function secondCompaction(
  first: Message[],
  firstNote: string,
  after: Message[],
  before: readonly Message[],
): Promise<SecondRun> {
  const calls = after.reduce((n, m) => n + m.content.filter((b) => b.type === "tool_use").length, 0);
  const directions = after.filter((m) => directionOf(m) !== undefined).length;
  const run: SecondRun = {
    appended: after.length,
    continuation: { calls, directions },
    path: null,
    error: null,
    sections: [],
    shorter: [],
  };
  const r = await compactMessagesSafe([...first, ...after], {
    summarizer: extractiveSummarizer(),
    ...cliDefaults,
  });
  if (!r.ok) {
    run.error = `${r.error.kind}: ${r.error.message}`;
    return run;
  }
  run.path = r.path;
  // On prune-only the first checkpoint stays as it was: that is the second note.
  const secondNote = r.checkpoint ? messagesText([r.checkpoint]) : "";
  run.sections = compareSections(firstNote, secondNote, run.continuation);
  run.shorter = shorterStillTrue(run.sections).map((c) => `${c.title} ${c.first} -> ${c.second}`);
  run.stale = staleItems(firstNote, secondNote, planAt([...before, ...after]));
  return run;
}

async function measure(file: string, entries: JournalEntry[], c: CompactionEntry): Promise<Row | Skipped> {
  const session = `${basename(dirname(file))}/${basename(file)}`;
  const agent = String(c.payload.source_agent);
  const before = c.parent_id ? projectPath(activePath(entries, c.parent_id)) : [];
  if (before.length === 0 || protectedRound(before).regionStart === 0)
    return {
      session,
      compaction: c.id,
      reason:
        before.length === 0
          ? "the session starts with it (the context before it is not in the file)"
          : "the context before it is all protected last round",
    };
  const header = entries.find((e) => e.kind === "header");
  const cwd = typeof header?.payload.cwd === "string" ? header.payload.cwd : undefined;
  const facts = historyFacts(before, cwd);
  const cues = continuationCues(afterCut(entries, c));
  const agentSummary = c.payload.summary;
  const summaryMaxTokens = fastEstimator.text(agentSummary);
  const verbatim = verbatimTokens(replacementParts(before, { estimator: fastEstimator }), undefined);
  const target = summaryMaxTokens + verbatim;
  const agentSide = side(
    keptFacts(facts, messagesText(c.payload.replacement)),
    keptFacts(facts, agentSummary),
    agentSummary,
    cues,
  );
  const row: Row = {
    session,
    compaction: c.id,
    agent,
    messages_before: before.length,
    after_cut: cues,
    summary_max_tokens: summaryMaxTokens,
    target,
    compact_safe: null,
    error: null,
    agent_side: agentSide,
    size_ratio: null,
  };
  const d = await compactMessagesSafe(before, { summarizer: extractiveSummarizer(), ...cliDefaults });
  if (!d.ok) {
    row.default_target = null;
    row.default_error = `${d.error.kind}: ${d.error.message}`;
    row.second = null;
  } else {
    const note = d.checkpoint && d.path === "summary" ? messagesText([d.checkpoint]) : "";
    const run: DefaultRun = {
      ...side(keptFacts(facts, messagesText(d.replacement)), keptFacts(facts, note), d.summary, cues),
      path: d.path,
      target: d.target,
      tokens_after: d.tokens_after,
      target_reached: d.target_reached,
      target_missed: d.target_missed ?? null,
      summary_budget: d.summary_budget ?? null,
      has_note: d.path === "summary",
      cut_in: d.path === "summary" ? cutInObjectiveOrNextStep(note) : [],
      checks: d.path === "summary" ? checkOutcomes(before, note) : null,
    };
    row.default_target = run;
    row.default_error = null;
    row.second = run.has_note
      ? await secondCompaction(d.replacement, note, afterCut(entries, c), before)
      : null;
  }
  row.queued = measureQueued(
    before,
    d.ok
      ? { kept: messagesText(d.replacement), note: d.checkpoint ? messagesText([d.checkpoint]) : "" }
      : null,
    { kept: messagesText(c.payload.replacement), note: agentSummary },
  );
  const r = await compactMessagesSafe(before, {
    summarizer: extractiveSummarizer(),
    summaryMaxTokens,
    target,
  });
  if (!r.ok) {
    row.error = `${r.error.kind}: ${r.error.message}`;
    return row;
  }
  const noteText = r.checkpoint ? messagesText([r.checkpoint]) : "";
  row.plan = planRow(before, {
    compact_safe: messagesText(r.replacement),
    default_target: d.ok && d.path === "summary" ? messagesText(d.replacement) : null,
    agent: messagesText(c.payload.replacement),
  });
  const cs = side(keptFacts(facts, messagesText(r.replacement)), keptFacts(facts, noteText), r.summary, cues);
  row.compact_safe = { ...cs, path: r.path, tokens_after: r.tokens_after, target_reached: r.target_reached };
  row.size_ratio = agentSide.summary_tokens > 0 ? cs.summary_tokens / agentSide.summary_tokens : null;
  return row;
}

// ---------------------------------------------------------------- printing

const pair = (a: Count | undefined, b: Count): string =>
  `${a ? `${a.kept}/${a.total}` : "-"} ${b.kept}/${b.total}`;

const COLUMNS = [
  "compaction",
  "msgs",
  "files(base)",
  "files(rel)",
  "files(abs)",
  "directions",
  "errors",
  "commands",
  "last",
  "next",
  "chars",
  "tokens",
  "ratio",
];

function rowCells(r: Row): string[] {
  const cs = r.compact_safe;
  const ag = r.agent_side;
  const yn = (v: boolean | null | undefined) => (v === null || v === undefined ? "-" : v ? "y" : "n");
  return [
    `${r.session}#${r.compaction.slice(0, 8)}`,
    String(r.messages_before),
    ...COUNT_KEYS.map((k) => pair(cs?.kept[k], ag.kept[k])),
    `${yn(cs?.kept.last_instruction)} ${yn(ag.kept.last_instruction)}`,
    r.after_cut.calls === 0
      ? "- -"
      : `${cs ? yn(cs.next_step_hit !== null) : "-"} ${yn(ag.next_step_hit !== null)}`,
    `${cs?.summary_chars ?? "-"} ${ag.summary_chars}`,
    `${cs?.summary_tokens ?? "-"} ${ag.summary_tokens}`,
    r.size_ratio === null ? "-" : r.size_ratio.toFixed(2),
  ];
}

function totalCells(label: string, t: Totals): string[] {
  const n = t.next_step_cases;
  const p = (a: Count, b: Count) => `${pct(a)} ${pct(b)}`;
  return [
    label,
    "",
    ...COUNT_KEYS.map((k) => p(t.compact_safe[k], t.agent[k])),
    p(t.compact_safe.last_instruction, t.agent.last_instruction),
    `${t.compact_safe.next_step_hits}/${n} ${t.agent.next_step_hits}/${n}`,
    `${t.summary_chars.compact_safe} ${t.summary_chars.agent}`,
    `${t.summary_tokens.compact_safe} ${t.summary_tokens.agent}`,
    t.summary_tokens.agent > 0 ? (t.summary_tokens.compact_safe / t.summary_tokens.agent).toFixed(2) : "-",
  ];
}

function printTable(lines: string[][]): void {
  const widths = COLUMNS.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? "").length)));
  for (const l of lines)
    console.log(l.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  "));
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes("--json");
  if (!existsSync(corpusDir)) {
    console.error(`bench:fidelity: the corpus is not at ${corpusDir}`);
    return 2;
  }
  const started = process.hrtime.bigint();
  const rows: Row[] = [];
  const skipped: Skipped[] = [];
  const queuedEnds: Awaited<ReturnType<typeof queuedAtEnd>>[] = [];
  for (const file of corpusFiles()) {
    const imported = await importFile(file).catch(() => undefined);
    if (!imported) continue;
    const entries = imported.entries;
    queuedEnds.push(await queuedAtEnd(basename(file), projectPath(activePath(entries)), defaultTexts));
    for (const e of entries) {
      // Every compaction an agent recorded (Claude Code's compact_boundary, pi's and gjc's compaction,
      // Codex's compacted item: whatever the importers turn into a compaction entry).
      if (e.kind !== "compaction" || typeof e.payload.source_agent !== "string") continue;
      const r = await measure(file, entries, e);
      if ("reason" in r) skipped.push(r);
      else rows.push(r);
    }
  }
  const kept = totals(rows, "kept");
  const note = totals(rows, "note");
  const atDefault = (r: Row) => r.default_target;
  const defaultKept = totals(rows, "kept", atDefault);
  const defaultNote = totals(rows, "note", atDefault);
  const seconds2 = rows.map((r) => r.second).filter((x): x is SecondRun => x != null);
  const result = [
    ...bars(rows, kept),
    ...defaultBars(rows, defaultKept),
    ...queuedBars(rows.map((r) => r.queued)),
    queuedAtEndBar(queuedEnds),
    ...planBars(
      rows.map((r) => r.plan),
      seconds2.flatMap((x) => x.stale ?? []),
      seconds2.length,
    ),
  ];
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const allMet = result.every((b) => b.met);
  if (json) {
    console.log(
      JSON.stringify(
        {
          default_target: `the command line's: half the ${CONSTANTS.window}-token window, or half the live size when that is smaller`,
          rows,
          skipped,
          queued_at_end: queuedEnds.filter((q) => q !== null),
          totals: { kept, note, default_target: { kept: defaultKept, note: defaultNote } },
          bars: result,
          all_met: allMet,
          seconds,
        },
        null,
        2,
      ),
    );
    return allMet ? 0 : 1;
  }
  const n = rows.filter((r) => r.compact_safe !== null).length;
  console.log(
    "bench:fidelity: compact-safe's extractive note (first figure) against the agent's own summary (second figure), " +
      "at the agent's summary size, on the live context before each compaction the corpus records.\n" +
      "Rows and the 'kept' totals look facts up in the whole replacement; the 'note' totals in the summaries alone.\n",
  );
  printTable([
    COLUMNS,
    ...rows.map(rowCells),
    totalCells(`totals, kept (${n})`, kept),
    totalCells(`totals, note (${n})`, note),
  ]);
  console.log(
    `\nAt the command line's default target (half the ${CONSTANTS.window}-token window, or half the live size when that is smaller):`,
  );
  printTable([
    COLUMNS,
    ...rows.map((r) => rowCells({ ...r, compact_safe: r.default_target ?? null, size_ratio: null })),
    totalCells(`totals, kept (${rows.filter((r) => r.default_target).length})`, defaultKept),
    totalCells(`totals, note (${rows.filter((r) => r.default_target).length})`, defaultNote),
  ]);
  for (const r of rows) {
    const d = r.default_target;
    if (d)
      console.log(
        `default: ${r.session}#${r.compaction.slice(0, 8)}: ${d.path}, target ${d.target}, ${d.tokens_after} after, budget ${d.summary_budget ?? "-"}` +
          (d.cut_in.length > 0 ? `, cut marker in ${d.cut_in.join(", ")}` : "") +
          (r.second
            ? `; second compaction (${r.second.appended} messages appended, ${r.second.continuation.calls} calls): ${r.second.error ?? r.second.path}` +
              (r.second.shorter.length > 0 ? `, shorter: ${r.second.shorter.join("; ")}` : "")
            : ""),
      );
    if (r.default_error) console.log(`default error: ${r.session}#${r.compaction}: ${r.default_error}`);
  }
  for (const r of rows) if (r.error) console.log(`error: ${r.session}#${r.compaction}: ${r.error}`);
  for (const s of skipped) console.log(`skipped: ${s.session}#${s.compaction}: ${s.reason}`);
  console.log("");
  for (const b of result)
    console.log(
      `bar ${b.met ? "met    " : "NOT met"}  ${b.name}: compact-safe ${b.compact_safe}; agent ${b.agent}`,
    );
  console.log(
    `bench:fidelity: ${result.filter((b) => b.met).length}/${result.length} bars met on ${rows.length} compactions in ${seconds.toFixed(1)} s`,
  );
  return allMet ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
