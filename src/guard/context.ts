/**
 * What the parts of the guard core (`core.ts`, `read-request.ts`,
 * `judge.ts`, `compaction.ts`) share: its options, the sessions it holds,
 * what proves a session across a restart, and the layouts of the histories
 * read from a session's last body.
 */
import type { GuardCoreOptions, GuardMode, GuardOutcome } from "./types.js";
import type { WireHistory } from "./history.js";
import type { ListLayout } from "./scan.js";
import type { SessionIndex } from "./proofs.js";
import type { HeldSessions } from "./held-sessions.js";

export interface CoreContext {
  readonly options: GuardCoreOptions;
  readonly mode: GuardMode;
  readonly held: HeldSessions;
  /** What the proofs of `proofs.ts` need across a restart (kept in the state folder). */
  readonly index: SessionIndex;
  /** The layout of each history read from the last body (`extendHistory`), for `fastInfoOf`. */
  readonly extended: WeakMap<WireHistory, { layout: ListLayout; noMarkerBefore: number }>;
}

/** The outcome of the request being judged, passed through untouched, with a note or none. */
export type Same = (note?: string) => GuardOutcome;

/** An error's message on one line, cut at 200 characters. */
export const oneLine = (e: unknown): string =>
  (e instanceof Error ? e.message : String(e)).replace(/\s+/g, " ").slice(0, 200);
