/**
 * Folding an earlier checkpoint into the new note. Our own checkpoints are
 * parsed by section and their items merged as older entries; the coverage
 * receipt, anchors and live state are dropped (the engine re-reads them,
 * never copies them). A checkpoint with none of our sections (another
 * agent's) is kept as bounded text under "Earlier summary".
 */
import { EARLIER_SUMMARY_SECTION, SECTIONS, SUMMARY_SECTIONS, type SummarySection } from "./sections.js";
import { isOpen, parsePlan, type Plan } from "./plan.js";

/** What earlier checkpoints said, as older entries of the new note's sections. */
export interface EarlierParts {
  objective?: string;
  userQuotes: string[];
  constraints: string[];
  work: string[];
  files: string[];
  /** The kinds of change the earlier note gave each of its files (an unannotated file was edited). */
  fileKinds: Map<string, string[]>;
  /** Each earlier file's line as the earlier note wrote it (kinds and outcome included). */
  fileLines: Map<string, string>;
  commands: string[];
  errors: string[];
  /** The earlier note's plan (its Next step's plan block), while no later plan replaces it. */
  plan?: Plan;
  /** The earlier note's checks still failing (its Next step's list), as written. */
  failing: string[];
  /** The size of each section of our latest earlier note (the new note keeps at least as much where it is still true). */
  sizes: Map<string, number>;
  /** Foreign checkpoints (and an earlier "Earlier summary" section), kept as text. */
  freeText: string[];
  /** The latest foreign summary's pending tasks (read against what the span did after it). */
  pending: string[];
}

export function noEarlierParts(): EarlierParts {
  return {
    userQuotes: [],
    constraints: [],
    work: [],
    files: [],
    fileKinds: new Map(),
    fileLines: new Map(),
    commands: [],
    errors: [],
    failing: [],
    sizes: new Map(),
    freeText: [],
    pending: [],
  };
}

/** The kinds of change a Files changed line names after its path. */
const FILE_KINDS =
  / \(((?:written|edited|patched|deleted|moved)(?:, (?:written|edited|patched|deleted|moved))*)\)$/;

/** Sections whose quotes are fenced by us (fences there are always balanced). */
const FENCED_SECTIONS = new Set<string>(SECTIONS.filter((s) => s.fenced).map((s) => s.name));

/**
 * Split a note into its `## ` sections. Inside the Objective and User
 * direction sections, lines within our fenced quotes are never headers (a
 * quoted user message may contain `## ...`); other sections hold no raw
 * `## ` lines, because free text is written with its headers demoted.
 */
export function splitSections(text: string): { preamble: string; sections: Map<string, string> } {
  const sections = new Map<string, string>();
  const lines = text.split("\n");
  let fence: string | undefined;
  let current: string | undefined;
  let buf: string[] = [];
  let preamble = "";
  const flush = () => {
    const body = buf.join("\n").replace(/^\n+|\n+$/g, "");
    if (current === undefined) preamble = body;
    else sections.set(current, sections.has(current) ? `${sections.get(current)}\n${body}` : body);
    buf = [];
  };
  for (const line of lines) {
    if (fence !== undefined) {
      if (line === fence) fence = undefined;
      buf.push(line);
      continue;
    }
    if (line.startsWith("## ")) {
      flush();
      current = line.slice(3).trim();
      continue;
    }
    if (current !== undefined && FENCED_SECTIONS.has(current) && /^`{3,}$/.test(line)) fence = line;
    buf.push(line);
  }
  flush();
  return { preamble, sections };
}

/** The items of a list section (cut markers and "(none…)" placeholders left out). */
function listItems(body: string | undefined): string[] {
  if (!body) return [];
  const out: string[] = [];
  for (const line of body.split("\n")) {
    if (!line.startsWith("- ")) continue;
    const item = line.slice(2).trim();
    if (item === "" || item.startsWith("[… ") || item.startsWith("(none")) continue;
    out.push(item);
  }
  return out;
}

/** Fenced quotes (the bodies) in a User direction section. */
function fencedBodies(body: string | undefined): string[] {
  if (!body) return [];
  const out: string[] = [];
  const lines = body.split("\n");
  let fence: string | undefined;
  let buf: string[] = [];
  for (const line of lines) {
    if (fence === undefined) {
      const fm = /^(`{3,})\s*$/.exec(line);
      if (fm) {
        fence = fm[1];
        buf = [];
      }
    } else if (line === fence) {
      out.push(buf.join("\n"));
      fence = undefined;
    } else buf.push(line);
  }
  return out;
}

/** Fold a previous checkpoint's text (redacted) into `into`, as older entries. */
export function foldCheckpoint(text: string, into: EarlierParts): void {
  const { sections } = splitSections(text);
  const section = (name: SummarySection) => sections.get(name);
  const known = SUMMARY_SECTIONS.some((s) => sections.has(s));
  if (!known) {
    // A later foreign checkpoint already covers the earlier ones: keep only the latest, as state
    // (its stale next step and its closing instructions to the agent left out).
    into.freeText = [foreignState(text)];
    // Its objective and the user's messages it quotes are the note's own; its pending tasks are read
    // against what the span did after it (never carried as current).
    const parts = foreignParts(text);
    if (parts.objective !== undefined) into.objective = parts.objective;
    into.userQuotes.push(...parts.userMessages);
    into.pending = parts.pending;
    return;
  }
  into.sizes = new Map([...sections].map(([k, v]) => [k, v.length]));
  if (into.objective === undefined) {
    // The original request: the first fenced quote of the earlier Objective (a Focus line is per compaction and dropped).
    const quoted = fencedBodies(section("Objective"))[0];
    if (quoted !== undefined && quoted.trim() !== "") into.objective = quoted;
  }
  into.userQuotes.push(...fencedBodies(section("User direction")));
  into.constraints.push(...fencedBodies(section("Decisions and constraints")));
  into.work.push(...listItems(section("Work done")).filter((i) => !/^\d+ tool calls \(/.test(i)));
  for (const item of listItems(section("Files changed"))) {
    const [head, ...rest] = item.split(" — ");
    const kinds = FILE_KINDS.exec(head!);
    const path = kinds ? head!.slice(0, kinds.index) : head!;
    into.files.push(path);
    // The line as the earlier note wrote it: its kinds of change and its outcome are still true.
    into.fileKinds.set(path, kinds ? kinds[1]!.split(", ") : ["edited"]);
    into.fileLines.set(path, rest.length > 0 ? item : head!);
  }
  into.commands.push(...listItems(section("Commands run")));
  into.errors.push(...listItems(section("Errors")));
  // The earlier next step is folded as state (its plan, its checks still failing), never as the next step.
  const next = (section("Next step") ?? "").split("\n");
  const plan = parsePlan(next);
  if (plan !== undefined && plan.items.some(isOpen)) into.plan = plan;
  const f = next.findIndex((l) => l.startsWith("Still failing"));
  if (f !== -1) {
    into.failing = [];
    for (let j = f + 1; j < next.length && next[j]!.startsWith("- "); j++) into.failing.push(next[j]!);
  }
  const earlier = sections.get(EARLIER_SUMMARY_SECTION);
  if (earlier !== undefined && earlier.trim() !== "") into.freeText.push(earlier.trim());
}

/** The opening an agent puts before its summary, and the closing instructions after it. */
const FOREIGN_OPENING = /^This session is being continued from a previous conversation[^\n]*\n+/;
const CLOSING =
  /^.*Please continue the conversation from where we left off without asking the user any further questions.*$/gm;
/** A foreign summary's own next-step part (`9. Optional Next Step:`, `## Next Step`), to the next heading or the end. */
const FOREIGN_NEXT =
  /^[ \t]*(?:#{1,6}[ \t]*)?(?:\d+\.[ \t]*)?(?:\*\*)?(?:Optional[ \t]+)?Next[ \t]+Steps?\b[\s\S]*?(?=^[ \t]*(?:#{1,6}[ \t]|\d+\.[ \t]+\S)|$(?![\s\S]))/gim;

/** Another agent's checkpoint as state: without its opening, its next step, its pending tasks and its closing instructions. */
export function foreignState(text: string): string {
  const out = text
    .replace(FOREIGN_OPENING, "")
    .replace(FOREIGN_PENDING, "")
    .replace(CLOSING, "")
    .replace(FOREIGN_NEXT, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return out === "" ? text.trim() : out;
}

/** A foreign summary's pending-tasks part (`7. Pending Tasks:`, `### In Progress`), to the next heading or the end. */
const FOREIGN_PENDING =
  /^[ \t]*(?:#{1,6}[ \t]*)?(?:\d+\.[ \t]*)?(?:\*\*)?(?:Pending[ \t]+Tasks|In[ \t]+Progress|Remaining[ \t]+(?:Tasks|Work))\b[\s\S]*?(?=^[ \t]*(?:#{1,6}[ \t]|\d+\.[ \t]+\S)|$(?![\s\S]))/gim;

/** A heading of a foreign summary: `1. Primary Request and Intent:`, `## Goal`, `**Pending Tasks**:`. */
const FOREIGN_HEADING =
  /^[ \t]*(?:#{1,6}[ \t]+(?:\*\*)?([A-Z][^:\n*]{1,60}?)(?:\*\*)?:?|\d+\.[ \t]+(?:\*\*)?([A-Z][^:\n*]{1,60}?)(?:\*\*)?:)[ \t]*$/;

/** The analysis scratchpad of a foreign summary: `Analysis:` up to `Summary:`, or an `<analysis>` block. */
const ANALYSIS = /^Analysis:[ \t]*\n[\s\S]*?(?=^Summary:[ \t]*$)|<analysis>[\s\S]*?<\/analysis>\s*/m;

/** A foreign summary without its analysis scratchpad (what is dropped first when it must be shortened). */
export function withoutAnalysis(text: string): string {
  const out = text.replace(ANALYSIS, "").trim();
  return out === "" ? text : out;
}

/** A list part's items: `- item` lines (continuation lines joined), else its non-empty lines. */
function bulletItems(body: string): string[] {
  const items: string[] = [];
  for (const line of body.split("\n")) {
    const m = /^\s*(?:[-*]|\d+[.)])\s+(.*)$/.exec(line);
    if (m) items.push(m[1]!.trim());
    else if (line.trim() !== "" && items.length > 0) items[items.length - 1] += ` ${line.trim()}`;
    else if (line.trim() !== "") items.push(line.trim());
  }
  return items.filter((i) => i !== "" && !/^none\.?$/i.test(i));
}

/**
 * The parts of another agent's summary the note takes as its own: the request (Claude Code's "Primary
 * Request and Intent", pi's "Goal"), the user's messages it quotes ("All user messages"), and its pending
 * tasks ("Pending Tasks", pi's "In Progress"). Its analysis scratchpad is not read.
 */
export function foreignParts(text: string): {
  objective?: string;
  userMessages: string[];
  pending: string[];
} {
  const sections = new Map<string, string[]>();
  let current: string | undefined;
  for (const line of withoutAnalysis(text).split("\n")) {
    const h = FOREIGN_HEADING.exec(line);
    if (h) {
      current = (h[1] ?? h[2]!).trim().toLowerCase();
      sections.set(current, []);
    } else if (current !== undefined) sections.get(current)!.push(line);
  }
  const body = (re: RegExp): string | undefined => {
    for (const [k, v] of sections) if (re.test(k)) return v.join("\n").trim();
    return undefined;
  };
  const objective = body(/^(primary request|goal|objective|task)\b/);
  return {
    objective: objective === "" ? undefined : objective,
    userMessages: bulletItems(body(/^all user messages|^user messages/) ?? ""),
    pending: bulletItems(body(/^(pending tasks|in progress|remaining (tasks|work))/) ?? ""),
  };
}
