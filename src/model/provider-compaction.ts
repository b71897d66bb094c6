/**
 * Provider-native compaction as a canonical block: Anthropic's `compaction`
 * content block (server-side compaction, beta `compact-2026-01-12`: a
 * readable summary in `content`) and the OpenAI Responses `compaction` item
 * (`/responses/compact`, `context_management`, Codex's remote compaction: an
 * opaque `encrypted_content`). The block keeps what the provider wrote whole
 * (`native`: every field, in order, encrypted content included), so an
 * exporter of the same provider writes it back as it was; every other
 * exporter refuses it (`UnsupportedBlockError`) instead of dropping it.
 */
import type { Block, Message, ProviderCompactionBlock } from "./types.js";
import { CompactSafeError } from "./errors.js";

export type CompactionProvider = ProviderCompactionBlock["provider"];

/** The formats that can carry a provider's compaction (export targets first), by provider. */
const CARRIED_BY: Record<CompactionProvider, readonly string[]> = {
  anthropic: ["anthropic", "claude-code"],
  openai: ["responses", "codex"],
};

export const isProviderCompaction = (b: Block): b is ProviderCompactionBlock =>
  b.type === "provider_compaction";

/** An Anthropic `compaction` content block as a canonical block (the block kept whole). */
export function fromAnthropicCompaction(raw: Record<string, unknown>): ProviderCompactionBlock {
  const summary = typeof raw.content === "string" ? raw.content : "";
  return { type: "provider_compaction", provider: "anthropic", summary, opaque: summary === "", native: raw };
}

/** A Responses `compaction` item as a canonical block (the item kept whole; its summary is encrypted). */
export function fromResponsesCompaction(item: Record<string, unknown>): ProviderCompactionBlock {
  return { type: "provider_compaction", provider: "openai", summary: "", opaque: true, native: item };
}

/** The block or item as the provider wrote it (a copy, keys in their order). */
export function nativeOf(b: ProviderCompactionBlock): Record<string, unknown> {
  return structuredClone(b.native);
}

/** What a block is called in messages: "an anthropic compaction block", "an openai compaction item". */
export function describeProviderCompaction(b: ProviderCompactionBlock): string {
  return `${b.provider === "anthropic" ? "an anthropic compaction block" : "an openai compaction item"}`;
}

/** A block an exporter cannot carry; refused rather than dropped. Names the block and where it is. */
export class UnsupportedBlockError extends CompactSafeError {
  constructor(message: string) {
    super("unsupported_block", message);
    this.name = "UnsupportedBlockError";
  }
}

/**
 * Throws an `UnsupportedBlockError` when `messages` hold a provider
 * compaction that `target` (an export format) cannot carry: only the
 * provider's own wire takes it, and dropping it would drop the summary of
 * everything before it.
 */
export function refuseForeignCompaction(messages: readonly Message[], target: string): void {
  messages.forEach((m, i) =>
    m.content.forEach((b, j) => {
      if (!isProviderCompaction(b) || CARRIED_BY[b.provider].includes(target)) return;
      throw new UnsupportedBlockError(
        `messages[${i}].content[${j}] is ${describeProviderCompaction(b)} (provider-native compaction): ` +
          `export to ${target} cannot carry it and will not drop it; export to ${CARRIED_BY[b.provider][0]} instead`,
      );
    }),
  );
}

/** The providers whose compactions `messages` hold (empty when none). */
export function compactionProvidersIn(messages: readonly Message[]): Set<CompactionProvider> {
  const out = new Set<CompactionProvider>();
  for (const m of messages) for (const b of m.content) if (isProviderCompaction(b)) out.add(b.provider);
  return out;
}

/** The first provider compaction of a message, with its index, or undefined. */
export function providerCompactionIn(m: Message): { at: number; block: ProviderCompactionBlock } | undefined {
  const at = m.content.findIndex(isProviderCompaction);
  return at < 0 ? undefined : { at, block: m.content[at] as ProviderCompactionBlock };
}
