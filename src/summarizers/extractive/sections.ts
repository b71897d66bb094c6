/**
 * The sections of a handoff note, in one table: each section's name (its
 * `## ` header), its weight in the extractive note's character budget and the
 * hint the LLM summarizers' prompt gives for it. The extractive renderer
 * writes the sections in this order with these weights (`render.ts`); the
 * prompt (`../prompt.ts`) asks for the same sections, in the same order, with
 * these hints; the folder of a previous checkpoint (`fold.ts`) recognises
 * them. Also the note's size bound.
 */
import { CONSTANTS } from "../../model/constants.js";

export interface SectionSpec {
  /** The header, written as `## name`. */
  readonly name: string;
  /**
   * Share of the extractive note's character budget: the budget is split
   * between the sections by weight, and a section that needs less than its
   * share gives the rest to the others (file paths, user direction and
   * error lines weigh most).
   */
  readonly weight: number;
  /** What the section holds, as the LLM prompt asks for it. */
  readonly hint: string;
  /**
   * The extractive note quotes text inside backtick fences in this section,
   * so a `## ` line within a fence is never a header when the note is parsed
   * again (other sections hold no raw `## ` lines).
   */
  readonly fenced: boolean;
}

/** The sections every note has, in order. */
export const SECTIONS = [
  {
    name: "Objective",
    weight: 1,
    hint: "the user's standing request, in their words (a slash command as `/name args`, never its expanded prompt), and the focus if one is given.",
    fenced: true,
  },
  {
    name: "Next step",
    weight: 1.5,
    hint: "what is not done yet, starting with the first item to do: when the agent kept a plan or to-do list (a tool whose input lists items with statuses), its latest list, every item with its status, then the first item not completed; else the user's latest request if it is not answered yet, a check still failing after the last edit, or an edit the agent announced and did not make. When the last message reports the work complete and nothing failed after it, say: finished, nothing pending. Never an action the transcript shows done.",
    fenced: false,
  },
  {
    name: "Decisions and constraints",
    weight: 1.5,
    hint: 'every rule, correction and decision of the user ("no, use X", "don\'t push", "keep the API"), and their words when they rejected or interrupted a tool call, quoted exactly, with the reason they gave.',
    fenced: true,
  },
  {
    name: "Files changed",
    weight: 4,
    hint: "every file path that was created, edited, moved or deleted, one per line, with the kind of change when it is not an edit.",
    fenced: false,
  },
  {
    name: "Commands run",
    weight: 1,
    hint: "the shell commands and tests run, with their last outcome (ok, or the error's first line).",
    fenced: false,
  },
  {
    name: "Errors",
    weight: 3.5,
    hint: "the first line of each error seen, deduplicated, marked fixed when a later run of the same command passed.",
    fenced: false,
  },
  {
    name: "User direction",
    weight: 4,
    hint: "every message the user wrote that is not kept word for word after the note, quoted exactly, newest first (a long paste by its head and tail with its size); a message marked kept is named in one line (its first words), never quoted again.",
    fenced: true,
  },
  {
    name: "Work done",
    weight: 1,
    hint: 'what the agent did and found, as facts (done, found, decided), condensed; not its narration ("Let me…", "Now I\'ll…").',
    fenced: false,
  },
  {
    name: "Still running",
    weight: 0.5,
    hint: "tool calls without a result and background work that may still be running.",
    fenced: false,
  },
] as const satisfies readonly SectionSpec[];

/** The names of a table's sections, as a tuple. */
type NamesOf<T extends readonly SectionSpec[]> = {
  readonly [K in keyof T]: T[K] extends { name: infer N } ? N : never;
};

/** The section headers, in order. */
export const SUMMARY_SECTIONS = SECTIONS.map((s) => s.name) as unknown as NamesOf<typeof SECTIONS>;
export type SummarySection = (typeof SUMMARY_SECTIONS)[number];

/**
 * The extractive note's extra last section, written only when another
 * agent's checkpoint is folded in: its text, head and tail within its share.
 * The LLM prompt does not ask for it (an LLM folds an earlier summary into
 * the other sections).
 */
export const EARLIER_SUMMARY = { name: "Earlier summary", weight: 1.5 } as const;
export const EARLIER_SUMMARY_SECTION = EARLIER_SUMMARY.name;

/** Characters per token used for the size bound (1 token ≈ 4 characters). */
export const CHARS_PER_TOKEN = 4;
/** The note's size bound in tokens when neither the request nor the options give one. */
export const DEFAULT_SUMMARY_TOKENS = CONSTANTS.summaryMaxTokens;
/** Below this the section headers alone would not fit; smaller requests are raised to it. */
export const MIN_SUMMARY_TOKENS = 200;
