/**
 * The recall server (`compact-safe mcp`) in the real agents: Claude Code
 * 2.1.328 and Codex 0.169.0 run with the server configured (Claude Code:
 * `--mcp-config FILE --strict-mcp-config`, the tool allowed with
 * `--allowedTools`; Codex: `[mcp_servers.compact-safe]` in its config.toml,
 * with `required = true`, without which `codex exec` may send its first
 * request before the server has listed its tools), the server run from this
 * checkout's built CLI with this Node, on the session compact-safe compacted
 * (the original: the fork holds the stubs, not what they replaced). For each
 * chosen corpus session:
 *
 * - compact-safe writes the session back as a fork, prune-only
 *   (`compact --fork --prune-only`), so the fork's old tool results are stubs
 *   ending `recall tool:ID`;
 * - the agent resumes the fork (`claude -p continue --resume ID`,
 *   `codex exec resume ID continue`) against a fake upstream on 127.0.0.1
 *   that finds the stubs in the request it receives and answers with a call
 *   of the server's recall tool (under the name the agent offers it: found in
 *   the request's tools: Claude Code's `mcp__compact-safe__recall`, which it
 *   defers until its `ToolSearch` tool has loaded it, so the fake calls that
 *   first; Codex's `recall` in the namespace `mcp__compact_safe`) on the ref
 *   of one of them: the largest, then one whose original holds a secret when
 *   there is one. A long original comes in pages: the fake calls again with
 *   the offset the page names, until the last. Then it answers with a short
 *   text, which the agent must end its turn with;
 * - the check passes when the pages the agent sent back, joined, are the
 *   original result byte for byte as the corpus file holds it (as
 *   compact-safe imports it where the file holds blocks), redacted as
 *   compact-safe redacts (`redactSecrets`), once what the agent adds to a
 *   result of its own is set aside (named in the verdict).
 *
 * A second run per agent has the fake call recall with a malformed ref and an
 * unknown one: the agent must send back the server's reason for each (Claude
 * Code as an error result; Codex as text, a `function_call_output` has no
 * error flag) and finish its turn (no crash of the agent or the server).
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { STUB_PREFIX } from "../../src/engine/prune.js";
import { isToolResult } from "../../src/model/blocks.js";
import { redactSecrets } from "../../src/redact/redact.js";
import { readSession } from "../../src/route/session.js";
import { answerAnthropic } from "./fake-anthropic.js";
import { answerResponses, inputItems, requestKind } from "./fake-responses.js";
import { sendEvents, startFakeServer, type FakeServer } from "./fake-server.js";
import { newHome, placeRollout, resumeRun } from "./codex.js";
import { sessionId } from "./claude-code.js";
import { runProcess } from "./run-process.js";
import type { ClientContext, SessionVerdict } from "./types.js";

/** Claude Code sessions whose prune-only fork stubs results (entire-d3: two originals hold a secret). */
export const RECALL_CLAUDE_CODE_SESSIONS = [
  "claude-code/entire-1a-8a83a35a9b-0.jsonl",
  "claude-code/entire-d3-7d736cbc10-0.jsonl",
  "claude-code/entire-fc-99c919b212-0.jsonl",
];
/** Codex rollouts whose prune-only fork stubs results (each has one or two originals holding a secret). */
export const RECALL_CODEX_SESSIONS = [
  "codex/acidicsoil-rollout-2025-11-17T15-30-28.jsonl",
  "codex/coda-rollout-2025-10-04T22-31-15.jsonl",
  "codex/moonmind-rollout-2025-11-12T17-48-11.jsonl",
];

/** The refs the bad-ref run asks for: not a ref at all, and a tool call no history holds. */
const BAD_REFS = ["bogus", "tool:call_not_in_this_history"] as const;
const BAD_REF_REASONS = [/^not a recall ref: "bogus"/, /^no tool result for call "call_not_in_this_history"/];

const FINAL_TEXT = "Recalled what I needed (fake model).";
const PROMPT = "continue";

type Obj = Record<string, unknown>;

/** A prune-only stub found in a request: the ref it cites and the bytes it says it removed. */
export interface Stub {
  ref: string;
  id: string;
  bytes: number;
}

const STUB_TAIL = /; (\d+) bytes removed \(.*\); recall (tool:([^\s\]]+))\]$/s;

function* stringsOf(v: unknown): Generator<string> {
  if (typeof v === "string") yield v;
  else if (Array.isArray(v)) for (const x of v) yield* stringsOf(x);
  else if (v !== null && typeof v === "object") for (const x of Object.values(v)) yield* stringsOf(x);
}

/** Every prune-only stub the request carries (each ref once). */
export function stubsIn(body: unknown): Stub[] {
  const seen = new Map<string, Stub>();
  for (const s of stringsOf(body)) {
    if (!s.startsWith(STUB_PREFIX)) continue;
    const m = STUB_TAIL.exec(s);
    if (m !== null && !seen.has(m[2]!)) seen.set(m[2]!, { ref: m[2]!, id: m[3]!, bytes: Number(m[1]) });
  }
  return [...seen.values()];
}

/** What the agent sent back for a call: the server's texts, and how many texts of its own it added (taken off). */
interface AgentResult {
  texts: string[];
  isError: boolean;
  added: number;
}

/** One tool call the fake made, and what the agent sent back for it. */
interface RecallCall {
  callId: string;
  ref: string;
  offset: number;
  result?: AgentResult;
}

/** A tool the request offers: its name, and the namespace it is in (Codex puts an MCP server's tools in one). */
interface OfferedTool {
  name: string;
  namespace?: string;
}

const label = (t: OfferedTool) =>
  t.namespace === undefined ? t.name : `${t.name} (namespace ${t.namespace})`;

/** How one agent's wire format offers tools, carries results and streams a call or a text. */
interface Wire {
  /** The server's recall tool as the request offers it (undefined: not offered). */
  recallTool(body: unknown): OfferedTool | undefined;
  /**
   * The call that makes the agent offer a recall tool it holds back (Claude Code defers MCP tools behind
   * its ToolSearch tool), or undefined.
   */
  loadCall?(body: unknown): { tool: OfferedTool; args: Obj } | undefined;
  /** The tool names the request offers (for a failure's detail). */
  toolNames(body: unknown): string[];
  /** What the agent sent back for a call (undefined: no result for it in the request). */
  resultOf(body: unknown, callId: string): AgentResult | undefined;
  sendCall(res: ServerResponse, tool: OfferedTool, callId: string, args: Obj, model: string): void;
  sendText(res: ServerResponse, text: string, model: string): void;
  /** What the agent adds to a tool's result of its own (set aside before the comparison). */
  addition: string;
}

/**
 * The fake model's side of one agent run: on the first request offering the
 * recall tool it takes its refs from the stubs in that request (`pick`),
 * then answers each request with the next call (the same ref at the next
 * page's offset while the last answer names one, then the next ref), and
 * with a short text when none is left.
 */
class RecallScript {
  readonly calls: RecallCall[] = [];
  plan: string[] | undefined;
  stubs: Stub[] = [];
  tool: OfferedTool | undefined;
  /** The call the fake made first to have the recall tool offered (Claude Code's ToolSearch), if any. */
  loaded: { tool: OfferedTool; callId: string; sentBack?: boolean } | undefined;
  /** Tools offered by the requests that did not offer the recall tool (for a failure's detail). */
  offered: string[] = [];
  /** Why the run went wrong on the fake's side (undefined: it did not). */
  problem: string | undefined;
  private n = 0;

  constructor(
    readonly wire: Wire,
    private readonly pick: (stubs: Stub[]) => string[],
    private readonly prefix: string,
  ) {}

  private callId(): string {
    return `${this.prefix}${++this.n}`;
  }

  answer(body: unknown, res: ServerResponse, model: string): boolean {
    const tool = this.wire.recallTool(body);
    if (tool === undefined) {
      this.offered = this.wire.toolNames(body);
      const load = this.loaded === undefined ? this.wire.loadCall?.(body) : undefined;
      if (load === undefined) return false;
      this.loaded = { tool: load.tool, callId: this.callId() };
      this.wire.sendCall(res, load.tool, this.loaded.callId, load.args, model);
      return true;
    }
    this.tool = tool;
    if (this.loaded !== undefined)
      this.loaded.sentBack ??= this.wire.resultOf(body, this.loaded.callId) !== undefined;
    const last = this.calls.at(-1);
    if (last !== undefined && last.result === undefined) {
      last.result = this.wire.resultOf(body, last.callId);
      if (last.result === undefined) {
        this.problem ??= `the request after the call ${last.callId} carries no result for it`;
        this.wire.sendText(res, FINAL_TEXT, model);
        return true;
      }
    }
    if (this.plan === undefined) {
      this.stubs = stubsIn(body);
      this.plan = this.pick(this.stubs);
    }
    const next = this.nextCall(last);
    if (next === undefined) this.wire.sendText(res, FINAL_TEXT, model);
    else {
      this.calls.push(next);
      const args = next.offset > 0 ? { ref: next.ref, offset: next.offset } : { ref: next.ref };
      this.wire.sendCall(res, tool, next.callId, args, model);
    }
    return true;
  }

  private nextCall(last: RecallCall | undefined): RecallCall | undefined {
    const callId = () => this.callId();
    const more = last?.result?.texts
      .at(-1)
      ?.match(/^\[… \d+ more characters: call recall with .* offset (\d+)\]$/);
    if (last !== undefined && more) return { callId: callId(), ref: last.ref, offset: Number(more[1]) };
    const done = new Set(this.calls.map((c) => c.ref));
    const ref = this.plan!.find((r) => !done.has(r));
    return ref === undefined ? undefined : { callId: callId(), ref, offset: 0 };
  }
}

// ---------------------------------------------------------------- Claude Code (Anthropic Messages)

/** The name Claude Code gives the server's recall tool (`mcp__<server>__<tool>`). */
const CLAUDE_RECALL = "mcp__compact-safe__recall";

const claudeWire: Wire = {
  addition: "a <system-reminder> of its own (<total_tokens>) after the content",
  recallTool(body) {
    return this.toolNames(body).includes(CLAUDE_RECALL) ? { name: CLAUDE_RECALL } : undefined;
  },
  loadCall(body) {
    // Claude Code offers MCP tools by name only, in a <system-reminder> of deferred tools, until its
    // ToolSearch tool has fetched their schemas.
    if (!this.toolNames(body).includes("ToolSearch")) return undefined;
    if (![...stringsOf((body as { messages?: unknown }).messages)].some((t) => t.includes(CLAUDE_RECALL)))
      return undefined;
    return { tool: { name: "ToolSearch" }, args: { query: `select:${CLAUDE_RECALL}`, max_results: 1 } };
  },
  toolNames(body) {
    const tools = (body as { tools?: Array<{ name?: unknown }> } | undefined)?.tools ?? [];
    return tools.map((t) => String(t.name));
  },
  resultOf(body, callId) {
    const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
    for (const m of messages) {
      if (!Array.isArray(m.content)) continue;
      for (const b of m.content as Obj[]) {
        if (b.type !== "tool_result" || b.tool_use_id !== callId) continue;
        const blocks =
          typeof b.content === "string"
            ? [b.content]
            : Array.isArray(b.content)
              ? (b.content as Obj[]).map((c) => (c.type === "text" ? String(c.text) : `[${String(c.type)}]`))
              : [];
        return { ...withoutClaudeReminders(blocks), isError: b.is_error === true };
      }
    }
    return undefined;
  },
  sendCall(res, tool, callId, args, model) {
    anthropicEvents(res, model, { type: "tool_use", id: callId, name: tool.name, input: {} }, [
      { type: "input_json_delta", partial_json: JSON.stringify(args) },
      "tool_use",
    ]);
  },
  sendText(res, text, model) {
    anthropicEvents(res, model, { type: "text", text: "" }, [{ type: "text_delta", text }, "end_turn"]);
  },
};

/**
 * A tool result's texts as the server gave them: Claude Code adds a `<system-reminder>` of its own
 * (`<total_tokens>`) to a result, as one more text block (ending the block before it with a line break)
 * or, on a string result, after a blank line. Both are taken off; `added` counts them.
 */
export function withoutClaudeReminders(blocks: readonly string[]): { texts: string[]; added: number } {
  const texts = [...blocks];
  let added = 0;
  while (texts.length > 1 && texts.at(-1)!.startsWith("<system-reminder>")) {
    texts.pop();
    added++;
    const last = texts.at(-1)!;
    if (last.endsWith("\n")) texts[texts.length - 1] = last.slice(0, -1);
  }
  if (texts.length === 1) {
    const at = texts[0]!.lastIndexOf("\n\n<system-reminder>");
    if (at >= 0 && texts[0]!.trimEnd().endsWith("</system-reminder>")) {
      texts[0] = texts[0]!.slice(0, at);
      added++;
    }
  }
  return { texts, added };
}

function anthropicEvents(res: ServerResponse, model: string, block: Obj, [delta, stop]: [Obj, string]): void {
  sendEvents(res, [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          id: `msg_fake_recall_${Date.now()}`,
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1000, output_tokens: 1 },
        },
      },
    ],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: block }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    [
      "message_delta",
      {
        type: "message_delta",
        delta: { stop_reason: stop, stop_sequence: null },
        usage: { output_tokens: 10 },
      },
    ],
    ["message_stop", { type: "message_stop" }],
  ]);
}

// ---------------------------------------------------------------- Codex (OpenAI Responses)

/** Every function tool the request offers (a namespace's tools with their namespace). */
function responsesTools(body: unknown): OfferedTool[] {
  const out: OfferedTool[] = [];
  const tools = (body as { tools?: unknown } | undefined)?.tools;
  for (const t of Array.isArray(tools) ? (tools as Obj[]) : []) {
    if (t.type === "namespace" && Array.isArray(t.tools))
      for (const f of t.tools as Obj[]) out.push({ name: String(f.name), namespace: String(t.name) });
    else out.push({ name: String(t.name ?? t.type) });
  }
  return out;
}

const codexWire: Wire = {
  addition: 'a "Wall time: … seconds\\nOutput:" text before the content',
  recallTool(body) {
    return responsesTools(body).find(
      (t) => t.name === "recall" && t.namespace !== undefined && /compact.?safe/.test(t.namespace),
    );
  },
  toolNames(body) {
    return responsesTools(body).map(label);
  },
  resultOf(body, callId) {
    const item = inputItems(body).find(
      (it) => typeof it.type === "string" && it.type.endsWith("_output") && it.call_id === callId,
    );
    if (item === undefined) return undefined;
    const out = item.output;
    const texts =
      typeof out === "string"
        ? [out]
        : Array.isArray(out)
          ? (out as Obj[]).map((c) => (typeof c.text === "string" ? c.text : `[${String(c.type)}]`))
          : [JSON.stringify(out)];
    // Codex puts a line of its own before an MCP tool's content: "Wall time: 0.0854 seconds\nOutput:".
    const added = texts.length > 1 && /^Wall time: [\d.]+ seconds\nOutput:$/.test(texts[0]!) ? 1 : 0;
    return { texts: texts.slice(added), added, isError: false };
  },
  sendCall(res, tool, callId, args) {
    const item = {
      type: "function_call",
      id: `fc_${callId}`,
      call_id: callId,
      name: tool.name,
      ...(tool.namespace !== undefined ? { namespace: tool.namespace } : {}),
      arguments: JSON.stringify(args),
    };
    const id = `resp_fake_${callId}`;
    sendEvents(res, [
      ["response.created", { type: "response.created", response: { id } }],
      [
        "response.output_item.added",
        { type: "response.output_item.added", output_index: 0, item: { ...item, arguments: "" } },
      ],
      ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
      ["response.completed", { type: "response.completed", response: { id, usage: responsesUsage } }],
    ]);
  },
  sendText(res, text) {
    const id = `resp_fake_text_${Date.now()}`;
    const item = {
      type: "message",
      id: `msg_${id}`,
      role: "assistant",
      content: [{ type: "output_text", text, annotations: [] }],
    };
    sendEvents(res, [
      ["response.created", { type: "response.created", response: { id } }],
      [
        "response.output_item.added",
        { type: "response.output_item.added", output_index: 0, item: { ...item, content: [] } },
      ],
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
      ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
      ["response.completed", { type: "response.completed", response: { id, usage: responsesUsage } }],
    ]);
  },
};

const responsesUsage = {
  input_tokens: 100,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 10,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 110,
};

// ---------------------------------------------------------------- the checks

/** The original result of each call in a session file, as the file holds it when it is a string. */
function rawResults(file: string): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v !== null && typeof v === "object") {
      const o = v as Obj;
      if (o.type === "tool_result" && typeof o.tool_use_id === "string" && typeof o.content === "string")
        if (!out.has(o.tool_use_id)) out.set(o.tool_use_id, o.content);
      if (o.type === "function_call_output" && typeof o.call_id === "string" && typeof o.output === "string")
        if (!out.has(o.call_id)) out.set(o.call_id, o.output);
      Object.values(o).forEach(visit);
    }
  };
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    try {
      visit(JSON.parse(line));
    } catch {
      // A line the agent left torn is not a result.
    }
  }
  return out;
}

/** The original of every tool result of a session, as compact-safe imports it (the first one of each call). */
async function importedResults(file: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of (await readSession(file)).entries)
    if (e.kind !== "compaction" && e.kind !== "header" && e.kind !== "branch_summary")
      for (const b of e.payload.content)
        if (isToolResult(b) && !out.has(b.tool_use_id)) out.set(b.tool_use_id, b.content);
  return out;
}

interface Expected {
  /** What recall must give back for each call id: the original, redacted as compact-safe redacts. */
  byId: Map<string, string>;
  /** Call ids whose original compact-safe redacts. */
  secret: Set<string>;
  /** Call ids whose original the corpus file holds as one string (the expected text is that string, redacted). */
  raw: Set<string>;
}

async function expectedOriginals(file: string): Promise<Expected> {
  const imported = await importedResults(file);
  const raw = rawResults(file);
  const e: Expected = { byId: new Map(), secret: new Set(), raw: new Set() };
  for (const [id, text] of imported) {
    const r = raw.get(id);
    if (r !== undefined && r !== text)
      throw new Error(`compact-safe imports the result of ${id} otherwise than the file holds it`);
    if (r !== undefined) e.raw.add(id);
    const red = redactSecrets(text);
    e.byId.set(id, red);
    if (red !== text) e.secret.add(id);
  }
  return e;
}

/** The refs a session's check recalls: the largest stub, and one whose original holds a secret. */
function pickRefs(expected: Expected): (stubs: Stub[]) => string[] {
  return (stubs) => {
    const largest = [...stubs].sort((a, b) => b.bytes - a.bytes)[0];
    const secret = stubs.find((s) => expected.secret.has(s.id));
    return [...new Set([largest?.ref, secret?.ref].filter((r): r is string => r !== undefined))];
  };
}

/** Checks what the agent sent back for each ref against the originals; the verdict's detail, or throws. */
function judge(script: RecallScript, expected: Expected, agent: string): string {
  if (script.problem !== undefined) throw new Error(script.problem);
  if (script.tool === undefined)
    throw new Error(
      `no request offered the recall tool; tools offered: ${script.offered.join(", ") || "none"}`,
    );
  if (script.plan === undefined || script.plan.length === 0)
    throw new Error(`the request offering ${script.tool} carried no prune-only stub`);
  const parts: string[] = [];
  for (const ref of script.plan) {
    const calls = script.calls.filter((c) => c.ref === ref);
    const id = ref.slice("tool:".length);
    let joined = "";
    for (const c of calls) {
      const r = c.result;
      if (r === undefined)
        throw new Error(`${agent} sent no result for the recall of ${ref} at offset ${c.offset}`);
      if (r.isError || r.texts.length < 2)
        throw new Error(`${ref}: ${agent} sent back ${JSON.stringify(r).slice(0, 300)}`);
      joined += r.texts[1];
    }
    const want = expected.byId.get(id);
    if (want === undefined)
      throw new Error(`${ref}: the stub cites a call the original session has no result for`);
    if (joined !== want) {
      let at = 0;
      while (at < joined.length && joined[at] === want[at]) at++;
      throw new Error(
        `${ref}: the ${calls.length} page(s) ${agent} sent back (${joined.length} characters) differ from the original (${want.length}) at character ${at}`,
      );
    }
    parts.push(
      `${ref} (${want.length} characters in ${calls.length} page${calls.length === 1 ? "" : "s"}` +
        `${expected.secret.has(id) ? ", secret redacted" : ""}${expected.raw.has(id) ? "" : ", blocks joined as imported"})`,
    );
  }
  const results = script.calls.filter((c) => c.result !== undefined);
  const withAdded = results.filter((c) => c.result!.added > 0).length;
  return (
    `${label(script.tool)} called${script.loaded ? ` (loaded first through ${script.loaded.tool.name}, as ${agent} defers MCP tools)` : ""} on ${parts.length} of the fork's ${script.stubs.length} stubs; ` +
    `the results ${agent} sent back are the originals byte for byte: ${parts.join(", ")}` +
    (withAdded > 0
      ? `; set aside first: ${script.wire.addition}, in ${withAdded} of the ${results.length} results`
      : "")
  );
}

function judgeBadRefs(script: RecallScript, agent: string): string {
  if (script.problem !== undefined) throw new Error(script.problem);
  if (script.tool === undefined)
    throw new Error(
      `no request offered the recall tool; tools offered: ${script.offered.join(", ") || "none"}`,
    );
  const seen: string[] = [];
  BAD_REFS.forEach((ref, i) => {
    const c = script.calls.find((x) => x.ref === ref);
    const r = c?.result;
    if (r === undefined) throw new Error(`${agent} sent no result for recall ${JSON.stringify(ref)}`);
    const text = r.texts.join("\n");
    if (!BAD_REF_REASONS[i]!.test(text) || (agent === "Claude Code" && !r.isError))
      throw new Error(`recall ${JSON.stringify(ref)}: ${agent} sent back ${JSON.stringify(r).slice(0, 300)}`);
    seen.push(`${JSON.stringify(ref)}: ${r.isError ? "error result " : ""}"${text.slice(0, 60)}…"`);
  });
  // The Responses wire has no error flag on a function_call_output: Codex sends the error's text only.
  const how = agent === "Codex" ? " (as text: a function_call_output has no error flag)" : "";
  return `${agent} sent the server's error answers back${how} and finished its turn: ${seen.join("; ")}`;
}

async function cli(ctx: ClientContext, args: string[]) {
  return runProcess(process.execPath, [ctx.cli, ...args], { env: { NO_COLOR: "1" }, timeoutMs: 180_000 });
}

async function pruneOnlyFork(
  ctx: ClientContext,
  file: string,
  workspace: string,
): Promise<{ session_id: string; path: string }> {
  const out = await cli(ctx, ["compact", file, "--fork", "--prune-only", "--json", "--workspace", workspace]);
  if (out.code !== 0) throw new Error(`compact --fork --prune-only: exit ${out.code}: ${out.stderr.trim()}`);
  return (JSON.parse(out.stdout) as { fork: { session_id: string; path: string } }).fork;
}

/** One step of the fake: the current script's answer, else the client's ordinary fake answer. */
interface Driver {
  script: RecallScript | undefined;
}

async function claudeChecks(ctx: ClientContext, verdicts: SessionVerdict[]): Promise<void> {
  const driver: Driver = { script: undefined };
  const server = await startFakeServer((req, res) => {
    const body = req.body as { model?: string } | undefined;
    const isTurn =
      req.method === "POST" && req.path.startsWith("/v1/messages") && !req.path.includes("count_tokens");
    if (isTurn && driver.script?.answer(req.body, res, body?.model ?? "fake") === true) return;
    answerAnthropic(req, res);
  });
  try {
    for (const [i, session] of RECALL_CLAUDE_CODE_SESSIONS.entries())
      for (const bad of i === 0 ? [false, true] : [false]) {
        const check = bad ? "recall: bad refs" : "recall via MCP";
        ctx.log(`recall claude-code ${session}: ${check}`);
        const home = mkdtempSync(join(tmpdir(), "cs-recall-claude-"));
        try {
          const detail = await claudeRun(ctx, server, driver, home, session, bad);
          verdicts.push({ client: "claude-code", session, check, ok: true, detail });
        } catch (e) {
          verdicts.push({ client: "claude-code", session, check, ok: false, detail: (e as Error).message });
        } finally {
          driver.script = undefined;
          rmSync(home, { recursive: true, force: true });
        }
      }
  } finally {
    await server.close();
  }
}

async function claudeRun(
  ctx: ClientContext,
  server: FakeServer,
  driver: Driver,
  home: string,
  session: string,
  bad: boolean,
): Promise<string> {
  const workspace = join(home, "work");
  mkdirSync(workspace);
  const projectDir = join(home, ".claude", "projects", workspace.replace(/[/.]/g, "-"));
  mkdirSync(projectDir, { recursive: true });
  const text = readFileSync(join(ctx.corpus, session), "utf8");
  const original = join(projectDir, `${sessionId(text)}.jsonl`);
  writeFileSync(original, text);
  const expected = await expectedOriginals(original);
  const fork = await pruneOnlyFork(ctx, original, workspace);
  const mcpConfig = join(home, "mcp.json");
  writeFileSync(
    mcpConfig,
    JSON.stringify({
      mcpServers: {
        "compact-safe": { type: "stdio", command: process.execPath, args: [ctx.cli, "mcp", original] },
      },
    }),
  );
  const script = new RecallScript(
    claudeWire,
    bad ? () => [...BAD_REFS] : pickRefs(expected),
    "toolu_fake_recall_",
  );
  driver.script = script;
  const r = await runProcess(
    join(ctx.bin, "claude"),
    [
      "-p",
      PROMPT,
      "--resume",
      fork.session_id,
      "--mcp-config",
      mcpConfig,
      "--strict-mcp-config",
      "--allowedTools",
      "mcp__compact-safe__recall",
      "--output-format",
      "json",
    ],
    {
      cwd: workspace,
      env: {
        HOME: home,
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: "fake-key",
        DISABLE_TELEMETRY: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
      },
      timeoutMs: 180_000,
    },
  );
  if (r.code !== 0)
    throw new Error(
      `claude -p --resume (fork): exit ${r.code}: ${(r.stderr || r.stdout).trim().slice(0, 300)}`,
    );
  const out = JSON.parse(r.stdout) as { result?: string; is_error?: boolean };
  if (out.result !== FINAL_TEXT) throw new Error(`claude ended with ${JSON.stringify(out).slice(0, 300)}`);
  return bad ? judgeBadRefs(script, "Claude Code") : judge(script, expected, "Claude Code");
}

async function codexChecks(ctx: ClientContext, verdicts: SessionVerdict[]): Promise<void> {
  const driver: Driver = { script: undefined };
  const server = await startFakeServer((req, res) => {
    const isTurn =
      req.method === "POST" && req.path.startsWith("/v1/responses") && requestKind(req.body) === "turn";
    if (isTurn && driver.script?.answer(req.body, res, "gpt-5") === true) return;
    answerResponses(req, res);
  });
  try {
    for (const [i, session] of RECALL_CODEX_SESSIONS.entries())
      for (const bad of i === 0 ? [false, true] : [false]) {
        const check = bad ? "recall: bad refs" : "recall via MCP";
        ctx.log(`recall codex ${session}: ${check}`);
        const home = newHome(server, ctx.bin);
        try {
          const detail = await codexRun(ctx, home, driver, session, bad);
          verdicts.push({ client: "codex", session, check, ok: true, detail });
        } catch (e) {
          verdicts.push({ client: "codex", session, check, ok: false, detail: (e as Error).message });
        } finally {
          driver.script = undefined;
          rmSync(home.dir, { recursive: true, force: true });
        }
      }
  } finally {
    await server.close();
  }
}

async function codexRun(
  ctx: ClientContext,
  home: ReturnType<typeof newHome>,
  driver: Driver,
  session: string,
  bad: boolean,
): Promise<string> {
  const r = placeRollout(home, join(ctx.corpus, session));
  const expected = await expectedOriginals(r.path);
  const fork = await pruneOnlyFork(ctx, r.path, home.dir);
  appendFileSync(
    join(home.dir, "config.toml"),
    `\n[mcp_servers.compact-safe]\ncommand = ${JSON.stringify(process.execPath)}\nargs = ${JSON.stringify([ctx.cli, "mcp", r.path])}\nrequired = true\n`,
  );
  const script = new RecallScript(
    codexWire,
    bad ? () => [...BAD_REFS] : pickRefs(expected),
    "call_fake_recall_",
  );
  driver.script = script;
  const run = await resumeRun(home, r, fork.session_id);
  if (!run.stdout.includes(FINAL_TEXT))
    throw new Error(`codex ended with ${JSON.stringify(run.stdout.slice(-300))}`);
  return bad ? judgeBadRefs(script, "Codex") : judge(script, expected, "Codex");
}

export async function recallChecks(ctx: ClientContext): Promise<SessionVerdict[]> {
  const verdicts: SessionVerdict[] = [];
  await claudeChecks(ctx, verdicts);
  await codexChecks(ctx, verdicts);
  return verdicts;
}
