/**
 * `--summarizer extractive`: the guard answers an agent's own summarization
 * request itself, offline, with compact-safe's extractive note of the history
 * the request carries, in the form the agent expects back, on the wire it
 * asked on:
 *
 * - Anthropic Messages (Claude Code): `<analysis>…</analysis>\n<summary>NOTE</summary>`
 *   as one text block, as server-sent events (message_start,
 *   content_block_start, content_block_delta, content_block_stop,
 *   message_delta with `stop_reason: end_turn` and usage, message_stop) when
 *   the request streams, else one Message object;
 * - OpenAI Responses (Codex): the note as one assistant message, as events
 *   (response.created, response.output_item.added, response.output_text.delta,
 *   response.output_item.done, response.completed with usage) or one Response;
 * - Chat Completions (pi): the note as chunks then `[DONE]`, or one
 *   chat.completion.
 *
 * The shapes follow the provider SDKs' types (`@anthropic-ai/sdk`
 * RawMessageStreamEvent / Message, `openai` ResponseStreamEvent / Response,
 * ChatCompletionChunk / ChatCompletion) and what the real clients accept from
 * the project's fakes (test/clients). Pure: the body is built from the
 * request alone (ids derive from the note's hash, times from `now`).
 */
import { createHash } from "node:crypto";
import type { Block, Message } from "../../model/types.js";
import { isText } from "../../model/blocks.js";
import { estimateTokens } from "../../engine/tokens.js";
import { offlineSummary } from "../../summarizers/factory.js";
import type { GuardResponse, GuardWire } from "../types.js";
import type { HistoryItem, WireHistory } from "../reading/history.js";
import { PI_CONVERSATION_HEADING, PI_INSTRUCTIONS_HEADING } from "../reading/detect.js";
import { outputTextPart } from "../../wire/responses.js";

/** The `<analysis>` Claude Code's prompt asks for first (it drops it from the summary it keeps). */
export const EXTRACTIVE_ANALYSIS = "compact-safe extractive checkpoint";

/** pi's marker of an earlier summary (so that the note folds it in as an earlier checkpoint). */
const PI_SUMMARY_MARKER =
  "The conversation history before this point was compacted into the following summary:\n\n";

// ---------------------------------------------------------------------------------------------------------
// The history a summarization request asks to summarize.

/**
 * The conversation before the summarization instruction: the request's
 * history less its system prompt and its last user message (the
 * instruction; tool results in that message stay). For pi, whose request carries the conversation as text in
 * `<conversation>` tags, that text read back into messages.
 */
export function summarizedHistory(items: readonly HistoryItem[], agent: string): Message[] {
  const conv = items.map((i) => i.message).filter((m) => m.role !== "system");
  let last = conv.length - 1;
  while (last >= 0 && conv[last]!.role !== "user") last--;
  if (last < 0) return conv;
  if (agent === "pi") {
    const text = conv[last]!.content.filter(isText)
      .map((b) => b.text)
      .join("\n");
    const parsed = readPiConversation(text);
    if (parsed.length > 0) return [...conv.slice(0, last), ...parsed];
  }
  // The instruction's own message goes; results it carries beside it (a turn that ended in a tool call) stay.
  const results = conv[last]!.content.filter((b) => b.type === "tool_result");
  return results.length > 0
    ? [...conv.slice(0, last), { role: "user", content: results }]
    : conv.slice(0, last);
}

/**
 * Where pi's serialized conversation is in its summarization prompt: between
 * `<conversation>` tags (0.73, 1.x), or, in pi 1.6's turn-prefix request,
 * under `# Conversation` up to `# Instructions`. [start, end), or undefined.
 */
function piConversationSpan(text: string): [number, number] | undefined {
  const open = text.indexOf("<conversation>\n");
  const close = text.lastIndexOf("\n</conversation>");
  if (open >= 0 && close >= open) return [open + "<conversation>\n".length, close];
  if (!text.startsWith(PI_CONVERSATION_HEADING)) return undefined;
  const end = text.lastIndexOf(PI_INSTRUCTIONS_HEADING);
  return end < PI_CONVERSATION_HEADING.length ? undefined : [PI_CONVERSATION_HEADING.length, end];
}

const PI_TAGS = [
  "[User]: ",
  "[Assistant thinking]: ",
  "[Assistant]: ",
  "[Assistant tool calls]: ",
  "[Tool result]: ",
];

/**
 * pi's serialized conversation (`serializeConversation`: `[User]: …`,
 * `[Assistant]: …`, `[Assistant thinking]: …`, `[Assistant tool calls]:
 * name(k=JSON, …); …`, `[Tool result]: …`, joined by blank lines) and its
 * `<previous-summary>`, as messages. Results are paired with the calls before
 * them in order; a call left without a result stays a call.
 */
export function readPiConversation(text: string): Message[] {
  const span = piConversationSpan(text);
  if (span === undefined) return [];
  const [start, close] = span;
  const body = text.slice(start, close);
  const out: Message[] = [];
  const prev = /<previous-summary>\n([\s\S]*?)\n<\/previous-summary>/.exec(text.slice(close));
  if (prev) out.push({ role: "user", content: [{ type: "text", text: `${PI_SUMMARY_MARKER}${prev[1]}` }] });

  // Split at blank lines followed by a tag (a part's own text may hold blank lines).
  const parts: { tag: string; text: string }[] = [];
  for (const chunk of body.split(
    /\n\n(?=\[(?:User|Assistant thinking|Assistant|Assistant tool calls|Tool result)\]: )/,
  )) {
    const tag = PI_TAGS.find((t) => chunk.startsWith(t));
    if (tag) parts.push({ tag, text: chunk.slice(tag.length) });
    else if (parts.length > 0) parts[parts.length - 1]!.text += `\n\n${chunk}`;
  }
  const pending: string[] = [];
  let n = 0;
  const assistant = (): Block[] => {
    const m = out[out.length - 1];
    if (m?.role === "assistant") return m.content;
    const content: Block[] = [];
    out.push({ role: "assistant", content });
    return content;
  };
  for (const p of parts) {
    switch (p.tag) {
      case "[User]: ":
        out.push({ role: "user", content: [{ type: "text", text: p.text }] });
        break;
      case "[Assistant thinking]: ":
        assistant().push({ type: "thinking", thinking: p.text });
        break;
      case "[Assistant]: ":
        assistant().push({ type: "text", text: p.text });
        break;
      case "[Assistant tool calls]: ": {
        const blocks = assistant();
        for (const call of splitCalls(p.text)) {
          const id = `pi_call_${++n}`;
          pending.push(id);
          blocks.push({ type: "tool_use", id, name: call.name, input: call.input });
        }
        break;
      }
      case "[Tool result]: ": {
        const id = pending.shift();
        const block: Block =
          id === undefined
            ? { type: "text", text: p.text }
            : { type: "tool_result", tool_use_id: id, content: p.text };
        const m = out[out.length - 1];
        if (m?.role === "user" && m.content.every((b) => b.type === "tool_result") && id !== undefined)
          m.content.push(block);
        else out.push({ role: "user", content: [block] });
        break;
      }
    }
  }
  return out;
}

/** The end of the JSON value starting at `i` (a string, an array or object, or a literal up to `, ` or `)`). */
function jsonEnd(s: string, i: number): number {
  if (s[i] === '"') {
    for (let j = i + 1; j < s.length; j++) {
      if (s[j] === "\\") j++;
      else if (s[j] === '"') return j + 1;
    }
    return s.length;
  }
  if (s[i] === "{" || s[i] === "[") {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const c = s[j];
      if (c === '"') j = jsonEnd(s, j) - 1;
      else if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return s.length;
  }
  let j = i;
  while (j < s.length && s[j] !== "," && s[j] !== ")" && s[j] !== ";") j++;
  return j;
}

/** `name(k=JSON, …); name2(…)` as calls with their arguments (a value that does not parse stays text). */
function splitCalls(text: string): { name: string; input: Record<string, unknown> }[] {
  const calls: { name: string; input: Record<string, unknown> }[] = [];
  let i = 0;
  while (i < text.length) {
    const m = /^\s*([^\s(;]+)\(/.exec(text.slice(i));
    if (!m) break;
    const name = m[1]!;
    i += m[0].length;
    const input: Record<string, unknown> = {};
    while (i < text.length && text[i] !== ")") {
      const k = /^\s*([^=,)\s]+)=/.exec(text.slice(i));
      if (!k) break;
      i += k[0].length;
      const end = jsonEnd(text, i);
      const raw = text.slice(i, end);
      try {
        input[k[1]!] = JSON.parse(raw);
      } catch {
        input[k[1]!] = raw;
      }
      i = end;
      if (text.startsWith(", ", i)) i += 2;
    }
    calls.push({ name, input });
    i++; // ")"
    if (text.startsWith("; ", i)) i += 2;
  }
  return calls;
}

// ---------------------------------------------------------------------------------------------------------
// The answer on each wire.

/** The note and the text the agent gets (Claude Code's `<analysis>` + `<summary>`; the note alone otherwise). */
export function extractiveText(messages: readonly Message[], agent: string): { note: string; text: string } {
  const note = offlineSummary("extractive", { messages });
  const text =
    agent === "claude-code"
      ? `<analysis>${EXTRACTIVE_ANALYSIS}</analysis>\n<summary>${note}</summary>`
      : note;
  return { note, text };
}

const sse = (event: string | null, data: unknown): Buffer =>
  Buffer.from(
    `${event === null ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`,
    "utf8",
  );

const json = (doc: unknown): GuardResponse => {
  const body = Buffer.from(JSON.stringify(doc), "utf8");
  return {
    status: 200,
    headers: { "content-type": "application/json", "content-length": String(body.length) },
    body,
  };
};

const stream = (chunks: Buffer[]): GuardResponse => ({
  status: 200,
  headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
  body: chunks,
});

function tokens(messages: readonly Message[]): number {
  try {
    return estimateTokens(messages);
  } catch {
    return 0;
  }
}

/** What every wire's answer is made of. */
interface AnswerParts {
  readonly text: string;
  readonly model: string;
  readonly streamed: boolean;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly hash: string;
  readonly now: number;
}

/** The answer on the Anthropic Messages wire. */
function anthropicAnswer(parts: AnswerParts): GuardResponse {
  const { text, model, streamed, inputTokens, outputTokens, hash } = parts;
  const id = `msg_cs_${hash}`;
  if (!streamed)
    return json({
      id,
      type: "message",
      role: "assistant",
      model,
      content: [{ type: "text", text }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: inputTokens, output_tokens: outputTokens },
    });
  return stream([
    sse("message_start", {
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: 1 },
      },
    }),
    sse("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
    sse("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text },
    }),
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: outputTokens },
    }),
    sse("message_stop", { type: "message_stop" }),
  ]);
}

/** The answer on the OpenAI Responses wire. */
function responsesAnswer(parts: AnswerParts): GuardResponse {
  const { text, model, streamed, inputTokens, outputTokens, hash, now } = parts;
  const id = `resp_cs_${hash}`;
  const itemId = `msg_cs_${hash}`;
  const created = Math.floor(now / 1000);
  const content = [outputTextPart(text)];
  const item = { type: "message", id: itemId, status: "completed", role: "assistant", content };
  const usage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
  const response = (status: "in_progress" | "completed", output: unknown[]) => ({
    id,
    object: "response",
    created_at: created,
    status,
    model,
    output,
    error: null,
    incomplete_details: null,
    ...(status === "completed" ? { usage } : {}),
  });
  if (!streamed) return json(response("completed", [item]));
  let seq = 0;
  return stream([
    sse("response.created", {
      type: "response.created",
      sequence_number: seq++,
      response: response("in_progress", []),
    }),
    sse("response.output_item.added", {
      type: "response.output_item.added",
      sequence_number: seq++,
      output_index: 0,
      item: { ...item, status: "in_progress", content: [] },
    }),
    sse("response.output_text.delta", {
      type: "response.output_text.delta",
      sequence_number: seq++,
      output_index: 0,
      content_index: 0,
      item_id: itemId,
      delta: text,
      logprobs: [],
    }),
    sse("response.output_item.done", {
      type: "response.output_item.done",
      sequence_number: seq++,
      output_index: 0,
      item,
    }),
    sse("response.completed", {
      type: "response.completed",
      sequence_number: seq++,
      response: response("completed", [item]),
    }),
  ]);
}

/** The answer on the OpenAI Chat Completions wire. */
function chatAnswer(parts: AnswerParts): GuardResponse {
  const { text, model, streamed, inputTokens, outputTokens, hash, now } = parts;
  const id = `chatcmpl-cs-${hash}`;
  const created = Math.floor(now / 1000);
  const usage = {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
  };
  if (!streamed)
    return json({
      id,
      object: "chat.completion",
      created,
      model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: text, refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage,
    });
  const base = { id, object: "chat.completion.chunk", created, model };
  return stream([
    sse(null, {
      ...base,
      choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
    }),
    sse(null, { ...base, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] }),
    sse(null, { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
    sse(null, { ...base, choices: [], usage }),
    sse(null, "[DONE]"),
  ]);
}

/**
 * The answer to a summarization request on `wire`: `text` as the model's
 * whole answer. `inputTokens` is reported as the usage's input (the estimate
 * of the history), the output as the text's length over four.
 */
export function answerOn(
  wire: GuardWire,
  doc: Record<string, unknown>,
  text: string,
  inputTokens: number,
  now: number,
): GuardResponse {
  const model = typeof doc.model === "string" ? doc.model : "compact-safe-extractive";
  const streamed = doc.stream === true;
  const outputTokens = Math.max(1, Math.ceil(text.length / 4));
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 24);
  const parts: AnswerParts = { text, model, streamed, inputTokens, outputTokens, hash, now };
  switch (wire) {
    case "anthropic-messages":
      return anthropicAnswer(parts);
    case "openai-responses":
      return responsesAnswer(parts);
    case "openai-chat":
      return chatAnswer(parts);
  }
}

/** The whole answer to an agent's summarization request: the note and the response on the request's wire. */
export function extractiveAnswer(
  history: WireHistory,
  agent: string,
  now: number = Date.now(),
): { note: string; text: string; response: GuardResponse } {
  const messages = summarizedHistory(history.items, agent);
  const { note, text } = extractiveText(messages, agent);
  return { note, text, response: answerOn(history.wire, history.doc, text, tokens(messages), now) };
}
