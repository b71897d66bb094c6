/**
 * Helpers the tree-shaped importers share (Claude Code `uuid`/`parentUuid`,
 * pi `id`/`parentId`): the header entry they start from, and the mapping of a
 * source parent onto the nearest imported entry.
 */
import type { HeaderEntry } from "../model/index.js";

/** The header entry an importer starts from; it fills in the identity as it reads. */
export function startHeader(sourceFormat: string): HeaderEntry {
  return {
    id: "header",
    parent_id: null,
    kind: "header",
    created_at: "",
    payload: { session_id: "", created_at: "", schema_version: 2, source_format: sourceFormat },
  };
}

/**
 * The journal entry that stands for a source id: the entry imported from it,
 * or else from its nearest ancestor that was imported (skipped lines such as
 * progress events are walked through). Null when none was imported; cycles
 * in the source links end the walk.
 */
export function nearestImported(
  sourceId: unknown,
  entryFor: ReadonlyMap<string, string>,
  parentOf: ReadonlyMap<string, string | null>,
): string | null {
  const seen = new Set<string>();
  let cur: unknown = sourceId;
  while (typeof cur === "string" && !seen.has(cur)) {
    seen.add(cur);
    const hit = entryFor.get(cur);
    if (hit !== undefined) return hit;
    cur = parentOf.get(cur);
  }
  return null;
}
