/**
 * The embedded extractive summarizer: the default, offline and deterministic.
 *
 * It writes a structured Markdown handoff note from the transcript itself, in
 * one pass over the messages (linear in the input), with the sections of the
 * table in `sections.ts`, in order (and Earlier summary when a foreign
 * checkpoint is folded in). The note is bounded: the character budget
 * (`maxTokens` × 4) is shared between the sections by weight, every section
 * keeps something, and a section that needs less than its share gives the
 * rest to the others. File paths, user direction and error lines weigh most.
 *
 * Secrets are redacted from what it takes from the transcript before that is
 * cut or joined (a key is never half-kept), and text quoted from tool output
 * (error lines, command outcomes) is written as inline code under a note that
 * it is data, never as plain list items.
 *
 * The modules, in the order a note is made:
 * - `collect.ts`: one pass over the span gathers the facts (`results.ts`
 *   reads a tool result's error line and a command's outcome);
 * - `fold.ts`: an earlier checkpoint in the span is parsed and merged as
 *   older entries;
 * - `render.ts`: the note's text, each section within its share of the
 *   budget (`bounded.ts`: lists, quotes and cut markers within a budget;
 *   `quote.ts`: quoting);
 * - `sections.ts`: the sections (name, weight, prompt hint), which the LLM
 *   prompt reads too, and the size bound.
 */
import type { Summarizer, SummaryRequest, SummaryResult } from "../types.js";
import { collect, continueCollect } from "./collect.js";
import { renderNote } from "./render.js";
import { textOf } from "../transcript.js";
import { CHARS_PER_TOKEN, DEFAULT_SUMMARY_TOKENS, MIN_SUMMARY_TOKENS } from "./sections.js";

export {
  SECTIONS,
  SUMMARY_SECTIONS,
  EARLIER_SUMMARY_SECTION,
  CHARS_PER_TOKEN,
  DEFAULT_SUMMARY_TOKENS,
  MIN_SUMMARY_TOKENS,
  type SectionSpec,
  type SummarySection,
} from "./sections.js";
export { splitSections } from "./fold.js";
export { QUOTED_DATA_NOTE, quoteData, unquoteData } from "./quote.js";
export { errorLine, errorOutput, commandOutcome } from "./results.js";

export interface ExtractiveOptions {
  /** Default size bound in tokens when the request gives none (default 2,000). */
  maxTokens?: number;
}

/** The summarizers made by `extractiveSummarizer` (they do all their work before they return). */
const inProcess = new WeakSet<Summarizer>();

/**
 * Whether `s` is an embedded extractive summarizer: it works in this thread
 * and has its answer before `summarize` returns, so no timer could stop it
 * (the engine calls it without a request timeout).
 */
export function runsInProcess(s: Summarizer): boolean {
  return inProcess.has(s);
}

export function extractiveSummarizer(options: ExtractiveOptions = {}): Summarizer {
  const defaultTokens = options.maxTokens ?? DEFAULT_SUMMARY_TOKENS;
  const summarizer: Summarizer = {
    name: "extractive",
    model: "extractive",
    async summarize(request: SummaryRequest): Promise<SummaryResult> {
      request.signal?.throwIfAborted();
      const text = extractiveSummary(request, { maxTokens: request.maxTokens ?? defaultTokens });
      // Everything the note takes from the transcript is redacted as it is written.
      return { text, model: "extractive", redacted: true };
    },
  };
  inProcess.add(summarizer);
  return summarizer;
}

/**
 * The extractive handoff note for a request, as Markdown. Pure and
 * deterministic; at most `maxTokens × 4` characters (the request's
 * `maxTokens`, else `opts.maxTokens`, else 2,000; at least 200).
 */
export function extractiveSummary(request: SummaryRequest, opts: ExtractiveOptions = {}): string {
  const tokens = Math.max(
    MIN_SUMMARY_TOKENS,
    Math.floor(request.maxTokens ?? opts.maxTokens ?? DEFAULT_SUMMARY_TOKENS),
  );
  let totalChars = tokens * CHARS_PER_TOKEN;
  // Collected once: a smaller note is rendered again from the same facts.
  const retained = new Set((request.retained ?? []).map(textOf));
  const facts = collect(request.messages, totalChars, retained);
  // The state at the cut (for the next step): the span's facts carried on over the kept messages.
  const state = continueCollect(facts, request.following ?? [], totalChars);
  let text = renderNote(facts, request, totalChars, state);
  // Held in the host's own count when it gives one: the character budget shrinks in proportion
  // until the note fits (dense text such as code runs under four characters a token).
  for (let i = 0; i < 4 && request.countTokens; i++) {
    const n = request.countTokens(text);
    if (n <= tokens) break;
    totalChars = Math.floor((totalChars * tokens * 0.97) / n);
    text = renderNote(facts, request, totalChars, state);
  }
  return text;
}
