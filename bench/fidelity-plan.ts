/**
 * The plan and second-compaction staleness of `npm run bench:fidelity`
 * (pure; read from the formats, independently of the extractive
 * summarizer's own plan reader).
 *
 * - The plan at the cut: the latest state of the agent's plan in the
 *   history before it: the last whole list (`TodoWrite` `{todos:[{content,
 *   status}]}`, Codex `update_plan` `{plan:[{step, status}]}`), or the tasks
 *   kept one a call (Claude Code 2.1.17+: `TaskCreate` `{subject}` whose
 *   result is "Task #N created…", `TaskUpdate` `{taskId, status}`, the status
 *   `deleted` removing it, `TaskList` whose result lists `#N [status]
 *   subject` lines), whichever was set last. Its open items are those not
 *   completed (nor cancelled).
 * - An item is named in a context (the whole replacement: the note and the
 *   messages kept verbatim, or the agent's summary and what it kept) when its words appear (normalised), or
 *   when at least two thirds of its distinctive words do (at least two).
 * - Staleness of a second compaction: an item the first note showed open
 *   (a `[pending]`/`[in_progress]` plan line, or its `Next:` line) that the
 *   continuation completed (the plan state after it says so), but the second
 *   note still shows open.
 * - An earlier summary's request: where the span compacted opens with an
 *   agent's summary, the note's Objective quotes a request (it is not the
 *   "no plain user request" placeholder).
 */
import type { Message } from "../src/model/index.js";
import { appears, distinctiveWords, loose, type Count } from "./fidelity-facts.js";

export interface PlanItem {
  text: string;
  status: string;
}

const CLOSED = /^(completed?|done|finished|cancell?ed|skipped|obsolete)$/i;
export const isOpenItem = (i: PlanItem): boolean => !CLOSED.test(i.status.trim());

const str = (v: unknown): string | undefined =>
  typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;

/** A whole list's items, when the input holds one. */
function wholeList(name: string, input: unknown): PlanItem[] | undefined {
  if (input === null || typeof input !== "object") return undefined;
  const rec = input as Record<string, unknown>;
  const list = name === "TodoWrite" ? rec.todos : name === "update_plan" ? rec.plan : undefined;
  if (!Array.isArray(list)) return undefined;
  const items: PlanItem[] = [];
  for (const v of list) {
    const r = (v ?? {}) as Record<string, unknown>;
    const text = str(r.content) ?? str(r.step);
    const status = str(r.status);
    if (text !== undefined && status !== undefined) items.push({ text, status });
  }
  return items;
}

/** Tool-call inputs as the importers keep them (objects, or JSON strings for some formats). */
function inputOf(v: unknown): unknown {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

/** The plan as it stands after `messages` (undefined: no plan was set). */
export function planAt(messages: readonly Message[], start?: readonly PlanItem[]): PlanItem[] | undefined {
  let whole: PlanItem[] | undefined = start ? [...start] : undefined;
  const tasks = new Map<string, PlanItem>();
  const creates = new Map<string, PlanItem>();
  const lists = new Set<string>();
  let last: "whole" | "tasks" | undefined = start ? "whole" : undefined;
  for (const m of messages)
    for (const b of m.content) {
      if (b.type === "tool_use") {
        const name = typeof b.name === "string" ? b.name : "";
        const input = inputOf(b.input) as Record<string, unknown> | undefined;
        const list = wholeList(name, input);
        if (list !== undefined) {
          whole = list;
          last = "whole";
        } else if (name === "TaskCreate" && str(input?.subject) !== undefined) {
          creates.set(String(b.id), { text: str(input!.subject)!, status: "pending" });
        } else if (name === "TaskUpdate") {
          const id =
            str(input?.taskId) ?? (typeof input?.taskId === "number" ? String(input.taskId) : undefined);
          const status = str(input?.status);
          const had = id === undefined ? undefined : tasks.get(id);
          if (id !== undefined && status !== undefined) {
            if (/^deleted$/i.test(status)) tasks.delete(id);
            else tasks.set(id, { text: str(input?.subject) ?? had?.text ?? `task #${id}`, status });
            last = "tasks";
          }
        } else if (name === "TaskList") lists.add(String(b.id));
      } else if (b.type === "tool_result") {
        const id = String(b.tool_use_id);
        const content = typeof b.content === "string" ? b.content : "";
        const made = creates.get(id);
        if (made !== undefined && b.is_error !== true) {
          const n = /Task #(\w+) created/.exec(content)?.[1];
          if (n !== undefined) tasks.set(n, made);
          last = "tasks";
        } else if (lists.has(id)) {
          const listed = [...content.matchAll(/^#(\w+) \[([^\]]+)\] (.+?)(?: \[blocked by [^\]]*\])?$/gm)];
          if (listed.length > 0) {
            tasks.clear();
            for (const l of listed) tasks.set(l[1]!, { status: l[2]!, text: l[3]! });
            last = "tasks";
          }
        }
      }
    }
  return last === "tasks" ? [...tasks.values()] : whole;
}

/** Whether a summary names an item: its words, or two thirds (at least two) of its distinctive words. */
export function itemNamed(item: string, summary: string): boolean {
  const hay = loose(summary);
  if (appears(loose(item), hay)) return true;
  const words = distinctiveWords(item);
  if (words.length < 2) return false;
  const own = new Set(distinctiveWords(summary));
  return words.filter((w) => own.has(w)).length * 3 >= words.length * 2;
}

/** The open items of the plan at the cut that a summary names. */
export function openItemsNamed(plan: readonly PlanItem[] | undefined, summary: string): Count {
  const open = (plan ?? []).filter(isOpenItem);
  return { kept: open.filter((i) => itemNamed(i.text, summary)).length, total: open.length };
}

/** The items a note shows open: its `[status]` plan lines not completed, and its `Next:` line. */
export function shownOpen(note: string): string[] {
  const out: string[] = [];
  for (const line of note.split("\n")) {
    const m = /^- \[([^\]]+)\] (.+)$/.exec(line);
    if (m && isOpenItem({ status: m[1]!, text: m[2]! }) && !/^done since\b/i.test(m[1]!)) out.push(m[2]!);
    const n = /^Next: (.+) \([^()]*\)\.$/.exec(line);
    if (n) out.push(n[1]!);
  }
  return out;
}

/**
 * The stale items of a second note: shown open in the first note, completed by the continuation (the plan
 * after it says so), and still shown open in the second note.
 */
export function staleItems(
  firstNote: string,
  secondNote: string,
  after: readonly PlanItem[] | undefined,
): string[] {
  const completed = (after ?? []).filter((i) => !isOpenItem(i));
  const stale: string[] = [];
  const second = shownOpen(secondNote);
  for (const item of shownOpen(firstNote)) {
    const done = completed.find(
      (c) => itemNamed(c.text, item) || itemNamed(item.replace(/^#\w+ /, ""), c.text),
    );
    if (done === undefined) continue;
    if (second.some((s) => itemNamed(done.text, s))) stale.push(done.text);
  }
  return stale;
}

/** The placeholder of an Objective with no request (an earlier summary's request was not read). */
export const NO_REQUEST = /no plain user request in the summarized span/;

/** Whether a span opens with an agent's own summary (Claude Code's, Codex's, pi's). */
export function opensWithAgentSummary(messages: readonly Message[]): boolean {
  for (const m of messages.slice(0, 3)) {
    if (m.role !== "user") continue;
    const t = m.content.find((b) => b.type === "text") as { text?: unknown } | undefined;
    const text = typeof t?.text === "string" ? t.text : "";
    if (
      /^(This session is being continued from a previous conversation|Another language model started to solve this problem|The conversation history before this point was compacted)/.test(
        text,
      )
    )
      return true;
  }
  return false;
}

/** The plan's figures of one compaction (absent on a row: no plan at the cut and no agent summary opening it). */
export interface PlanRow {
  /** Open items of the plan at the cut. */
  open: number;
  /** Named in compact-safe's replacement at the agent's size, at the default target (null: no note), in the agent's. */
  compact_safe: Count;
  default_target: Count | null;
  agent: Count;
  /** The span opens with the agent's earlier summary: whether each note's Objective quotes a request (null: no note). */
  earlier_request: { compact_safe: boolean; default_target: boolean | null } | null;
}

/** The plan's figures of one compaction from its history and the three summaries. */
export function planRow(
  before: readonly Message[],
  notes: { compact_safe: string; default_target: string | null; agent: string },
): PlanRow | null {
  const plan = planAt(before);
  const opens = opensWithAgentSummary(before);
  if (plan === undefined && !opens) return null;
  const objective = (note: string): boolean => !NO_REQUEST.test(note) && /## Objective\n/.test(note);
  return {
    open: (plan ?? []).filter(isOpenItem).length,
    compact_safe: openItemsNamed(plan, notes.compact_safe),
    default_target: notes.default_target === null ? null : openItemsNamed(plan, notes.default_target),
    agent: openItemsNamed(plan, notes.agent),
    earlier_request: opens
      ? {
          compact_safe: objective(notes.compact_safe),
          default_target: notes.default_target === null ? null : objective(notes.default_target),
        }
      : null,
  };
}

interface PlanBar {
  name: string;
  compact_safe: string;
  agent: string;
  met: boolean;
}

const add = (a: Count, b: Count | null): Count =>
  b ? { kept: a.kept + b.kept, total: a.total + b.total } : a;
const share = (c: Count): string => `${c.kept}/${c.total}`;
const rateOf = (c: Count): number => (c.total === 0 ? 1 : c.kept / c.total);

/**
 * The bars on the plan and on second compactions: open items named at least as often as the agent's
 * summary names them (at its size and at the default target), no stale item after a second compaction,
 * and the earlier summary's request read wherever a span opens with one.
 */
export function planBars(
  rows: readonly (PlanRow | null | undefined)[],
  stale: readonly string[],
  seconds: number,
): PlanBar[] {
  const zero = (): Count => ({ kept: 0, total: 0 });
  let cs = zero();
  let def = zero();
  let agentAtDefault = zero();
  let agent = zero();
  let opens = 0;
  let read = 0;
  let opensDefault = 0;
  let readDefault = 0;
  for (const r of rows) {
    if (!r) continue;
    cs = add(cs, r.compact_safe);
    agent = add(agent, r.agent);
    if (r.default_target) {
      def = add(def, r.default_target);
      agentAtDefault = add(agentAtDefault, r.agent);
    }
    if (r.earlier_request) {
      opens++;
      if (r.earlier_request.compact_safe) read++;
      if (r.earlier_request.default_target !== null) {
        opensDefault++;
        if (r.earlier_request.default_target) readDefault++;
      }
    }
  }
  return [
    {
      name: "the plan's open items named at least as often as the agent's summary names them",
      compact_safe: `${share(cs)} at the agent's size, ${share(def)} at the default target (with a note)`,
      agent: `${share(agent)} (${share(agentAtDefault)} where a default note was written)`,
      met: rateOf(cs) >= rateOf(agent) && rateOf(def) >= rateOf(agentAtDefault),
    },
    {
      name: "second compaction: no plan item completed after the first note still shown open",
      compact_safe: `${stale.length} stale in ${seconds} second compactions${stale.length > 0 ? `: ${stale.slice(0, 3).join("; ")}` : ""}`,
      agent: "-",
      met: stale.length === 0,
    },
    {
      name: "a span that opens with the agent's summary: the note's Objective quotes its request",
      compact_safe: `${read}/${opens} at the agent's size, ${readDefault}/${opensDefault} at the default target`,
      agent: "-",
      met: read === opens && readDefault === opensDefault,
    },
  ];
}
