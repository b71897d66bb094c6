/** The compaction pass's options and results (`compactMessagesSafe`), and the two constructors of a result. */
import type {
  CompactionPath,
  CompactionPayload,
  CompactionTrigger,
  CoverageReceipt,
  Message,
} from "../model/types.js";
import type { Summarizer } from "../summarizers/types.js";
import type { TokenEstimator } from "./tokens.js";
import type { PruneStats } from "./prune.js";
import type { LiveState } from "../workspace/live-state.js";

export interface CompactOptions {
  /** The summarizer; default: the embedded extractive summarizer (offline). */
  summarizer?: Summarizer;
  /** Size to reach, in estimated tokens (default: `defaultTarget(current size, window)`). */
  target?: number;
  /** The model's context window, in tokens: the default target is half of it (see `defaultTarget`). */
  window?: number;
  trigger?: CompactionTrigger;
  /** What the summary should keep in focus. */
  focus?: string;
  /** The user's pinned anchors, restated verbatim in the checkpoint. */
  anchors?: string;
  /** Live state re-read by the host at compaction time (git, background work). */
  liveState?: LiveState;
  /** Token budget for older plain user messages (default 20,000). */
  retainedUserTokens?: number;
  /**
   * On the summary path, the newest messages before the protected round are kept verbatim too, as
   * whole units, while the kept messages (the protected round with them) stay within this many
   * tokens and the target still leaves the note its budget (default 20,000; 0: only the protected
   * round). The note summarizes what is older.
   */
  keepRecentTokens?: number;
  /** Only try the prune-only path. */
  pruneOnly?: boolean;
  /**
   * Never try the prune-only path: the summary path always (a host that can keep only a suffix of its
   * history and a summary before it, as pi). Not with `pruneOnly` (a `RangeError`).
   */
  summaryOnly?: boolean;
  /**
   * Size bound of the summary, in tokens. Default: the budget the target leaves (the target minus what
   * the replacement keeps verbatim: the protected round, system content, retained user messages, the
   * checkpoint's frame), held between 1,200 and 2,000; 2,000 when the verbatim parts alone reach the
   * target; never over half of what the note summarizes (`summaryBudget`).
   */
  summaryMaxTokens?: number;
  signal?: AbortSignal;
  /** Waits between retries (tests pass a fake; default: setTimeout). */
  sleep?: (ms: number) => Promise<void>;
  /** First backoff delay in ms (doubled each retry; default 1,000). */
  backoffMs?: number;
  /** Transient-error retries (default 3). */
  maxRetries?: number;
  /**
   * Time budget of the whole summary ladder, in ms: every summarizer call, retry and wait (default
   * 300,000 = 5 minutes). A call still running when it is spent is aborted; a wait that would overrun
   * it is not slept; either way the pass fails as `summarizer_failed` with a message saying the
   * failure is transient. `Infinity`: no budget.
   */
  budgetMs?: number;
  /** The longest server-asked wait (`retry-after`) or backoff delay honoured, in ms (default 60,000). */
  maxRetryAfterMs?: number;
  /** The clock of the budget (tests pass a fake; default `Date.now`). */
  now?: () => number;
  estimator?: TokenEstimator;
  /**
   * What the request each provider would receive for a message array measures
   * (named figures, e.g. `{ anthropic, openai }`, in the same unit before and
   * after). When given, no figure of the replacement may be larger than the
   * history's: shrinking is judged on what is actually sent, on top of the
   * estimator's own figures. The CLI passes its exporters' bodies, estimated
   * (`providerRequestTokens`); a host passes what its own conversion sends.
   */
  requestSizes?: (messages: readonly Message[]) => Readonly<Record<string, number>>;
  /**
   * A provider's own compaction in the history (an Anthropic `compaction` block, an OpenAI
   * `compaction` item): `keep` (default) keeps the last one as the replacement's prefix, right after
   * the system content, where its provider takes it, and compacts what follows; `fold` forces it away
   * (a result meant for another provider): the summary path folds it into the checkpoint, which names
   * it ("an encrypted provider summary of N earlier messages stood here"), and the coverage receipt
   * counts it (`provider_compactions_folded`). Any other provider compaction before the kept messages
   * is folded either way.
   */
  providerCompaction?: "keep" | "fold";
}

/**
 * Why a pass returned no replacement. `nothing_to_compact` is an honest
 * outcome, not a failure: the history cannot shrink (it is all protected
 * round, or the protected round and the anchors are not smaller than what the
 * provider receives now); the message says which.
 */
export type CompactErrorKind =
  "summarizer_failed" | "unusable_summary" | "contract_violation" | "nothing_to_compact";

export interface CompactError {
  kind: CompactErrorKind;
  /** One line naming the cause. */
  message: string;
  /** Summarizer calls made. */
  attempts: number;
}

export interface CompactSuccess {
  ok: true;
  /** The ready `compaction` payload: the journal layer turns it into an entry (`compactionEntry`). */
  payload: CompactionPayload;
  path: CompactionPath;
  replacement: Message[];
  /** The checkpoint written (summary path) or kept (prune-only; null when there is none). */
  checkpoint: Message | null;
  coverage: CoverageReceipt;
  tokens_before: number;
  tokens_after: number;
  target: number;
  target_reached: boolean;
  /** Why the target was not reached (absent when it was). */
  target_missed?: string;
  /** The summary's size bound, in tokens (summary path): `summaryMaxTokens`, or the budget the target left. */
  summary_budget?: number;
  /** The summary text (empty on prune-only). */
  summary: string;
  /** The model that wrote the summary (`prune-only` when none did). */
  model: string;
  trigger: CompactionTrigger;
  /** Summarizer calls made. */
  attempts: number;
  prune: PruneStats;
}

export type CompactResult = CompactSuccess | { ok: false; error: CompactError };

/** A success, with its ready `compaction` payload. */
export function succeed(r: Omit<CompactSuccess, "ok" | "payload">): CompactSuccess {
  const payload: CompactionPayload = {
    summary: r.summary,
    tokens_before: r.tokens_before,
    tokens_after: r.tokens_after,
    model: r.model,
    path: r.path,
    coverage: r.coverage,
    trigger: r.trigger,
    replacement: r.replacement,
  };
  return { ok: true, payload, ...r };
}

export function errorResult(kind: CompactErrorKind, message: string, attempts: number): CompactResult {
  return { ok: false, error: { kind, message, attempts } };
}
