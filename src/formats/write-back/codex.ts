/**
 * Write-back for Codex CLI: a compacted history as a NEW Codex rollout (a
 * fork under a new session id), in the shape Codex itself records a
 * compaction and reloads on `codex resume ID` (checked with Codex 0.169.0):
 *
 * 1. a `session_meta` line: the original's session_meta payload (cwd,
 *    originator, cli_version, instructions, base instructions, git, source,
 *    model provider ...) with the new `id` (a UUIDv7, as Codex makes them)
 *    and the time of the fork, in Codex's legacy layout (no `history_mode`:
 *    the paginated layout of 0.169 needs an ordinal on every line);
 * 2. one `compacted` line whose `replacement_history` is the replacement as
 *    Responses items, and whose `message` is the checkpoint's text (the
 *    summary path) or empty (prune-only). On resume Codex takes the newest
 *    `replacement_history` as the whole history, so the model's context is
 *    exactly these items; and Codex treats it as a compaction (it compacts
 *    again later on top of it);
 * 3. an `event_msg` `context_compacted` (what Codex writes after its own
 *    compaction) and an `event_msg` `user_message` with the last instruction
 *    of the replacement. These feed Codex's UI only (the model never sees
 *    event_msg lines), but Codex lists a session (the `codex resume` picker,
 *    `codex resume --last`) only when it holds a user_message event: without
 *    one the fork resumes by id but is missing from the list (checked).
 *    Codex 0.169 lists from a state database it fills from the rollout files
 *    once per CODEX_HOME: a fork written into a home Codex has used already
 *    resumes by id, and is listed from its first resume on.
 *
 *
 * The items: every item of the replacement that is unchanged from the
 * original is written as the original's own response item, byte for byte
 * (reasoning with its `encrypted_content`, `function_call` with its
 * `arguments` string, custom tool calls, messages with their ids); what the
 * compaction made (the checkpoint, bounded or stubbed tool results, redacted
 * older user messages) is written as the Responses item of the same kind, so
 * every call is still followed by its output of the matching type.
 *
 * No `turn_context` line is written. Codex reads the model and the turn
 * baseline from `turn_context`; a fork without one makes Codex send its full
 * initial context again on the first resumed turn (base instructions,
 * skills, the current `<environment_context>`), which is right for a fork
 * resumed in another place and time. Token counts (`event_msg` token_count)
 * are not written either: Codex counts again from the first resumed turn.
 */
import { randomBytes } from "node:crypto";
import type { Block, Message, ToolResultBlock, ToolUseBlock } from "../../model/index.js";
import { canonicalJson } from "../../model/blocks.js";
import { isProviderCompaction, nativeOf, refuseForeignCompaction } from "../../model/provider-compaction.js";
import { isCheckpoint, isPlainUser } from "../../contract/classify.js";
import {
  contentBlocks,
  modelSideBlocks,
  resultBlock,
  rolloutCallItem,
  rolloutMessageItem,
  rolloutOutputItem,
} from "../../wire/responses.js";
import { isCodexSessionPrefix } from "../import/codex.js";
import { textOf } from "../../wire/common.js";
import { isRecord, recordsOf } from "../common/lines.js";

type Item = Record<string, unknown>;

/** What the fork takes from the original rollout. */
export interface CodexOrigin {
  /** The original's `session_meta` payload (the fork replaces its ids and time), or a minimal one. */
  meta: Item;
  /** Every response item the original holds (top-level, and inside `compacted.replacement_history`). */
  items: Item[];
}

export interface CodexFork {
  sessionId: string;
  /** The rollout's text (JSONL, ending with a newline). */
  text: string;
  /** `rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl`, as Codex names its rollouts (local time). */
  fileName: string;
}

/** Reads the session_meta and the response items of the original rollout's text. */
export function codexOrigin(text: string): CodexOrigin {
  const origin: CodexOrigin = { meta: { cwd: process.cwd(), originator: "codex_cli_rs" }, items: [] };
  for (const o of recordsOf(text)) {
    if (!isRecord(o.payload)) continue;
    const p = o.payload;
    if (o.type === "session_meta") {
      // The first session_meta is the session's own (a forked rollout may carry its parent's after it).
      if (origin.meta.id === undefined) origin.meta = { ...p };
    } else if (o.type === "response_item") origin.items.push(p);
    else if (o.type === "compacted" && Array.isArray(p.replacement_history))
      for (const it of p.replacement_history) if (isRecord(it)) origin.items.push(it);
  }
  return origin;
}

/** A UUIDv7 (time-ordered), the kind of id Codex gives its sessions. */
export function uuidV7(now: Date = new Date()): string {
  const b = randomBytes(16);
  const ms = BigInt(now.getTime());
  for (let i = 0; i < 6; i++) b[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Codex's rollout file name for a session started at `at` (local time, as Codex writes it). */
export function codexRolloutName(id: string, at: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  const stamp =
    `${at.getFullYear()}-${p(at.getMonth() + 1)}-${p(at.getDate())}` +
    `T${p(at.getHours())}-${p(at.getMinutes())}-${p(at.getSeconds())}`;
  return `rollout-${stamp}-${id}.jsonl`;
}

type Side = "assistant" | "user" | "system";

/** The blocks an original item imports as, and the side of the conversation it is on. */
function blocksOfItem(it: Item): { side: Side; blocks: Block[] } | undefined {
  const ms = modelSideBlocks(it);
  if (ms) return { side: "assistant", blocks: ms };
  const rs = resultBlock(it);
  if (rs) return { side: "user", blocks: [rs] };
  if (it.type === "message") {
    const side: Side = it.role === "developer" || it.role === "system" ? "system" : "user";
    return { side, blocks: contentBlocks(it.content) };
  }
  return undefined;
}

interface Indexed {
  item: Item;
  side: Side;
  keys: string[];
}

/**
 * The original's items indexed by the canonical JSON of their first block,
 * so that a run of replacement blocks equal to an item's blocks is written as
 * that item itself.
 */
class OriginalItems {
  private byFirst = new Map<string, Indexed[]>();
  /** The type of each original call, by call id (to give a new output the matching type). */
  readonly callTypes = new Map<string, string>();

  constructor(items: readonly Item[]) {
    for (const item of items) {
      if (typeof item.call_id === "string" && typeof item.type === "string" && item.type.endsWith("_call"))
        this.callTypes.set(item.call_id, item.type);
      const b = blocksOfItem(item);
      if (!b || b.blocks.length === 0) continue;
      const keys = b.blocks.map((x) => canonicalJson(x));
      const list = this.byFirst.get(keys[0]!);
      if (list) list.push({ item, side: b.side, keys });
      else this.byFirst.set(keys[0]!, [{ item, side: b.side, keys }]);
    }
  }

  /** The original item whose blocks are exactly `keys[at..]`'s next ones, on `side`. */
  match(side: Side, keys: readonly string[], at: number): Indexed | undefined {
    for (const c of this.byFirst.get(keys[at]!) ?? []) {
      if (c.side !== side || at + c.keys.length > keys.length) continue;
      if (c.keys.every((k, i) => keys[at + i] === k)) return c;
    }
    return undefined;
  }
}

const isContent = (b: Block) => b.type === "text" || b.type === "image_url";

/** The Responses items of one replacement message. */
function messageToItems(m: Message, originals: OriginalItems): Item[] {
  const side: Side = m.role === "system" ? "system" : m.role === "user" ? "user" : "assistant";
  const keys = m.content.map((b) => canonicalJson(b));
  const out: Item[] = [];
  let i = 0;
  while (i < m.content.length) {
    const found = originals.match(side, keys, i);
    if (found) {
      out.push(found.item);
      i += found.keys.length;
      continue;
    }
    const b = m.content[i]!;
    if (isContent(b)) {
      // A run of text and images that matches no original item: one new message.
      let j = i + 1;
      while (j < m.content.length && isContent(m.content[j]!) && !originals.match(side, keys, j)) j++;
      out.push(rolloutMessageItem(side === "system" ? "developer" : side, m.content.slice(i, j)));
      i = j;
      continue;
    }
    i++;
    if (b.type === "tool_result")
      out.push(
        rolloutOutputItem(b as ToolResultBlock, originals.callTypes.get((b as ToolResultBlock).tool_use_id)),
      );
    else if (b.type === "tool_use")
      out.push(rolloutCallItem(b as ToolUseBlock, originals.callTypes.get((b as ToolUseBlock).id)));
    else if (b.type === "thinking" || b.type === "redacted_thinking") {
      // Reasoning the original does not hold as such: its summary text and encrypted content, in one item.
      const summary =
        b.type === "thinking" ? [{ type: "summary_text", text: (b as { thinking: string }).thinking }] : [];
      let encrypted: string | null = b.type === "redacted_thinking" ? (b as { data: string }).data : null;
      if (b.type === "thinking" && m.content[i]?.type === "redacted_thinking") {
        encrypted = (m.content[i] as { data: string }).data;
        i++;
      }
      out.push({ type: "reasoning", summary, content: null, encrypted_content: encrypted });
    } else if (isProviderCompaction(b)) {
      // A remote compaction's item goes back as Codex wrote it; another provider's has no item (refused).
      if (b.provider !== "openai") refuseForeignCompaction([m], "codex");
      out.push(nativeOf(b));
    } else out.push({ ...b }); // an opaque item the original held (e.g. web_search_call) is its own item
  }
  return out;
}

/** The text of the replacement's last user instruction (Codex shows it as the session's preview). */
function lastInstruction(replacement: readonly Message[]): string {
  for (let i = replacement.length - 1; i >= 0; i--) {
    const m = replacement[i]!;
    const text = isPlainUser(m) ? textOf(m.content) : "";
    if (text.trim() !== "" && !isCodexSessionPrefix(text)) return text;
  }
  return "(compacted by compact-safe)";
}

/** The replacement as Codex response items, in order. */
export function toResponseItems(replacement: readonly Message[], origin: CodexOrigin): Item[] {
  const originals = new OriginalItems(origin.items);
  return replacement.flatMap((m) => messageToItems(m, originals));
}

/**
 * The fork's rollout for `replacement`: a session_meta line and one
 * `compacted` line carrying the replacement as its `replacement_history`.
 */
export function toCodexFork(
  replacement: readonly Message[],
  origin: CodexOrigin,
  options: { now?: Date; sessionId?: string } = {},
): CodexFork {
  const now = options.now ?? new Date();
  const sessionId = options.sessionId ?? uuidV7(now);
  const at = now.toISOString();
  const meta: Item = { ...origin.meta, id: sessionId, timestamp: at };
  // Session ids of the original that newer versions also record: they must name the fork, not the original.
  if ("session_id" in meta) meta.session_id = sessionId;
  delete meta.forked_from_id;
  delete meta.context_window;
  // A rollout born in Codex 0.169 is "paginated": every line carries an ordinal, and Codex refuses to resume
  // one whose records lack it ("final paginated rollout record ... is missing an ordinal"). The fork is
  // written in the legacy layout (no ordinals), which Codex resumes and goes on writing (checked).
  delete meta.history_mode;
  const checkpoint = replacement.find(isCheckpoint);
  const lines = [
    { timestamp: at, type: "session_meta", payload: meta },
    {
      timestamp: at,
      type: "compacted",
      payload: {
        message: checkpoint ? textOf(checkpoint.content) : "",
        replacement_history: toResponseItems(replacement, origin),
      },
    },
    { timestamp: at, type: "event_msg", payload: { type: "context_compacted" } },
    {
      timestamp: at,
      type: "event_msg",
      payload: { type: "user_message", message: lastInstruction(replacement), images: [] },
    },
  ];
  return {
    sessionId,
    text: lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
    fileName: codexRolloutName(sessionId, now),
  };
}
