/**
 * Collection: one pass over the summarized span (linear in the input) that
 * gathers the facts the note is written from: plain user messages, work
 * notes, tool calls by name, modified paths, shell commands with their
 * outcomes, error lines, calls still running, the last assistant text, and
 * what earlier checkpoints said (folded by `fold.ts`).
 *
 * Texts that are quoted whole (user messages, the next step) are redacted
 * here; one-line facts keep a window past their cut that is redacted when
 * they are written, so that a secret across the cut is seen whole and only
 * the items a section keeps pay for redaction.
 */
import type { Message, ToolResultBlock, ToolUseBlock } from "../../model/index.js";
import {
  checkpointMarkerOf,
  isPlainUserMessage,
  ownUserWords,
  modifiedPathsOf,
  oneLine,
  redactedHead,
  redactedTail,
  shellCommandOf,
  textOf,
} from "../transcript.js";
import { redactRepeated, redactSecrets, safeHead } from "../../redact/redact.js";
import { messageRef, toolRef } from "../../model/refs.js";
import { foldCheckpoint, noEarlierParts, type EarlierParts } from "./fold.js";
import { quoteData } from "./quote.js";
import { clipWords } from "./whole.js";
import { commandOutcome, ERROR_LINE_CHARS, errorLine, errorOutput } from "./results.js";
import { checkOf, failureLineOf, type Check } from "./checks.js";
import { isConstraint, isInterruption, rejectionOf, reportedPart, unwrapUserText } from "./user-text.js";
import {
  applyTaskCall,
  applyTaskResult,
  boardPlan,
  boardTool,
  copyBoard,
  newBoard,
  planOf,
  taskCallOf,
  type Plan,
  type TaskBoard,
  type TaskCall,
} from "./plan.js";

/** A work note (the first line of an assistant text) is cut to this many characters. */
export const NOTE_CHARS = 200;
/** Work notes built at most (newest first); older assistant texts are only counted. */
const MAX_WORK_NOTES = 1000;
/** A command is written on one line of at most this many characters. */
export const COMMAND_CHARS = 160;
/** Characters past a cut that are redacted with the kept part, so a secret across the cut is seen whole. */
export const REDACT_MARGIN = 256;
/**
 * What a work note keeps of the reported part of its text (`raw`): its head of at least this many
 * characters, whole sentences. The note reads at most NOTE_CHARS + REDACT_MARGIN of it and one past
 * them (`redactedLine` in render.ts: the one-line window of the cut), so twice that leaves room.
 */
const NOTE_RAW_CHARS = 2 * (NOTE_CHARS + REDACT_MARGIN);

export interface CommandEntry {
  /** The command on one line, cut to COMMAND_CHARS (not redacted: the key that counts repeats). */
  cmd: string;
  /** The command as run; its one-line window (`oneLineWindow`) is redacted when the command is written. */
  raw: string;
  count: number;
  /** Index of the latest run (recency). */
  last: number;
  outcome: string;
  /** The check it runs (tests, build, lint), recognised by its program (`checks.ts`); undefined: no check. */
  check?: Check;
}

export interface PathEntry {
  path: string;
  /** The kinds of change made to it (`written`, `edited`, `patched`, `deleted`, `moved`), in order. */
  kinds: string[];
  first: number;
  last: number;
  attempts: number;
  failures: number;
}

export interface CallInfo {
  tool: ToolUseBlock;
  order: number;
  paths: string[];
  command?: CommandEntry;
  done: boolean;
}

/** The facts of a span. Orders (`first`, `last`, `order`) count blocks from the span's start. */
export interface Collected {
  userMessages: string[];
  /**
   * The recall ref (`msg:HASH`) of each user message as quoted: a quote cut to its budget cites it. Hashed
   * when first asked for: most quotes are not cut.
   */
  userRefs: Map<string, () => string>;
  /** Work notes (cut, not redacted) and their texts (whose window is redacted when a note is written). */
  work: { text: string; raw: string }[];
  toolCounts: Map<string, number>;
  toolCalls: number;
  paths: Map<string, PathEntry>;
  commands: Map<string, CommandEntry>;
  /** Error first lines; `command` is the shell command that failed, `fixed` when a later run of it passed. */
  errors: Map<string, ErrorRecord>;
  /** The errors not fixed yet that a command's run gave, by that command (a passing run fixes them). */
  openErrors: Map<string, ErrorRecord[]>;
  /** The user's constraints and corrections, and their words when they rejected a tool call (oldest first, redacted). */
  constraints: string[];
  /** Order of the last plain user direction and of the last assistant text (0: none). */
  lastUserOrder: number;
  lastTextOrder: number;
  /** The calls made after the last assistant text: how many, and how many came back ok or failed. */
  afterText: { calls: number; ok: number; failed: number; paths: string[]; commands: string[] };
  /** Calls without a result so far, by id. */
  calls: Map<string, CallInfo>;
  /** Older assistant texts left out of `work` (beyond the newest MAX_WORK_NOTES); counted in the cut marker. */
  workOmitted: number;
  lastAssistantText?: string;
  /** The latest plan or to-do list the agent set (see `plan.ts`), and the order of its call. */
  plan?: Plan;
  planOrder: number;
  /** The plan kept one item a call (`TaskCreate`/`TaskUpdate`/`TaskList`), and those calls awaiting their result. */
  tasks?: TaskBoard;
  taskCalls: Map<string, TaskCall>;
  /** The order where the summarized span ends (what comes after it is kept verbatim). */
  spanEnd: number;
  /** User messages (as quoted: redacted) that the replacement keeps verbatim: referred to, never quoted again. */
  kept: Set<string>;
  /** The raw texts of the messages kept verbatim (what `kept` is matched against). */
  retained: ReadonlySet<string>;
  earlier: EarlierParts;
  /** Where the pass stopped (`continueCollect` goes on from there). */
  end: Cursor;
}

/** A message's `messageRef`, computed on the first call. */
function lazyRef(m: Message): () => string {
  let ref: string | undefined;
  return () => (ref ??= messageRef(m));
}

/** Like redactQuotable for a text that is quoted by its head and its tail (the next step). */
function redactEnds(text: string, cap: number, redact = redactSecrets): string {
  if (text.length <= 2 * (cap + REDACT_MARGIN)) return redact(text);
  const head = redactedHead(text, cap, REDACT_MARGIN);
  const tail = redactedTail(text, cap, REDACT_MARGIN);
  return head + " ".repeat(Math.max(0, text.length - head.length - tail.length)) + tail;
}

/** Where a pass over messages stands: the block count, and whether the user just interrupted. */
interface Cursor {
  order: number;
  afterInterruption: boolean;
}

export interface ErrorRecord {
  count: number;
  last: number;
  command?: string;
  /**
   * What a passing run must be to fix it: the check's key (the same check modulo pipes, flags and filters:
   * `checks.ts`), else the command as written.
   */
  key?: string;
  /** Whether the command that gave it is a check (tests, build, lint). */
  check?: boolean;
  fixed?: boolean;
  /** The recall ref of the latest result that gave it (`tool:ID`): the full output. */
  ref?: string;
}

/** The unfixed errors of `errors` by the command whose run gave them. */
function openErrorsOf(errors: Map<string, ErrorRecord>): Map<string, ErrorRecord[]> {
  const open = new Map<string, ErrorRecord[]>();
  for (const e of errors.values()) if (e.fixed !== true) noteOpen(open, e);
  return open;
}

/** Lists an unfixed error under the command that gave it (none: nothing to list). */
function noteOpen(open: Map<string, ErrorRecord[]>, e: ErrorRecord): void {
  const key = e.key ?? e.command;
  if (key === undefined) return;
  const list = open.get(key);
  if (list) list.push(e);
  else open.set(key, [e]);
}

/** What fixes the errors a command's run gave: a passing run of the same check, else of the same command. */
function fixKey(e: CommandEntry): string {
  return e.check?.key ?? e.cmd;
}

/** The facts of `messages`; `quoteCap` is the most of one text a note can quote (its whole budget). */
export function collect(
  messages: readonly Message[],
  quoteCap: number,
  retained: ReadonlySet<string> = new Set(),
): Collected {
  const c: Collected = {
    planOrder: 0,
    taskCalls: new Map(),
    spanEnd: Number.MAX_SAFE_INTEGER,
    kept: new Set(),
    retained,
    userMessages: [],
    userRefs: new Map(),
    work: [],
    toolCounts: new Map(),
    toolCalls: 0,
    paths: new Map(),
    commands: new Map(),
    errors: new Map(),
    openErrors: new Map(),
    calls: new Map(),
    workOmitted: 0,
    earlier: noEarlierParts(),
    constraints: [],
    lastUserOrder: 0,
    lastTextOrder: 0,
    afterText: { calls: 0, ok: 0, failed: 0, paths: [], commands: [] },
    end: { order: 0, afterInterruption: false },
  };
  const assistantTexts: string[] = [];
  walk(c, messages, quoteCap, assistantTexts);
  c.spanEnd = c.end.order;
  // Work notes: the first line of each assistant text except the last one (that is the next step).
  // Only the newest MAX_WORK_NOTES can ever be shown (the section is a few thousand characters);
  // older ones are counted, not built, so a 100k-message span does not allocate a note per message.
  const lastAssistantIdx = assistantTexts.length - 1;
  const firstNote = Math.max(0, assistantTexts.length - MAX_WORK_NOTES);
  c.workOmitted = firstNote;
  for (let i = firstNote; i < lastAssistantIdx; i++) {
    // What the text reports, not its narration ("Let me …", "Now I'll …").
    // Redacted before its lines are joined: a secret that spans lines (a private key's header and body)
    // is recognised only as written. The head redacted is four times what the note can show, so the
    // cut of the head falls far past the note's (the note is redacted again as a whole).
    const head = safeHead(assistantTexts[i]!, 4 * (4 * NOTE_CHARS + REDACT_MARGIN));
    const raw = reportedPart(oneLine(redactSecrets(head), 4 * NOTE_CHARS + REDACT_MARGIN), NOTE_RAW_CHARS);
    const text = clipWords(oneLine(raw, NOTE_CHARS + 1), NOTE_CHARS);
    if (text !== "") c.work.push({ text, raw });
  }
  if (lastAssistantIdx >= 0) c.lastAssistantText = redactEnds(assistantTexts[lastAssistantIdx], quoteCap);
  return c;
}

/**
 * The state of the work at the cut: the facts of the span carried on over
 * the messages that follow it and stay verbatim (the protected last round).
 * The span's facts are left as they are (the note's other sections describe
 * the span alone); the next step is read from this state, so that it never
 * names a step the kept messages show done. A copy: the span's entries are
 * not changed.
 */
export function continueCollect(span: Collected, following: readonly Message[], quoteCap: number): Collected {
  if (following.length === 0) return span;
  // Loops, not callbacks (see DECISIONS.md, hot code makes no closure per call).
  const commands = new Map<string, CommandEntry>();
  for (const [k, e] of span.commands) commands.set(k, { ...e });
  const errors = new Map<string, ErrorRecord>();
  for (const [k, e] of span.errors) errors.set(k, { ...e });
  const calls = new Map<string, CallInfo>();
  for (const [k, i] of span.calls)
    calls.set(k, { ...i, command: i.command === undefined ? undefined : commands.get(i.command.cmd) });
  const paths = new Map<string, PathEntry>();
  for (const [k, e] of span.paths) paths.set(k, { ...e, kinds: [...e.kinds] });
  const c: Collected = {
    ...span,
    userMessages: [...span.userMessages],
    userRefs: new Map(span.userRefs),
    toolCounts: new Map(span.toolCounts),
    paths,
    commands,
    errors,
    openErrors: openErrorsOf(errors),
    calls,
    constraints: [...span.constraints],
    tasks: span.tasks === undefined ? undefined : copyBoard(span.tasks),
    taskCalls: new Map(span.taskCalls),
    kept: new Set(span.kept),
    afterText: {
      ...span.afterText,
      paths: [...span.afterText.paths],
      commands: [...span.afterText.commands],
    },
    end: { ...span.end },
  };
  const texts: string[] = [];
  walk(c, following, quoteCap, texts);
  const last = texts.at(-1);
  if (last !== undefined) c.lastAssistantText = redactEnds(last, quoteCap);
  return c;
}

/** One pass over `messages`, continuing from `c.end`; each assistant text is added to `texts`. */
function walk(c: Collected, messages: readonly Message[], quoteCap: number, texts: string[]): void {
  let { order, afterInterruption } = c.end;
  for (const m of messages) {
    if (checkpointMarkerOf(m) !== undefined) {
      foldCheckpoint(redactSecrets(textOf(m)), c.earlier);
      continue;
    }
    if (isPlainUserMessage(m)) {
      const all = textOf(m);
      // The user's own words (`ownUserWords`): what the harness wrote into the turn is left out by its structure.
      const own = ownUserWords(m);
      const raw = own.length === 0 ? "" : own.length === 1 ? own[0]!.text : own.map((b) => b.text).join("\n");
      if (isInterruption(all)) {
        // An empty interruption is no constraint; the words the user writes after it are.
        afterInterruption = true;
      } else if (raw !== "") {
        const u = unwrapUserText(raw, m);
        // Expanded prompts and command output are not the user's words: they are left out of the note.
        if (u.kind === "direction" || u.kind === "command") {
          // Quoted by head and tail when long: both ends are redacted.
          // The same words are kept as an older message too: redacted once (`redactRepeated`).
          const text = redactEnds(u.text, quoteCap, redactRepeated);
          c.userMessages.push(text);
          if (!c.userRefs.has(text)) c.userRefs.set(text, lazyRef(m));
          if (c.retained.has(raw) || c.retained.has(all)) c.kept.add(text);
          c.lastUserOrder = order + 1;
          if (u.kind === "direction" && (afterInterruption || isConstraint(u.text))) c.constraints.push(text);
          afterInterruption = false;
        }
      }
    }
    const assistant = m.role === "assistant" || m.role === "assistant_interrupted";
    for (const b of m.content) {
      order++;
      if (assistant && b.type === "text") {
        const t = (b as { text?: unknown }).text;
        if (typeof t === "string" && t.trim() !== "") {
          texts.push(t);
          c.lastTextOrder = order;
          c.afterText = { calls: 0, ok: 0, failed: 0, paths: [], commands: [] };
        }
      } else if (b.type === "tool_use") {
        collectCall(c, b as ToolUseBlock, order);
        const plan = planOf(b as ToolUseBlock);
        if (plan !== undefined) {
          c.plan = plan;
          c.planOrder = order;
        } else collectTaskCall(c, b as ToolUseBlock, order);
      } else if (b.type === "tool_result") {
        collectResult(c, b as ToolResultBlock, order, quoteCap);
        if (c.taskCalls.size > 0) collectTaskResult(c, b as ToolResultBlock, order);
      }
    }
  }
  c.end = { order, afterInterruption };
}

/** A call of a one-item-a-call plan tool: the board (seeded with an earlier note's plan) updated. */
function collectTaskCall(c: Collected, tool: ToolUseBlock, order: number): void {
  const call = taskCallOf(tool);
  if (call === undefined) return;
  c.tasks ??= newBoard(boardTool(tool.name), c.earlier.plan);
  applyTaskCall(c.tasks, call, typeof tool.id === "string" ? tool.id : undefined);
  if (typeof tool.id === "string") c.taskCalls.set(tool.id, call);
  c.plan = boardPlan(c.tasks);
  c.planOrder = order;
}

/** A task-tool result: a create's id, a list's whole state; a failed create is no task. */
function collectTaskResult(c: Collected, r: ToolResultBlock, order: number): void {
  const id = typeof r.tool_use_id === "string" ? r.tool_use_id : undefined;
  const call = id === undefined ? undefined : c.taskCalls.get(id);
  if (call === undefined || c.tasks === undefined) return;
  c.taskCalls.delete(id!);
  if (r.is_error === true) {
    const given = c.tasks.created.get(id!);
    if (call.kind === "create" && given !== undefined) c.tasks.items.delete(given);
    c.tasks.created.delete(id!);
  } else applyTaskResult(c.tasks, call, id, typeof r.content === "string" ? r.content : "");
  c.plan = boardPlan(c.tasks);
  c.planOrder = order;
}

/** Tool names repeat across a session: the kind of change each makes is worked out once. */
const changeKinds = new Map<string, string>();

/** The kind of change a modifying tool makes, from its name. */
export function changeKind(tool: string): string {
  let kind = changeKinds.get(tool);
  if (kind === undefined) {
    kind = changeKindOf(tool);
    if (changeKinds.size < 10_000) changeKinds.set(tool, kind);
  }
  return kind;
}

function changeKindOf(tool: string): string {
  if (/delete|remove|\brm\b/i.test(tool)) return "deleted";
  if (/move|rename|\bmv\b/i.test(tool)) return "moved";
  // A patch may add, change or delete; the paths alone do not say which, so it reads as an edit.
  if (/patch/i.test(tool)) return "edited";
  if (/write|create|new/i.test(tool)) return "written";
  return "edited";
}

/** A tool call: counted by name, its modified paths and its shell command noted, and kept until its result. */
function collectCall(c: Collected, tool: ToolUseBlock, order: number): void {
  c.toolCalls++;
  const name = typeof tool.name === "string" ? tool.name : "tool";
  c.toolCounts.set(name, (c.toolCounts.get(name) ?? 0) + 1);
  const paths = modifiedPathsOf(tool);
  const kind = changeKind(name);
  for (const p of paths) {
    const e = c.paths.get(p);
    if (e) {
      e.last = order;
      e.attempts++;
      if (!e.kinds.includes(kind)) e.kinds.push(kind);
    } else c.paths.set(p, { path: p, kinds: [kind], first: order, last: order, attempts: 1, failures: 0 });
  }
  const info: CallInfo = { tool, order, paths, done: false };
  c.afterText.calls++;
  c.afterText.paths.push(...paths);
  const cmdRaw = shellCommandOf(tool);
  if (cmdRaw !== undefined) {
    const cmd = clipWords(oneLine(cmdRaw, COMMAND_CHARS + 1), COMMAND_CHARS);
    let e = c.commands.get(cmd);
    if (e) {
      e.count++;
      e.last = order;
      e.outcome = "no result";
    } else {
      e = { cmd, raw: cmdRaw, count: 1, last: order, outcome: "no result", check: checkOf(cmdRaw) };
      c.commands.set(cmd, e);
    }
    info.command = e;
    c.afterText.commands.push(cmd);
  }
  if (typeof tool.id === "string") c.calls.set(tool.id, info);
}

/** A tool result: its error line noted, and its call's paths and command given their outcome. */
function collectResult(c: Collected, r: ToolResultBlock, order: number, quoteCap: number): void {
  const call = typeof r.tool_use_id === "string" ? c.calls.get(r.tool_use_id) : undefined;
  const content = typeof r.content === "string" ? r.content : "";
  let line = "";
  // A call the user rejected or interrupted: their words are a constraint, and it is no failing check.
  const said =
    call === undefined || call.command === undefined || r.is_error === true
      ? rejectionOf(content)
      : undefined;
  // A bare rejection or interruption (no words) is no constraint.
  if (said !== undefined && !said.startsWith("(the user ")) c.constraints.push(redactEnds(said, quoteCap));
  // A check whose result is not flagged failed when its output says so (a pipe hides the exit status).
  const outFailure = r.is_error === true ? undefined : outputFailure(call, content);
  const failed = r.is_error === true || outFailure !== undefined;
  if (failed) {
    line = clipWords(
      outFailure !== undefined
        ? outFailure.line
        : said !== undefined
          ? `rejected by the user: ${oneLine(redactSecrets(said))}`
          : errorLine(content),
      ERROR_LINE_CHARS,
    );
    const e = c.errors.get(line);
    const ref = typeof r.tool_use_id === "string" ? toolRef(r.tool_use_id) : undefined;
    if (e) {
      e.ref = ref;
      e.count++;
      e.last = order;
      // Failing again: open again (an error still open is listed already).
      if (e.fixed === true) noteOpen(c.openErrors, e);
      e.fixed = false;
    } else {
      const entry = said === undefined ? call?.command : undefined;
      const record: ErrorRecord = { count: 1, last: order, command: entry?.cmd, ref };
      if (entry !== undefined) {
        record.key = fixKey(entry);
        if (entry.check !== undefined) record.check = true;
      }
      c.errors.set(line, record);
      noteOpen(c.openErrors, record);
    }
  } else if (call?.command !== undefined) {
    // A passing run of a command (of the same check, however filtered or piped) fixes the errors an earlier run gave.
    const key = fixKey(call.command);
    const open = c.openErrors.get(key);
    if (open) {
      for (const e of open) e.fixed = true;
      c.openErrors.delete(key);
    }
  }
  if (call) {
    call.done = true;
    // A call after the last assistant text is work that text announced.
    if (call.order > c.lastTextOrder) {
      if (failed) c.afterText.failed++;
      else c.afterText.ok++;
    }
    if (failed) {
      for (const p of call.paths) {
        const e = c.paths.get(p);
        if (e) e.failures++;
      }
    }
    if (call.command)
      call.command.outcome =
        r.is_error === true
          ? `error: ${quoteData(line)}`
          : outFailure !== undefined
            ? outFailure.outcome
            : commandOutcome(content);
    // Answered calls leave the map: it holds only the calls still running (and stays small).
    c.calls.delete(r.tool_use_id);
  }
}

/**
 * A check whose result is not flagged as an error, failed as its output says: a non-zero exit the output
 * reports (Codex's wrapper), else a runner's failure line (`checks.ts`). Its error line (redacted, on one line)
 * and the outcome written for the command; undefined when it passed or is no check.
 */
function outputFailure(
  call: CallInfo | undefined,
  content: string,
): { line: string; outcome: string } | undefined {
  if (call?.command?.check === undefined || content === "") return undefined;
  const exit = commandOutcome(content);
  if (exit !== "ok") return { line: errorLine(content), outcome: exit };
  const found = failureLineOf(errorOutput(content));
  if (found === undefined) return undefined;
  const line = clipWords(redactSecrets(oneLine(found)), ERROR_LINE_CHARS);
  return { line, outcome: `failed, as its output says (the exit status did not): ${quoteData(line)}` };
}
