/**
 * The Anthropic Messages wire format, as Claude Code streams it
 * (`POST /v1/messages?beta=true`, `stream: true`): one text answer as
 * server-sent events. A compaction request (Claude Code's `/compact`, whose
 * last user message asks for a summary) gets a canned
 * `<analysis>…</analysis><summary>…</summary>` answer.
 */
import type { ServerResponse } from "node:http";
import { sendEvents, type RecordedRequest } from "./fake-server.js";

export const CANNED_SUMMARY =
  "1. Primary Request and Intent: the fake model's canned summary for the real-client test.\n" +
  "2. Pending Tasks: none recorded by the fake.";

/** The text of the last user message of an Anthropic request body ("" when none). */
export function lastUserText(body: unknown): string {
  const messages = (body as { messages?: Array<{ role?: string; content?: unknown }> } | undefined)?.messages;
  const last = messages?.filter((m) => m.role === "user").at(-1);
  if (last === undefined) return "";
  if (typeof last.content === "string") return last.content;
  if (!Array.isArray(last.content)) return "";
  return last.content
    .map((b: { type?: string; text?: string }) =>
      b.type === "text" && typeof b.text === "string" ? b.text : "",
    )
    .join("\n");
}

/** True for Claude Code's own compaction request. */
export function isCompactionRequest(body: unknown): boolean {
  return /CRITICAL: Respond with TEXT ONLY|summary of the conversation/i.test(lastUserText(body));
}

export function answerAnthropic(req: RecordedRequest, res: ServerResponse): void {
  if (req.method !== "POST" || !req.path.startsWith("/v1/messages")) {
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: req.path } }));
    return;
  }
  if (req.path.startsWith("/v1/messages/count_tokens")) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ input_tokens: 1000 }));
    return;
  }
  const body = req.body as { model?: string } | undefined;
  const text = isCompactionRequest(req.body)
    ? `<analysis>fake analysis</analysis>\n<summary>\n${CANNED_SUMMARY}\n</summary>`
    : "Done (fake model).";
  const id = `msg_fake_${Date.now()}`;
  const usage = { input_tokens: 1000, output_tokens: 10 };
  sendEvents(res, [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          id,
          type: "message",
          role: "assistant",
          model: body?.model ?? "fake",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
        },
      },
    ],
    [
      "content_block_start",
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    ],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    [
      "message_delta",
      {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 10 },
      },
    ],
    ["message_stop", { type: "message_stop" }],
  ]);
}
