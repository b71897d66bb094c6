/**
 * `summarizer: "extractive"`: the core answers each agent's own summarization
 * request itself (Claude Code on Anthropic Messages, Codex on Responses, pi on
 * Chat Completions; streamed and not), the answer parses as its wire's
 * format and holds the note of the history before the instruction; the proxy
 * writes it and the upstream never sees that request, while the others are
 * forwarded.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createGuardCore } from "../core.js";
import { EXTRACTIVE_ANALYSIS, readPiConversation, summarizedHistory } from "./answer.js";
import { readWire } from "../reading/wires.js";
import { startGuard } from "../server/server.js";
import type { GuardOutcome, WireRequest } from "../types.js";

const CC_PROMPT =
  "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\nYour task is to create a detailed summary of the conversation so far.";
const CODEX_PROMPT =
  "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.";
const PI_INSTRUCTIONS =
  "The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.";
/** pi 0.73.1's second request when its cut falls inside a turn (`generateTurnPrefixSummary`). */
const PI_TURN_PREFIX_INSTRUCTIONS =
  "This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.\n\nSummarize the prefix to provide context for the retained suffix:\n\n## Original Request\n[What did the user ask for in this turn?]";

/** pi 1.6's turn-prefix instructions (`TURN_PREFIX_SUMMARIZATION_PROMPT`), after its `# Instructions` heading. */
const PI16_TURN_PREFIX_INSTRUCTIONS =
  "The messages above are earlier context from an ongoing conversation. Later messages are stored separately and do not need to be reconstructed.\n\nCreate a concise checkpoint of the user's request and the progress shown above.\n\n## Original Request\n[What did the user ask for?]";

// ------------------------------------------------------------------ requests

function anthropicRequest(stream: boolean, last: string = CC_PROMPT): WireRequest {
  const body = {
    model: "claude-sonnet-x",
    stream,
    system: [{ type: "text", text: "You are Claude Code." }],
    tools: [{ name: "Bash", description: "run", input_schema: { type: "object" } }],
    messages: [
      { role: "user", content: [{ type: "text", text: "fix the failing parser test in src/parser.ts" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "t1", name: "Read", input: { file_path: "src/parser.ts" } },
          { type: "tool_use", id: "t2", name: "Bash", input: { command: "npm test -- parser" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "export function parse() {}" },
          { type: "tool_result", tool_use_id: "t2", content: "1 failing: parse handles empty input" },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "The empty-input case fails; fixing it." }] },
      { role: "user", content: [{ type: "text", text: last }] },
    ],
  };
  return {
    method: "POST",
    url: "/v1/messages?beta=true",
    headers: { "x-claude-code-session-id": "cc-1", "anthropic-version": "2023-06-01" },
    body: Buffer.from(JSON.stringify(body)),
  };
}

function responsesRequest(stream: boolean): WireRequest {
  const body = {
    model: "gpt-x",
    instructions: "You are Codex.",
    stream,
    tools: [{ type: "function", name: "shell" }],
    input: [
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "add a --verbose flag to cli/main.rs" }],
      },
      {
        type: "function_call",
        call_id: "c1",
        name: "shell",
        arguments: JSON.stringify({ command: ["bash", "-lc", "cargo test --all"] }),
      },
      { type: "function_call_output", call_id: "c1", output: "test result: ok. 12 passed" },
      {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "Tests pass; next the flag." }],
      },
      { type: "message", role: "user", content: [{ type: "input_text", text: CODEX_PROMPT }] },
    ],
  };
  return {
    method: "POST",
    url: "/v1/responses",
    headers: { session_id: "codex-1", originator: "codex_cli_rs" },
    body: Buffer.from(JSON.stringify(body)),
  };
}

const PI_CONVERSATION = [
  "[User]: rename the config loader in lib/config.ts",
  `[Assistant tool calls]: read(path="lib/config.ts"); bash(command="npm run build", timeout=60)`,
  "[Tool result]: export function loadConfig() {}",
  "[Tool result]: build ok\n\nno warnings",
  "[Assistant]: Renamed; the build passes.",
].join("\n\n");

function chatRequest(stream: boolean, instructions: string = PI_INSTRUCTIONS): WireRequest {
  const body = {
    model: "fake-model",
    stream,
    messages: [
      { role: "system", content: "You are a context summarization assistant." },
      {
        role: "user",
        content: `<conversation>\n${PI_CONVERSATION}\n</conversation>\n\n${instructions}`,
      },
    ],
  };
  return {
    method: "POST",
    url: "/v1/chat/completions",
    headers: {},
    body: Buffer.from(JSON.stringify(body)),
  };
}

// ------------------------------------------------------------------ reading the answers

const bodyOf = (o: GuardOutcome): Buffer => {
  const b = o.respond!.body;
  return Buffer.isBuffer(b) ? b : Buffer.concat(b as Buffer[]);
};

/** Server-sent events as [event name or null, parsed data (or the raw string when not JSON)]. */
function events(text: string): [string | null, unknown][] {
  assert.ok(text.endsWith("\n\n"), "the stream ends with a complete event");
  return text
    .split("\n\n")
    .filter((e) => e !== "")
    .map((e) => {
      const lines = e.split("\n");
      const ev = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? null;
      const data = lines
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n");
      assert.equal(lines.length, ev === null ? 1 : 2, `one data line per event: ${e.slice(0, 80)}`);
      let parsed: unknown = data;
      try {
        parsed = JSON.parse(data);
      } catch {
        // [DONE]
      }
      return [ev, parsed];
    });
}

type Rec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function answered(request: WireRequest): Promise<GuardOutcome> {
  const core = createGuardCore({ summarizer: "extractive" });
  const out = await core.handle(request);
  await core.close();
  assert.ok(out.respond, `answered itself: ${out.note}`);
  assert.equal(out.respond.status, 200);
  assert.equal(out.changed, false);
  return out;
}

// ------------------------------------------------------------------ the core

describe("summarizer extractive: the core answers the agent's summarization request", () => {
  test("Claude Code, streamed: Anthropic SSE with <analysis> and <summary> holding the history's files and commands", async () => {
    const out = await answered(anthropicRequest(true));
    assert.match(
      out.note ?? "",
      /^answered claude-code's summarization request itself \(extractive, \d+ chars\); it belongs to no session the guard holds$/,
    );
    assert.match(out.respond!.headers["content-type"]!, /^text\/event-stream/);
    const evs = events(bodyOf(out).toString("utf8"));
    assert.deepEqual(
      evs.map(([e]) => e),
      [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
      ],
    );
    for (const [e, d] of evs) assert.equal((d as Rec).type, e, "each event's data names its event");
    const start = evs[0]![1] as Rec;
    assert.equal(start.message.model, "claude-sonnet-x");
    assert.equal(start.message.role, "assistant");
    assert.deepEqual(start.message.content, []);
    assert.deepEqual((evs[1]![1] as Rec).content_block, { type: "text", text: "" });
    const delta = (evs[2]![1] as Rec).delta;
    assert.equal(delta.type, "text_delta");
    const md = evs[4]![1] as Rec;
    assert.equal(md.delta.stop_reason, "end_turn");
    assert.ok(md.usage.output_tokens > 0);
    const m = /^<analysis>(.*)<\/analysis>\n<summary>([\s\S]*)<\/summary>$/.exec(delta.text as string);
    assert.ok(m, delta.text);
    assert.equal(m[1], EXTRACTIVE_ANALYSIS);
    assert.match(m[2]!, /src\/parser\.ts/);
    assert.match(m[2]!, /npm test -- parser/);
    assert.match(m[2]!, /fix the failing parser test/);
    // The instruction is not part of the summarized history.
    assert.doesNotMatch(m[2]!, /CRITICAL: Respond with TEXT ONLY/);
  });

  test("Claude Code, not streamed: one Message object", async () => {
    const out = await answered(anthropicRequest(false));
    assert.equal(out.respond!.headers["content-type"], "application/json");
    const msg = JSON.parse(bodyOf(out).toString("utf8")) as Rec;
    assert.equal(msg.type, "message");
    assert.equal(msg.role, "assistant");
    assert.equal(msg.model, "claude-sonnet-x");
    assert.equal(msg.stop_reason, "end_turn");
    assert.equal(msg.content.length, 1);
    assert.equal(msg.content[0].type, "text");
    assert.match(
      msg.content[0].text,
      /^<analysis>[^<]*<\/analysis>\n<summary>[\s\S]*src\/parser\.ts[\s\S]*<\/summary>$/,
    );
    assert.ok(msg.usage.input_tokens > 0 && msg.usage.output_tokens > 0);
    assert.equal(Number(out.respond!.headers["content-length"]), bodyOf(out).length);
  });

  test("Codex, streamed: Responses SSE, the note as the assistant message's text", async () => {
    const out = await answered(responsesRequest(true));
    assert.match(out.note ?? "", /^answered codex's summarization request itself/);
    const evs = events(bodyOf(out).toString("utf8"));
    assert.deepEqual(
      evs.map(([e]) => e),
      [
        "response.created",
        "response.output_item.added",
        "response.output_text.delta",
        "response.output_item.done",
        "response.completed",
      ],
    );
    for (const [e, d] of evs) assert.equal((d as Rec).type, e);
    assert.deepEqual(
      evs.map(([, d]) => (d as Rec).sequence_number),
      [0, 1, 2, 3, 4],
    );
    const delta = evs[2]![1] as Rec;
    const done = (evs[3]![1] as Rec).item;
    assert.equal(done.type, "message");
    assert.equal(done.role, "assistant");
    assert.equal(delta.item_id, done.id);
    assert.equal(done.content[0].type, "output_text");
    assert.equal(done.content[0].text, delta.delta);
    const note = delta.delta as string;
    assert.doesNotMatch(note, /<summary>/, "Codex gets the note alone");
    assert.match(note, /cli\/main\.rs/);
    assert.match(note, /cargo test --all/);
    const completed = (evs[4]![1] as Rec).response;
    assert.equal(completed.status, "completed");
    assert.equal(completed.model, "gpt-x");
    assert.equal(completed.usage.total_tokens, completed.usage.input_tokens + completed.usage.output_tokens);
  });

  test("Codex, not streamed: one Response object", async () => {
    const out = await answered(responsesRequest(false));
    const r = JSON.parse(bodyOf(out).toString("utf8")) as Rec;
    assert.equal(r.object, "response");
    assert.equal(r.status, "completed");
    assert.equal(r.output.length, 1);
    assert.match(r.output[0].content[0].text, /cargo test --all/);
  });

  test("pi, streamed: Chat Completions chunks then [DONE]; the note of the <conversation> text", async () => {
    const out = await answered(chatRequest(true));
    assert.match(out.note ?? "", /^answered pi's summarization request itself/);
    const evs = events(bodyOf(out).toString("utf8"));
    assert.ok(
      evs.every(([e]) => e === null),
      "Chat chunks carry no event names",
    );
    assert.equal(evs.at(-1)![1], "[DONE]");
    const chunks = evs.slice(0, -1).map(([, d]) => d as Rec);
    for (const c of chunks) {
      assert.equal(c.object, "chat.completion.chunk");
      assert.equal(c.model, "fake-model");
    }
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason, "stop");
    assert.ok(chunks.at(-1)!.usage.total_tokens > 0);
    assert.match(text, /lib\/config\.ts/);
    assert.match(text, /npm run build/);
    assert.doesNotMatch(text, /<conversation>/);
  });

  test("pi, not streamed: one chat.completion", async () => {
    const out = await answered(chatRequest(false));
    const r = JSON.parse(bodyOf(out).toString("utf8")) as Rec;
    assert.equal(r.object, "chat.completion");
    assert.equal(r.choices[0].message.role, "assistant");
    assert.equal(r.choices[0].finish_reason, "stop");
    assert.match(r.choices[0].message.content, /lib\/config\.ts/);
  });

  test("pi's turn-prefix request (its cut inside a turn) is answered too, with the note of that prefix", async () => {
    // pi 0.73.1 sends it beside the history's request when keepRecentTokens cuts into a turn; it went upstream.
    const out = await answered(chatRequest(true, PI_TURN_PREFIX_INSTRUCTIONS));
    assert.match(out.note ?? "", /^answered pi's summarization request itself/);
    const text = events(bodyOf(out).toString("utf8"))
      .slice(0, -1)
      .map(([, d]) => (d as Rec).choices[0]?.delta?.content ?? "")
      .join("");
    assert.match(text, /lib\/config\.ts/);
    assert.doesNotMatch(text, /PREFIX of a turn/);
  });

  test("pi 1.6's turn-prefix request (# Conversation … # Instructions) is recognised and answered with the note of that prefix", async () => {
    const req = chatRequest(true);
    const body = JSON.parse(req.body.toString("utf8")) as { messages: { content: string }[] };
    body.messages[1]!.content = `# Conversation\n${PI_CONVERSATION}\n\n# Instructions\n${PI16_TURN_PREFIX_INSTRUCTIONS}`;
    const out = await answered({ ...req, body: Buffer.from(JSON.stringify(body)) });
    assert.match(out.note ?? "", /^answered pi's summarization request itself/);
    const text = events(bodyOf(out).toString("utf8"))
      .slice(0, -1)
      .map(([, d]) => (d as Rec).choices[0]?.delta?.content ?? "")
      .join("");
    assert.match(text, /lib\/config\.ts/);
    assert.doesNotMatch(text, /# Instructions|earlier context from an ongoing conversation/);
  });

  test("results beside the instruction in its message stay in the summarized history", () => {
    const items = readWire(
      "anthropic-messages",
      JSON.parse(anthropicRequest(false).body.toString("utf8")) as Record<string, unknown>,
    ).items;
    const last = items.at(-1)!;
    last.message = {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "t9", content: "deploy.sh finished" },
        { type: "text", text: CC_PROMPT },
      ],
    };
    const ms = summarizedHistory(items, "claude-code");
    assert.equal(ms[0]!.role, "user");
    assert.deepEqual(ms.at(-1), {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "t9", content: "deploy.sh finished" }],
    });
    assert.ok(!JSON.stringify(ms).includes("CRITICAL"));
  });

  test("pi's serialized conversation reads back into paired calls and results", () => {
    const ms = readPiConversation(
      `<conversation>\n${PI_CONVERSATION}\n</conversation>\n\n<previous-summary>\n## Goal\nold goal\n</previous-summary>\n\n${PI_INSTRUCTIONS}`,
    );
    assert.equal(ms.length, 5);
    assert.match(JSON.stringify(ms[0]), /compacted into the following summary/);
    assert.deepEqual(ms[2]!.content, [
      { type: "tool_use", id: "pi_call_1", name: "read", input: { path: "lib/config.ts" } },
      { type: "tool_use", id: "pi_call_2", name: "bash", input: { command: "npm run build", timeout: 60 } },
    ]);
    assert.deepEqual(ms[3]!.content, [
      { type: "tool_result", tool_use_id: "pi_call_1", content: "export function loadConfig() {}" },
      { type: "tool_result", tool_use_id: "pi_call_2", content: "build ok\n\nno warnings" },
    ]);
    assert.equal(ms[4]!.role, "assistant");
  });

  test("without the option, and for requests that are not a summarization request: nothing is answered", async () => {
    const plain = createGuardCore();
    const a = await plain.handle(anthropicRequest(true));
    assert.equal(a.respond, undefined);
    assert.match(a.note ?? "", /passed through/);
    await plain.close();
    const core = createGuardCore({ summarizer: "extractive" });
    const turn = await core.handle(anthropicRequest(true, "now run the linter"));
    assert.equal(turn.respond, undefined);
    await core.close();
  });
});

// ------------------------------------------------------------------ the proxy

function post(base: string, r: WireRequest): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(r.url, base),
      {
        method: "POST",
        headers: { "content-type": "application/json", ...(r.headers as Record<string, string>) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(r.body);
  });
}

describe("summarizer extractive: the proxy", { timeout: 30_000 }, () => {
  test("the summarization request is answered without the upstream; other requests are forwarded", async () => {
    const seen: string[] = [];
    const upstream = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        seen.push(Buffer.concat(chunks).toString("utf8"));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            type: "message",
            role: "assistant",
            content: [{ type: "text", text: "upstream" }],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const { port } = upstream.address() as AddressInfo;
    const lines: string[] = [];
    const guard = await startGuard({
      upstream: `http://127.0.0.1:${port}`,
      summarizer: "extractive",
      log: (l) => lines.push(l),
    });
    try {
      const turn = await post(guard.url, anthropicRequest(true, "now run the linter"));
      assert.equal(turn.status, 200);
      assert.match(turn.body, /upstream/);
      assert.equal(seen.length, 1);

      const summ = await post(guard.url, anthropicRequest(true));
      assert.equal(summ.status, 200);
      assert.equal(seen.length, 1, "the upstream received no summarization request");
      const evs = events(summ.body);
      assert.equal(evs[0]![0], "message_start");
      assert.equal(evs.at(-1)![0], "message_stop");
      assert.match(summ.body, /src\/parser\.ts/);
      assert.ok(
        lines.some((l) =>
          /^guard: answered claude-code's summarization request itself \(extractive, \d+ chars\)$/.test(l),
        ),
        lines.join("\n"),
      );

      const codex = await post(guard.url, responsesRequest(false));
      assert.equal(JSON.parse(codex.body).object, "response");
      const pi = await post(guard.url, chatRequest(true));
      assert.match(pi.body, /data: \[DONE\]\n\n$/);
      assert.equal(seen.length, 1, "nor Codex's nor pi's");
      assert.ok(!seen.some((b) => b.includes("CRITICAL: Respond with TEXT ONLY")));
    } finally {
      await guard.close();
      await new Promise<void>((resolve) => {
        upstream.closeAllConnections();
        upstream.close(() => resolve());
      });
    }
  });

  test("without --summarizer, the summarization request goes to the upstream", async () => {
    let count = 0;
    const upstream = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        count++;
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{}");
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const { port } = upstream.address() as AddressInfo;
    const guard = await startGuard({ upstream: `http://127.0.0.1:${port}`, log: () => {} });
    try {
      const r = await post(guard.url, anthropicRequest(true));
      assert.equal(r.body, "{}");
      assert.equal(count, 1);
    } finally {
      await guard.close();
      await new Promise<void>((resolve) => {
        upstream.closeAllConnections();
        upstream.close(() => resolve());
      });
    }
  });
});
