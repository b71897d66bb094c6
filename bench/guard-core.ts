/**
 * The guard core's cost on the request path: a growing Claude Code session
 * (a corpus session rendered as Anthropic Messages requests, with the headers,
 * metadata, betas, context management and moving cache markers the real
 * client sends), one request per turn, at bodies of about 1 MB and 10 MB.
 * Prints the time `handle` takes per request (median, p90), and the time to
 * settle the work left after it (`close`). Not a test: figures only.
 *
 *   node dist/bench/guard-core.js [--turns N] [--sizes 1,10] [--state] [--gap idle|MS]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { importFile } from "../src/formats/detect.js";
import { liveContext } from "../src/journal/tree.js";
import { toAnthropicRequest } from "../src/formats/export/anthropic.js";
import type { Message } from "../src/model/index.js";
import { createGuardCore } from "../src/guard/index.js";
import type { WireRequest } from "../src/guard/types.js";

const CORPUS = process.env.COMPACT_SAFE_CORPUS ?? "/work/shared/corpus";
const SESSION_FILE = join(CORPUS, "claude-code", "entire-cd-95adddad32-0.jsonl");
const SESSION_ID = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b";

const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? dflt) : dflt;
};

async function corpusMessages(): Promise<Message[]> {
  const r = await importFile(SESSION_FILE);
  const leaf = r.entries[r.entries.length - 1]!.id;
  return liveContext(r.entries, leaf).filter((m) => m.role !== "system");
}

/** The wire elements of a long history: the corpus session repeated (tool ids made unique) until `bytes`. */
function buildElements(
  base: Message[],
  bytes: number,
): { system: unknown[]; elements: Record<string, unknown>[] } {
  const req = toAnthropicRequest(base);
  const one = req.messages as unknown as Record<string, unknown>[];
  const out: Record<string, unknown>[] = [];
  let size = 0;
  for (let round = 0; size < bytes * 1.15; round++) {
    for (const el of one) {
      let text = JSON.stringify(el);
      if (round > 0) text = text.replace(/"(toolu_[A-Za-z0-9_]+)"/g, `"$1_r${round}"`);
      out.push(JSON.parse(text) as Record<string, unknown>);
      size += text.length + 1;
    }
  }
  const system = [
    { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude." },
    {
      type: "text",
      text: "You are an interactive agent that helps users with software engineering tasks. ".repeat(200),
    },
  ];
  return { system, elements: out };
}

const TOOLS = Array.from({ length: 20 }, (_, i) => ({
  name: `Tool${i}`,
  description: "A tool the agent has. ".repeat(40),
  input_schema: { type: "object", properties: { a: { type: "string" } } },
}));

/** One request as Claude Code sends it: cache markers on the system's last block and the last message's last block. */
function request(system: unknown[], elements: readonly Record<string, unknown>[]): WireRequest {
  const sys = system.map((b, i) =>
    i === system.length - 1 ? { ...(b as object), cache_control: { type: "ephemeral" } } : b,
  );
  const messages = elements.map((el, i) => {
    if (i !== elements.length - 1 || !Array.isArray(el.content) || el.content.length === 0) return el;
    const content = [...(el.content as object[])];
    content[content.length - 1] = { ...content[content.length - 1]!, cache_control: { type: "ephemeral" } };
    return { ...el, content };
  });
  const body = {
    model: "claude-opus-4-5",
    messages,
    system: sys,
    tools: TOOLS,
    metadata: {
      user_id: JSON.stringify({ device_id: "d".repeat(64), account_uuid: "", session_id: SESSION_ID }),
    },
    max_tokens: 32000,
    thinking: { type: "enabled", budget_tokens: 31999 },
    context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
    stream: true,
  };
  return {
    method: "POST",
    url: "/v1/messages?beta=true",
    headers: {
      "x-claude-code-session-id": SESSION_ID,
      "user-agent": "claude-cli/2.1.328 (external, cli)",
      "anthropic-beta":
        "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,thinking-token-count-2026-05-13,advanced-tool-use-2025-11-20,effort-2025-11-24",
      "x-api-key": "sk-ant-bench",
    },
    body: Buffer.from(JSON.stringify(body), "utf8"),
  };
}

/** Request ends: after each user element that is not only tool results (one request per turn), and after tool results. */
function turnEnds(elements: readonly Record<string, unknown>[], from: number, n: number): number[] {
  const ends: number[] = [];
  for (let i = from; i < elements.length && ends.length < n; i++)
    if (elements[i]!.role === "user") ends.push(i + 1);
  return ends;
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function main(): Promise<void> {
  const turns = Number(arg("turns", "40"));
  const sizes = arg("sizes", "1,10").split(",").map(Number);
  const withState = process.argv.includes("--state");
  const gap = arg("gap", "idle");
  const base = await corpusMessages();
  for (const mb of sizes) {
    const target = mb * 1024 * 1024;
    const { system, elements } = buildElements(base, target);
    // The first element index where the body reaches the target size.
    let start = 1;
    let acc = 0;
    while (start < elements.length && acc < target) acc += JSON.stringify(elements[start++ - 1]).length + 1;
    const ends = turnEnds(elements, start, turns + 1);
    const reqs = ends.map((e) => request(system, elements.slice(0, e)));
    const dir = withState ? mkdtempSync(join(tmpdir(), "guard-bench-")) : undefined;
    const core = createGuardCore(dir ? { stateDir: dir } : {});
    const times: number[] = [];
    let first = 0;
    let changed = 0;
    for (let i = 0; i < reqs.length; i++) {
      const t0 = performance.now();
      const o = await core.handle(reqs[i]!);
      const dt = performance.now() - t0;
      if (o.changed) changed++;
      if (i === 0) first = dt;
      else times.push(dt);
      // Between turns the agent waits for the model: by default longer than the core's work after the answer
      // (`--gap MS`: a fixed gap instead, so that a request may wait for the previous one's work).
      if (gap === "idle") await core.idle();
      else await new Promise((r) => setTimeout(r, Number(gap)));
    }
    const t0 = performance.now();
    await core.close();
    const closeMs = performance.now() - t0;
    if (dir) rmSync(dir, { recursive: true, force: true });
    const avg = reqs.reduce((s, r) => s + r.body.length, 0) / reqs.length;
    console.log(
      `${mb} MB bodies (avg ${(avg / 1048576).toFixed(2)} MB, ${reqs.length} requests${withState ? ", state" : ""}, gap ${gap}): ` +
        `handle median ${pct(times, 50).toFixed(2)} ms, p90 ${pct(times, 90).toFixed(2)} ms, max ${Math.max(...times).toFixed(2)} ms; ` +
        `first request ${first.toFixed(1)} ms; close ${closeMs.toFixed(1)} ms; changed ${changed}`,
    );
  }
}

await main();
