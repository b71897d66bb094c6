/**
 * Codex CLI rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
 *
 * Lines are `{ timestamp, type, payload }`. `session_meta` becomes the header.
 * `response_item`s become messages, grouped as the model saw them:
 * consecutive model-side items (reasoning, assistant message, function /
 * custom / local-shell calls) form one assistant message, consecutive call
 * outputs one tool-result message. A rollout has no ids, so entry ids are
 * `L<line>` (the line of the item that opened the entry), chained linearly.
 *
 * - `reasoning`: summary text becomes a `thinking` block (unsigned);
 *   `encrypted_content` becomes a `redacted_thinking` block whose `data` is the
 *   blob byte for byte, tagged `origin: "openai"` (no other provider can
 *   decrypt it; the Anthropic exporter leaves it out).
 * - `function_call.arguments` is parsed into `input`; a string that does not
 *   parse is kept as the raw string. `custom_tool_call.input` (freeform, e.g.
 *   apply_patch) is kept as a string.
 * - `compacted` becomes a `compaction` entry. With `replacement_history` the
 *   replacement is that history (a remote compaction's encrypted `compaction`
 *   item in it is a `provider_compaction` block, kept whole); otherwise it is rebuilt the way Codex rebuilds
 *   it on resume: the earlier real user messages (not the AGENTS.md /
 *   environment-context wrappers, not earlier summaries), newest first within
 *   about 20,000 tokens (4 bytes a token), then the summary message, which
 *   opens with Codex's summary prefix (its checkpoint marker).
 * - `event_msg`, `turn_context` (and, from Codex 0.169, `world_state` and
 *   `token_usage_record`) lines are UI/runtime records and are
 *   accounted as skipped by design; `token_count` usage is attached to the next
 *   assistant message, `turn_context.model` to the messages' meta.
 */
import type { Block, JournalEntry, Message, MessageEntry, Usage } from "../../model/index.js";
import { isProviderCompaction, kindForMessage } from "../../model/index.js";
import { importedCompactionEntry } from "../common/imported-compaction.js";
import { textOf } from "../../wire/common.js";
import {
  contentBlocks,
  modelSideBlocks,
  resultBlock,
  responseItemsToMessages,
} from "../../wire/responses.js";
import {
  isRecord,
  linesOf,
  objectLines,
  parseLine,
  type JsonlInput,
  type ParsedHead,
} from "../common/lines.js";
import { completeHeader, finishImport, startHeader } from "../common/source-tree.js";
import { ReportBuilder } from "../common/report.js";
import { SourceLines, type PriorToolIds, type ToolIdOptions } from "../../model/tool-ids.js";
import type { ImportResult } from "../common/types.js";

/**
 * A remote compaction's replacement with the number of conversation messages its `compaction` item
 * summarized recorded on the message that holds the item (`meta.compacted_messages`; see
 * `providerReplacement`).
 */
function withCompactedCount(replacement: Message[], before: readonly Message[]): Message[] {
  const earlier = before.filter((m) => m.role !== "system").length;
  if (earlier === 0) return replacement;
  return replacement.map((m) =>
    m.content.some(isProviderCompaction) ? { ...m, meta: { ...m.meta, compacted_messages: earlier } } : m,
  );
}

/** The text Codex puts before a compaction summary (codex-rs/core/templates/compact/summary_prefix.md). */
export const CODEX_SUMMARY_PREFIX =
  "Another language model started to solve this problem and produced a summary of its thinking process. You also have access to the state of the tools that were used by that language model. Use this to build on the work that has already been done and avoid duplicating work. Here is the summary produced by the other language model, use the information in this summary to  assist with your own analysis:";

const USER_MESSAGE_BUDGET_TOKENS = 20_000;

/** Codex's session-prefix user messages (instructions and environment wrappers), not real user turns. */
export function isCodexSessionPrefix(text: string): boolean {
  const t = text.trimStart();
  return (
    t.startsWith("# AGENTS.md instructions for ") ||
    t.startsWith("<user_instructions>") ||
    /^<environment_context>/i.test(t)
  );
}

type Side = "assistant" | "results";

/** The top-level `type` of a rollout line as Codex writes it (`{"timestamp":…,["ordinal":N,]"type":…`), unparsed. */
function lineType(line: string): string | undefined {
  return /^\{"timestamp":"[^"]*",(?:"ordinal":\d+,)?"type":"([a-z_]+)"/.exec(line)?.[1];
}

function payloadOf(line: string): Record<string, unknown> | undefined {
  try {
    const o: unknown = JSON.parse(line);
    return isRecord(o) && isRecord(o.payload) ? o.payload : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The lines that hold the answer to Codex's own compaction request. Codex
 * 0.169 records that answer (the summary message of its local compaction, or
 * the encrypted `compaction` item of the remote one) as response items just
 * before the `token_usage_record` of that response, and then the `compacted`
 * item naming the response (`compaction_response_id`) that replaces the
 * history. The answer was never part of the conversation: it is skipped, so
 * that the context before the compaction is the one Codex compacted.
 */
export function compactionAnswerLines(input: JsonlInput): Set<number> {
  const out = new Set<number>();
  const mark = '"compaction_response_id"';
  if (typeof input === "string" ? !input.includes(mark) : !input.some((l) => l.text.includes(mark)))
    return out;
  const raws = linesOf(input);
  const records = new Map<string, number>();
  raws.forEach((raw, i) => {
    const type = lineType(raw.text);
    if (type === "token_usage_record") {
      const id = payloadOf(raw.text)?.response_id;
      if (typeof id === "string") records.set(id, i);
    } else if (type === "compacted") {
      const id = payloadOf(raw.text)?.compaction_response_id;
      const at = typeof id === "string" ? records.get(id) : undefined;
      for (
        let k = (at ?? 0) - 1;
        at !== undefined && k >= 0 && lineType(raws[k]!.text) === "response_item";
        k--
      ) {
        const p = payloadOf(raws[k]!.text);
        const answer =
          p !== undefined &&
          ((p.type === "message" && p.role === "assistant") ||
            p.type === "reasoning" ||
            p.type === "compaction");
        if (!answer) break;
        out.add(raws[k]!.line);
      }
    }
  });
  return out;
}

/** Detection: a record only a Codex rollout writes. */
export function isCodexRecord(o: Record<string, unknown>): boolean {
  const t = o.type;
  return (
    t === "session_meta" ||
    t === "response_item" ||
    t === "turn_context" ||
    t === "compacted" ||
    (t === "event_msg" && isRecord(o.payload))
  );
}

/**
 * A `compacted` line's replacement when it records no `replacement_history`,
 * rebuilt as Codex rebuilds it on resume: the earlier real user messages,
 * newest first within the budget, then the summary message.
 */
function rebuiltReplacement(live: readonly Message[], summaryText: string, ts: string): Message[] {
  const users = live
    .filter((m) => m.role === "user" && !m.content.some((b) => b.type === "tool_result"))
    .map((m) => textOf(m.content))
    .filter((t) => t.length > 0 && !isCodexSessionPrefix(t) && !t.startsWith(CODEX_SUMMARY_PREFIX));
  const selected: string[] = [];
  let budget = USER_MESSAGE_BUDGET_TOKENS;
  for (let i = users.length - 1; i >= 0; i--) {
    const tokens = Math.ceil(Buffer.byteLength(users[i]!, "utf8") / 4);
    if (tokens > budget) break;
    selected.unshift(users[i]!);
    budget -= tokens;
  }
  return [
    ...selected.map((t): Message => ({ role: "user", content: [{ type: "text", text: t }] })),
    {
      role: "user",
      content: [{ type: "text", text: summaryText }],
      meta: { timestamp: ts, is_compact_summary: true },
    },
  ];
}

/** One rollout line about to be read: its payload, type, subtype, time and entry id. */
interface RolloutLine {
  line: number;
  o: Record<string, unknown>;
  p: Record<string, unknown>;
  type: string;
  sub: string;
  ts: string;
  id: string;
}

/** The rollout's lines in order, as a linear journal. */
class CodexImport {
  readonly header: JournalEntry = startHeader("codex");
  readonly entries: JournalEntry[] = [this.header];
  last: string = this.header.id;
  cur: { side: Side; entry: MessageEntry } | undefined;
  model = "unknown";
  pendingUsage: Usage | undefined;
  live: Message[] = [];
  readonly lines = new SourceLines();

  constructor(
    readonly rb: ReportBuilder,
    readonly compactionAnswers: ReadonlySet<number>,
  ) {}

  push(e: JournalEntry): void {
    this.entries.push(e);
    if (/^L\d+$/.test(e.id)) this.lines.entry(e.id, Number(e.id.slice(1)));
    this.last = e.id;
    if (e.kind === "compaction") this.live = [...e.payload.replacement];
    else if (e.kind !== "header") this.live.push(e.payload as Message);
  }

  readLine(line: number, o: Record<string, unknown>): void {
    const p = isRecord(o.payload) ? o.payload : {};
    const type = String(o.type ?? "?");
    const sub = typeof p.type === "string" ? p.type : "";
    this.rb.line(sub ? `${type}:${sub}` : type);
    const ts =
      typeof o.timestamp === "string"
        ? o.timestamp
        : String((this.header.payload as { created_at: string }).created_at);
    const r: RolloutLine = { line, o, p, type, sub, ts, id: `L${line}` };
    if (type === "session_meta") this.sessionMeta(r);
    else if (type === "turn_context") {
      if (typeof p.model === "string") this.model = p.model;
      this.rb.skip(line, "turn_context (per-turn settings; the model is recorded in message meta)", true);
    } else if (type === "event_msg") this.eventMsg(r);
    else if (type === "compacted") this.compacted(r);
    else if (type === "world_state" || type === "token_usage_record") {
      // Newer Codex (0.169): a snapshot of its runtime state, and the usage of one response (UI and accounting).
      this.rb.skip(
        line,
        `${type} (Codex's runtime record; the conversation is in response_item lines)`,
        true,
      );
    } else if (type !== "response_item")
      this.rb.skip(line, `unknown line type ${JSON.stringify(type)}`, false);
    else if (this.compactionAnswers.has(line)) {
      this.rb.skip(
        line,
        "the answer to Codex's compaction request (the compacted item after it replaces the history)",
        true,
      );
    } else if (sub === "ghost_snapshot")
      this.rb.skip(line, "ghost_snapshot (undo snapshot, never sent to the model)", true);
    else this.responseItem(r);
  }

  /** `session_meta`: the header's identity. */
  sessionMeta({ o, p }: RolloutLine): void {
    const hp = this.header.payload as Record<string, unknown>;
    Object.assign(hp, {
      session_id: String(p.id ?? hp.session_id ?? ""),
      created_at: String(p.timestamp ?? o.timestamp ?? ""),
      cwd: typeof p.cwd === "string" ? p.cwd : undefined,
    });
    for (const k of ["originator", "cli_version", "instructions", "git", "model_provider", "source"])
      if (p[k] !== undefined && p[k] !== null) hp[k] = p[k];
    this.header.created_at = String(hp.created_at);
    this.rb.imported();
  }

  /** `event_msg`: skipped by design; a `token_count`'s usage waits for the next assistant message. */
  eventMsg({ line, p, sub }: RolloutLine): void {
    if (sub === "token_count" && isRecord(p.info) && isRecord(p.info.last_token_usage)) {
      const u = p.info.last_token_usage;
      const input = typeof u.input_tokens === "number" ? u.input_tokens : 0;
      const cached = typeof u.cached_input_tokens === "number" ? u.cached_input_tokens : 0;
      this.pendingUsage = {
        input_tokens: input - cached,
        cache_read_input_tokens: cached,
        output_tokens: typeof u.output_tokens === "number" ? u.output_tokens : 0,
        scope: "parent",
      };
    }
    this.rb.skip(
      line,
      `event_msg:${sub || "?"} (UI event; the conversation is in response_item lines)`,
      true,
    );
  }

  /** `compacted`: a `compaction` entry whose replacement is the recorded history, or the one Codex rebuilds. */
  compacted({ p, ts, id }: RolloutLine): void {
    const message = typeof p.message === "string" ? p.message : "";
    const summaryText = message.startsWith(CODEX_SUMMARY_PREFIX)
      ? message
      : `${CODEX_SUMMARY_PREFIX}\n${message}`;
    const replacement = Array.isArray(p.replacement_history)
      ? withCompactedCount(responseItemsToMessages(p.replacement_history), this.live)
      : rebuiltReplacement(this.live, summaryText, ts);
    const entry = importedCompactionEntry({
      id,
      parentId: this.last,
      createdAt: ts,
      sourceAgent: "codex",
      summary: message,
      tokensBefore: this.live,
      model: this.model,
      trigger: "auto",
      triggerRecorded: false,
      replacement,
      // No summary text, and the history as it is: compact-safe's prune-only fork (Codex always writes a summary:
      // its text, or, in a remote compaction, the encrypted `compaction` item in the replacement).
      ...(message === "" &&
      Array.isArray(p.replacement_history) &&
      !replacement.some((m) => m.content.some(isProviderCompaction))
        ? { path: "prune-only" as const }
        : {}),
      extra: { replacement_history_recorded: Array.isArray(p.replacement_history) },
    });
    this.cur = undefined;
    this.push(entry);
    this.rb.imported();
  }

  /** Appends `blocks` to the open entry of `side`, or opens a new one with `payload` (`blocks` already in it). */
  private join(side: Side, blocks: Block[], r: RolloutLine, open: () => MessageEntry): void {
    if (this.cur?.side === side) {
      this.cur.entry.payload.content.push(...blocks);
      (this.cur.entry.payload.meta!.source_lines as number[]).push(r.line);
      return;
    }
    const entry = open();
    this.cur = { side, entry };
    this.push(entry);
  }

  /** A `response_item`: model-side items and call outputs joined as the model saw them, messages one entry each. */
  responseItem(r: RolloutLine): void {
    const { line, p, sub, ts, id } = r;
    const ms = modelSideBlocks(p);
    const rs = resultBlock(p);
    if (ms) this.lines.blocks(ms, line);
    if (rs) this.lines.blocks([rs], line);
    if (ms) {
      this.join("assistant", ms, r, () => {
        const payload: Message = {
          role: "assistant",
          content: ms,
          meta: { timestamp: ts, model: this.model, source_lines: [line] },
        };
        if (this.pendingUsage) payload.usage = this.pendingUsage;
        this.pendingUsage = undefined;
        return { id, parent_id: this.last, kind: "assistant", created_at: ts, payload };
      });
    } else if (rs) {
      this.join("results", [rs], r, () => ({
        id,
        parent_id: this.last,
        kind: "tool_result",
        created_at: ts,
        payload: { role: "user", content: [rs], meta: { timestamp: ts, source_lines: [line] } },
      }));
    } else if (sub === "message") {
      const role = p.role === "developer" || p.role === "system" ? "system" : "user";
      const payload: Message = {
        role,
        content: contentBlocks(p.content),
        meta: { timestamp: ts, source_role: p.role, source_lines: [line] },
      };
      this.cur = undefined;
      this.push({ id, parent_id: this.last, kind: kindForMessage(payload), created_at: ts, payload });
    } else {
      this.unknownItem(r);
      return;
    }
    this.rb.imported();
  }

  /** An unknown response item is kept, opaque, in the assistant message (never dropped silently). */
  unknownItem({ line, p, sub, ts, id }: RolloutLine): void {
    const block = { ...p, type: sub || "unknown_response_item" } as Block;
    if (this.cur?.side === "assistant") this.cur.entry.payload.content.push(block);
    else {
      const entry: MessageEntry = {
        id,
        parent_id: this.last,
        kind: "assistant",
        created_at: ts,
        payload: {
          role: "assistant",
          content: [block],
          meta: { timestamp: ts, model: this.model, source_lines: [line] },
        },
      };
      this.cur = { side: "assistant", entry };
      this.push(entry);
    }
    this.rb.note(`line ${line}: unknown response item ${JSON.stringify(sub)} kept as an opaque block`);
    this.rb.imported();
  }
}

export function importCodex(
  text: JsonlInput,
  file: string,
  options: ToolIdOptions = {},
  head?: ParsedHead,
): ImportResult {
  const rb = new ReportBuilder("codex", file);
  const state = new CodexImport(rb, compactionAnswerLines(text));
  for (const { raw, o } of objectLines(text, rb, head)) state.readLine(raw.line, o);
  completeHeader(state.header, state.entries, file);
  return finishImport(state.entries, rb, state.lines, options);
}

/**
 * The calls the part of a rollout before a tail read makes (see
 * `PriorToolIds`): per call id, its calls since the last `compacted` line (a
 * compaction starts a fresh scope, holding its replacement's calls) and how
 * many times it was repeated, as `importCodex` reads them, in `bytes[0, end)`
 * (`end` a line start). Only the lines holding the offsets `lineHits` are
 * decoded and parsed: where the bytes name a call type (`function_call`,
 * `custom_tool_call`, `local_shell_call`: every call's line does) or
 * `compacted` (see `TailWindow.callLinesBefore`).
 */
export function codexPriorCalls(bytes: Buffer, end: number, lineHits: readonly number[]): PriorToolIds {
  let calls = new Map<string, number>();
  const renamed = new Map<string, number>();
  for (const e of callLines(bytes, end, lineHits)) {
    if (e.at >= end) break;
    if (e.compacted) calls = new Map();
    for (const id of e.calls) {
      const n = calls.get(id) ?? 0;
      if (n > 0) renamed.set(id, (renamed.get(id) ?? 0) + 1);
      calls.set(id, n + 1);
    }
  }
  return { calls, renamed };
}

/** A line that makes calls or compacts: where it starts, and the ids of the calls it makes (in order). */
interface CallLine {
  at: number;
  compacted: boolean;
  calls: string[];
}

/** The call lines of `bytes[0, end)` read so far (a tail read asks for shorter prefixes as its window grows). */
const callLinesFound = new WeakMap<Buffer, { end: number; lines: CallLine[] }>();

/** The lines holding the offsets `hits` (where a call type or `compacted` is named), read as the importer reads them. */
function callLines(bytes: Buffer, end: number, hits: readonly number[]): CallLine[] {
  const found = callLinesFound.get(bytes);
  if (found && found.end >= end) return found.lines;
  const starts = new Set<number>();
  for (const at of hits) if (at < end) starts.add(at === 0 ? 0 : bytes.lastIndexOf(0x0a, at - 1) + 1);
  const lines: CallLine[] = [];
  for (const from of [...starts].sort((x, y) => x - y)) {
    let stop = bytes.indexOf(0x0a, from);
    if (stop < 0 || stop > end) stop = end;
    if (stop > from && bytes[stop - 1] === 0x0d) stop--;
    // As the importer reads a line (a line it refuses makes no call).
    const parsed = parseLine({ line: 0, text: bytes.toString("utf8", from, stop), last_unterminated: false });
    const o = parsed.ok ? parsed.value : undefined;
    if (!isRecord(o) || !isRecord(o.payload)) continue;
    const p = o.payload;
    const line: CallLine = { at: from, compacted: o.type === "compacted", calls: [] };
    const callsOf = (blocks: readonly Block[]) => {
      for (const b of blocks) if (b.type === "tool_use") line.calls.push(String((b as { id: unknown }).id));
    };
    if (line.compacted) {
      if (Array.isArray(p.replacement_history))
        for (const m of responseItemsToMessages(p.replacement_history))
          if (m.role === "assistant") callsOf(m.content);
    } else if (o.type === "response_item") callsOf(modelSideBlocks(p) ?? []);
    if (line.compacted || line.calls.length > 0) lines.push(line);
  }
  callLinesFound.set(bytes, { end, lines });
  return lines;
}
