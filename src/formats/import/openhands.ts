/**
 * OpenHands trajectories: a JSON array of events (or `{ trajectory: [...] }`,
 * `{ history: [...] }`), each an action or an observation:
 * `{ id, timestamp, source, message, action, args, observation, content,
 * extras, cause, tool_call_metadata }`. For the report each event is one
 * "message" (numbered from 1).
 *
 * - a user `message` action: user text (`args.content`);
 * - an agent `message` action, a `think` action made without a tool call,
 *   and `finish` (which no observation answers): assistant text;
 * - the `system` action: the system message (`args.content`);
 * - any other action made by a tool call (`tool_call_metadata`): a `tool_use`
 *   with the call's id and function name, its input parsed from the raw model
 *   response's `tool_calls` (else `args`), and the response's text before it;
 *   actions of one model response share one assistant message;
 * - a tool action without `tool_call_metadata` (no function calling): a
 *   `tool_use` with the stable id `oh-<event id>`, named by the action;
 * - an observation answering such a call (`tool_call_metadata.tool_call_id`,
 *   else `cause`): its `tool_result` (`error` observations, and commands that
 *   exited non-zero, are `is_error`); results in a row share one user message;
 * - an `error` observation answering no call: user text (OpenHands sends it
 *   to the model as a user message);
 * - anything else (agent state changes, recalls, null events): skipped by
 *   design, with the event's kind.
 */
import type { Block, Message } from "../../model/index.js";
import { parseArguments } from "../../wire/common.js";
import { isRecord } from "../common/lines.js";
import { ReportBuilder } from "../common/report.js";
import { linearImport, parseJsonDocument } from "../common/source-tree.js";
import { SourceLines, type ToolIdOptions } from "../../model/tool-ids.js";
import { FormatError, type ImportResult } from "../common/types.js";

type Event = Record<string, unknown>;

/** True for an OpenHands event: an `action` or an `observation`, never a chat message's `role`. */
export function isOpenHandsEvent(v: unknown): boolean {
  return (
    isRecord(v) &&
    v.role === undefined &&
    (typeof v.action === "string" || typeof v.observation === "string") &&
    ("source" in v || "id" in v || "cause" in v)
  );
}

/** The array of a trajectory document: the document itself, or its `trajectory` / `history` field. */
function trajectoryArray(doc: unknown): unknown[] | undefined {
  if (Array.isArray(doc)) return doc;
  if (isRecord(doc) && Array.isArray(doc.trajectory)) return doc.trajectory;
  if (isRecord(doc) && Array.isArray(doc.history)) return doc.history;
  return undefined;
}

/** The events of a trajectory document (an array, or its `trajectory` / `history` wrapper), if it is one. */
export function openHandsEvents(doc: unknown): unknown[] | undefined {
  const arr = trajectoryArray(doc);
  if (!arr || arr.length === 0) return undefined;
  const events = arr.filter(isOpenHandsEvent).length;
  // Every record an event (a stray broken item is reported, not a reason to miss the format).
  return events > 0 && events >= arr.length - 1 ? arr : undefined;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

interface ToolCallMeta {
  id: string;
  name: string;
  responseId?: string;
  /** The raw model message: its text and tool_calls. */
  message?: Record<string, unknown>;
}

function callMeta(e: Event): ToolCallMeta | undefined {
  const m = e.tool_call_metadata;
  if (!isRecord(m) || typeof m.tool_call_id !== "string") return undefined;
  const resp = isRecord(m.model_response) ? m.model_response : undefined;
  const choice = resp && Array.isArray(resp.choices) ? resp.choices[0] : undefined;
  const message = isRecord(choice) && isRecord(choice.message) ? choice.message : undefined;
  return {
    id: m.tool_call_id,
    name: str(m.function_name) ?? str(e.action) ?? "",
    responseId: resp ? str(resp.id) : undefined,
    message,
  };
}

/** The call's arguments from the raw response's tool_calls, else the event's args. */
function callInput(meta: ToolCallMeta, e: Event): unknown {
  const calls = meta.message && Array.isArray(meta.message.tool_calls) ? meta.message.tool_calls : [];
  for (const tc of calls) {
    if (isRecord(tc) && tc.id === meta.id && isRecord(tc.function))
      return parseArguments(tc.function.arguments);
  }
  return isRecord(e.args) ? e.args : {};
}

/** The text of a raw model message's content (a string or text parts). */
function responseText(message: Record<string, unknown> | undefined): string | undefined {
  const c = message?.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c))
    return c
      .filter((p) => isRecord(p) && typeof p.text === "string")
      .map((p) => (p as { text: string }).text)
      .join("\n");
  return undefined;
}

function observationError(e: Event): boolean {
  if (e.observation === "error") return true;
  const extras = isRecord(e.extras) ? e.extras : {};
  const md = isRecord(extras.metadata) ? extras.metadata : {};
  const code = typeof md.exit_code === "number" ? md.exit_code : extras.exit_code;
  return e.observation === "run" && typeof code === "number" && code > 0;
}

/** Actions that are conversation text, not tools, when no tool call made them. */
const TEXT_ACTIONS = new Set(["message", "think", "finish"]);
/** Events that are the agent's bookkeeping, not the conversation. */
const SKIPPED_ACTIONS: Record<string, string> = {
  change_agent_state: "agent state change",
  recall: "memory recall request (its context arrives as a recall observation)",
  null: "null action",
  condensation: "OpenHands' own condensation event",
  condensation_request: "OpenHands' own condensation request",
};

/** The trajectory's events in order, as messages. */
class OpenHandsImport {
  readonly lines = new SourceLines("message");
  readonly out: { line: number; message: Message }[] = [];
  /** Event id → tool call id, for observations that name their action by `cause`. */
  readonly callOfEvent = new Map<string, string>();
  readonly calls = new Set<string>();
  lastResponse: { id: string; message: Message } | undefined;

  constructor(readonly rb: ReportBuilder) {}

  push(line: number, message: Message): void {
    this.lines.blocks(message.content, line);
    this.out.push({ line, message });
  }

  readEvent(raw: unknown, i: number): void {
    const line = i + 1;
    if (!isRecord(raw) || (typeof raw.action !== "string" && typeof raw.observation !== "string")) {
      this.rb.line("invalid");
      this.rb.skip(line, `events[${i}]: not an OpenHands event (no "action" or "observation")`, false);
      return;
    }
    const e = raw;
    const meta: Record<string, unknown> = { source_index: i };
    if (e.id !== undefined) meta.event_id = e.id;
    if (typeof e.timestamp === "string") meta.timestamp = e.timestamp;
    if (typeof e.action === "string") this.action(e, e.action, i, meta);
    else this.observation(e, i, meta);
  }

  /** An action: a system prompt, the user's message, the agent's text, or a tool call. */
  action(e: Event, action: string, i: number, meta: Record<string, unknown>): void {
    const line = i + 1;
    const args = isRecord(e.args) ? e.args : {};
    this.rb.line(`action:${action}`);
    const tc = callMeta(e);
    if (action === "system") {
      const content = str(args.content) ?? str(e.message) ?? "";
      this.push(line, { role: "system", content: [{ type: "text", text: content }], meta });
    } else if (action === "message" && e.source === "user") {
      const content: Block[] = [{ type: "text", text: str(args.content) ?? str(e.message) ?? "" }];
      const images = Array.isArray(args.image_urls) ? args.image_urls : [];
      for (const url of images)
        if (typeof url === "string") content.push({ type: "image_url", image_url: { url } });
      this.push(line, { role: "user", content, meta });
      this.lastResponse = undefined;
    } else if (action === "finish" || (!tc && TEXT_ACTIONS.has(action))) {
      const t =
        action === "finish"
          ? (str(args.final_thought) ?? str(args.thought) ?? str(e.message) ?? "")
          : action === "think"
            ? (str(args.thought) ?? str(e.message) ?? "")
            : (str(args.content) ?? str(e.message) ?? "");
      // finish ends the run: no observation answers it, so even when a tool call made it, it is the final text.
      const m = tc ? { ...meta, action, tool_call_id: tc.id } : meta;
      this.push(line, { role: "assistant", content: [{ type: "text", text: t }], meta: m });
      this.lastResponse = undefined;
    } else if (tc || !(action in SKIPPED_ACTIONS)) this.toolCall(e, action, tc, args, line, meta);
    else {
      this.rb.skip(line, `events[${i}]: ${SKIPPED_ACTIONS[action]} (not part of the conversation)`, true);
      return;
    }
    this.rb.imported();
  }

  /** A tool call: a new assistant message, or one more call of the model response the last message is. */
  toolCall(
    e: Event,
    action: string,
    tc: ToolCallMeta | undefined,
    args: Record<string, unknown>,
    line: number,
    meta: Record<string, unknown>,
  ): void {
    const id = tc?.id ?? `oh-${String(e.id ?? line)}`;
    const use: Block = {
      type: "tool_use",
      id,
      name: tc?.name ?? action,
      input: tc ? callInput(tc, e) : args,
    };
    if (e.id !== undefined) this.callOfEvent.set(String(e.id), id);
    this.calls.add(id);
    this.lines.blocks([use], line);
    const prev = this.out[this.out.length - 1];
    const last = this.lastResponse;
    if (tc?.responseId !== undefined && last?.id === tc.responseId && prev?.message === last.message) {
      // Another call of the same model response: the same assistant message.
      last.message.content.push(use);
      return;
    }
    const content: Block[] = [];
    const said = tc ? responseText(tc.message) : str(args.thought);
    if (said !== undefined && said.trim() !== "") content.push({ type: "text", text: said });
    else if (tc && typeof args.thought === "string" && args.thought.trim() !== "")
      content.push({ type: "text", text: args.thought });
    content.push(use);
    const message: Message = {
      role: "assistant",
      content,
      meta: {
        ...meta,
        action,
        ...(tc?.responseId !== undefined ? { response_id: tc.responseId } : {}),
      },
    };
    this.push(line, message);
    this.lastResponse = tc?.responseId !== undefined ? { id: tc.responseId, message } : undefined;
  }

  /** An observation: the result of the call it answers (joined to the results before it), an error, or skipped. */
  observation(e: Event, i: number, meta: Record<string, unknown>): void {
    const line = i + 1;
    const observation = String(e.observation);
    this.rb.line(`observation:${observation}`);
    const tc = callMeta(e);
    const answers =
      tc && this.calls.has(tc.id)
        ? tc.id
        : e.cause !== undefined && e.cause !== null
          ? this.callOfEvent.get(String(e.cause))
          : undefined;
    const content = str(e.content) ?? (e.content === undefined ? "" : JSON.stringify(e.content));
    if (answers !== undefined) {
      const result: Block = { type: "tool_result", tool_use_id: answers, content };
      if (observationError(e)) (result as { is_error?: boolean }).is_error = true;
      this.lines.blocks([result], line);
      const prev = this.out[this.out.length - 1];
      if (
        prev &&
        prev.message.role === "user" &&
        prev.message.content.every((b) => b.type === "tool_result")
      ) {
        prev.message.content.push(result);
        (prev.message.meta!.merged_indexes as number[]).push(i);
      } else this.push(line, { role: "user", content: [result], meta: { ...meta, merged_indexes: [i] } });
      this.calls.delete(answers);
      this.rb.imported();
      return;
    }
    if (observation === "error") {
      this.push(line, {
        role: "user",
        content: [{ type: "text", text: content }],
        meta: { ...meta, observation },
      });
      this.lastResponse = undefined;
      this.rb.imported();
      return;
    }
    const why =
      observation === "agent_state_changed"
        ? "agent state change"
        : observation === "recall"
          ? "memory recall (workspace and repository context)"
          : observation === "null"
            ? "null observation"
            : `${observation} observation answering no tool call`;
    this.rb.skip(line, `events[${i}]: ${why} (not part of the conversation)`, true);
  }
}

export function importOpenHands(text: string, file: string, options: ToolIdOptions = {}): ImportResult {
  const doc = parseJsonDocument(text, file);
  const arr = trajectoryArray(doc);
  if (!arr)
    throw new FormatError(
      `${file}: expected an OpenHands trajectory: an array of events, or { trajectory: [...] }`,
    );
  const rb = new ReportBuilder("openhands", file);
  const state = new OpenHandsImport(rb);
  arr.forEach((raw, i) => state.readEvent(raw, i));
  // Event timestamps (local, without a zone) stay in each message's meta; the journal's times are the import's.
  return linearImport(rb, state.out, "openhands", {}, state.lines, options);
}
