/**
 * The agent's own plan: a to-do or plan tool call whose input is a list of
 * items with statuses (Claude Code's `TodoWrite` `{todos:[{content,status,
 * activeForm}]}`, Codex's `update_plan` `{plan:[{step,status}]}`, or any
 * other tool of that shape). The latest list is the state of the work: the
 * note carries it verbatim with its statuses, and the next step starts from
 * its first item not completed. Pure.
 */
import type { ToolUseBlock } from "../../model/index.js";
import { normalizeInput } from "../transcript.js";

export interface PlanItem {
  text: string;
  status: string;
}

export interface Plan {
  /** The tool that set it (`TodoWrite`, `update_plan`, …). */
  tool: string;
  items: PlanItem[];
}

/** The fields an item's words are read from, in order. */
const TEXT_FIELDS = ["content", "step", "title", "task", "description", "text", "name", "activeForm"];

/** Statuses that close an item. */
const CLOSED = /^(completed?|done|finished|cancell?ed|skipped|obsolete)$/i;

export function isOpen(item: PlanItem): boolean {
  return !CLOSED.test(item.status.trim());
}

function itemOf(v: unknown): PlanItem | undefined {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
  const rec = v as Record<string, unknown>;
  if (typeof rec.status !== "string" || rec.status.trim() === "") return undefined;
  for (const f of TEXT_FIELDS) {
    const t = rec[f];
    if (typeof t === "string" && t.trim() !== "") return { text: t.trim(), status: rec.status.trim() };
  }
  return undefined;
}

/** The plan a tool call sets, when its input holds a list of items that all have a status and words. */
export function planOf(tool: ToolUseBlock): Plan | undefined {
  const input = normalizeInput(tool.input);
  if (input === null || typeof input !== "object" || Array.isArray(input)) return undefined;
  for (const v of Object.values(input as Record<string, unknown>)) {
    if (!Array.isArray(v) || v.length === 0 || v.length > 200) continue;
    const items = v.map(itemOf);
    if (items.every((i): i is PlanItem => i !== undefined))
      return { tool: typeof tool.name === "string" ? tool.name : "plan", items };
  }
  return undefined;
}

/** The header of the plan's block in the Next step (the fold reads it back). */
export const PLAN_HEADER = /^Plan \(the latest ([^\s,)]+) list[^)]*\):$/;

export function planHeader(plan: Plan): string {
  return `Plan (the latest ${plan.tool} list, statuses as the agent set them):`;
}

/** One item as written: `- [status] text` on one line. */
export function planLine(item: PlanItem): string {
  return `- [${item.status.replace(/[\]\n]/g, " ")}] ${item.text.replace(/\s*\n\s*/g, " ")}`;
}

/** A plan read back from its block in an earlier note (`planHeader` then `planLine`s). */
export function parsePlan(lines: readonly string[]): Plan | undefined {
  for (let i = 0; i < lines.length; i++) {
    const m = PLAN_HEADER.exec(lines[i]!);
    if (!m) continue;
    const items: PlanItem[] = [];
    for (let j = i + 1; j < lines.length; j++) {
      const im = /^- \[([^\]]+)\] (.+)$/.exec(lines[j]!);
      if (!im) break;
      items.push({ status: im[1]!, text: im[2]! });
    }
    return items.length > 0 ? { tool: m[1]!, items } : undefined;
  }
  return undefined;
}

/** Statuses of an item being worked on (the Next step starts from the first of them). */
const IN_PROGRESS = /^(in[ _-]?progress|active|doing|started|running)$/i;

/** The item the Next step starts from: the first in progress, else the first not completed. */
export function nextItem(plan: Plan): PlanItem | undefined {
  return plan.items.find((i) => IN_PROGRESS.test(i.status.trim())) ?? plan.items.find(isOpen);
}

/**
 * A plan kept one item a call (Claude Code 2.1.17+: `TaskCreate` `{subject, description, activeForm}`
 * answered "Task #N created successfully: …", `TaskUpdate` `{taskId, status?, subject?}` with the status
 * `deleted` removing it, `TaskList` `{}` answered by one `#N [status] subject [blocked by …]` line a task).
 * The items by id, in the order they were made; each item's words begin with its `#id` (so that an
 * earlier note's plan, read back, is updated by the calls after it).
 */
export interface TaskBoard {
  tool: string;
  items: Map<string, PlanItem>;
  /** The id given to each create call (by tool-use id), until its result names the real one. */
  created: Map<string, string>;
}

/** What a task-tool call does to a board. */
export type TaskCall =
  | { kind: "create"; text: string; status: string }
  | { kind: "update"; id: string; status?: string; text?: string }
  | { kind: "list" };

const str = (v: unknown): string | undefined =>
  typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;

/** A call of a one-item-a-call plan tool (by its name: `TaskCreate`, `TaskUpdate`, `TaskList`). */
export function taskCallOf(tool: ToolUseBlock): TaskCall | undefined {
  const name = typeof tool.name === "string" ? tool.name : "";
  const m = /^(?:task|todo)_?(create|add|update|list)$/i.exec(name);
  if (!m) return undefined;
  const verb = m[1]!.toLowerCase();
  if (verb === "list") return { kind: "list" };
  const input = normalizeInput(tool.input);
  if (input === null || typeof input !== "object" || Array.isArray(input)) return undefined;
  const rec = input as Record<string, unknown>;
  const text = str(rec.subject) ?? str(rec.title) ?? str(rec.content) ?? str(rec.description);
  const status = str(rec.status);
  if (verb === "update") {
    const id =
      str(rec.taskId) ?? str(rec.id) ?? (typeof rec.taskId === "number" ? String(rec.taskId) : undefined);
    return id === undefined
      ? undefined
      : { kind: "update", id: id.replace(/^#/, ""), status, text: str(rec.subject) };
  }
  return text === undefined ? undefined : { kind: "create", text, status: status ?? "pending" };
}

/** A board's tool name as the note writes it (`TaskCreate/TaskUpdate`), from any of its calls' names. */
export function boardTool(name: unknown): string {
  const family = (typeof name === "string" ? name : "Task").replace(/_?(create|add|update|list)$/i, "");
  return `${family}Create/${family}Update`;
}

/** A board seeded with an earlier plan's `#id` items (those the earlier note wrote from a board). */
export function newBoard(tool: string, earlier?: Plan): TaskBoard {
  const board: TaskBoard = { tool, items: new Map(), created: new Map() };
  for (const it of earlier?.items ?? []) {
    const m = /^#(\S+) (.+)$/.exec(it.text);
    if (m) board.items.set(m[1]!, { text: m[2]!, status: it.status });
  }
  return board;
}

export function copyBoard(b: TaskBoard): TaskBoard {
  return { tool: b.tool, items: new Map(b.items), created: new Map(b.created) };
}

/** Applies a call to the board (a create gets the next free number until its result names its id). */
export function applyTaskCall(board: TaskBoard, call: TaskCall, toolUseId: string | undefined): void {
  if (call.kind === "create") {
    let n = 0;
    for (const id of board.items.keys()) if (/^\d+$/.test(id)) n = Math.max(n, Number(id));
    const id = String(n + 1);
    board.items.set(id, { text: call.text, status: call.status });
    if (toolUseId !== undefined) board.created.set(toolUseId, id);
  } else if (call.kind === "update") {
    if (call.status !== undefined && /^deleted?$/i.test(call.status)) {
      board.items.delete(call.id);
      return;
    }
    const had = board.items.get(call.id);
    if (had === undefined && call.status === undefined) return;
    board.items.set(call.id, {
      text: call.text ?? had?.text ?? `(task #${call.id})`,
      status: call.status ?? had!.status,
    });
  }
}

/** A task-tool result read into the board: a create's real id, a list's every task (it is the whole state). */
export function applyTaskResult(
  board: TaskBoard,
  call: TaskCall,
  toolUseId: string | undefined,
  text: string,
): void {
  if (call.kind === "create" && toolUseId !== undefined) {
    const given = board.created.get(toolUseId);
    board.created.delete(toolUseId);
    const real = /#(\w+)\b/.exec(text)?.[1];
    if (given === undefined || real === undefined || real === given) return;
    const entries = [...board.items].map(([k, v]): [string, PlanItem] => [k === given ? real : k, v]);
    board.items = new Map(entries);
  } else if (call.kind === "list") {
    const items = new Map<string, PlanItem>();
    for (const line of text.split("\n")) {
      const m = /^\s*#(\w+)\s+\[([^\]]+)\]\s+(.+?)(?:\s+\[blocked by [^\]]*\])?\s*$/.exec(line);
      if (m) items.set(m[1]!, { status: m[2]!, text: m[3]! });
    }
    // A list that shows no task line (an empty board, or another tool's output) changes nothing.
    if (items.size > 0 || /^no tasks/i.test(text.trim())) board.items = items;
  }
}

/** The board as a plan (items `#id words`; none when every task was deleted). */
export function boardPlan(board: TaskBoard): Plan {
  return {
    tool: board.tool,
    items: [...board.items].map(([id, it]) => ({ text: `#${id} ${it.text}`, status: it.status })),
  };
}

/**
 * The plan as it stands after `messages` (whole lists and one-item-a-call tasks, whichever was set last):
 * what the LLM summarizers are given beside the transcript, read as the note reads it.
 */
export function planAtEnd(messages: readonly { content: readonly { type: string }[] }[]): Plan | undefined {
  let plan: Plan | undefined;
  let board: TaskBoard | undefined;
  const pending = new Map<string, TaskCall>();
  for (const m of messages)
    for (const b of m.content) {
      if (b.type === "tool_use") {
        const tool = b as ToolUseBlock;
        const whole = planOf(tool);
        const id = typeof tool.id === "string" ? tool.id : undefined;
        if (whole !== undefined) plan = whole;
        else {
          const call = taskCallOf(tool);
          if (call === undefined) continue;
          board ??= newBoard(boardTool(tool.name));
          applyTaskCall(board, call, id);
          if (id !== undefined) pending.set(id, call);
          plan = boardPlan(board);
        }
      } else if (b.type === "tool_result" && board !== undefined) {
        const r = b as { tool_use_id?: unknown; content?: unknown; is_error?: unknown };
        const id = typeof r.tool_use_id === "string" ? r.tool_use_id : undefined;
        const call = id === undefined ? undefined : pending.get(id);
        if (call === undefined || r.is_error === true) continue;
        pending.delete(id!);
        applyTaskResult(board, call, id, typeof r.content === "string" ? r.content : "");
        plan = boardPlan(board);
      }
    }
  return plan;
}
