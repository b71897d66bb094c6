/**
 * The numbers compact-safe runs on, in one object: the code reads them from
 * here, and `docs/SURVIVAL_CONTRACT.md` quotes them (a test checks that it
 * does). Change one here and it changes everywhere.
 */
export const CONSTANTS = Object.freeze({
  /** The survival contract's schema version: journals, matrices and verdicts carry it. */
  schemaVersion: 2 as const,
  /**
   * The protected round keeps this many of the most recent complete tool exchanges, and reaches back
   * before the latest instruction for them when the round itself holds no more than this many.
   */
  protectedExchanges: 2,
  /** A protected tool result keeps at most this many bytes of UTF-8 (head and tail), nested blocks included. */
  resultBoundBytes: 8192,
  /** Tool results above this size (UTF-8 bytes) outside the protected round become stubs (prune-only). */
  pruneMinBytes: 240,
  /** Tokens a stub costs at most (its text is about 200 characters). */
  stubTokens: 80,
  /** Token budget for older plain user messages retained beside the checkpoint. */
  retainedUserTokens: 20_000,
  /**
   * On the summary path, the newest messages before the protected round stay verbatim too while the
   * kept messages (the protected round with them) come to no more than this many tokens and the target
   * leaves the note its budget.
   */
  keepRecentTokens: 20_000,
  /** Size cap of a summary, in tokens (the budget the target leaves is held under it). */
  summaryMaxTokens: 2_000,
  /**
   * Size floor of a summary, in tokens (the budget a reachable target leaves is held over it; an
   * unreachable target gives the note `summaryMaxTokens`): the smallest summary an agent wrote for
   * itself on the corpus's real compactions.
   */
  summaryMinTokens: 1_200,
  /**
   * Size cap, in tokens, of a summary that folds an earlier checkpoint in (a second compaction): the
   * earlier note's size plus the usual budget for what is new, held under this.
   */
  summaryCarriedMaxTokens: 8_000,
  /** Transient summarizer errors are retried this many times. */
  maxRetries: 3,
  /** First backoff delay between retries, in ms (doubled each retry). */
  backoffMs: 1_000,
  /** The longest server-asked wait (`retry-after`) or backoff honoured, in ms. */
  maxRetryAfterMs: 60_000,
  /** Time budget of the whole summary ladder (calls, retries, waits), in ms. */
  ladderBudgetMs: 300_000,
  /** Per-request timeout of an LLM summarizer, body included, in ms. */
  requestTimeoutMs: 120_000,
  /** The model's context window assumed when none is given, in tokens. */
  window: 200_000,
  /** Pressure, as a fraction of the window, at which a compaction is due. */
  threshold: 0.8,
  /** JSON text nested deeper than this is refused before it is parsed. */
  maxJsonDepth: 512,
  /** A message may nest this many levels (from the message itself). */
  maxMessageDepth: 256,
  /** A value handed in by a host may hold this many values in JSON, shared objects counted each time (2^24). */
  maxJsonValues: 16_777_216,
  /** The anchors file is read up to this many bytes. */
  maxAnchorsBytes: 64 * 1024,
});
