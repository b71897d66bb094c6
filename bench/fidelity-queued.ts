/**
 * bench:fidelity's measure of queued prompts (issue 45 items 1 and 9): the
 * prompts the user typed while the agent worked and that were delivered to
 * the model mid-turn (the importers mark them `meta.queued`; the harness's
 * own notifications riding the same queue are `is_meta` and not counted),
 * in the context before each compaction, looked up in compact-safe's output
 * at the command line's default target and in the agent's own summary.
 *
 * A prompt is named when the text holds its opening (its first 40
 * characters, or all of it when shorter; spaces folded, case ignored): the
 * note quotes a long user message by its opening, the agents quote the
 * user's messages.
 */
import type { Message } from "../src/model/index.js";
import { isPlainUser, userWords } from "../src/contract/classify.js";
import type { Bar } from "./fidelity-bars.js";

const OPENING = 40;

export interface QueuedCount {
  /** Prompts named in what the resumed agent reads (the whole replacement). */
  kept: number;
  /** Prompts named in the summary alone (compact-safe's checkpoint, the agent's summary). */
  note: number;
}

export interface QueuedMeasure {
  /** The delivered queued prompts before the cut, by their opening. */
  prompts: string[];
  /** At the command line's default target (null: no replacement there). */
  compact_safe: QueuedCount | null;
  agent: QueuedCount;
}

const fold = (s: string): string => s.replace(/\s+/g, " ").trim().toLowerCase();

/** The user's prompts that were queued while the agent worked and delivered to the model. */
export function queuedPrompts(before: readonly Message[]): string[] {
  return before
    .filter((m) => m.meta?.queued === true && m.meta.is_meta !== true && isPlainUser(m))
    .map((m) =>
      fold(
        userWords(m)
          .map((b) => b.text)
          .join("\n"),
      ),
    )
    .filter((t) => t !== "");
}

/** Whether `text` names the prompt (holds its opening). */
export function promptNamed(prompt: string, text: string): boolean {
  return fold(text).includes(fold(prompt).slice(0, OPENING));
}

function count(prompts: readonly string[], kept: string, note: string): QueuedCount {
  return {
    kept: prompts.filter((p) => promptNamed(p, kept)).length,
    note: prompts.filter((p) => promptNamed(p, note)).length,
  };
}

/** The measure for one compaction: texts of compact-safe's default run (null: none) and of the agent's side. */
export function measureQueued(
  before: readonly Message[],
  compactSafe: { kept: string; note: string } | null,
  agent: { kept: string; note: string },
): QueuedMeasure {
  const prompts = queuedPrompts(before);
  return {
    prompts: prompts.map((p) => p.slice(0, OPENING)),
    compact_safe: compactSafe ? count(prompts, compactSafe.kept, compactSafe.note) : null,
    agent: count(prompts, agent.kept, agent.note),
  };
}

/**
 * The bar: at the default target, compact-safe's replacement names the
 * queued prompts at least as often as the agent's own output does (kept),
 * over the compactions whose context holds one; the summaries alone are
 * shown beside it.
 */
export function queuedBars(measures: readonly (QueuedMeasure | null | undefined)[]): Bar[] {
  const ms = measures.filter((m): m is QueuedMeasure => m != null && m.prompts.length > 0);
  const total = ms.reduce((n, m) => n + m.prompts.length, 0);
  const sum = (pick: (m: QueuedMeasure) => number) => ms.reduce((n, m) => n + pick(m), 0);
  const csKept = sum((m) => m.compact_safe?.kept ?? 0);
  const csNote = sum((m) => m.compact_safe?.note ?? 0);
  const agKept = sum((m) => m.agent.kept);
  const agNote = sum((m) => m.agent.note);
  return [
    {
      name: `default target: prompts queued while the agent worked and delivered, named at least as often as by the agent (${ms.length} compactions with one)`,
      compact_safe: `${csKept}/${total} (note alone ${csNote}/${total})`,
      agent: `${agKept}/${total} (summary alone ${agNote}/${total})`,
      met: csKept >= agKept,
    },
  ];
}

/**
 * A session's live context at its end, when it holds a delivered queued
 * prompt: compacted at the default target by `compact` (null: no
 * replacement), there is no agent summary beside it, so every prompt must be
 * named in what the resumed agent reads.
 */
export async function queuedAtEnd(
  session: string,
  live: readonly Message[],
  compact: (ms: readonly Message[]) => Promise<{ kept: string; note: string } | null>,
): Promise<(QueuedMeasure & { session: string }) | null> {
  const prompts = queuedPrompts(live);
  if (prompts.length === 0) return null;
  const out = await compact(live);
  return {
    session,
    prompts: prompts.map((p) => p.slice(0, OPENING)),
    compact_safe: out ? count(prompts, out.kept, out.note) : null,
    agent: { kept: 0, note: 0 },
  };
}

/** The bar on sessions' ends: every delivered queued prompt named at the default target. */
export function queuedAtEndBar(ends: readonly (QueuedMeasure | null)[]): Bar {
  const ms = ends.filter((m): m is QueuedMeasure => m !== null);
  const total = ms.reduce((n, m) => n + m.prompts.length, 0);
  const kept = ms.reduce((n, m) => n + (m.compact_safe?.kept ?? 0), 0);
  const note = ms.reduce((n, m) => n + (m.compact_safe?.note ?? 0), 0);
  return {
    name: `default target, each session's end (no agent summary there): every delivered queued prompt named (${ms.length} sessions with one)`,
    compact_safe: `${kept}/${total} (note alone ${note}/${total})`,
    agent: "-",
    met: kept === total,
  };
}
