/**
 * What a user message is, for the note: a direction in the user's own words,
 * a slash command (shown as `/name args`, never its expanded prompt), an
 * expanded prompt or skill text the agent injected (shown by its size only),
 * or a command's local output. Also the user's constraints and corrections
 * ("no, use X", "don't push", "keep the API"), and the words a user gave when
 * they rejected or interrupted a tool call. Pure.
 */
import type { Message } from "../../model/index.js";

export type UserTextKind = "direction" | "command" | "injected" | "output";

export interface UserText {
  kind: UserTextKind;
  /** The text as the note shows it: the user's words, `/name args`, or a one-line size notice. */
  text: string;
}

const TAG = (name: string): RegExp => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`);
/** Made once, not per message (no `g` flag: `exec` keeps no state between texts). */
const COMMAND_NAME = TAG("command-name");
const COMMAND_ARGS = TAG("command-args");

/** A user text as the note shows it (the message's `meta.is_meta` marks text the agent injected). */
export function unwrapUserText(text: string, m?: Message): UserText {
  const raw = withoutInjected(text);
  if (raw.trim() === "" && text.trim() !== "")
    return { kind: "injected", text: `[system reminder or hook output: ${text.length} characters]` };
  const name = raw.includes("<command-name>") ? COMMAND_NAME.exec(raw)?.[1]?.trim() : undefined;
  if (name !== undefined) {
    const args = COMMAND_ARGS.exec(raw)?.[1]?.trim() ?? "";
    const slash = name.startsWith("/") ? name : `/${name}`;
    return { kind: "command", text: args === "" ? slash : `${slash} ${args}` };
  }
  if (/^\s*<local-command-(stdout|stderr|caveat)>/.test(raw)) {
    const body = raw.replace(/<\/?local-command-(stdout|stderr|caveat)>/g, "").trim();
    return { kind: "output", text: `[command output: ${body.length} characters]` };
  }
  if (m?.meta?.is_meta === true) {
    const title = /^\s*#{1,3}\s+(.+)$/m.exec(raw)?.[1]?.trim() ?? raw.trim().split("\n")[0] ?? "";
    return {
      kind: "injected",
      text: `[expanded prompt or skill text: "${title.slice(0, 80)}", ${raw.length} characters]`,
    };
  }
  return { kind: "direction", text: raw };
}

/** Blocks the agent or its hooks add to a user turn: never the user's words. */
const INJECTED_BLOCKS =
  /<(system-reminder|user-prompt-submit-hook|[a-z-]*hook[a-z-]*|command-message)>[\s\S]*?<\/\1>/g;
/** A hook's report that stands alone as a user turn (`SessionStart:compact hook success: …`). */
const HOOK_LINE = /^\s*[A-Za-z]+(?::[\w-]+)? hook (?:success|error|failed|output|blocking error)\b[\s\S]*$/;

/** A user text without the system reminders and hook output the agent put in it. */
export function withoutInjected(text: string): string {
  if (!text.includes("<") && !text.includes("hook")) return text;
  const out = text.replace(INJECTED_BLOCKS, "");
  return HOOK_LINE.test(out) ? "" : out === text ? text : out.trim();
}

/**
 * Narration: a sentence that announces work ("Let me …", "Now I'll …",
 * "I'll …", "I'm going to …") rather than reporting it. Work done keeps
 * what an assistant text reports, never its narration.
 */
const NARRATION =
  /^(?:(?:ok(?:ay)?|great|perfect|good|excellent|alright|now|next|first|then|so|sure)\b[,.!:]?\s*)*(?:let me|let's|let us|i'll|i will|i'm going to|i am going to|i need to|i should|i'm now going to|we'll|we need to)\b/i;

const isTerminator = (c: number): boolean => c === 0x2e || c === 0x21 || c === 0x3f; // . ! ?
const WHITESPACE = /\s/;
/** A sentence that is only an interjection ("Done.", "OK!"). */
const INTERJECTION = /^(?:ok(?:ay)?|great|perfect|good|excellent|alright|done|now|sure)[.!,:]*$/i;

/**
 * Where the sentence of `text` that starts at `from` ends: after a run of `.`, `!` or `?` followed by
 * whitespace or the end of the text (a `.` inside a word, a file name, a version or a URL, ends none);
 * the text's length when none does.
 */
function sentenceEnd(text: string, from: number): number {
  const n = text.length;
  let i = from;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c !== 0x2e && c !== 0x21 && c !== 0x3f) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < n && isTerminator(text.charCodeAt(j))) j++;
    if (j === n || WHITESPACE.test(text[j]!)) return j;
    i = j;
  }
  return n;
}

/**
 * The sentences of a text, in one pass: a sentence ends at a run of `.`, `!`
 * or `?` followed by whitespace or the end of the text; a `.` inside a word
 * (a file name, a version, a URL) does not end one.
 */
export function sentencesOf(text: string): string[] {
  const out: string[] = [];
  for (let start = 0; start < text.length;) {
    const end = sentenceEnd(text, start);
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/**
 * The sentences of a work note that report something (narration and bare interjections left out), joined
 * by a space; "" when none. `max`: a reader that needs no more than `max` characters of it (and one past
 * them, to see whether it goes on) gets its head: the sentences after the one that reaches `max + 1`
 * characters are not read.
 */
export function reportedPart(text: string, max = Number.POSITIVE_INFINITY): string {
  let out = "";
  for (let start = 0; start < text.length && out.length <= max;) {
    const end = sentenceEnd(text, start);
    const x = text.slice(start, end).trim();
    start = end;
    if (x !== "" && !NARRATION.test(x) && !INTERJECTION.test(x)) out = out === "" ? x : `${out} ${x}`;
  }
  return out;
}

/**
 * A direction that constrains or corrects the work: a negation or a rule
 * ("no", "don't", "never", "always", "instead", "keep", "stop", "must",
 * "only", "I said", "rather", "not X but Y").
 */
const CONSTRAINT =
  /(^|[\s,.;:!?("'])(no|nope|don'?t|do not|never|always|instead|keep|stop|must|mustn'?t|should(?:n'?t| not)|only|avoid|wait|rather|revert|undo|not (?:yet|now)|i said|i meant|please don'?t|make sure)\b/i;

export function isConstraint(text: string): boolean {
  return CONSTRAINT.test(text.slice(0, 2_000));
}

/** Claude Code's words when the user rejects a tool call: what follows is the user's own reason. */
const REJECTED = /The user doesn't want to proceed with this tool use\.[\s\S]*?the user said:\s*([\s\S]+)$/;
const REJECTED_BARE = /The user doesn't want to proceed with this tool use\./;
const INTERRUPTED = /^\s*\[Request interrupted by user( for tool use)?\]/;

/**
 * The user's words in a tool result that rejected the call, or a marker for a
 * bare rejection or interruption; undefined for any other result.
 */
export function rejectionOf(content: string): string | undefined {
  // Most results are neither: a plain string search rules them out before any regex runs (the
  // rejection regex scanned every result in full, a seventh of a cold compaction at 100k messages).
  if (
    !content.includes("The user doesn't want to proceed") &&
    !content.includes("[Request interrupted by user")
  )
    return undefined;
  const said = REJECTED.exec(content)?.[1]?.trim();
  if (said !== undefined && said !== "") return said;
  if (REJECTED_BARE.test(content)) return "(the user rejected a tool call and asked to wait)";
  if (INTERRUPTED.test(content)) return "(the user interrupted a tool call)";
  return undefined;
}

/** A user text that is an interruption marker rather than words. */
export function isInterruption(text: string): boolean {
  return INTERRUPTED.test(text) && text.trim().length < 80;
}
