/**
 * The OpenAI Responses wire format, as Codex streams it (`POST /v1/responses`,
 * server-sent events: response.created, response.output_item.added,
 * response.output_text.delta, response.output_item.done, response.completed
 * with usage). Three kinds of request get three answers:
 *
 * - Codex's local compaction (a custom provider: the last user message is
 *   Codex's "CONTEXT CHECKPOINT COMPACTION" prompt): a canned summary text;
 * - Codex's remote compaction (the built-in `openai` provider: the last input
 *   item is `{"type":"compaction_trigger"}`): one `compaction` output item
 *   whose `encrypted_content` is the canned summary, base64 (opaque to Codex,
 *   as the real server's is);
 * - any other turn: a short text answer.
 *
 * Anything else (the built-in provider's WebSocket attempt, a GET) gets a 404,
 * after which Codex falls back to HTTPS on its own.
 */
import type { ServerResponse } from "node:http";
import { sendEvents, type RecordedRequest } from "./fake-server.js";

export const CODEX_CANNED_SUMMARY =
  "Progress: the fake model's canned summary for the real-client test.\nNext steps: none recorded by the fake.";

export const CODEX_ANSWER = "ok from the fake model";

type Item = Record<string, unknown>;

/** The `input` items of a Responses request body ([] when none). */
export function inputItems(body: unknown): Item[] {
  const input = (body as { input?: unknown } | undefined)?.input;
  return Array.isArray(input) ? (input as Item[]) : [];
}

/** The text of an input message item ("" for other items). */
export function itemText(item: Item | undefined): string {
  if (item === undefined || item.type !== "message" || !Array.isArray(item.content)) return "";
  return (item.content as Item[]).map((c) => (typeof c.text === "string" ? c.text : "")).join("");
}

export type ResponsesKind = "local-compaction" | "remote-compaction" | "turn";

/** What a Responses request asks for. */
export function requestKind(body: unknown): ResponsesKind {
  const last = inputItems(body).at(-1);
  if (last?.type === "compaction_trigger") return "remote-compaction";
  if (
    last?.role === "user" &&
    itemText(last).startsWith("You are performing a CONTEXT CHECKPOINT COMPACTION")
  )
    return "local-compaction";
  return "turn";
}

/**
 * `totalTokens`: the usage a turn's answer reports (default 110); a large one makes Codex's next turn
 * cross a small `model_auto_compact_token_limit`, so it compacts before it.
 */
export function answerResponses(
  req: RecordedRequest,
  res: ServerResponse,
  options: { totalTokens?: number } = {},
): void {
  if (req.method !== "POST" || !req.path.startsWith("/v1/responses")) {
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { type: "not_found", message: `${req.method} ${req.path}` } }));
    return;
  }
  const kind = requestKind(req.body);
  const n = (req.path.length + Date.now()).toString(36);
  const id = `resp_fake_${n}`;
  const item: Item =
    kind === "remote-compaction"
      ? {
          type: "compaction",
          id: `cmp_fake_${n}`,
          encrypted_content: Buffer.from(CODEX_CANNED_SUMMARY).toString("base64"),
        }
      : {
          type: "message",
          id: `msg_fake_${n}`,
          role: "assistant",
          content: [
            {
              type: "output_text",
              text: kind === "local-compaction" ? CODEX_CANNED_SUMMARY : CODEX_ANSWER,
              annotations: [],
            },
          ],
        };
  const text = kind === "remote-compaction" ? "" : ((item.content as Item[])[0]!.text as string);
  sendEvents(res, [
    ["response.created", { type: "response.created", response: { id } }],
    [
      "response.output_item.added",
      {
        type: "response.output_item.added",
        output_index: 0,
        item: item.type === "message" ? { ...item, content: [] } : item,
      },
    ],
    ...(text === ""
      ? []
      : ([
          [
            "response.output_text.delta",
            {
              type: "response.output_text.delta",
              output_index: 0,
              content_index: 0,
              item_id: item.id,
              delta: text,
            },
          ],
        ] as const)),
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    [
      "response.completed",
      {
        type: "response.completed",
        response: {
          id,
          usage: {
            input_tokens: (options.totalTokens ?? 110) - 10,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: 10,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: options.totalTokens ?? 110,
          },
        },
      },
    ],
  ]);
}
