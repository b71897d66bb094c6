/**
 * Billed prompt sizes of real Claude Code sessions, and the estimator error
 * against them.
 *
 * Every parent (non-sidechain) assistant message of a Claude Code session
 * records the prompt size of the request that produced it:
 * `input_tokens + cache_creation_input_tokens + cache_read_input_tokens`.
 * The context of that request is the live context of the active path up to
 * (not including) that assistant message: the journal projection, so a
 * compaction earlier on the path replaces what came before it.
 *
 * - Sidechain (sub-agent) requests are billed to a child and left out.
 * - A message streamed over several lines repeats its usage; the importer
 *   joins those lines into one entry, and requests are further de-duplicated
 *   by message id here, so each request counts once.
 * - Requests billed 0 (Claude Code's `<synthetic>` error messages) are left out.
 * - Prior-turn thinking is dropped from the estimate for the models whose API
 *   drops it (`priorThinkingFor`).
 */
import type { JournalEntry, Message } from "../src/model/index.js";
import { activePath, projectPath } from "../src/journal/tree.js";
import { billedPromptTokens } from "../src/engine/pressure.js";
import { median } from "./harness.js";
import {
  calibrateOverhead,
  estimateTokens,
  priorThinkingFor,
  type PriorThinking,
  type TokenEstimator,
} from "../src/engine/tokens.js";

export interface BilledRequest {
  /** Billed prompt tokens. */
  billed: number;
  /** The messages sent (live context before the answer). */
  context: Message[];
  model: string;
  priorThinking: PriorThinking;
  /** Number of compactions on the path before this request. */
  compactions: number;
}

export function billedRequests(entries: readonly JournalEntry[]): BilledRequest[] {
  const out: BilledRequest[] = [];
  const seen = new Set<string>();
  for (const e of entries) {
    if (e.kind !== "assistant") continue;
    const m = e.payload;
    if (!m.usage || m.usage.scope === "child" || m.meta?.is_sidechain === true) continue;
    const billed = billedPromptTokens(m.usage);
    if (billed <= 0) continue;
    const id = typeof m.meta?.message_id === "string" ? m.meta.message_id : e.id;
    if (seen.has(id)) continue;
    seen.add(id);
    const path = activePath(entries, e.id);
    path.pop();
    const model = typeof m.meta?.model === "string" ? m.meta.model : "unknown";
    out.push({
      billed,
      context: projectPath(path),
      model,
      priorThinking: priorThinkingFor(model),
      compactions: path.filter((p) => p.kind === "compaction").length,
    });
  }
  return out;
}

export interface EstimatorError {
  requests: number;
  /**
   * Median absolute percentage error with the per-session overhead
   * calibrated (`calibrateOverhead`) from the first billed request after the
   * latest compaction on the path (the session's first request when there is
   * none) and applied to the later requests of that stretch; anchor requests
   * are not scored. Re-anchoring after a compaction is needed because Claude
   * Code re-attaches files and todos after compacting that are not in the
   * session file. This is what a host can do at run time.
   */
  mape: number;
  /** The same with one anchor only: the session's first request. */
  mape_single_anchor: number;
  /** The same, with no overhead at all (messages only). */
  mape_no_overhead: number;
  /**
   * The same, with the overhead fitted in hindsight as the median of
   * (billed − estimate) over the whole session (an in-sample lower bound).
   */
  mape_fitted_overhead: number;
  /** The overhead calibrated from the session's first request, in tokens. */
  overhead: number;
  /** Absolute percentage errors behind `mape` (for pooling across files). */
  apes: number[];
  apes_single_anchor: number[];
  apes_no_overhead: number[];
  apes_fitted_overhead: number[];
}

export function estimatorError(
  requests: readonly BilledRequest[],
  estimator: TokenEstimator,
): EstimatorError {
  const est = requests.map((r) => estimateTokens(r.context, estimator, { priorThinking: r.priorThinking }));
  const first = requests[0];
  const overhead = first
    ? calibrateOverhead(first.billed, first.context, estimator, { priorThinking: first.priorThinking })
    : 0;
  const fitted = median(requests.map((r, i) => r.billed - est[i]!));
  const apes: number[] = [];
  const single: number[] = [];
  const raw: number[] = [];
  const fit: number[] = [];
  let segment = -1;
  let anchor = 0;
  requests.forEach((r, i) => {
    raw.push(Math.abs(est[i]! - r.billed) / r.billed);
    fit.push(Math.abs(est[i]! + fitted - r.billed) / r.billed);
    if (i > 0) single.push(Math.abs(est[i]! + overhead - r.billed) / r.billed);
    if (r.compactions !== segment) {
      segment = r.compactions;
      anchor = Math.max(0, r.billed - est[i]!);
      return;
    }
    apes.push(Math.abs(est[i]! + anchor - r.billed) / r.billed);
  });
  return {
    requests: requests.length,
    mape: median(apes),
    mape_single_anchor: median(single),
    mape_no_overhead: median(raw),
    mape_fitted_overhead: median(fit),
    overhead,
    apes,
    apes_single_anchor: single,
    apes_no_overhead: raw,
    apes_fitted_overhead: fit,
  };
}
