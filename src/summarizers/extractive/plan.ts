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
