/**
 * A provider's own compaction in a history being compacted (an Anthropic
 * `compaction` block, an OpenAI `compaction` item): the summary path keeps it
 * as the prefix of the replacement, right after the system content, and
 * compacts what follows it. It is valid input for its provider only there:
 * Anthropic refuses a compaction block that is not the first block of the
 * conversation, and the Responses API takes the item where it stands. An
 * opaque item cannot be summarized again (only its provider can read it), and
 * a readable one is the provider's own summary of what came before it.
 *
 * Which one is kept: the last one of the history (the provider keeps only the
 * newest: Anthropic refuses two blocks with content). Any other one before
 * the verbatim part is folded into the checkpoint, and so is the last one
 * when the caller forces it away (`providerCompaction: "fold"`: a result
 * meant for another provider). A folded one is never dropped without a word:
 * the summarizer reads a stand-in text where it stood (a readable summary's
 * text with it), the checkpoint names it ("an encrypted provider summary of N
 * earlier messages stood here") and the coverage receipt counts it. One
 * inside the verbatim part (the protected round) stays there, as every block
 * of it does, unless it is the one kept first, which is moved to the front.
 */
import type { Block, Message, ProviderCompactionBlock, TextBlock } from "../model/types.js";
import { isProviderCompaction } from "../model/provider-compaction.js";

/** What the summary path does with a provider's compaction: keep the last one first (default), or fold them all. */
export type ProviderCompactionMode = "keep" | "fold";

export interface ProviderPlace {
  /** The message that holds it, and the block's index in that message. */
  message: number;
  block: number;
  compaction: ProviderCompactionBlock;
  /**
   * How many conversation messages it summarized, when known: what the importer recorded
   * (`meta.compacted_messages`), else the messages of the conversation before it in the history.
   */
  of?: number;
}

export interface ProviderCompactions {
  /** The one kept as the replacement's prefix, and that prefix: a message holding only it. */
  kept?: ProviderPlace & { prefix: Message };
  /** Those folded into the checkpoint, in order. */
  folded: ProviderPlace[];
}

const NONE: ProviderCompactions = { folded: [] };

/** The provider compactions of `messages`, and what the summary path does with each (see the module comment). */
export function providerCompactions(
  messages: readonly Message[],
  keepStart: number,
  mode: ProviderCompactionMode = "keep",
): ProviderCompactions {
  const all: ProviderPlace[] = [];
  let conversation = 0; // messages of the conversation before the current one (not the system prompt)
  // Loops, not callbacks (see DECISIONS.md, hot code makes no closure per call): every compaction reads
  // every block here, twice.
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    for (let j = 0; j < m.content.length; j++) {
      const b = m.content[j]!;
      if (!isProviderCompaction(b)) continue;
      // What the importer recorded; else the conversation before it here (a caller's own item list).
      const recorded = m.meta?.compacted_messages;
      const of = typeof recorded === "number" ? recorded : conversation > 0 ? conversation : undefined;
      all.push({ message: i, block: j, compaction: b, ...(of !== undefined ? { of } : {}) });
    }
    if (m.role !== "system") conversation++;
  }
  if (all.length === 0) return NONE;
  const last = mode === "keep" ? all[all.length - 1] : undefined;
  const folded = all.filter((p) => p !== last && p.message < keepStart);
  if (last === undefined) return { folded };
  const holder = messages[last.message]!;
  const prefix: Message = { role: holder.role, content: [last.compaction] };
  if (holder.meta !== undefined) prefix.meta = holder.meta;
  return { kept: { ...last, prefix }, folded };
}

/** "an encrypted provider summary of 4 earlier messages (openai)", "an anthropic provider summary". */
function describe(p: ProviderPlace): string {
  const { opaque, provider } = p.compaction;
  const what = opaque ? "an encrypted provider summary" : `an ${provider} provider summary`;
  return `${what}${p.of !== undefined ? ` of ${p.of} earlier message${p.of === 1 ? "" : "s"}` : ""}`;
}

/** Who wrote it, where `describe` does not say. */
const whose = (p: ProviderPlace): string => (p.compaction.opaque ? ` (${p.compaction.provider})` : "");

/** The checkpoint's lines about them, in its Coverage section (none when there is none). */
export function providerNotes(pc: ProviderCompactions): string[] {
  const notes: string[] = [];
  if (pc.kept)
    notes.push(
      `provider compaction kept first: ${describe(pc.kept)}${whose(pc.kept)}, before this checkpoint`,
    );
  for (const p of pc.folded)
    notes.push(
      `provider compaction folded: ${describe(p)} stood here` +
        (p.compaction.opaque
          ? ` (${p.compaction.provider}: only it could read the summary, which is not in this note)`
          : " (its text was summarized with the rest)"),
    );
  return notes;
}

/** The text a folded compaction becomes in what the summarizer reads: what stood there, and a readable summary's text. */
function standIn(p: ProviderPlace): TextBlock {
  const head = `[${describe(p)} stood here${whose(p)}]`;
  return { type: "text", text: p.compaction.summary !== "" ? `${head}\n${p.compaction.summary}` : head };
}

/**
 * `messages[from, to)` as the summary path uses them: the compaction kept first taken out of its
 * message, each folded one replaced by its stand-in text, and a message left empty dropped. The
 * same message objects where nothing changes.
 */
export function withProviderCompactions(
  messages: readonly Message[],
  pc: ProviderCompactions,
  from = 0,
  to = messages.length,
): Message[] {
  if (pc.kept === undefined && pc.folded.length === 0) return messages.slice(from, to);
  const out: Message[] = [];
  for (let i = from; i < to; i++) {
    const m = messages[i]!;
    const folded = pc.folded.filter((p) => p.message === i);
    const lifted = pc.kept?.message === i ? pc.kept.block : -1;
    if (folded.length === 0 && lifted < 0) {
      out.push(m);
      continue;
    }
    const content: Block[] = [];
    m.content.forEach((b, j) => {
      if (j === lifted) return;
      const f = folded.find((p) => p.block === j);
      content.push(f ? standIn(f) : b);
    });
    if (content.length > 0) out.push({ ...m, content });
  }
  return out;
}
