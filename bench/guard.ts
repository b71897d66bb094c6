/**
 * `npm run bench:guard`: what the guard adds to a request. A fake Anthropic
 * upstream on 127.0.0.1 answers every request with a server-sent-event
 * stream; the same requests go to it directly and through the guard
 * (`startGuard` with the real core, `createGuardCore`), alternately, on
 * bodies of about 10 KB, 1 MB and 10 MB: Claude Code Messages requests built
 * from a corpus session with the project's exporter (`toAnthropicRequest`),
 * its history repeated (tool ids renamed per copy) until the size is
 * reached, with the metadata and headers Claude Code sends. The client and
 * the fake upstream share one thread; the guard runs on a thread of its own
 * (`worker_threads`), as it is a process of its own beside a real agent, so
 * that its work after an answer does not hold up the client's reading of it,
 * without the scheduling noise of three processes on a busy machine.
 * The guard's CPU per request is the process's CPU (`process.cpuUsage`) over
 * the guarded requests less that over the direct ones. Measured per request: time to the first byte of
 * the answer and to its last, and the guard process's CPU (its own
 * `process.cpuUsage` before and after the request).
 *
 * The upstream sends its first event at once and holds the rest of the
 * stream until the client has that first chunk: a guard that buffered a
 * stream would stall it (a 10 s safety stop counts the request as held back).
 *
 * Between two requests the guard finishes the work it leaves for after the
 * answer (`core.idle()`; a turn that only extends the session is let through
 * on its bytes and judged then): a real agent sends its next request only
 * after the model has answered this one, which takes far longer. That work is
 * counted in the guard's CPU per request.
 *
 * Then the concurrency row (`guard-concurrency.ts`): 32 sessions of 1 MB
 * at once, through a guard in a process of its own and directly, with its
 * added latency (p50, p99), its median time to last byte as a ratio to
 * direct's, and the guard's peak RSS; the guard's process runs under the
 * machine's Node, then the pinned Node 22 and 24 that users run
 * (`nodes.ts`; `--node this`: the machine's alone), the row and its bars
 * once for each.
 *
 * Bars: the median added time (first byte and last byte) under 5 ms at 1 MB,
 * no stream held back; 32 sessions at once at most 1.25x direct's median
 * time to last byte, the guard's peak RSS under 3x the bodies held plus
 * 100 MB. Prints a table, the load average and the bars (`--json`: one JSON
 * object instead; `--sizes 10kb,1mb,10mb`: only those; `--read-whole`: the
 * core reads every body whole, for comparison; `--concurrency-only` or
 * `--no-concurrency`: that row alone, or without it); exits 1 when a bar is
 * not met, 2 when the corpus is missing.
 */
import http from "node:http";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import type { AddressInfo } from "node:net";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadavg } from "node:os";
import { importClaudeCode, toAnthropicRequest } from "../src/formats/index.js";
import { liveContext } from "../src/journal/tree.js";
import type { Block, Message } from "../src/model/index.js";
import { createGuardCore, startGuard } from "../src/guard/index.js";
import { corpusDir } from "../test/support.js";
import { concurrencyBars, concurrencyRow, type ConcurrencyFigures } from "./guard-concurrency.js";
import { nodesToMeasure } from "./nodes.js";

const SESSION = join(corpusDir, "claude-code", "entire-cd-95adddad32-0.jsonl");
const BAR_MS = 5;
const HOLD_LIMIT_MS = 10_000;
const SIZES = [
  { name: "10 KB", bytes: 10 * 1024, runs: 300 },
  { name: "1 MB", bytes: 1024 * 1024, runs: 100 },
  { name: "10 MB", bytes: 10 * 1024 * 1024, runs: 20 },
];
const WARMUP = 5;

const flag = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
/** `--json`: one JSON object (the rows, the bars, the load average) instead of the table. */
const JSON_OUT = process.argv.includes("--json");
/** `--read-whole`: the core reads every body whole (`readWhole`), as before it read extensions from the last body. */
const READ_WHOLE = process.argv.includes("--read-whole");
/** `--sizes 1mb,10mb`: only those sizes (names without spaces, case ignored). */
const ONLY = flag("sizes")
  ?.split(",")
  .map((x) => x.trim().toLowerCase());
const SESSION_ID = "3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b";
/** `--proxy-only`: the concurrency row's guard lets every request through without a core's work (what the proxy alone costs); `--default-heap`: its process keeps V8's own heap sizing (see guard-concurrency.ts). */
const PROXY_ONLY = process.argv.includes("--proxy-only");
/** `--concurrency-only`: the concurrency row alone; `--no-concurrency`: the rows by size alone. */
const CONCURRENCY = process.argv.includes("--no-concurrency")
  ? "no"
  : process.argv.includes("--concurrency-only")
    ? "only"
    : "yes";

const EVENTS = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","content":[],"model":"claude-bench","usage":{"input_tokens":1000,"output_tokens":1}}}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
  ...Array.from(
    { length: 20 },
    (_, i) =>
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word${i} "}}\n\n`,
  ),
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":20}}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
].map((e) => Buffer.from(e));

/** A copy of a block with its tool ids made unique to copy `n`. */
function renamed(b: Block, n: number): Block {
  if (n === 0) return b;
  const o = { ...(b as unknown as Record<string, unknown>) };
  if (o.type === "tool_use" && typeof o.id === "string") o.id = `${o.id}_r${n}`;
  if (o.type === "tool_result" && typeof o.tool_use_id === "string") o.tool_use_id = `${o.tool_use_id}_r${n}`;
  return o as unknown as Block;
}

/** A Claude Code Messages request of about `bytes` bytes: the first N messages of the history repeated. */
function requestBody(history: readonly Message[], bytes: number): Buffer {
  const cycled = (n: number): Message[] =>
    Array.from({ length: n }, (_, i) => {
      const m = history[i % history.length];
      return { ...m, content: m.content.map((b) => renamed(b, Math.floor(i / history.length))) };
    });
  const body = (n: number) =>
    Buffer.from(
      JSON.stringify({
        model: "claude-sonnet-4-5",
        max_tokens: 32000,
        stream: true,
        metadata: {
          user_id: JSON.stringify({ device_id: "bench", account_uuid: "", session_id: SESSION_ID }),
        },
        context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
        ...toAnthropicRequest(cycled(n)),
      }),
    );
  // The largest N whose body is at most `bytes` (at least 1 message).
  let lo = 1;
  let hi = 2;
  while (body(hi).length <= bytes) hi *= 2;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (body(mid).length <= bytes) lo = mid;
    else hi = mid;
  }
  return body(lo);
}

const HEADERS = {
  "content-type": "application/json",
  "anthropic-version": "2023-06-01",
  "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27",
  "x-api-key": "sk-ant-bench-placeholder",
  "x-claude-code-session-id": SESSION_ID,
};

/** The fake upstream: reads the body, sends one event, waits for `firstSeen()` (the client has the first chunk), sends the rest. */
async function upstream() {
  let release: (() => void) | undefined;
  const server = http.createServer({ noDelay: true }, async (req, res) => {
    for await (const _ of req) void _;
    const seen = new Promise<void>((resolve) => (release = resolve));
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(EVENTS[0]);
    await seen;
    for (const e of EVENTS.slice(1)) res.write(e);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    firstSeen: () => release?.(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Timing {
  ttfb: number;
  ttlb: number;
  heldBack: boolean;
  bytes: number;
}

/**
 * The guard on a thread of its own (as beside a real agent, where it is a process of its own): its
 * work after an answer does not hold up the client's reading of that answer, as it would on one shared
 * thread. Its CPU still counts in `process.cpuUsage`, which covers every thread of the process.
 */
async function guardThread(
  upstream: string,
): Promise<{ url: string; idle(): Promise<void>; close(): Promise<void> }> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { upstream, readWhole: READ_WHOLE } });
  const next = () =>
    new Promise<{ url?: string }>((resolve, reject) => {
      const onError = (e: Error) => {
        worker.off("message", onMessage);
        reject(e);
      };
      const onMessage = (m: { url?: string }) => {
        worker.off("error", onError);
        resolve(m);
      };
      worker.once("message", onMessage);
      worker.once("error", onError);
    });
  const { url } = await next();
  return {
    url: url!,
    idle: async () => {
      worker.postMessage("idle");
      await next();
    },
    close: async () => {
      worker.postMessage("close");
      await next();
      await worker.terminate();
    },
  };
}

/** The worker's side: a guard with the real core, answering "idle" and "close". */
async function guardWorker(upstream: string, readWhole: boolean): Promise<void> {
  const core = createGuardCore({ mode: "repair", readWhole });
  const guard = await startGuard({ upstream, core, log: () => {} });
  parentPort!.on("message", async (m: string) => {
    if (m === "idle") await core.idle();
    else if (m === "close") await guard.close();
    parentPort!.postMessage({});
  });
  parentPort!.postMessage({ url: guard.url });
}

function once(base: string, body: Buffer, agent: http.Agent, firstSeen: () => void): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let ttfb = -1;
    let bytes = 0;
    let heldBack = false;
    const stop = setTimeout(() => {
      heldBack = true;
      firstSeen();
    }, HOLD_LIMIT_MS);
    const req = http.request(
      new URL("/v1/messages?beta=true", base),
      { method: "POST", agent, headers: { ...HEADERS, "content-length": String(body.length) } },
      (res) => {
        res.on("data", (c: Buffer) => {
          bytes += c.length;
          if (ttfb < 0) {
            ttfb = performance.now() - t0;
            clearTimeout(stop);
            firstSeen();
          }
        });
        res.on("end", () => {
          clearTimeout(stop);
          resolve({ ttfb, ttlb: performance.now() - t0, heldBack, bytes });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x: number) => `${x.toFixed(2)} ms`;

async function main(): Promise<number> {
  if (!existsSync(SESSION)) {
    console.error(`bench:guard: corpus session missing: ${SESSION}`);
    return 2;
  }
  const sizes =
    CONCURRENCY === "only"
      ? []
      : SIZES.filter((s) => !ONLY || ONLY.includes(s.name.replace(/\s+/g, "").toLowerCase()));
  const loadBefore = loadavg()[0];
  // The bodies are built first and the session let go: the heap the runs see is the guard's, not the importer's.
  const bodies = (() => {
    const history = liveContext(importClaudeCode(readFileSync(SESSION, "utf8"), SESSION).entries).filter(
      (m) => m.role !== "system",
    );
    return [...sizes.map((size) => requestBody(history, size.bytes)), requestBody(history, 1024 * 1024)];
  })();
  const up = await upstream();
  const guard = await guardThread(up.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const expected = Buffer.concat(EVENTS).length;
  const rows: string[][] = [];
  const figures: Record<string, unknown>[] = [];
  let heldBack = 0;
  let short = 0;
  let bar1mb: { ttfb: number; ttlb: number } | undefined;
  try {
    for (const [k, size] of sizes.entries()) {
      const body = bodies[k];
      const direct: Timing[] = [];
      const guarded: Timing[] = [];
      let cpuDirect = 0;
      let cpuGuard = 0;
      for (let i = 0; i < WARMUP + size.runs; i++) {
        // Alternate which goes first, so drift (GC, caches) falls on both alike.
        for (const which of i % 2 ? (["guard", "direct"] as const) : (["direct", "guard"] as const)) {
          const c0 = process.cpuUsage();
          const t = await once(which === "guard" ? guard.url : up.url, body, agent, up.firstSeen);
          // The guard's work left for after the answer (judging a turn it let through on its bytes) is
          // done before the next request, and counted in its CPU: a real agent's next request waits for
          // the model's answer to this one, which takes far longer than that work.
          if (which === "guard") await guard.idle();
          const cu = process.cpuUsage(c0);
          const c = (cu.user + cu.system) / 1000;
          if (i < WARMUP) continue;
          if (t.heldBack) heldBack++;
          if (t.bytes !== expected) short++;
          if (which === "guard") {
            guarded.push(t);
            cpuGuard += c;
          } else {
            direct.push(t);
            cpuDirect += c;
          }
        }
      }
      const d = { ttfb: median(direct.map((t) => t.ttfb)), ttlb: median(direct.map((t) => t.ttlb)) };
      const g = { ttfb: median(guarded.map((t) => t.ttfb)), ttlb: median(guarded.map((t) => t.ttlb)) };
      const added = { ttfb: g.ttfb - d.ttfb, ttlb: g.ttlb - d.ttlb };
      if (size.name === "1 MB") bar1mb = added;
      figures.push({
        body: size.name,
        bytes: body.length,
        runs: size.runs,
        direct: d,
        guard: g,
        added,
        guard_cpu_ms: (cpuGuard - cpuDirect) / size.runs,
      });
      rows.push([
        `${size.name} (${(body.length / 1024).toFixed(0)} KiB)`,
        String(size.runs),
        ms(d.ttfb),
        ms(g.ttfb),
        ms(added.ttfb),
        ms(d.ttlb),
        ms(g.ttlb),
        ms(added.ttlb),
        ms((cpuGuard - cpuDirect) / size.runs),
      ]);
    }
  } finally {
    agent.destroy();
    await guard.close();
    await up.close();
  }
  // The row under each Node users run (the guard runs on the agent's machine's Node): the machine's first.
  const concurrencies: ConcurrencyFigures[] = [];
  if (CONCURRENCY !== "no")
    for (const node of nodesToMeasure(process.argv, (l) => (JSON_OUT ? undefined : console.log(l.trim()))))
      concurrencies.push(await concurrencyRow(bodies.at(-1)!, SESSION_ID, HEADERS, EVENTS, PROXY_ONLY, node));
  const concurrency = concurrencies[0];
  const head = [
    "body",
    "runs",
    "direct TTFB",
    "guard TTFB",
    "added",
    "direct TTLB",
    "guard TTLB",
    "added",
    "guard CPU/req",
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  // A bar whose row was not run (--concurrency-only) is not listed: it is neither met nor missed.
  const bars = [
    ...(bar1mb === undefined
      ? []
      : [
          {
            ok: bar1mb.ttfb < BAR_MS && bar1mb.ttlb < BAR_MS,
            text: `1 MB: median added under ${BAR_MS} ms (first byte ${ms(bar1mb.ttfb)}, last byte ${ms(bar1mb.ttlb)})`,
          },
        ]),
    ...(rows.length === 0
      ? []
      : [
          {
            ok: heldBack === 0,
            text: `streams never held back: the first chunk reached the client before the upstream ended (${heldBack} held back)`,
          },
          { ok: short === 0, text: `every stream arrived whole (${short} short)` },
        ]),
    ...concurrencies.flatMap(concurrencyBars),
  ];
  if (JSON_OUT) {
    console.log(
      JSON.stringify({
        read_whole: READ_WHOLE,
        load_before: loadBefore,
        load_after: loadavg()[0],
        figures,
        concurrency: concurrency ?? null,
        concurrency_by_node: concurrencies,
        bars: bars.map((b) => ({ ok: b.ok, text: b.text })),
      }),
    );
    return bars.every((b) => b.ok) ? 0 : 1;
  }
  console.log("compact-safe guard: added latency per request (medians), streaming responses, real core");
  if (rows.length > 0) {
    console.log(line(head));
    for (const r of rows) console.log(line(r));
  }
  for (const c of concurrencies) {
    console.log(
      `Node ${c.node}: ${c.sessions} sessions at once, ${(c.body_bytes / 1024).toFixed(0)} KiB each, ${c.rounds} rounds each way: ` +
        `time to last byte p50 ${ms(c.direct.ttlb_p50)} direct, ${ms(c.guard.ttlb_p50)} guard (added ${ms(c.added.p50)}, ${c.ratio_ttlb.toFixed(2)}x; first turns ${c.ratio_ttlb_first_turns.toFixed(2)}x); ` +
        `p99 ${ms(c.direct.ttlb_p99)} direct, ${ms(c.guard.ttlb_p99)} guard (added ${ms(c.added.p99)}); ` +
        `guard CPU ${ms(c.guard_cpu_ms)} per request; guard RSS ${(c.guard_rss_start / 1048576).toFixed(0)} MiB at start, peak ${(c.guard_peak_rss / 1048576).toFixed(0)} MiB`,
    );
  }
  console.log(`load average (1 min): ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after`);
  console.log("");
  for (const b of bars) console.log(`${b.ok ? "PASS" : "FAIL"}  ${b.text}`);
  return bars.every((b) => b.ok) ? 0 : 1;
}

if (isMainThread) process.exitCode = await main();
else {
  const data = workerData as { upstream: string; readWhole: boolean };
  await guardWorker(data.upstream, data.readWhole);
}
