/**
 * The guard's interfaces: what the proxy (`server.ts`) hands the core
 * (`core.ts`) for every request, and what the core answers. The core is
 * where the wire is read, compactions are recognised and judged, and the
 * repair is spliced; the server only moves bytes.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { AuditLosses } from "../route/audit.js";

/** The wire formats the guard reads. */
export type GuardWire = "anthropic-messages" | "openai-responses" | "openai-chat";

/** `audit` only judges and records; `repair` (the default) also splices back what a compaction lost. */
export type GuardMode = "audit" | "repair";

/** One request as the agent sent it. */
export interface WireRequest {
  method: string;
  /** Path and query, as received (`/v1/messages?beta=true`). */
  url: string;
  /** Headers as received. The core may read ids from them; it never records or logs auth headers. */
  headers: IncomingHttpHeaders;
  /** The whole request body. */
  body: Buffer;
  /**
   * Settles when the answer to this request has gone to the agent (or the
   * agent hung up). The core holds the work it leaves for after the answer
   * (judging a turn it let through on its bytes) until then, at most a second,
   * so that work never competes with the answer's stream on the event loop.
   */
  answered?: Promise<void>;
}

/** The guard's verdict on one compaction it saw on the wire. */
export interface GuardVerdict {
  /** The session key (see `core.ts`). */
  session: string;
  /** `claude-code`, `codex`, `pi`, or `unknown`. */
  agent: string;
  /** The agent's version as its headers give it (Claude Code's `claude-cli/2.1.328`), or null. */
  agent_version: string | null;
  /** The agent's own session id (Claude Code's, Codex's), or null where the key is a hash (pi). */
  agent_session_id: string | null;
  wire: GuardWire;
  /** ISO time the compaction was seen (the first request after it). */
  at: string;
  /** The survival contract's verdict: the request after against the history before. */
  kept: boolean;
  /** The first violation the validator names (null when kept). */
  reason: string | null;
  losses: AuditLosses;
  /** Whether later requests carry the repair (mode `repair`, and the splice kept the contract). */
  repaired: boolean;
  /** Why the splice was not sent (null when it was, or when nothing needed repair). */
  repair_refused: string | null;
  /**
   * What the provider's own context management, as the request after the
   * compaction asks for it (Anthropic `context_management.edits`, passed
   * through unchanged), can clear of what the contract protects: one
   * sentence, or null when nothing it asks for reaches the protected round
   * (no edits, `clear_thinking_20251015` with `keep: "all"`, a tool-use
   * `keep` that covers the round's exchanges). See `provider-edits.ts`.
   */
  provider_edits: string | null;
  messages_before: number;
  messages_after: number;
  /** Estimated tokens of the history before and of the request after (the turns typed after left out). */
  tokens_before: number;
  tokens_after: number;
}

/** An answer the guard gives the agent itself, instead of forwarding the request (`--summarizer extractive`). */
export interface GuardResponse {
  status: number;
  headers: Record<string, string>;
  /** The whole body, or the chunks of a stream (server-sent events), written in order. */
  body: Buffer | readonly Buffer[];
}

/** What the core answers for one request. */
export interface GuardOutcome {
  /** The body to send upstream: the very Buffer received when `changed` is false. */
  body: Buffer;
  changed: boolean;
  wire?: GuardWire;
  session?: string;
  /** Set on the request where a compaction was first seen. */
  verdict?: GuardVerdict;
  /** One line for the log when something was not understood or not changed on purpose (never headers or secrets). */
  note?: string;
  /**
   * Answered on the fast path: the request's bytes showed it only extends the
   * session's last history, so it went out untouched at once and was judged
   * after (in its session's queue, before the session's next request). What
   * that judging finds (a note, or a verdict, which the bytes rule out but
   * the judge has the last word on) reaches `GuardCoreOptions.onLate`.
   */
  deferred?: boolean;
  /**
   * Set when the guard answers the request itself (an agent's own
   * summarization request, with `summarizer: "extractive"`): the server
   * writes it to the agent and does not contact the upstream; `body` is
   * then the untouched request, never sent.
   */
  respond?: GuardResponse;
  /**
   * The request is on a wire the guard reads but could not be read (a body
   * that is not JSON, no history list, an element that is not a message):
   * forwarded untouched. Its note is given once per session; every such
   * request is counted (`GuardCore.counts`).
   */
  notJudged?: true;
  /**
   * Set on an agent's own summarization request that is forwarded, when the
   * core found the session it belongs to: the server hands it the upstream's
   * whole answer (its bytes as received, up to 1 MiB, once it ended; never
   * delaying or changing what the agent gets), whose text the core records as
   * the summary relayed to that session (what proves its compaction, see
   * "Sessions" in docs/GUARD_CORE.md).
   */
  relayed?: (answer: Buffer, contentEncoding?: string) => void;
}

export interface GuardCoreOptions {
  mode?: GuardMode;
  /** The folder of the guard's state: one append-only journal per session. Without it, state is in memory only. */
  stateDir?: string;
  /** Pinned anchors restated after a repaired compaction (as given: wins over `anchorsFromWorkspace`). */
  anchors?: string;
  /**
   * Without `anchors`: restate the pinned anchors of the agent's workspace
   * (the folder the request names as its working directory, else
   * `workspace`), read at each compaction the guard repairs.
   */
  anchorsFromWorkspace?: boolean;
  /**
   * `extractive`: answer the agent's own summarization request (Claude
   * Code's, Codex's, pi's) at once, offline, with compact-safe's extractive
   * note of the history it carries, in the form the agent expects (see
   * `answer.ts`); the upstream is not asked. Default: forward it.
   */
  summarizer?: "extractive";
  /**
   * The workspace whose live state (git branch, worktree, HEAD: the
   * checkpoint's `## Live state` lines) is restated after a repaired
   * compaction, read when the compaction is seen (not per request: the
   * splice is the same bytes in every later request). Where the request
   * names the agent's working directory (Claude Code's environment, Codex's
   * `<cwd>`, pi's system prompt) and that folder exists here, that folder is
   * read instead: this one is the fallback. Without it, no live state.
   */
  workspace?: string;
  /**
   * Called with the outcome of a request answered on the fast path
   * (`deferred`), once it is judged, when the judging has something to tell:
   * a note, or a verdict. The request itself went out untouched; a repair
   * found this way goes into the session's next request. Verdicts reached
   * before the answer are on the outcome itself (`verdict`), never here.
   */
  onLate?: (outcome: GuardOutcome) => void;
  /**
   * Read every request body whole (`JSON.parse` of the body), also when it
   * only extends the session's last one, which is otherwise read from that
   * one, parsing only what it adds. The verdicts are the same either way;
   * this is the slower reading, for comparing the two.
   */
  readWhole?: boolean;
  /**
   * The request bodies held for the sessions' next requests (each session's
   * last main body), in bytes, at most (default 256 MiB; see
   * `held-sessions.ts`). Beyond it the least recently used sessions are let
   * go of: one comes back from the state folder when it returns, or, without
   * one, as after a restart.
   */
  maxHeldBytes?: number;
  /**
   * The bodies whose parsed history is held too, in bytes (default 0: none;
   * the most recently used sessions' within it; a parsed history takes about
   * 3.5 times its body). The other sessions hold their last body and a key per message,
   * and read the body again when a compaction is judged against it.
   */
  maxParsedBytes?: number;
}

export interface GuardCore {
  handle(request: WireRequest): Promise<GuardOutcome>;
  /** Resolves when the work queued after answers (judging fast-path requests, scanning bodies, their journal writes) is done. */
  idle(): Promise<void>;
  /** Flush and release whatever the core holds (journals). */
  close(): Promise<void>;
  /** What the core has seen so far: requests handled, and those on a wire it reads that it could not read. */
  counts?(): GuardCounts;
}

export interface GuardCounts {
  requests: number;
  notJudged: number;
}
