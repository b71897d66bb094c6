/**
 * What the parts of the guard core (`core.ts`, `read-request.ts`,
 * `judge.ts`, `compaction.ts`) share: its options, the sessions it holds,
 * what proves a session across a restart, and the layouts of the histories
 * read from a session's last body.
 */
import type { GuardCoreOptions, GuardMode, GuardOutcome, WireRequest } from "./types.js";
import type { WireHistory } from "./reading/history.js";
import type { ListLayout } from "./reading/scan.js";
import type { SessionIndex } from "./sessions/proofs.js";
import { redactQuotedLine } from "../redact/quoted.js";
import { safeHead } from "../redact/redact.js";
import type { HeldSessions } from "./sessions/held-sessions.js";
import type { Background } from "./background.js";

export interface CoreContext {
  readonly options: GuardCoreOptions;
  readonly mode: GuardMode;
  readonly held: HeldSessions;
  /** What the proofs of `proofs.ts` need across a restart (kept in the state folder). */
  readonly index: SessionIndex;
  /** The layout of each history read from the last body (`extendHistory`), for `fastInfoOf`. */
  readonly extended: WeakMap<WireHistory, { layout: ListLayout; noMarkerBefore: number }>;
  /** When the work left for after answers runs (`background.ts`). */
  readonly background: Background;
  /** An outcome counted (a request that could not be read) and its note given once per session. */
  readonly tally: (request: WireRequest, out: GuardOutcome) => GuardOutcome;
}

/** The outcome of the request being judged, passed through untouched, with a note or none. */
export type Same = (note?: string) => GuardOutcome;

/**
 * An error's message on one line, redacted, then cut at 200 characters (a
 * message may quote the request; a secret the cut split would no longer
 * match its rule, so the cut comes after the redaction).
 */
export function oneLine(e: unknown): string {
  const line = redactQuotedLine((e instanceof Error ? e.message : String(e)).replace(/\s+/g, " "));
  return line.length > 200 ? `${safeHead(line, 200)}…` : line;
}
