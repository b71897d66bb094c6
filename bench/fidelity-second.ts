/**
 * The note's sections, their cut markers, and the second-compaction bar of
 * `npm run bench:fidelity` (pure).
 *
 * - A note's sections are its `## Title` blocks (the `[compact-safe
 *   checkpoint]` line and the frame sections Coverage, Anchors and Live state
 *   left out: the engine recomputes them at every compaction).
 * - A cut marker is any bracketed ellipsis that says something was cut
 *   (`[… cut 146 chars]`, `[… 33 more commands cut]`).
 * - A section's size is its characters with cut markers removed and
 *   whitespace collapsed.
 * - Second compaction: the first note's replacement, followed by what the
 *   session did next (up to its own next compaction), is compacted again. A
 *   section of the first note is "still true" after that continuation when:
 *   - the next step and the pending work (titles naming a next step, pending
 *     or remaining work, a plan or a to-do list): the continuation made no
 *     tool call (once the session worked on, the next step may be done);
 *   - the objective: the continuation holds no new user direction;
 *   - every other section (work done, files, commands, errors, decisions,
 *     user direction...): always, it records what happened before the cut,
 *     which the second note summarizes too.
 *   A section still true must not be shorter in the second note than in the
 *   first (a section left out counts as size 0).
 */

/** Frame sections the engine writes itself (not the summarizer's content). */
const FRAME = /^(coverage|anchors|live state)$/i;
/** Titles of the sections that say what comes next. */
export const FOLLOWING_WORK = /next step|pending|remaining|current work|plan\b|to-?do|not (yet )?done/i;
/** A cut marker. */
export const CUT_MARKER = /\[…[^\]\n]*\bcut\b[^\]\n]*\]/g;

/** The `## Title` sections of a note, in order (frame sections left out). */
export function noteSections(note: string): { title: string; body: string }[] {
  const out: { title: string; body: string }[] = [];
  let current: { title: string; lines: string[] } | undefined;
  const flush = () => {
    if (current && !FRAME.test(current.title))
      out.push({ title: current.title, body: current.lines.join("\n").trim() });
  };
  for (const line of note.split("\n")) {
    const m = /^##\s+(.+?)\s*$/.exec(line);
    if (m) {
      flush();
      current = { title: m[1]!, lines: [] };
    } else current?.lines.push(line);
  }
  flush();
  return out;
}

/** The cut markers of a text. */
export function cutMarkers(text: string): string[] {
  return text.match(CUT_MARKER) ?? [];
}

/** The titles of the note's Objective and Next step sections that hold a cut marker. */
export function cutInObjectiveOrNextStep(note: string): string[] {
  return noteSections(note)
    .filter((s) => /^(objective|next step)/i.test(s.title) && cutMarkers(s.body).length > 0)
    .map((s) => s.title);
}

/** A section's size: characters, cut markers removed, whitespace collapsed. */
export function sectionSize(body: string): number {
  return body.replace(CUT_MARKER, "").replace(/\s+/g, " ").trim().length;
}

/** What the session did between the two compactions, as far as "still true" needs it. */
export interface Continuation {
  calls: number;
  directions: number;
}

/** Whether a section of the first note is still true after the continuation (see the module comment). */
export function stillTrue(title: string, c: Continuation): boolean {
  if (FOLLOWING_WORK.test(title)) return c.calls === 0;
  if (/^objective/i.test(title)) return c.directions === 0;
  return true;
}

export interface SectionChange {
  title: string;
  first: number;
  second: number;
  still_true: boolean;
}

/** Each section of the first note beside its size in the second one. */
export function compareSections(first: string, second: string, c: Continuation): SectionChange[] {
  const after = new Map<string, number>();
  for (const s of noteSections(second)) after.set(s.title.toLowerCase(), sectionSize(s.body));
  return noteSections(first).map((s) => ({
    title: s.title,
    first: sectionSize(s.body),
    second: after.get(s.title.toLowerCase()) ?? 0,
    still_true: stillTrue(s.title, c),
  }));
}

/** The sections still true that the second note made shorter. */
export function shorterStillTrue(changes: readonly SectionChange[]): SectionChange[] {
  return changes.filter((c) => c.still_true && c.second < c.first);
}
