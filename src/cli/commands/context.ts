/**
 * `compact-safe context FILE`: the inspector. What the model would see now,
 * how full the window is, the last compaction and its receipt, checkpoints,
 * anchors and in-flight calls. `--json` prints a `ContextView`.
 */
import type { Command } from "commander";
import type { CoverageReceipt, JournalEntry, Message } from "../../model/index.js";
import { isToolResult, isToolUse } from "../../model/index.js";
import { activePath, latestCompaction, projectPath } from "../../journal/index.js";
import { readAnchors } from "../../workspace/index.js";
import { allText, checkpointMarkerOf, isCheckpoint, isPlainUser } from "../../contract/index.js";
import { measurePressure } from "../../engine/pressure.js";
import { formatReceipt } from "../../engine/replacement.js";
import { FORMAT_NAMES } from "../../formats/registry.js";
import { tokenBars } from "../../report/model.js";
import { loadSession, parseFormat, type Session } from "../io.js";
import { num, out, printJson, style, table } from "../output.js";
import { DEFAULT_WINDOW } from "../../route/index.js";
import { positiveInt } from "../options.js";

/**
 * The stable `context --json` object. Fields are only ever added, never
 * renamed or removed.
 */
export interface ContextView {
  /** The file inspected. */
  file: string;
  /** Its format (`journal`, or the source format of an imported session). */
  format: string;
  /** Id of the leaf entry (the end of the active path); null for an empty session. */
  leaf_id: string | null;
  /** Entries on the active path (header, messages, compactions, ...). */
  active_path_entries: number;
  /** Messages in the live context (what is sent to the model). */
  messages: number;
  /** Estimated tokens of the live context. */
  estimated_tokens: number;
  /** Latest billed parent prompt tokens recorded in the live context; null when none was recorded. */
  billed_parent_prompt_tokens: number | null;
  /** Context pressure: max(estimate, billed + estimate of what came after it). */
  pressure_tokens: number;
  /** The window the percentages refer to (--window). */
  window: number;
  /** estimated_tokens / window × 100, one decimal. */
  percent_of_window: number;
  /** pressure_tokens / window × 100, one decimal. */
  pressure_percent_of_window: number;
  /** Compaction entries on the active path. */
  compactions_on_path: number;
  /** The latest compaction on the active path (the one the live context projects), or null. */
  last_compaction: null | {
    id: string;
    /** `summary` or `prune-only`. */
    path: string;
    /** ISO-8601 time of the entry. */
    created_at: string;
    /** `auto` or `manual`. */
    trigger: string;
    /** The model that wrote the summary (`extractive`, `prune-only`, an LLM, or the source agent's). */
    model: string;
    /** The figures the compaction entry holds (for an imported one: the agent's own count before, where it kept one, and a rough size after). */
    tokens_before: number;
    tokens_after: number;
    /**
     * Estimated tokens of the live context it replaced and of its replacement,
     * counted as `report` counts them (its token bars): the figures to compare
     * with `report`.
     */
    estimated_tokens_before: number;
    estimated_tokens_after: number;
    /** The coverage receipt, or null when the compaction was imported from another agent without one. */
    coverage: CoverageReceipt | null;
    /** The receipt as one line (`summary; last round kept: ...`), or null. */
    receipt: string | null;
    /** The agent that wrote it when imported (e.g. `claude-code`), else null. */
    source_agent: string | null;
  };
  /** Checkpoints in the live context: 0 or 1 (more is a violation). */
  checkpoints: number;
  /** True when the live context holds more than one checkpoint. */
  checkpoint_violation: boolean;
  /** The marker opening the live checkpoint (compact-safe's own or another agent's), or null. */
  checkpoint_marker: string | null;
  anchors: {
    /** Whether anchors are pinned in the workspace (`.codewhale/anchors.md` or legacy `.deepseek/anchors.md`). */
    pinned: boolean;
    /** The anchors file read, or null. */
    file: string | null;
    /** Length of the pinned anchors (trimmed), in characters. */
    chars: number;
    /** Whether the live checkpoint restates them verbatim; null when there are no anchors or no checkpoint. */
    restated: boolean | null;
    /** Set when the anchors could not be read (e.g. a symbolic link refused). */
    error: string | null;
  };
  /** Calls with no result after the latest plain user message (still running), in order. */
  in_flight_calls: { id: string; name: string }[];
  /** Lines of the file that could not be read (file:line: reason). */
  problems: string[];
}

/** Calls without a result that no later plain user message abandoned: they are still running. */
export function inFlightCalls(live: readonly Message[]): { id: string; name: string }[] {
  const results = new Set<string>();
  for (const m of live) for (const b of m.content) if (isToolResult(b)) results.add(b.tool_use_id);
  let lastPlain = -1;
  live.forEach((m, i) => {
    if (isPlainUser(m)) lastPlain = i;
  });
  const calls: { id: string; name: string }[] = [];
  live.forEach((m, i) => {
    if (i < lastPlain) return;
    for (const b of m.content) if (isToolUse(b) && !results.has(b.id)) calls.push({ id: b.id, name: b.name });
  });
  return calls;
}

const pct = (n: number, d: number) => Math.round((n / d) * 1000) / 10;

/** Estimated tokens of messages as `report`'s token bars add up. */
function barsTotal(messages: readonly Message[]): number {
  return Object.values(tokenBars(messages)).reduce((n, v) => n + v, 0);
}

export async function buildContextView(
  session: Session,
  window: number,
  workspace: string,
): Promise<ContextView> {
  const entries: readonly JournalEntry[] = session.entries;
  const path = activePath(entries);
  const live = projectPath(path);
  const pressure = measurePressure({ messages: live });
  const last = latestCompaction(path);
  const checkpoints = live.filter(isCheckpoint);
  let anchors: ContextView["anchors"];
  try {
    const a = await readAnchors(workspace);
    const text = a?.text.trim() ?? "";
    anchors = {
      pinned: text.length > 0,
      file: a?.file ?? null,
      chars: text.length,
      restated:
        text.length === 0 || checkpoints.length === 0
          ? null
          : checkpoints.some((c) => allText(c).includes(text)),
      error: null,
    };
  } catch (e) {
    anchors = { pinned: false, file: null, chars: 0, restated: null, error: (e as Error).message };
  }
  return {
    file: session.file,
    format: session.format,
    leaf_id: path[path.length - 1]?.id ?? null,
    active_path_entries: path.length,
    messages: live.length,
    estimated_tokens: pressure.estimate,
    billed_parent_prompt_tokens: pressure.billedParentPromptTokens,
    pressure_tokens: pressure.tokens,
    window,
    percent_of_window: pct(pressure.estimate, window),
    pressure_percent_of_window: pct(pressure.tokens, window),
    compactions_on_path: path.filter((e) => e.kind === "compaction").length,
    last_compaction:
      last === undefined
        ? null
        : {
            id: last.id,
            path: last.payload.path,
            created_at: last.created_at,
            trigger: last.payload.trigger,
            model: last.payload.model,
            tokens_before: last.payload.tokens_before,
            tokens_after: last.payload.tokens_after,
            estimated_tokens_before: barsTotal(
              last.parent_id ? projectPath(activePath(entries, last.parent_id)) : [],
            ),
            estimated_tokens_after: barsTotal(last.payload.replacement),
            coverage: last.payload.coverage ?? null,
            receipt: last.payload.coverage ? formatReceipt(last.payload.coverage) : null,
            source_agent: typeof last.payload.source_agent === "string" ? last.payload.source_agent : null,
          },
    checkpoints: checkpoints.length,
    checkpoint_violation: checkpoints.length > 1,
    checkpoint_marker: checkpoints[0] ? (checkpointMarkerOf(checkpoints[0]) ?? null) : null,
    anchors,
    in_flight_calls: inFlightCalls(live),
    problems: session.problems,
  };
}

/** The human view of a ContextView. */
export function contextLines(v: ContextView): string[] {
  const lines: string[] = [];
  lines.push(style.bold(`${v.file} (${v.format})`));
  const bar = (p: number) => {
    const w = 30;
    const filled = Math.min(w, Math.round((p / 100) * w));
    return `[${"#".repeat(filled)}${"-".repeat(w - filled)}]`;
  };
  const rows: [string, string][] = [
    ["live messages", num(v.messages)],
    [
      "estimated tokens",
      `${num(v.estimated_tokens)} of ${num(v.window)} ${bar(v.percent_of_window)} ${v.percent_of_window}%`,
    ],
    [
      "billed parent prompt",
      v.billed_parent_prompt_tokens === null
        ? "not recorded"
        : `${num(v.billed_parent_prompt_tokens)} tokens`,
    ],
    ["pressure", `${num(v.pressure_tokens)} tokens (${v.pressure_percent_of_window}% of the window)`],
  ];
  const c = v.last_compaction;
  if (c === null)
    rows.push(["last compaction", "none on the active path (the live context is the full history)"]);
  else {
    rows.push([
      "last compaction",
      `${c.path}, ${c.trigger}, ${c.created_at}${c.source_agent ? ` (imported from ${c.source_agent})` : ""}`,
    ]);
    rows.push([
      "  tokens",
      `${num(c.estimated_tokens_before)} → ${num(c.estimated_tokens_after)} (estimated, as report counts them)`,
    ]);
    // What the entry itself records, where it says something else (an agent counts its whole billed prompt).
    if (c.tokens_before !== c.estimated_tokens_before || c.tokens_after !== c.estimated_tokens_after)
      rows.push([
        "  recorded",
        `${num(c.tokens_before)} → ${num(c.tokens_after)} (${
          c.source_agent
            ? `as imported from ${c.source_agent}: before, the agent's own count of its prompt where it kept one; after, a rough size of the replacement`
            : "as the compaction entry records them"
        })`,
      ]);
    rows.push(["  summarizer", c.model]);
    rows.push(["  coverage", c.receipt ?? "no receipt recorded"]);
    if (v.compactions_on_path > 1)
      rows.push(["  earlier", `${v.compactions_on_path - 1} earlier compaction(s) on the path`]);
  }
  const cp =
    v.checkpoints === 0
      ? "0"
      : v.checkpoint_violation
        ? style.red(`${v.checkpoints} (VIOLATION: a live context holds at most one)`)
        : `1 (${v.checkpoint_marker})`;
  rows.push(["checkpoints", cp]);
  const a = v.anchors;
  let anchorText: string;
  if (a.error !== null) anchorText = style.red(a.error);
  else if (!a.pinned) anchorText = "none pinned in the workspace";
  else {
    const restated =
      a.restated === null
        ? "no checkpoint to restate them"
        : a.restated
          ? style.green("restated verbatim in the checkpoint")
          : style.yellow("NOT restated in the checkpoint");
    anchorText = `${num(a.chars)} chars pinned (${a.file}); ${restated}`;
  }
  rows.push(["anchors", anchorText]);
  rows.push([
    "in-flight calls",
    v.in_flight_calls.length === 0 ? "none" : v.in_flight_calls.map((x) => `${x.name} (${x.id})`).join(", "),
  ]);
  lines.push(...table(rows));
  for (const p of v.problems.slice(0, 10)) lines.push(style.yellow(`  skipped: ${p}`));
  if (v.problems.length > 10)
    lines.push(style.yellow(`  … and ${v.problems.length - 10} more skipped lines`));
  return lines;
}

export function register(program: Command): void {
  program
    .command("context")
    .summary("inspect the live context: tokens, last compaction, checkpoints, anchors, in-flight calls")
    .description(
      "Show what the model would see now: live messages and estimated tokens against the window, " +
        "billed parent prompt tokens when recorded, the last compaction on the active path (path, " +
        "when, tokens before → after, coverage receipt), the checkpoint count (more than one is a " +
        "violation), anchors (pinned? restated in the checkpoint?) and in-flight calls. FILE - reads " +
        "standard input.\n\n" +
        "Exit codes: 0 ok; 2 usage or input error.",
    )
    .argument("<file>", "a journal or a session file, or - for standard input")
    .option("--window <tokens>", "the model's context window", positiveInt("--window"), DEFAULT_WINDOW)
    .option("--workspace <dir>", "workspace whose anchors are checked (default: the current folder)")
    .option("--format <format>", `force the input format (${FORMAT_NAMES.join(", ")}); default: detected`)
    .option("--json", "print the ContextView object (see README)")
    .action(
      async (file: string, o: { window: number; workspace?: string; format?: string; json?: boolean }) => {
        const session = await loadSession(file, parseFormat(o.format));
        const view = await buildContextView(session, o.window, o.workspace ?? process.cwd());
        if (o.json) printJson(view);
        else for (const l of contextLines(view)) out(l);
      },
    );
}
