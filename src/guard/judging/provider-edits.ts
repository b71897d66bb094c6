/**
 * The provider's own context management, as the request after a compaction
 * asks for it (Anthropic's `context_management.edits`, beta
 * `context-management-2025-06-27`): the guard passes it through unchanged,
 * and says in the verdict when an edit lets the provider remove, server-side
 * and before the model reads the request, what the contract protects.
 *
 * What each edit lets the provider remove (Anthropic's context-editing
 * documentation):
 * - `clear_tool_uses_20250919`: once its `trigger` is reached (default
 *   100,000 input tokens), the oldest tool results are replaced by a
 *   placeholder, keeping the `keep` most recent tool uses (default
 *   `{type: "tool_uses", value: 3}`); with `clear_tool_inputs` the calls'
 *   inputs too; tools named in `exclude_tools` are never cleared;
 *   `clear_at_least` only makes it clear more at once.
 * - `clear_thinking_20251015`: thinking blocks of all but the `keep` most
 *   recent assistant turns (default `{type: "thinking_turns", value: 1}`);
 *   `keep: "all"` clears nothing.
 *
 * The trigger is not judged: the session grows, so an edit that does not
 * fire on this request can on a later one. Pure: no I/O.
 */
import type { Message } from "../../model/types.js";
import { protectedRound } from "../../contract/rounds.js";

type Raw = Record<string, unknown>;
const isRecord = (v: unknown): v is Raw => typeof v === "object" && v !== null && !Array.isArray(v);

export const CLEAR_TOOL_USES = "clear_tool_uses_20250919";
export const CLEAR_THINKING = "clear_thinking_20251015";
/** The documented defaults of `keep`. */
const DEFAULT_KEEP_TOOL_USES = 3;
const DEFAULT_KEEP_THINKING_TURNS = 1;

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** `keep` as a count: `{type, value}` with an integer value, the default when absent; undefined when not understood. */
function keepCount(keep: unknown, type: string, fallback: number): number | undefined {
  if (keep === undefined || keep === null) return fallback;
  if (isRecord(keep) && keep.type === type && Number.isInteger(keep.value) && (keep.value as number) >= 0)
    return keep.value as number;
  return undefined;
}

interface ToolUse {
  name: string;
  /** Index of the message that carries it. */
  at: number;
}

function toolUses(messages: readonly Message[]): ToolUse[] {
  const out: ToolUse[] = [];
  messages.forEach((m, at) => {
    for (const b of m.content) if (b.type === "tool_use") out.push({ name: String(b.name), at });
  });
  return out;
}

const hasThinking = (m: Message): boolean =>
  m.role === "assistant" && m.content.some((b) => b.type === "thinking" || b.type === "redacted_thinking");

/**
 * What the request's context edits can clear of the protected round of
 * `before` (the history before the compaction), given `later` (the turns the
 * request carries after the compaction): one sentence, or null when the
 * request asks for no edit that can reach it. Only the Anthropic Messages
 * wire carries such edits.
 */
export function providerEdits(
  doc: Record<string, unknown>,
  before: readonly Message[],
  later: readonly Message[],
): string | null {
  const cm = doc.context_management;
  if (!isRecord(cm) || !Array.isArray(cm.edits) || cm.edits.length === 0) return null;
  const round = protectedRound(before);
  const exchanges = round.protectedExchangeIndices;
  const region = before.slice(round.regionStart);
  const found: string[] = [];
  for (const edit of cm.edits) {
    if (!isRecord(edit)) continue;
    const type = typeof edit.type === "string" ? edit.type : "";
    if (type === CLEAR_TOOL_USES) {
      if (exchanges.length === 0) continue;
      const exclude = new Set(
        Array.isArray(edit.exclude_tools) ? edit.exclude_tools.filter((t) => typeof t === "string") : [],
      );
      // Oldest first: to keep the protected results, `keep` must cover every tool use from the first protected exchange on.
      const first = exchanges[0]!;
      const fromRound = toolUses(before).filter((t) => t.at >= first && !exclude.has(t.name));
      if (fromRound.length === 0) continue;
      const needed = fromRound.length + toolUses(later).filter((t) => !exclude.has(t.name)).length;
      const keep = keepCount(edit.keep, "tool_uses", DEFAULT_KEEP_TOOL_USES);
      if (keep !== undefined && keep >= needed) continue;
      const inputs =
        edit.clear_tool_inputs === true ||
        (Array.isArray(edit.clear_tool_inputs) && edit.clear_tool_inputs.length > 0)
          ? " and their calls' inputs"
          : "";
      const kept =
        keep === undefined ? `keep ${JSON.stringify(edit.keep)}` : `keep ${plural(keep, "tool use")}`;
      found.push(
        `the request asks the provider to clear tool results${inputs} (${CLEAR_TOOL_USES}, ${kept}): ` +
          `the protected round's ${plural(exchanges.length, "exchange")} may not reach the model` +
          (needed > exchanges.length ? ` (${plural(needed, "tool use")} from its first one on)` : ""),
      );
    } else if (type === CLEAR_THINKING) {
      if (edit.keep === "all") continue;
      const turns = region.filter(hasThinking).length;
      if (turns === 0) continue;
      const needed = turns + later.filter((m) => m.role === "assistant").length;
      const keep = keepCount(edit.keep, "thinking_turns", DEFAULT_KEEP_THINKING_TURNS);
      if (keep !== undefined && keep >= needed) continue;
      const kept =
        keep === undefined ? `keep ${JSON.stringify(edit.keep)}` : `keep ${plural(keep, "thinking turn")}`;
      found.push(
        `the request asks the provider to clear thinking (${CLEAR_THINKING}, ${kept}): ` +
          `the protected round's thinking (${plural(turns, "assistant message")}) may not reach the model`,
      );
    } else {
      found.push(
        `the request asks the provider for a context edit the guard does not know (${JSON.stringify(type)}): what it removes is not judged`,
      );
    }
  }
  return found.length > 0 ? found.join("; ") : null;
}
