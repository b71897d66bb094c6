/**
 * The one helper every importer uses to turn another agent's compaction into
 * a `compaction` entry: the agent's summary and replacement, its own
 * recorded figures where it has them, `path: "summary"` (or `prune-only` for
 * one that wrote no summary), no coverage receipt
 * (the agent wrote none), and `source_agent` naming it.
 */
import type { CompactionEntry, CompactionTrigger, Message } from "../../model/index.js";
import { providerCompactionIn } from "../../model/index.js";

/** A rough size of messages in tokens (JSON characters / 4), for figures an agent did not record. */
export function roughTokens(messages: readonly Message[]): number {
  if (messages.length === 0) return 0; // nothing before it (a fork's first line): 0, not the size of `[]`
  return Math.ceil(JSON.stringify(messages.map((m) => m.content)).length / 4);
}

export interface ImportedCompaction {
  id: string;
  parentId: string | null;
  createdAt: string;
  /** The agent, or the provider whose native compaction it is (`anthropic`, `openai`). */
  sourceAgent: "claude-code" | "codex" | "pi" | "anthropic" | "openai";
  summary: string;
  /** The agent's recorded size before, or the live context it replaced (estimated roughly). */
  tokensBefore: number | readonly Message[];
  model: string;
  trigger: CompactionTrigger;
  /** Whether the agent recorded the trigger (else `trigger` is the default, `auto`). */
  triggerRecorded: boolean;
  replacement: Message[];
  /** `prune-only` for a compaction that wrote no summary (compact-safe's prune-only fork); default `summary`. */
  path?: "summary" | "prune-only";
  /** Agent-specific provenance kept in the payload (e.g. `first_kept_entry_id`). */
  extra?: Record<string, unknown>;
}

/**
 * The provider's native compaction a replacement holds (an Anthropic
 * `compaction` block, an OpenAI `compaction` item), as the payload records
 * it: `provider_compaction` (the provider) and `opaque_summary` (its summary
 * is encrypted: only what else the replacement shows can be judged).
 */
function nativeFields(replacement: readonly Message[]): Record<string, unknown> {
  for (const m of replacement) {
    const found = providerCompactionIn(m);
    if (found) return { provider_compaction: found.block.provider, opaque_summary: found.block.opaque };
  }
  return {};
}

export function importedCompactionEntry(c: ImportedCompaction): CompactionEntry {
  return {
    id: c.id,
    parent_id: c.parentId,
    kind: "compaction",
    created_at: c.createdAt,
    payload: {
      summary: c.summary,
      tokens_before: typeof c.tokensBefore === "number" ? c.tokensBefore : roughTokens(c.tokensBefore),
      tokens_after: roughTokens(c.replacement),
      model: c.model,
      path: c.path ?? "summary",
      coverage: null,
      trigger: c.trigger,
      trigger_recorded: c.triggerRecorded,
      replacement: c.replacement,
      source_agent: c.sourceAgent,
      ...nativeFields(c.replacement),
      ...c.extra,
    },
  };
}
