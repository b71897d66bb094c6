/**
 * Rendering: the note's text from the collected facts. Every section of the
 * table (`sections.ts`) gets a body here; the character budget is split
 * between the sections by their weights, every section keeps something, and
 * a section that needs less than its share gives the rest to the others.
 */
import type { BackgroundHandle, SummaryRequest } from "../types.js";
import { oneLine, oneLineWindow } from "../transcript.js";
import { clipWords, shortened, wholeHead } from "./whole.js";
import { redactedHead, redactSecrets } from "../../redact/redact.js";
import { recallHint } from "../../model/refs.js";
import { COMMAND_CHARS, NOTE_CHARS, REDACT_MARGIN, type CallInfo, type Collected } from "./collect.js";
import { withoutAnalysis } from "./fold.js";
import { EARLIER_SUMMARY, SECTIONS, type SummarySection } from "./sections.js";
import { QUOTED_DATA_NOTE, fenceFor, quoteData, unquoteData } from "./quote.js";
import { isOpen, nextItem, planHeader, planLine, type Plan } from "./plan.js";
import { checkOf } from "./checks.js";
import {
  demoteHeaders,
  fitted,
  headTail,
  redactedCut,
  renderList,
  renderUserDirection,
  type Item,
} from "./bounded.js";

/** How a section's body is written. */
interface SectionBody {
  /** The body within `budget` characters. */
  render: (budget: number) => string;
  /** The full size without rendering (lists: their lines add up; no sorting or joining). */
  measure?: () => number;
}

interface SectionPlan extends SectionBody {
  name: string;
  weight: number;
  /** Characters the section needs to be rendered in full (measured by rendering it unbounded, or by `measure`). */
  need: number;
}

/**
 * The note for the collected facts, at most `totalChars` characters: the
 * sections of the table in order, each under its `## ` header, then
 * "Earlier summary" when another agent's checkpoint was folded in. The next
 * step is read from `state`, the facts carried on to the cut (see
 * `continueCollect`); the other sections describe the span.
 */
export function renderNote(
  c: Collected,
  request: SummaryRequest,
  totalChars: number,
  state: Collected = c,
): string {
  const bodies = sectionBodies(c, request, state);
  const plans: SectionPlan[] = SECTIONS.map((s) => ({
    name: s.name,
    weight: s.weight,
    need: 0,
    ...bodies[s.name],
  }));
  if (c.earlier.freeText.length > 0) {
    const free = demoteHeaders(c.earlier.freeText.join("\n\n"));
    // Shortened by its analysis scratchpad first, never its technical summary.
    const lean = lazy(() => withoutAnalysis(free));
    plans.push({
      ...EARLIER_SUMMARY,
      need: 0,
      render: (b) => (free.length <= b ? free : headTail(lean(), b, 0.6)),
    });
  }

  // A section measured by rendering it whole is written so when it gets all it needs: it is not
  // rendered a second time, and the objective's shares cannot cut a part that fits.
  const whole = plans.map((p) => (p.measure ? undefined : p.render(Number.MAX_SAFE_INTEGER)));
  plans.forEach((p, i) => (p.need = whole[i]?.length ?? p.measure!()));
  const headers = plans.reduce((s, p) => s + `## ${p.name}\n`.length + 1, 0);
  // A second compaction keeps what the first knew: a section still true gets at least the room it
  // had in the earlier note (the state at the cut, Next step and Still running, is read anew).
  const floors = plans.map((p) => {
    const had = c.earlier.sizes.get(p.name);
    return had === undefined || p.name === "Next step" || p.name === "Still running"
      ? 0
      : Math.min(p.need, Math.ceil(had * 1.05) + 40);
  });
  const budgets = allocate(plans, Math.max(0, totalChars - headers), floors);
  let out = "";
  plans.forEach((p, i) => {
    const w = whole[i];
    const body = w !== undefined && w.length <= budgets[i] ? w : p.render(budgets[i]);
    out += `${i === 0 ? "" : "\n"}## ${p.name}\n${body.length <= budgets[i] ? body : fitted(body, budgets[i])}`;
  });
  // Trailing blank lines become one line end (read from the end: the note is not scanned for them).
  let end = out.length;
  while (end > 0 && out.charCodeAt(end - 1) === 10) end--;
  if (end < out.length - 1) out = `${out.slice(0, end)}\n`;
  return out.length <= totalChars ? out : `${wholeHead(out, totalChars - 1, 0)}\n`;
}

/** Split `total` characters between sections by weight; a section never gets more than it needs. */
function allocate(plans: SectionPlan[], total: number, floors: readonly number[] = []): number[] {
  // The floors first (scaled down together when they do not all fit), then the rest by weight.
  const wanted = plans.map((_, i) => floors[i] ?? 0);
  const sum = wanted.reduce((a, b) => a + b, 0);
  const scale = sum > total ? total / sum : 1;
  const base = wanted.map((f) => Math.floor(f * scale));
  const rest = allocateByWeight(
    plans.map((p, i) => ({ ...p, need: p.need - base[i]! })),
    total - base.reduce((a, b) => a + b, 0),
  );
  return base.map((b, i) => b + rest[i]!);
}

function allocateByWeight(plans: SectionPlan[], total: number): number[] {
  const alloc = plans.map(() => 0);
  let open = plans.map((_, i) => i);
  let remaining = total;
  for (;;) {
    const wsum = open.reduce((s, i) => s + plans[i].weight, 0);
    if (open.length === 0 || wsum <= 0) break;
    const satisfied = open.filter((i) => plans[i].need <= (remaining * plans[i].weight) / wsum);
    if (satisfied.length === 0) {
      for (const i of open) alloc[i] = Math.floor((remaining * plans[i].weight) / wsum);
      break;
    }
    for (const i of satisfied) {
      alloc[i] = plans[i].need;
      remaining -= plans[i].need;
    }
    open = open.filter((i) => !satisfied.includes(i));
  }
  return alloc;
}

const NO_ASSISTANT_TEXT = "(no assistant text in the summarized span)";

/** The body of every section of the table (a list's items are built once, when first asked for). */
function sectionBodies(
  c: Collected,
  request: SummaryRequest,
  state: Collected,
): Record<SummarySection, SectionBody> {
  const commands = lazy(() => commandItems(c));
  const errors = lazy(() => errorItems(c));
  const focus = request.focus?.trim();
  const rules = new Set(c.constraints);
  return {
    Objective: { render: (b) => objective(c, focus, b) },
    // A rule in a message the replacement keeps verbatim is pointed at, not quoted again.
    "Decisions and constraints": {
      render: (b) => {
        const quoted = c.constraints.filter((t) => !c.kept.has(t));
        const refs = c.constraints
          .filter((t) => c.kept.has(t))
          .map((t) => `- Constraint ${keptReference(t, 80)}\n`)
          .join("");
        if (quoted.length === 0 && c.earlier.constraints.length === 0 && refs !== "") return fitted(refs, b);
        const body = renderUserDirection(
          quoted,
          c.earlier.constraints,
          b - refs.length,
          CONSTRAINT_WORDS,
          c.userRefs,
        );
        return refs.length <= b - body.length ? body + refs : body;
      },
    },
    // A message quoted under the constraints is not quoted twice, and one the replacement keeps
    // verbatim is not quoted again: a line says where each is.
    "User direction": {
      render: (b) => {
        const rest = c.userMessages.filter((t) => !rules.has(t) && !c.kept.has(t));
        const moved = c.userMessages.filter((t) => rules.has(t) && !c.kept.has(t)).length;
        const kept = c.userMessages.filter((t) => c.kept.has(t)).length;
        const line =
          (moved > 0 ? `(${moved} more quoted under Decisions and constraints)\n` : "") +
          (kept > 0
            ? `(${kept} user message${kept === 1 ? " is" : "s are"} kept word for word before this note: not quoted again)\n`
            : "");
        const quoted =
          rest.length === 0 && c.earlier.userQuotes.length === 0 && line !== ""
            ? ""
            : renderUserDirection(rest, c.earlier.userQuotes, b - line.length, undefined, c.userRefs);
        return quoted + line;
      },
    },
    "Work done": listBody(
      lazy(() => workItems(c)),
      "notes",
      NO_ASSISTANT_TEXT,
      c.workOmitted,
    ),
    "Files changed": listBody(
      lazy(() => fileItems(c)),
      "paths",
      "(no file modified by a tool call)",
    ),
    "Commands run": quotedDataBody(listBody(commands, "commands", "(no shell command)"), commands),
    Errors: quotedDataBody(listBody(errors, "errors", "(no error result)"), errors),
    "Still running": listBody(
      lazy(() => runningItems(c, request.background ?? [])),
      "entries",
      "(nothing in flight)",
    ),
    "Next step": { render: (b) => nextStep(state, b) },
  };
}

/** The latest command run that checks the work (tests, build, lint, type check: by its program, `checks.ts`). */
function lastCheck(c: Collected): { cmd: string; outcome: string; last: number } | undefined {
  let best: { cmd: string; outcome: string; last: number } | undefined;
  for (const e of c.commands.values())
    if (e.check !== undefined && !THROWAWAY.test(e.cmd) && (best === undefined || e.last > best.last))
      best = { cmd: e.cmd, outcome: e.outcome, last: e.last };
  return best;
}

function baseName(p: string): string {
  const i = p.replace(/\/+$/, "").lastIndexOf("/");
  return i >= 0 ? p.slice(i + 1) : p;
}

const CONSTRAINT_WORDS = {
  label: "Constraint",
  earlierLabel: "Earlier constraint",
  plural: "constraints",
  empty: "(no rule, correction or rejection from the user in the summarized span)",
};

/** A command that checks the work but only in a throwaway place (`/tmp`): not the check to run again. */
const THROWAWAY = /(^|[\s'"=])\/tmp\//;

/** A last message that reports the work complete. */
const COMPLETION =
  /\b(done|finished|complete[ds]?|completed|all (?:tests|checks) pass(?:ed)?|tests? pass(?:es|ed)?|implemented|is ready|are ready|fixed|in place|works? now|nothing (?:left|else|pending))\b/i;
/** A last message that asks the user something or announces work it has not made yet. */
const ANNOUNCES =
  /(^|[.!?:]\s+|\n)(?:(?:now|next|then|first|ok(?:ay)?|great)[,!.]?\s+)*(?:let me|i'll|i will|i'm going to|next,? i|we'll|i need to)\b/i;

/** What an announcement names that is no work left: asking the user, or offering more. */
const NO_WORK = /^\s*(?:know|you know|me know)\b/i;
/** Words that say work remains, anywhere in a message. */
const REMAINING =
  /\b(?:remaining\W{0,3}:|remaining (?:work|steps?|items?|tasks?)|still (?:need(?:s)? to|to do|left|failing|pending)|left to do|not (?:yet )?(?:done|finished|implemented)|todo:|next steps?:)/i;

/**
 * Whether the last message says what remains: words that name remaining work, or its last paragraph
 * announces a step of its own ("Let me run the tests"), not an offer ("Let me know if …").
 */
export function saysWhatRemains(text: string): boolean {
  if (REMAINING.test(text)) return true;
  const paragraphs = text.trim().split(/\n\s*\n/);
  const last = paragraphs[paragraphs.length - 1] ?? "";
  const m = ANNOUNCES.exec(last);
  if (m === null) return false;
  return !NO_WORK.test(last.slice(m.index + m[0].length));
}

/** Shell commands that only read (a successful one did no work). */
const READ_ONLY =
  /^\s*(?:cd \S+ && )?(?:ls|cat|head|tail|less|grep|rg|ag|find|fd|sed -n|awk|wc|pwd|echo|which|tree|file|stat|du|git (?:status|log|diff|show|branch|blame|remote))\b/;

/**
 * Whether the calls after the last assistant text did the work (none failed, none is still running):
 * a file changed, a check passed, or a command that does more than read succeeded.
 */
function didWork(c: Collected): boolean {
  const a = c.afterText;
  if (a.paths.length > 0) return true;
  return a.commands.some((cmd) => {
    if (checkOf(cmd) === undefined) return !READ_ONLY.test(cmd);
    const outcome = c.commands.get(cmd)?.outcome ?? "";
    return !/^(error|fail|no result)/i.test(outcome);
  });
}

/** A part of the Next step: its lines, written whole or shortened at sentence ends, else left out. */
interface Part {
  lead: string;
  /** Text shortened at sentence or line ends when the whole does not fit (never cut inside a word). */
  body?: string;
  /** Whether the part may be shortened (a list is written whole or left out). */
  list?: boolean;
}

/** The first `max` characters of `s` as whole sentences (or words), on one paragraph. */
function sentences(s: string, max: number): string {
  return shortened(s.trim(), max);
}

/**
 * Next step, from the state of the work at the cut, in priority order: the
 * agent's own plan (its latest list, its first item not completed), the
 * user's latest request when nothing answered it, checks still failing,
 * the last message's announced step with no call after it, a step not
 * finished, a check to run again after later edits, the earlier note's open
 * items; "Finished, nothing pending" when the last message reports the work
 * complete and nothing failed after it. Each part is written whole, or
 * shortened at sentence ends, or left out; never a fragment or cut marker.
 */
function nextStep(c: Collected, budget: number): string {
  const parts = nextStepParts(c);
  let room = budget;
  let out = "";
  for (const p of parts) {
    const whole = p.body === undefined ? `${p.lead}\n` : `${p.lead}\n${p.body}\n`;
    if (whole.length <= room) {
      out += whole;
      room -= whole.length;
      continue;
    }
    if (p.list === true || p.body === undefined) {
      // A list kept by its first lines (whole lines), with the count of the rest.
      if (p.body !== undefined && p.lead.length + 40 < room) {
        const lines = p.body.split("\n");
        let kept = `${p.lead}\n`;
        let n = 0;
        for (const l of lines) {
          if (kept.length + l.length + 1 + 32 > room) break;
          kept += `${l}\n`;
          n++;
        }
        if (n > 0) {
          kept += `- (${lines.length - n} more not shown)\n`;
          out += kept;
          room -= kept.length;
        }
      }
      continue;
    }
    const max = room - p.lead.length - 2;
    const body = max > 24 ? sentences(p.body, max) : "";
    if (body !== "") {
      const text = `${p.lead}\n${body}\n`;
      out += text;
      room -= text.length;
    }
  }
  if (out === "") return fitted(`${NOTHING_PENDING}\n`, budget);
  return out;
}

const NOTHING_PENDING = "(no unfinished work recorded in the summarized span)";

/** The plan's lines: its open items first (whole), the completed ones after them. */
function planLines(plan: Plan): string {
  return plan.items.map(planLine).join("\n");
}

/** The plan's part of the Next step: its next item and its list, or that it is done. */
function planParts(c: Collected, plan: Plan): Part[] {
  const open = nextItem(plan);
  // A whole list set after the cut is kept verbatim; a board's last update there is one item only.
  const inKept = c.plan !== undefined && c.planOrder > c.spanEnd && c.plan.tool !== c.tasks?.tool;
  if (open === undefined)
    // A plan whose every item is done is no plan for what comes next: it is reported as done.
    return [
      {
        lead: `The plan is done: all ${plan.items.length} item${plan.items.length === 1 ? "" : "s"} of the latest ${plan.tool} list completed (the last: ${clipWords(oneLine(plan.items.at(-1)!.text), 120)}).`,
      },
    ];
  const first = /^in[ _-]?progress$/i.test(open.status)
    ? "the first item in progress"
    : "the first item pending";
  return [
    { lead: `Next: ${open.text} (${open.status}, ${first} in the plan).` },
    inKept
      ? { lead: `(The latest ${plan.tool} list is in the messages kept after this note.)` }
      : { lead: planHeader(plan), body: planLines(plan), list: true },
  ];
}

/**
 * The checks still failing: the span's latest (tests, build, lint; a failed merge or commit is history,
 * not a check still failing), then the earlier note's whose command (or the same check, however piped or
 * filtered) has not run since.
 */
function failingChecks(c: Collected): string[] {
  const failing = [...c.errors.entries()]
    .filter(
      ([, e]) =>
        e.command !== undefined && e.fixed !== true && e.check === true && !THROWAWAY.test(e.command),
    )
    .sort((x, y) => y[1].last - x[1].last)
    .slice(0, 3)
    .map(([line, e]) => `- ${quoteData(clipWords(line, 160))} from \`${clipWords(e.command!, 100)}\``);
  for (const f of c.earlier.failing) {
    const cmd = /from `([^`]+)`$/.exec(f)?.[1];
    const key = cmd === undefined || cmd.endsWith("…") ? undefined : checkOf(cmd)?.key;
    if (
      failing.length < 5 &&
      (cmd === undefined ||
        ![...c.commands.values()].some(
          (e) => e.cmd.startsWith(cmd.replace(/…$/, "")) || (key !== undefined && e.check?.key === key),
        ))
    )
      failing.push(f);
  }
  return failing;
}

function nextStepParts(c: Collected): Part[] {
  const parts: Part[] = [];
  const latest = c.userMessages.at(-1);
  const lastText = c.lastAssistantText;
  const a = c.afterText;
  const plan = c.plan ?? c.earlier.plan;
  const unanswered = latest !== undefined && c.lastUserOrder > c.lastTextOrder;
  if (plan !== undefined && plan.items.length > 0) parts.push(...planParts(c, plan));
  const pending = earlierPending(c);
  if (pending !== undefined) parts.push(pending);
  if (unanswered) {
    if (c.kept.has(latest) || c.lastUserOrder > c.spanEnd)
      parts.push({
        lead: "Answer the user's latest message (kept word for word after this note); nothing answered it yet.",
      });
    else parts.push({ lead: "The user's latest request, not answered yet:", body: demoteHeaders(latest) });
  }
  const failing = failingChecks(c);
  if (failing.length > 0)
    parts.push({ lead: "Still failing (no passing run since):", body: failing.join("\n"), list: true });
  if (lastText !== undefined && !unanswered) {
    const running = [...c.calls.values()].filter((i) => !i.done && i.order > c.lastTextOrder).length;
    const text = demoteHeaders(lastText);
    if (a.failed > 0 || running > 0) {
      const why = [
        ...(a.failed > 0 ? [`${a.failed} of ${a.calls} calls failed`] : []),
        ...(running > 0 ? [`${running} call${running === 1 ? "" : "s"} without a result`] : []),
      ].join(", ");
      parts.push({ lead: `The assistant's last step, not finished (${why}):`, body: text });
    } else if (a.calls === 0) {
      const remains = saysWhatRemains(lastText);
      if (COMPLETION.test(lastText) && !remains && failing.length === 0 && !hasOpen(plan))
        parts.push({
          lead: "Finished, nothing pending: the last message reports the work complete and nothing failed after it:",
          body: text,
        });
      else if (remains)
        parts.push({
          lead: "The assistant's last message says what remains and made no call after it (not done yet):",
          body: text,
        });
      else parts.push({ lead: "The assistant's last message, with no call after it:", body: text });
    } else if (!didWork(c)) {
      // Calls that only read or searched returned: the step is under way, not done.
      parts.push({
        lead: `Under way, not done: the last step made ${a.calls} call${a.calls === 1 ? "" : "s"} that changed nothing and passed no check (reads, searches); it began "${clipWords(oneLine(lastText), 100)}".`,
      });
      if (latest !== undefined)
        parts.push(
          c.kept.has(latest)
            ? { lead: "Continue the user's latest request (kept word for word before this note)." }
            : { lead: "Continue the user's latest request:", body: demoteHeaders(latest) },
        );
    } else {
      const did = [
        ...new Set(a.paths.map((p) => `changed ${baseName(oneLine(p))}`)),
        ...new Set(a.commands.map((x) => `ran \`${clipWords(x, 80)}\``)),
      ].slice(0, 4);
      // What was done comes first; the step by its first words (whole words).
      parts.push({
        lead: `Done (${a.calls} call${a.calls === 1 ? "" : "s"} ok)${did.length > 0 ? `: ${did.join(", ")}` : ""}; the step began "${clipWords(oneLine(lastText), 100)}".`,
      });
      if (latest !== undefined)
        parts.push(
          c.kept.has(latest)
            ? { lead: "Continue the user's latest request (kept word for word before this note)." }
            : { lead: "Continue the user's latest request:", body: demoteHeaders(latest) },
        );
    }
  }
  const check = lastCheck(c);
  if (check !== undefined && failing.length === 0) {
    const changed = [...c.paths.values()]
      .filter((p) => p.last > check.last)
      .map((p) => baseName(oneLine(p.path)));
    if (changed.length > 0)
      parts.push({
        lead: `Changed since the last check (${[...new Set(changed)].slice(0, 3).join(", ")}): run it again: \`${check.cmd}\` (last outcome: ${check.outcome}).`,
      });
    else parts.push({ lead: `The last check run: \`${check.cmd}\` → ${check.outcome}.` });
  }
  return parts;
}

/** Words of a pending item that name a file (`rewind.go`, `src/a/b.ts`): their base names. */
function namedFiles(item: string): string[] {
  const out: string[] = [];
  for (const m of item.matchAll(/[\w./-]*\w\.[A-Za-z][\w]{0,7}\b/g))
    if (!/^\d/.test(m[0])) out.push(baseName(m[0]));
  return out;
}

/** The kinds of work a pending item can name that a command does (a command of another kind does not do it). */
const COMMAND_KINDS = ["test", "lint", "build", "fmt", "format", "vet", "typecheck", "tsc", "commit", "push"];

/**
 * The command that did a pending item (it succeeded after the earlier summary): one the item quotes
 * (`mise run test`), else one of the kind it names (tests, lint, build, commit, push); none when it
 * names none.
 */
function passedCommand(item: string, passed: readonly string[]): string | undefined {
  const quoted = [...item.matchAll(/`([^`\n]{2,})`/g)].map((m) => m[1]!.trim());
  const exact = passed.find((cmd) => quoted.some((q) => cmd.startsWith(q)));
  if (exact !== undefined || quoted.some((q) => checkOf(q) !== undefined)) return exact;
  const lower = item.toLowerCase();
  const kinds = COMMAND_KINDS.filter((k) => new RegExp(`\\b${k}`).test(lower));
  if (kinds.length === 0) return undefined;
  return passed.find((cmd) => kinds.every((k) => new RegExp(`\\b${k}`).test(cmd.toLowerCase())));
}

/**
 * The earlier summary's pending tasks read against the span after it: a task is done since when the span
 * changed a file it names (no failure left on it) or ran the command it names with success (a check
 * passed, a commit made); the rest stay pending.
 */
function earlierPending(c: Collected): Part | undefined {
  const items = c.earlier.pending;
  if (items.length === 0) return undefined;
  const changed = new Map<string, string>();
  for (const p of c.paths.values())
    if (p.failures < p.attempts) changed.set(baseName(oneLine(p.path)), p.path);
  // The commands that succeeded and did more than read (checks that passed, commits, pushes…).
  const passed = [...c.commands.values()]
    .filter((e) => !READ_ONLY.test(e.cmd) && !/^(error|fail|no result)/i.test(e.outcome))
    .map((e) => e.cmd);
  const lines = items.slice(0, 8).map((item) => {
    const file = namedFiles(item).find((f) => changed.has(f));
    const check = file === undefined ? passedCommand(item, passed) : undefined;
    const doneBy =
      file !== undefined
        ? `changed ${file}`
        : check !== undefined
          ? `\`${clipWords(check, 60)}\` succeeded`
          : undefined;
    return `- [${doneBy === undefined ? "pending" : `done since: ${doneBy}`}] ${clipWords(oneLine(item), 200)}`;
  });
  const more = items.length > 8 ? `\n- (${items.length - 8} more not shown)` : "";
  return {
    lead: "The earlier summary's pending tasks, read against the work after it:",
    body: lines.join("\n") + more,
    list: true,
  };
}

function hasOpen(plan: Plan | undefined): boolean {
  return plan !== undefined && plan.items.some(isOpen);
}

function lazy<T>(f: () => T): () => T {
  let v: T | undefined;
  let done = false;
  return () => {
    if (!done) {
      v = f();
      done = true;
    }
    return v as T;
  };
}

/** A list section: its items within the budget, or `empty` when it has none. */
function listBody(items: () => Item[], what: string, empty: string, omitted = 0): Required<SectionBody> {
  return {
    render: (budget) =>
      items().length === 0 ? fitted(`${empty}\n`, budget) : renderList(items(), budget, what, omitted),
    // The unbounded size: `- text\n` per item (what renderList writes when all fit).
    measure: () => {
      const all = items();
      if (all.length === 0) return empty.length + 1;
      let n = omitted > 0 ? `- [… ${omitted} more ${what} cut]\n`.length : 0;
      for (const it of all) n += it.text.length + 3;
      return n;
    },
  };
}

const DATA_NOTE = `${QUOTED_DATA_NOTE}\n`;

/** A list section that quotes tool output: the note that it is data opens it (when it lists anything). */
function quotedDataBody(list: Required<SectionBody>, items: () => Item[]): SectionBody {
  return {
    render: (budget) =>
      items().length === 0 || budget <= DATA_NOTE.length * 2
        ? list.render(budget)
        : DATA_NOTE + list.render(budget - DATA_NOTE.length),
    measure: () => list.measure() + (items().length === 0 ? 0 : DATA_NOTE.length),
  };
}

/**
 * Objective: the focus, then the original request (an earlier checkpoint's,
 * then this span's first). A request is quoted whole, or by its first
 * sentences or lines with its size; one the replacement keeps verbatim is
 * referred to, not quoted again. Never a cut marker.
 */
function objective(c: Collected, focus: string | undefined, budget: number): string {
  const earlier = c.earlier.objective;
  const firstRequest = c.userMessages[0];
  let out = "";
  if (focus)
    out += fitted(
      `Focus: ${redactSecrets(oneLine(redactSecrets(focus)))}\n`,
      Math.max(16, Math.floor(budget / 3)),
    );
  const rest = budget - out.length;
  if (earlier !== undefined && firstRequest !== undefined) {
    out += requestQuote(c, earlier, Math.floor(rest / 2));
    const lead = "Then, in this span:\n";
    out += lead + requestQuote(c, firstRequest, budget - out.length - lead.length);
  } else if (earlier !== undefined) out += requestQuote(c, earlier, rest);
  else if (firstRequest !== undefined) out += requestQuote(c, firstRequest, rest);
  else out += fitted("(no plain user request in the summarized span)\n", rest);
  return out;
}

/** A reference to a user message the replacement keeps verbatim: its first words and its size. */
function keptReference(text: string, max = 120): string {
  const first = clipWords(oneLine(text, max + 1), max);
  // Its size only when the words shown are not the whole message.
  const size = first === text ? "" : `, ${text.length} characters`;
  return `(kept word for word above this note${size}: "${first}")`;
}

/** A request quoted whole, or by its head at a sentence or line end with its size; a kept one referred to. */
function requestQuote(c: Collected, text: string, budget: number): string {
  if (c.kept.has(text)) return fitted(`${keptReference(text)}\n`, budget);
  const fence = fenceFor(text);
  const overhead = 2 * fence.length + 3;
  if (text.length + overhead <= budget) return `${fence}\n${text}\n${fence}\n`;
  const size = `(the first part of a request of ${text.length} characters)\n`;
  const head = wholeHead(text, budget - overhead - size.length);
  if (head === "") return fitted(size, budget);
  return `${fence}\n${head}\n${fence}\n${size}`;
}

/** Work done: the tool calls by name, then the work notes (newest first by priority, displayed in order). */
function workItems(c: Collected): Item[] {
  const items: Item[] = [];
  if (c.toolCalls > 0) {
    const top = [...c.toolCounts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 8);
    items.push({
      text: `${c.toolCalls} tool calls (${top.map(([k, v]) => `${k} ${v}`).join(", ")})`,
      rank: -1,
      render() {
        return redactSecrets(this.text);
      },
    });
  }
  const seen = new Set<string>();
  const notes: Item[] = [];
  const all: { text: string; raw?: string }[] = [...c.earlier.work.map((text) => ({ text })), ...c.work];
  for (let i = all.length - 1; i >= 0; i--) {
    const { text, raw } = all[i]!;
    if (seen.has(text)) continue;
    seen.add(text);
    notes.push({
      text,
      rank: i,
      render: raw === undefined ? undefined : () => redactedLine(raw, NOTE_CHARS),
    });
  }
  return [...items, ...notes];
}

/** Files changed: newest touched first by priority, listed in first-touched order (earlier notes' first). */
function fileItems(c: Collected): Item[] {
  const e = c.earlier;
  const out: Item[] = [];
  const current = [...c.paths.values()].sort((a, b) => b.last - a.last);
  for (const p of current) {
    const failed =
      p.failures >= p.attempts
        ? ` — failed (${p.failures} attempt${p.failures === 1 ? "" : "s"} errored)`
        : "";
    const path = oneLine(p.path);
    // An edit is the common case and goes unsaid; other kinds of change are named (an earlier note's first).
    const kinds = [...new Set([...(e.fileKinds.get(p.path) ?? []), ...p.kinds])];
    const kind = kinds.length === 1 && kinds[0] === "edited" ? "" : ` (${kinds.join(", ")})`;
    out.push({
      text: `${path}${kind}${failed}`,
      rank: e.files.length + p.first,
      render: () => `${redactSecrets(path)}${kind}${failed}`,
    });
  }
  e.files.forEach((f, i) => {
    if (!c.paths.has(f)) out.push({ text: e.fileLines.get(f) ?? f, rank: i });
  });
  return out;
}

/** Commands run: newest run first by priority, with their count and outcome. */
function commandItems(c: Collected): Item[] {
  const e = c.earlier;
  const out: Item[] = [];
  const base = e.commands.length;
  const cur = [...c.commands.values()].sort((a, b) => b.last - a.last);
  for (const cmd of cur) {
    const tail = `${cmd.count > 1 ? ` (×${cmd.count})` : ""} → ${cmd.outcome}`;
    out.push({
      text: `$ ${cmd.cmd}${tail}`,
      rank: base + cmd.last,
      render: () => `$ ${redactedLine(cmd.raw, COMMAND_CHARS)}${tail}`,
    });
  }
  for (let i = e.commands.length - 1; i >= 0; i--) out.push({ text: e.commands[i], rank: i });
  return out;
}

/** Errors: newest first by priority, quoted as data, with their count. */
function errorItems(c: Collected): Item[] {
  const e = c.earlier;
  const out: Item[] = [];
  const base = e.errors.length;
  const cur = [...c.errors.entries()].sort((a, b) => b[1].last - a[1].last);
  for (const [line, info] of cur)
    out.push({
      text: `${quoteData(line)}${info.count > 1 ? ` (×${info.count})` : ""}${info.fixed === true ? " — fixed (a later run passed)" : ""}${info.ref !== undefined ? ` (${recallHint(info.ref)})` : ""}`,
      rank: base + info.last,
    });
  // Earlier items: ours are quoted already; a foreign note's are quoted here.
  for (let i = e.errors.length - 1; i >= 0; i--) {
    const item = e.errors[i];
    if (c.errors.has(unquoteData(item))) continue;
    out.push({ text: item.startsWith("`") ? item : quoteData(item), rank: i });
  }
  return out;
}

/** Still running: the host's background handles, then the calls without a result (newest first). */
function runningItems(c: Collected, background: readonly BackgroundHandle[]): Item[] {
  const out: Item[] = [];
  const pending = [...c.calls.values()].filter((i) => !i.done).sort((a, b) => b.order - a.order);
  for (const p of pending)
    out.push({ text: describeCall(p, false), rank: p.order, render: () => describeCall(p, true) });
  background.forEach((h, i) =>
    out.unshift({
      text: `background ${describeHandle(h)}`,
      rank: Number.MAX_SAFE_INTEGER - background.length + i,
    }),
  );
  return out;
}

/** A call still running, as measured (`redact` false) or as written (every part redacted before it is cut). */
/**
 * A text on one line cut to `max` characters, redacted on to the end of the word at the cut (`oneLineWindow`).
 * A text of several lines is redacted before its lines are joined (a key's body lines, each with a prefix,
 * are no longer seen as the key's once joined to its header), then again as one line.
 */
function redactedLine(raw: string, max: number): string {
  const text = raw.includes("\n") ? redactedHead(raw, 4 * max + REDACT_MARGIN, REDACT_MARGIN) : raw;
  return redactedCut(oneLineWindow(text, max, REDACT_MARGIN), max);
}

function describeCall(info: CallInfo, redact: boolean): string {
  const r = redact ? redactSecrets : (x: string) => x;
  const t = info.tool;
  const name = typeof t.name === "string" ? t.name : "tool";
  const detail =
    (info.command !== undefined
      ? redact
        ? redactedLine(info.command.raw, COMMAND_CHARS)
        : info.command.cmd
      : undefined) ??
    (info.paths[0] !== undefined
      ? r(info.paths[0])
      : clipWords(r(oneLine(safeJson(t.input), 121 + REDACT_MARGIN)), 120));
  return r(`${name} (${typeof t.id === "string" ? t.id : "?"}): ${detail} — no result yet`);
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return "";
  }
}

function describeHandle(h: BackgroundHandle): string {
  const parts = [`${h.kind} ${h.id}`];
  if (h.command)
    parts.push(clipWords(redactSecrets(oneLine(h.command, COMMAND_CHARS + REDACT_MARGIN)), COMMAND_CHARS));
  if (h.status) parts.push(`(${h.status})`);
  return redactSecrets(parts.join(": ").replace(/: \(/, " ("));
}
