/**
 * What one run of the guard saw, told in one line when it stops: the sessions (every session key an
 * outcome named), the compactions judged, and of those how many kept the contract, how many the guard
 * repaired and how many it did not (refused, or mode `audit`).
 */
import type { GuardOutcome } from "../types.js";

export interface GuardSummary {
  sessions: number;
  compactions: number;
  kept: number;
  repaired: number;
  not_repaired: number;
}

/** Counts the outcomes of one guard run. */
export class GuardTally {
  private readonly sessions = new Set<string>();
  private compactions = 0;
  private kept = 0;
  private repaired = 0;

  /** One outcome, from a request or found after its answer (`onLate`). */
  add(o: GuardOutcome): void {
    const session = o.verdict?.session ?? o.session;
    if (session !== undefined) this.sessions.add(session);
    if (!o.verdict) return;
    this.compactions++;
    if (o.verdict.kept) this.kept++;
    else if (o.verdict.repaired) this.repaired++;
  }

  get summary(): GuardSummary {
    return {
      sessions: this.sessions.size,
      compactions: this.compactions,
      kept: this.kept,
      repaired: this.repaired,
      not_repaired: this.compactions - this.kept - this.repaired,
    };
  }
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** `guard: stopped: 2 sessions seen, 3 compactions (1 kept the contract, 1 repaired, 1 not repaired)`. */
export function summaryLine(s: GuardSummary): string {
  const head = `guard: stopped: ${plural(s.sessions, "session")} seen, ${plural(s.compactions, "compaction")}`;
  if (s.compactions === 0) return head;
  return `${head} (${s.kept} kept the contract, ${s.repaired} repaired, ${s.not_repaired} not repaired)`;
}
