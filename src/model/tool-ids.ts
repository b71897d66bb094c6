/**
 * Repeated tool ids in an imported history, handled in one place for every
 * importer (and the journal reader, which only reports them).
 *
 * The contract pairs a tool result with its call by id, so within one live
 * context an id must name one call and be answered once. Every path of the
 * journal tree is walked from its root; a compaction starts a fresh scope
 * (its replacement is what the live context holds from there on).
 *
 * - A call whose id an earlier call on the path already used is renamed
 *   `ID_dupN` (the smallest N >= 2 that no id of the file uses; `_dup` keeps
 *   the id within the `[a-zA-Z0-9_-]` that Anthropic accepts), and so are the
 *   results that answer it; a warning names its line. A result answers the
 *   latest call with its id that is still open (calls of one message with
 *   the same id are answered in order); an earlier call left open stays
 *   unanswered, as it was in the source (the importer then closes it as
 *   abandoned, or it is in flight).
 * - A result whose id was already answered on the path (two results for one
 *   call, or two results for the same missing call) cannot be repaired
 *   without choosing which one the model saw: the import is refused with the
 *   line of the second result.
 *
 * Blocks and entries are never modified in place (an importer may share a
 * block between an entry and a compaction's replacement): a changed block,
 * message or entry is a copy.
 */
import type { Block, JournalEntry, Message } from "./types.js";
import { isMessageKind } from "./types.js";
import { FormatError } from "./errors.js";

/** The source line of blocks and entries, as an importer knows them (JSON formats: the message number). */
export class SourceLines {
  /** What a number counts: a line of a JSONL file, or a message of a JSON message array. */
  constructor(readonly unit: "line" | "message" = "line") {}
  private readonly byBlock = new WeakMap<object, number>();
  private readonly byEntry = new Map<string, number>();
  /** Records the line the given blocks were read from (the first record wins). */
  blocks(blocks: readonly Block[], line: number): void {
    for (const b of blocks) if (!this.byBlock.has(b)) this.byBlock.set(b, line);
  }
  /** Records the line an entry was read from (used when a block has no line of its own). */
  entry(id: string, line: number): void {
    if (!this.byEntry.has(id)) this.byEntry.set(id, line);
  }
  lineOf(block: Block, entryId: string): number | undefined {
    return this.byBlock.get(block) ?? this.byEntry.get(entryId);
  }
}

/** A repaired (or, in report mode, found) repeated tool id. */
export interface ToolIdFinding {
  /** Source line of the call or result (undefined when the importer does not know it). */
  line: number | undefined;
  /** The entry holding it (for a compaction: the compaction entry). */
  entry_id: string;
  /** One line, without the file name: `tool call id "X" already used by the call at line 12; renamed "X_dup2", with the result that answers it`. */
  message: string;
  /** True for a second result for one call (refused in repair mode). */
  double_result: boolean;
}

/** How an import treats repeated tool ids. */
export interface ToolIdOptions {
  /**
   * `repair` (default, except for a journal): rename a repeated call id,
   * refuse a second result. `keep` (the default for a journal, which is never
   * rewritten): keep them as written and report them as warnings; also for
   * reading two histories that are compared with each other (`validate`),
   * where renaming each one on its own could pair different calls.
   */
  toolIds?: "repair" | "keep";
  /**
   * The calls made before the text being imported, when it is the tail of a
   * linear session (an agent hook's tail read): what the walk would have seen
   * before its first line, so that a call repeating an id of the part not read
   * is renamed as the whole file's import renames it. Only for a text whose
   * first entry is the only root (a linear history).
   */
  prior?: PriorToolIds;
}

/** The calls before an imported tail (see `ToolIdOptions.prior`); every id a plain original (no `_dup` in the file). */
export interface PriorToolIds {
  /** Per call id, the calls made with it in the scope still open where the tail starts (their results too). */
  calls: ReadonlyMap<string, number>;
  /** Per call id, the names `ID_dup2`, `ID_dup3`… already given before the tail (how many). */
  renamed: ReadonlyMap<string, number>;
}

/** The warning an import records for a finding. */
export function toolIdWarning(f: ToolIdFinding, kept: boolean): string {
  return kept ? `${f.message}; kept as written` : f.message;
}

export interface ToolIdRepair {
  entries: JournalEntry[];
  /** The calls renamed (repair mode), or every repeated id found (report mode). */
  findings: ToolIdFinding[];
}

const ASSISTANT_ROLES = new Set(["assistant", "assistant_interrupted"]);

/** The message the calls before an imported tail stand in (see `PriorToolIds`). */
const PRIOR: object = {};

interface Instance {
  name: string;
  /** The message (by object) that made the call: calls of one message are answered in order. */
  message: object;
  line: number | undefined;
  answeredAt?: number | undefined;
}

/** The ids of one scope (one live context): per original id, its calls in order and what answered them. */
class Scope {
  calls = new Map<string, Instance[]>();
  /** Results that answered no call (the call is not in the history), by id: their line. */
  orphans = new Map<string, number | undefined>();
  clone(): Scope {
    const s = new Scope();
    for (const [k, v] of this.calls)
      s.calls.set(
        k,
        v.map((x) => ({ ...x })),
      );
    s.orphans = new Map(this.orphans);
    return s;
  }
}

/** Where something is, for a message: `line 12` (`message 12` in a JSON message array). */
export function placeOf(unit: "line" | "message", line: number | undefined): string {
  return line === undefined ? `an unknown ${unit}` : `${unit} ${line}`;
}

/** The `FILE:LINE:` prefix of a one-line error or warning (`FILE: message N:` in a JSON message array). */
export function filePlace(file: string, unit: "line" | "message", line: number | undefined): string {
  if (line === undefined) return `${file}:`;
  return unit === "line" ? `${file}:${line}:` : `${file}: message ${line}:`;
}

function collectIds(entries: readonly JournalEntry[]): Set<string> {
  const taken = new Set<string>();
  const add = (m: Message) => {
    for (const b of m.content) {
      if (b.type === "tool_use") taken.add(String((b as { id: unknown }).id));
      else if (b.type === "tool_result") taken.add(String((b as { tool_use_id: unknown }).tool_use_id));
    }
  };
  for (const e of entries) {
    if (isMessageKind(e.kind)) add(e.payload as Message);
    else if (e.kind === "compaction") for (const m of e.payload.replacement) add(m);
  }
  return taken;
}

/** One walk of `uniqueToolIds`: the ids taken, the findings, and the steps for a result, a call, a message, an entry. */
class IdWalk {
  readonly findings: ToolIdFinding[] = [];

  constructor(
    readonly taken: Set<string>,
    readonly file: string,
    readonly lines: SourceLines,
    readonly mode: "repair" | "report",
  ) {}

  at(line: number | undefined): string {
    return placeOf(this.lines.unit, line);
  }

  fresh(id: string): string {
    for (let n = 2; ; n++) {
      const name = `${id}_dup${n}`;
      if (!this.taken.has(name)) {
        this.taken.add(name);
        return name;
      }
    }
  }

  /** A tool result: it answers the latest open call of its id (renamed with it), or is a second result, or an orphan. */
  result(b: Block, scope: Scope, entryId: string, line: number | undefined): Block {
    const id = String((b as { tool_use_id: unknown }).tool_use_id);
    const list = scope.calls.get(id);
    const open = list?.filter((x) => x.answeredAt === undefined) ?? [];
    if (open.length > 0) {
      // The latest call's message; within it, the first call still open.
      const latest = open[open.length - 1]!.message;
      const inst = open.find((x) => x.message === latest)!;
      inst.answeredAt = line ?? -1;
      if (inst.name === id) return b;
      return { ...b, tool_use_id: inst.name } as Block;
    }
    const earlier = list?.at(-1);
    const orphan = scope.orphans.has(id);
    if (earlier !== undefined || orphan) {
      const first = earlier
        ? `the call at ${this.at(earlier.line)} already has its result${earlier.answeredAt !== undefined && earlier.answeredAt >= 0 ? ` at ${this.at(earlier.answeredAt)}` : ""}`
        : `a result for this id (whose call is not in the history) is already at ${this.at(scope.orphans.get(id))}`;
      const message = `duplicate tool result id ${JSON.stringify(id)}: ${first}`;
      if (this.mode === "repair")
        throw new FormatError(
          `${filePlace(this.file, this.lines.unit, line)}${line === undefined ? ` entry ${entryId}:` : ""} ${message}; remove one of the two results`,
        );
      this.findings.push({ line, entry_id: entryId, message, double_result: true });
      return b;
    }
    scope.orphans.set(id, line);
    return b;
  }

  /** A tool call of an assistant message: its id, or a repeated one (reported, or renamed in repair mode). */
  call(b: Block, m: Message, scope: Scope, entryId: string, line: number | undefined): Block {
    const id = String((b as { id: unknown }).id);
    const list = scope.calls.get(id);
    if (list === undefined) {
      scope.calls.set(id, [{ name: id, message: m, line }]);
      return b;
    }
    const first = list[0]!;
    if (this.mode === "report") {
      this.findings.push({
        line,
        entry_id: entryId,
        message: `tool call id ${JSON.stringify(id)} already used by the call at ${this.at(first.line)}`,
        double_result: false,
      });
      list.push({ name: id, message: m, line });
      return b;
    }
    const name = this.fresh(id);
    this.findings.push({
      line,
      entry_id: entryId,
      message: `tool call id ${JSON.stringify(id)} already used by the call at ${this.at(first.line)}; renamed ${JSON.stringify(name)}, with the result that answers it`,
      double_result: false,
    });
    list.push({ name, message: m, line });
    return { ...b, id: name } as Block;
  }

  /** Walks one message in a scope; returns the message (a copy when an id changed). */
  message(m: Message, scope: Scope, entryId: string): Message {
    let changed = false;
    const content = m.content.map((b): Block => {
      const line = this.lines.lineOf(b, entryId);
      let out = b;
      if (b.type === "tool_result") out = this.result(b, scope, entryId, line);
      else if (b.type === "tool_use" && ASSISTANT_ROLES.has(m.role))
        out = this.call(b, m, scope, entryId, line);
      if (out !== b) changed = true;
      return out;
    });
    return changed ? { ...m, content } : m;
  }

  /** Walks one entry; a compaction's replacement starts a scope of its own, which its children inherit. */
  entry(e: JournalEntry, scope: Scope): { entry: JournalEntry; scope: Scope } {
    if (isMessageKind(e.kind)) {
      const m = e.payload as Message;
      const out = this.message(m, scope, e.id);
      return { entry: out === m ? e : ({ ...e, payload: out } as JournalEntry), scope };
    }
    if (e.kind === "compaction") {
      const fresh = new Scope();
      let changed = false;
      const replacement = e.payload.replacement.map((m) => {
        const out = this.message(m, fresh, e.id);
        if (out !== m) changed = true;
        return out;
      });
      return { entry: changed ? { ...e, payload: { ...e.payload, replacement } } : e, scope: fresh };
    }
    return { entry: e, scope };
  }
}

/** The tree: children (indexes) in file order; roots are entries without a parent in the file. */
function treeOf(entries: readonly JournalEntry[]): { roots: number[]; children: Map<string, number[]> } {
  const ids = new Set(entries.map((e) => e.id));
  const children = new Map<string, number[]>();
  const roots: number[] = [];
  entries.forEach((e, i) => {
    if (e.parent_id === null || e.parent_id === undefined || !ids.has(e.parent_id) || e.parent_id === e.id) {
      roots.push(i);
      return;
    }
    const list = children.get(e.parent_id) ?? [];
    list.push(i);
    children.set(e.parent_id, list);
  });
  return { roots, children };
}

/**
 * Makes repeated tool call ids unique along every path of an imported
 * journal tree (`mode: "repair"`, the importers), or only finds them
 * (`mode: "report"`, the journal reader: the user's journal is never
 * rewritten). In repair mode a second result for one call throws a
 * `FormatError` `FILE:LINE: duplicate tool result id "X" ...`.
 */
export function uniqueToolIds(
  entries: readonly JournalEntry[],
  file: string,
  lines: SourceLines = new SourceLines(),
  mode: "repair" | "report" = "repair",
  prior?: PriorToolIds,
): ToolIdRepair {
  const taken = collectIds(entries);
  const start = new Scope();
  if (prior) {
    for (const [id, n] of prior.renamed) for (let k = 2; k < n + 2; k++) taken.add(`${id}_dup${k}`);
    // Calls before the tail, answered there: a result of the tail for one of them is refused (its call
    // was not read), so the caller reads more of the file.
    for (const [id, n] of prior.calls)
      start.calls.set(
        id,
        Array.from({ length: n }, () => ({ name: id, message: PRIOR, line: undefined, answeredAt: -1 })),
      );
  }
  const walk = new IdWalk(taken, file, lines, mode);
  const { roots, children } = treeOf(entries);
  const out: JournalEntry[] = [...entries];
  const visited = new Set<string>();
  const stack: { index: number; scope: Scope }[] = roots
    .reverse()
    .map((index, k) => ({ index, scope: k === roots.length - 1 ? start : start.clone() }));
  while (stack.length > 0) {
    const { index, scope } = stack.pop()!;
    const e = entries[index]!;
    if (visited.has(e.id)) continue; // a repeated entry id: the first one wins
    visited.add(e.id);
    const r = walk.entry(e, scope);
    out[index] = r.entry;
    const kids = children.get(e.id) ?? [];
    // Each further child gets its own copy of the scope; the last one (visited first) takes it over.
    for (let k = 0; k < kids.length; k++)
      stack.push({ index: kids[k]!, scope: k === kids.length - 1 ? r.scope : r.scope.clone() });
  }
  const findings = walk.findings;
  findings.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  return { entries: out, findings };
}
