/**
 * Recognising, on the wire, what an agent's request is to its session: the
 * agent's own summarization request, the next request of the same history
 * (an extension), a compaction (a history rewritten around a summary it did
 * not have), a rewrite without a summary (a rewind or an edit), or a side
 * request (a title, a quota check) that is not the session's history.
 */
import { isText, isToolResult } from "../../model/blocks.js";
import { isProviderCompaction } from "../../model/provider-compaction.js";
import { isCheckpoint, isPlainUser } from "../../contract/classify.js";
import type { Message } from "../../model/types.js";
import type { HistoryItem, ItemHead } from "./history.js";

/** How each agent's summarization request opens its last user message (first words only). */
const SUMMARIZATION_OPENERS: readonly { agent: string; test: (text: string) => boolean }[] = [
  // Claude Code's /compact and auto-compaction prompt.
  { agent: "claude-code", test: (t) => t.startsWith("CRITICAL: Respond with TEXT ONLY") },
  // Codex's local compaction prompt (codex-rs/core/templates/compact/prompt.md).
  { agent: "codex", test: (t) => t.startsWith("You are performing a CONTEXT CHECKPOINT COMPACTION") },
  // pi's summarization request: the conversation serialized in tags, then its instructions (a first
  // summary, an update of the earlier one, or, when its cut falls inside a turn, the second request it
  // sends beside the first: the summary of that turn's prefix).
  {
    agent: "pi",
    test: (t) =>
      t.startsWith("<conversation>") &&
      (t.includes("Create a structured context checkpoint summary") ||
        t.includes("incorporate into the existing summary") ||
        t.includes("This is the PREFIX of a turn that was too large to keep")),
  },
  // pi 1.6's turn-prefix request: the conversation under a `# Conversation` heading, its instructions under `# Instructions`.
  {
    agent: "pi",
    test: (t) =>
      t.startsWith(PI_CONVERSATION_HEADING) &&
      t.includes(
        `${PI_INSTRUCTIONS_HEADING}The messages above are earlier context from an ongoing conversation`,
      ),
  },
];

/** How pi 1.6 opens the conversation of its turn-prefix request, and heads its instructions after it. */
export const PI_CONVERSATION_HEADING = "# Conversation\n";
export const PI_INSTRUCTIONS_HEADING = "\n\n# Instructions\n";

/**
 * Bytes that every agent's summarization request carries in its raw JSON
 * (the openers above, as they appear in a JSON string). A request whose added
 * elements hold none of them is not a summarization request; the fast path
 * checks this on bytes (conservatively: the text anywhere in them).
 */
export const SUMMARIZATION_BYTES: readonly string[] = [
  "CRITICAL: Respond with TEXT ONLY",
  "You are performing a CONTEXT CHECKPOINT COMPACTION",
  "<conversation>",
  "# Conversation\\n",
  // Codex's remote compaction in the body of an ordinary Responses request (its last input item).
  '"compaction_trigger"',
];

/** The agent whose summarization request this is (its last user message opens with that agent's prompt). */
export function summarizationRequestOf(items: readonly HistoryItem[]): string | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const m = items[i]!.message;
    if (m.role === "system") continue;
    if (m.role !== "user") return undefined;
    for (const b of m.content) {
      if (!isText(b)) continue;
      const t = b.text.trimStart();
      const hit = SUMMARIZATION_OPENERS.find((o) => o.test(t));
      if (hit) return hit.agent;
    }
    // Only the last user message counts; a tool-result message before it does not hide it.
    if (!m.content.every(isToolResult)) return undefined;
  }
  return undefined;
}

/** The non-system items (the system prompt may change between requests without changing the history). */
export const conversation = <T extends ItemHead>(items: readonly T[]): T[] =>
  items.filter((i) => i.message.role !== "system");

/** How many leading conversation items two histories share (compared by key). */
export function commonPrefix(a: readonly ItemHead[], b: readonly ItemHead[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i]!.key === b[i]!.key) i++;
  return i;
}

/** A Responses `compaction` item (or an Anthropic `compaction` block): the provider's native summary. */
const isResponsesCompaction = (m: Message): boolean => m.content.some(isProviderCompaction);

/** The summary an item carries: a checkpoint, or a Responses `compaction` item. */
export const isSummaryItem = (it: HistoryItem): boolean =>
  isCheckpoint(it.message) || isResponsesCompaction(it.message);

/** Where the last summary of `items` is, or -1. */
export function lastSummary(items: readonly HistoryItem[]): number {
  for (let i = items.length - 1; i >= 0; i--) if (isSummaryItem(items[i]!)) return i;
  return -1;
}

/** Whether a request's body offers tools. */
export const hasTools = (doc: Record<string, unknown>): boolean =>
  Array.isArray(doc.tools) && doc.tools.length > 0;

export type Relation =
  | { kind: "extension" }
  | { kind: "compaction"; newCheckpoint: boolean }
  | { kind: "rewrite"; common: number }
  | { kind: "side"; why: string };

/**
 * How the next request's history relates to the last one (conversation
 * items only). An extension carries the last history whole, then more. A
 * compaction is a history that is not an extension and carries a summary
 * (a checkpoint, or a Responses `compaction` item) that the last one did not
 * have. A rewrite shares the start but not the rest, with no new summary
 * (a rewind or an edit: not judged). A side request shares nothing (a title
 * or quota request on the same session id) and leaves the session as it was.
 */
export function relation(
  last: readonly ItemHead[],
  next: readonly HistoryItem[],
  lastHadTools: boolean,
  nextHasTools: boolean,
): Relation {
  const common = commonPrefix(last, next);
  if (common === last.length) return { kind: "extension" };
  const lastKeys = new Set(last.map((i) => i.key));
  const newSummary = next.some(
    (i) => !lastKeys.has(i.key) && (isCheckpoint(i.message) || isResponsesCompaction(i.message)),
  );
  if (newSummary) return { kind: "compaction", newCheckpoint: true };
  if (lastHadTools && !nextHasTools) return { kind: "side", why: "a request without the session's tools" };
  if (common === 0) return { kind: "side", why: "a history that shares nothing with the session's" };
  return { kind: "rewrite", common };
}

/**
 * How many messages at the end of the history after a compaction are the
 * turns typed after it: plain user messages (and the assistant turns and
 * results between them) after the last summary that `before` does not carry.
 * Only the trailing run of user messages not in `before` is cut.
 */
export function trailingNewTurns(before: readonly HistoryItem[], after: readonly HistoryItem[]): number {
  const beforeKeys = new Set(before.map((i) => i.key));
  let n = 0;
  for (let i = after.length - 1; i >= 0; i--) {
    const it = after[i]!;
    if (it.message.role !== "user" || isCheckpoint(it.message) || beforeKeys.has(it.key)) break;
    if (!isPlainUser(it.message)) break;
    n++;
  }
  return n;
}
