/**
 * A session's audit as a verdict a team can keep (`compact-safe audit PATH… --json`, schema 1, see
 * docs/AUDIT_JSONL.md): who wrote the session (agent and version), what each of its compactions kept
 * and lost, by kind, and the tokens before and after, with no conversation text. A lost piece of the
 * protected last round is named by its place (message and block of the context before the
 * compaction) and a short hash of its text or id; `showText` adds the text, redacted.
 *
 * A session file in which no compaction can be recorded is read only as far as it takes to know its
 * format and header: every format's compaction record is a JSON string that begins with `compact`
 * (Claude Code's `"compact_boundary"`, Codex's `"compacted"` and `"compaction"` items, pi's and the
 * journal's `"compaction"`, a provider's `"compaction"` block or item) or Claude Code's
 * `"isCompactSummary"`, so a file whose bytes hold neither, nor a JSON escape of a letter (which
 * could spell them), has none to audit.
 */
import { createHash } from "node:crypto";
import type { CompactionEntry } from "../model/index.js";
import { FormatError } from "../formats/common/types.js";
import { readSessionFile } from "../formats/read-file.js";
import type { FormatName } from "../formats/registry.js";
import { redactSecrets } from "../redact/redact.js";
import { auditEntries, protectedLossItems, type CompactionAudit, type LostItem } from "./audit.js";
import { looksLikeJournalBytes, readSession, type Session } from "./session.js";

import {
  AUDIT_SCHEMA,
  LOST_KINDS,
  type CompactionRecord,
  type LostKind,
  type LostRef,
  type SessionCounts,
  type SessionRecord,
  zeroCounts,
  zeroKinds,
} from "./audit-schema.js";

export * from "./audit-schema.js";

export interface RecordOptions {
  root: string;
  /** The path written in the record, and the name errors give the file. */
  path: string;
  format?: FormatName;
  showText?: boolean;
}

/** The first 12 hex digits of a text's SHA-256. */
export function shortHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, 12);
}

const VIOLATIONS: readonly [RegExp, string][] = [
  [/^last round: user text /, "last_round.user_text"],
  [/^last round: tool call .* missing/, "last_round.tool_call_missing"],
  [/^last round: tool call /, "last_round.tool_call_altered"],
  [/^last round: tool result .* missing \(/, "last_round.tool_result_missing"],
  [/^last round: tool result /, "last_round.tool_result_altered"],
  [/^last round: assistant text /, "last_round.assistant_text"],
  [/^last round: system text /, "last_round.system_text"],
  [/^last round: thinking /, "last_round.thinking"],
  [/^last round: redacted thinking /, "last_round.redacted_thinking"],
  [/^last round: image /, "last_round.image"],
  [/^last round: /, "last_round.block"],
  [/^tool_result .* has no matching tool_use/, "pairing.orphan_result"],
  [/^tool_use .* has no tool_result/, "pairing.unanswered_call"],
  [/^missing checkpoint/, "checkpoint.missing"],
  [/^more than one checkpoint/, "checkpoint.stacked"],
  [/^prune-only dropped the existing checkpoint/, "checkpoint.dropped"],
  [/^prune-only wrote a new checkpoint/, "checkpoint.unexpected"],
  [/^placeholder-only checkpoint/, "checkpoint.placeholder"],
  [/^anchors not restated/, "anchors.not_restated"],
  [/^anchors dropped/, "anchors.dropped"],
  [/^branch summary /, "branch_summary.dropped"],
];

/** The validator's reason as a code without its quoted text, and the message index it names. */
export function violationOf(reason: string | null): { code: string | null; at: number | null } {
  if (reason === null) return { code: null, at: null };
  const code = VIOLATIONS.find(([re]) => re.test(reason))?.[1] ?? "other";
  const at = /\(message (\d+)\)$/.exec(reason);
  return { code, at: at ? Number(at[1]) : null };
}

/** The kinds a compaction that did not keep the contract lost: its losses, and what its violation names. */
function kindsOf(a: CompactionAudit, code: string | null): LostKind[] {
  if (a.kept !== false) return [];
  const l = a.losses;
  const kinds = new Set<LostKind>();
  if (l.user_texts.length > 0 || code === "last_round.user_text") kinds.add("instructions");
  if (l.tool_calls.length + l.tool_results.length > 0 || /^(last_round\.tool_|pairing\.)/.test(code ?? ""))
    kinds.add("tool_rounds");
  if (l.assistant_texts.length > 0 || code === "last_round.assistant_text") kinds.add("assistant_texts");
  if (code?.startsWith("checkpoint.")) kinds.add("checkpoint");
  if (code?.startsWith("anchors.")) kinds.add("anchors");
  if (kinds.size === 0) kinds.add("other");
  return LOST_KINDS.filter((k) => kinds.has(k));
}

function refsOf(items: readonly LostItem[], showText: boolean): CompactionRecord["losses"] {
  const losses: CompactionRecord["losses"] = {
    user_texts: [],
    tool_calls: [],
    tool_results: [],
    assistant_texts: [],
  };
  const list = {
    user_text: losses.user_texts,
    tool_call: losses.tool_calls,
    tool_result: losses.tool_results,
    assistant_text: losses.assistant_texts,
  };
  for (const item of items) {
    const ref: LostRef = { at: item.at, block: item.block, hash: shortHash(item.value) };
    if (item.tool !== undefined) ref.tool = item.tool;
    if (showText) ref.text = redactSecrets(item.value);
    list[item.kind].push(ref);
  }
  return losses;
}

/** The agent and its version, as the session's header records them. */
export function agentOf(session: Session): {
  agent: string;
  version: string | null;
  session_id: string | null;
} {
  const header = session.entries.find((e) => e.kind === "header");
  const hp = (header?.payload ?? {}) as Record<string, unknown>;
  const source = typeof hp.source_format === "string" ? hp.source_format : undefined;
  const agent =
    session.kind === "journal"
      ? source !== undefined && source !== "journal"
        ? source
        : "compact-safe"
      : session.format;
  const version =
    typeof hp.cli_version === "string" && hp.cli_version !== ""
      ? hp.cli_version
      : typeof hp.version === "string" && hp.version !== ""
        ? hp.version
        : null;
  const id = typeof hp.session_id === "string" && hp.session_id !== "" ? hp.session_id : null;
  return { agent, version, session_id: id };
}

/** The record of a session read whole: every compaction audited. */
export function sessionRecord(session: Session, bytes: number, options: RecordOptions): SessionRecord {
  const showText = options.showText === true;
  const items = new Map<string, LostItem[]>();
  const byEntry = new Map<string, CompactionEntry>();
  const audit = auditEntries(session.entries, {
    visit: (a, before, entry) => {
      byEntry.set(a.id, entry);
      items.set(a.id, a.judgeable ? protectedLossItems(before, entry.payload.replacement) : []);
    },
  });
  const byId = new Map(audit.compactions.map((a) => [a.id, a]));
  const who = agentOf(session);
  const counts: SessionCounts = zeroCounts();
  const lostKinds = zeroKinds();
  const tokens = { before: 0, after: 0 };
  const compactions = audit.compactions.map((a): CompactionRecord => {
    const entry = byEntry.get(a.id)!;
    const { code, at } = violationOf(a.reason);
    const kinds = kindsOf(a, code);
    const repaired = a.kept === false && a.repaired_by != null && byId.get(a.repaired_by)?.kept === true;
    const p = entry.payload;
    const record: CompactionRecord = {
      id: a.id,
      source: a.source,
      version: typeof p.agent_version === "string" && p.agent_version !== "" ? p.agent_version : who.version,
      trigger: typeof p.trigger === "string" ? p.trigger : "auto",
      path: a.path,
      judgeable: a.judgeable,
      kept: a.kept,
      repair_of: a.repair_of ?? null,
      repaired_by: a.repaired_by ?? null,
      repaired,
      violation: code,
      violation_at: at,
      kinds,
      messages_before: a.messages_before,
      messages_after: a.messages_after,
      tokens_before: finite(p.tokens_before),
      tokens_after: finite(p.tokens_after),
      placeholder: a.placeholder,
      stacked_checkpoints: a.stacked_checkpoints,
      provider_compaction:
        a.provider_compaction === null
          ? null
          : { provider: a.provider_compaction.provider, opaque: a.provider_compaction.opaque },
      losses: refsOf(items.get(a.id) ?? [], showText),
    };
    if (showText && a.reason !== null) record.reason = redactSecrets(a.reason);
    if (a.repair_of == null) {
      counts.compactions++;
      tokens.before += record.tokens_before;
      tokens.after += record.tokens_after;
      if (!a.judgeable) counts.not_judgeable++;
      else if (a.kept === true) counts.kept++;
      else {
        counts.lost++;
        if (repaired) counts.repaired++;
        for (const k of kinds) lostKinds[k]++;
      }
    }
    return record;
  });
  counts.judged = counts.compactions - counts.not_judgeable;
  counts.unrepaired = counts.lost - counts.repaired;
  return {
    schema: AUDIT_SCHEMA,
    type: "session",
    root: options.root,
    path: options.path,
    format: session.format,
    ...who,
    bytes,
    counts,
    lost_kinds: lostKinds,
    tokens,
    compactions,
  };
}

function finite(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : 0;
}

/** How every format writes a compaction record (see the module comment): `"compact` or `"isCompactSummary"`. */
const COMPACTION_MARKS = ['"compact', '"isCompactSummary"'].map((s) => Buffer.from(s));
/** What both marks hold: the bytes are searched for it once, and each place it is found is looked at. */
const COMMON = Buffer.from("ompact");
/** A JSON escape of a letter (`\u0041`…`\u007a`), which could spell `compact` without its letters: `\u00` then 4 to 7. */
const ESCAPE = Buffer.from("\\u00");

/** Whether `mark` is in `bytes` at `at`. */
const markAt = (bytes: Buffer, mark: Buffer, at: number): boolean =>
  at >= 0 &&
  at + mark.length <= bytes.length &&
  bytes.compare(mark, 0, mark.length, at, at + mark.length) === 0;

/** Whether a session's bytes may record a compaction (see the module comment); false only when they cannot. */
export function mayRecordCompaction(bytes: Buffer): boolean {
  // Two passes over the bytes (not one per mark): a session with no compaction is read to its end.
  for (let at = bytes.indexOf(COMMON); at >= 0; at = bytes.indexOf(COMMON, at + 1))
    if (COMPACTION_MARKS.some((m) => markAt(bytes, m, at - m.indexOf(COMMON)))) return true;
  for (let at = bytes.indexOf(ESCAPE); at >= 0; at = bytes.indexOf(ESCAPE, at + 1)) {
    const next = bytes[at + ESCAPE.length];
    if (next !== undefined && next >= 0x34 && next <= 0x37) return true;
  }
  return false;
}

/** How much of a session with no compaction is read to know its format and header. */
const HEAD_BYTES = 256 * 1024;

/** The first whole lines of `bytes`, up to about `HEAD_BYTES`; the whole when it is shorter. */
function head(bytes: Buffer): Buffer {
  if (bytes.length <= HEAD_BYTES) return bytes;
  const nl = bytes.lastIndexOf(0x0a, HEAD_BYTES);
  return nl > 0 ? bytes.subarray(0, nl + 1) : bytes;
}

/**
 * Reads and audits one session file. `file` is read; `options.path` names it in the record and in
 * errors. Throws a `FormatError` (one line) when it cannot be read or imported.
 */
export async function auditSessionFile(file: string, options: RecordOptions): Promise<SessionRecord> {
  const bytes = await readSessionFile(file);
  return auditSessionBytes(bytes, options);
}

/** `auditSessionFile` on bytes already read. `full`: read the whole session even when it cannot record a compaction. */
export async function auditSessionBytes(
  bytes: Buffer,
  options: RecordOptions,
  full = false,
): Promise<SessionRecord> {
  const name = options.path;
  const read = (content: Buffer) =>
    readSession(name, { content, format: options.format, journal: isJournal(bytes, options.format) });
  if (!full && !mayRecordCompaction(bytes)) {
    const part = head(bytes);
    if (part.length === bytes.length) {
      return sessionRecord(await read(bytes), bytes.length, options);
    }
    try {
      return sessionRecord(await read(part), bytes.length, options);
    } catch (e) {
      if (!(e instanceof FormatError)) throw e;
      // The head alone does not read (a JSON document cut short): the whole is read below.
    }
  }
  return sessionRecord(await read(bytes), bytes.length, options);
}

/** Whether the bytes are a journal's, from their first non-blank line alone (the whole is decoded once, by the reader). */
function isJournal(bytes: Buffer, format: FormatName | undefined): boolean {
  return format !== undefined ? format === "journal" : looksLikeJournalBytes(bytes);
}

/** Quoted text in an error's one line, left out of a record unless text is asked for. */
export function textlessReason(reason: string): string {
  return reason
    .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
    .replace(/\s+/g, " ")
    .slice(0, 300);
}
