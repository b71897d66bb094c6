/**
 * The concurrency row of `npm run bench:guard` (issue 43): 32 sessions at
 * once, each sending a 1 MB Claude Code request and reading a streamed
 * answer, through the guard and directly to the same local fake upstream,
 * in alternating rounds of the same run. The first guarded round is the 32
 * sessions' first turns (new sessions: each body read whole and judged
 * before it goes out); the later rounds are next turns of the same sessions
 * (let through on their bytes, judged after the answer).
 *
 * The guard runs in a child process of its own (this file, forked with
 * `--guard-child`, on the Node it is given: bench:guard runs the row under
 * each Node users run), so that its peak resident memory (`maxRSS` of
 * `process.resourceUsage()`) is its own: the client and the fake upstream
 * share the parent's thread. That process keeps its young generation small,
 * as `compact-safe guard` does (`keepYoungGenerationSmall`; `--default-heap`:
 * V8's own sizing, for comparison). The upstream streams its answer (its events
 * written one per turn of its event loop) as soon as it has the whole body.
 *
 * Figures: the added latency at the 50th and 99th percentile of time to the
 * last byte (guarded less direct, over all the requests of the rounds), the
 * median time to last byte as a ratio to direct's (all rounds, and the first
 * turns alone), and the guard's peak RSS against the bodies it holds. Bars:
 * the median ratio at most 1.25, and the peak RSS under 3x the held bodies
 * plus 100 MB.
 */
import http from "node:http";
import { fork, type ChildProcess } from "node:child_process";
import type { AddressInfo } from "node:net";
import { createGuardCore, startGuard, type GuardCore } from "../src/guard/index.js";
import type { NodeBinary } from "./nodes.js";

export const SESSIONS = 32;
const ROUNDS = 6;
export const RATIO_BAR = 1.25;
const RSS_FACTOR = 3;
const RSS_BASE = 100 * 1024 * 1024;

export interface ConcurrencyFigures {
  /** The Node the guard's process ran on (`node --version`). */
  node: string;
  sessions: number;
  rounds: number;
  body_bytes: number;
  held_bytes: number;
  direct: { ttlb_p50: number; ttlb_p99: number };
  guard: { ttlb_p50: number; ttlb_p99: number };
  added: { p50: number; p99: number };
  ratio_ttlb: number;
  ratio_ttlb_first_turns: number;
  guard_rss_start: number;
  guard_peak_rss: number;
  /** The guard process's CPU per guarded request (its work after the answers included), in ms. */
  guard_cpu_ms: number;
  rss_bar: number;
  short: number;
}

/** The same body for each of `n` sessions: `id` (36 characters) replaced by an id of the same length per session. */
function sessionBodies(body: Buffer, id: string, n: number): { id: string; body: Buffer }[] {
  const text = body.toString("utf8");
  return Array.from({ length: n }, (_, i) => {
    const own = `${id.slice(0, -4)}${i.toString(16).padStart(4, "0")}`;
    return { id: own, body: Buffer.from(text.replaceAll(id, own), "utf8") };
  });
}

/** A fake upstream that reads the whole body, then streams `events`, one per turn of its event loop. */
async function streamingUpstream(events: readonly Buffer[]) {
  const server = http.createServer({ noDelay: true }, async (req, res) => {
    for await (const _ of req) void _;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    for (const e of events) {
      res.write(e);
      await new Promise((r) => setImmediate(r));
    }
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface ChildReply {
  url?: string;
  maxRss?: number;
  rss?: number;
  /** The guard process's CPU time so far, in ms (user and system). */
  cpu?: number;
}

/** The guard in a child process (this file with `--guard-child`), asked over IPC. */
async function guardChild(upstream: string, proxyOnly: boolean, node: NodeBinary) {
  const args = [
    "--guard-child",
    upstream,
    String(proxyOnly),
    String(process.argv.includes("--default-heap")),
  ];
  const child: ChildProcess = fork(new URL(import.meta.url), args, {
    execPath: node.bin,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    // BENCH_GUARD_CHILD_ARGS: Node flags for the guard's process alone (`--cpu-prof`, to see where its time goes).
    execArgv: [
      // Before the guard's modules load (which grows V8's young generation), as `compact-safe guard` does.
      ...(process.argv.includes("--default-heap")
        ? []
        : ["--import", new URL("./guard-child-heap.js", import.meta.url).href]),
      ...(process.env.BENCH_GUARD_CHILD_ARGS ?? "").split(" ").filter((a) => a !== ""),
    ],
  });
  const ask = (m?: string) =>
    new Promise<ChildReply>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the guard's process ended (${code})`));
      child.once("exit", onExit);
      child.once("message", (r: ChildReply) => {
        child.off("exit", onExit);
        resolve(r);
      });
      if (m !== undefined) child.send(m);
    });
  const { url } = await ask();
  return {
    url: url!,
    idle: () => ask("idle"),
    memory: () => ask("memory"),
    close: async () => {
      await ask("close");
      child.disconnect();
    },
  };
}

/** The child's side: a guard with the real core, answering "idle", "memory" and "close". */
async function childMain(upstream: string, proxyOnly: boolean): Promise<void> {
  // `--proxy-only`: a core that lets every request through untouched, to see what the proxy alone costs.
  const core: GuardCore = proxyOnly
    ? { handle: async (r) => ({ body: r.body, changed: false }), idle: async () => {}, close: async () => {} }
    : createGuardCore({ mode: "repair" });
  const guard = await startGuard({ upstream, core, log: () => {} });
  const memory = () => {
    const c = process.cpuUsage();
    return {
      maxRss: process.resourceUsage().maxRSS * 1024,
      rss: process.memoryUsage().rss,
      cpu: (c.user + c.system) / 1000,
    };
  };
  process.on("message", async (m: string) => {
    if (m === "idle") await core.idle();
    else if (m === "close") await guard.close();
    process.send!(memory());
  });
  process.send!({ url: guard.url, ...memory() });
}

/** One request: the time to its answer's last byte, and the bytes of that answer. */
function timed(
  base: string,
  s: { id: string; body: Buffer },
  headers: Record<string, string>,
  agent: http.Agent,
): Promise<{ ttlb: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let bytes = 0;
    const req = http.request(
      new URL("/v1/messages?beta=true", base),
      {
        method: "POST",
        agent,
        headers: {
          ...headers,
          "x-claude-code-session-id": s.id,
          "content-length": String(s.body.length),
        },
      },
      (res) => {
        res.on("data", (c: Buffer) => (bytes += c.length));
        res.on("end", () => resolve({ ttlb: performance.now() - t0, bytes }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(s.body);
  });
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  return s[lo] + (s[Math.ceil(at)] - s[lo]) * (at - lo);
};

/** The row: rounds of SESSIONS requests at once, direct and through the guard alternately. */
export async function concurrencyRow(
  body: Buffer,
  sessionId: string,
  headers: Record<string, string>,
  events: readonly Buffer[],
  proxyOnly = false,
  node: NodeBinary = { bin: process.execPath, version: process.version },
): Promise<ConcurrencyFigures> {
  const sessions = sessionBodies(body, sessionId, SESSIONS);
  const up = await streamingUpstream(events);
  const guard = await guardChild(up.url, proxyOnly, node);
  const start = await guard.memory();
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const expected = Buffer.concat(events).length;
  const direct: number[] = [];
  const guarded: number[] = [];
  const firstDirect: number[] = [];
  const firstGuarded: number[] = [];
  let short = 0;
  let end: ChildReply = {};
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const which of round % 2 ? (["guard", "direct"] as const) : (["direct", "guard"] as const)) {
        const base = which === "guard" ? guard.url : up.url;
        const got = await Promise.all(sessions.map((s) => timed(base, s, headers, agent)));
        // The guard's work left for after the answers is done before the next round (a real agent's
        // next turn waits for the model, which takes far longer).
        if (which === "guard") await guard.idle();
        short += got.filter((g) => g.bytes !== expected).length;
        const times = got.map((g) => g.ttlb);
        (which === "guard" ? guarded : direct).push(...times);
        if (round === 0) (which === "guard" ? firstGuarded : firstDirect).push(...times);
      }
    }
  } finally {
    agent.destroy();
    end = await guard.memory();
    await guard.close();
    await up.close();
  }
  const held = sessions.reduce((n, s) => n + s.body.length, 0);
  const d = { ttlb_p50: quantile(direct, 0.5), ttlb_p99: quantile(direct, 0.99) };
  const g = { ttlb_p50: quantile(guarded, 0.5), ttlb_p99: quantile(guarded, 0.99) };
  return {
    node: node.version,
    sessions: SESSIONS,
    rounds: ROUNDS,
    body_bytes: body.length,
    held_bytes: held,
    direct: d,
    guard: g,
    added: { p50: g.ttlb_p50 - d.ttlb_p50, p99: g.ttlb_p99 - d.ttlb_p99 },
    ratio_ttlb: g.ttlb_p50 / d.ttlb_p50,
    ratio_ttlb_first_turns: quantile(firstGuarded, 0.5) / quantile(firstDirect, 0.5),
    guard_rss_start: start.rss!,
    guard_peak_rss: end.maxRss!,
    guard_cpu_ms: (end.cpu! - start.cpu!) / guarded.length,
    rss_bar: RSS_FACTOR * held + RSS_BASE,
    short,
  };
}

/** The bars of the row, as the bench prints them. */
export function concurrencyBars(f: ConcurrencyFigures): { ok: boolean; text: string }[] {
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MiB`;
  return [
    {
      ok: f.ratio_ttlb <= RATIO_BAR,
      text: `Node ${f.node}, ${f.sessions} sessions of 1 MB at once: median time to last byte at most ${RATIO_BAR}x direct's (${f.ratio_ttlb.toFixed(2)}x; first turns ${f.ratio_ttlb_first_turns.toFixed(2)}x)`,
    },
    {
      ok: f.guard_peak_rss < f.rss_bar,
      text: `Node ${f.node}, guard's peak RSS under ${RSS_FACTOR}x the held bodies + 100 MiB (${mb(f.guard_peak_rss)} < ${mb(f.rss_bar)}, bodies ${mb(f.held_bytes)})`,
    },
    { ok: f.short === 0, text: `Node ${f.node}, every concurrent stream arrived whole (${f.short} short)` },
  ];
}

if (process.argv[2] === "--guard-child" && process.send !== undefined)
  await childMain(process.argv[3], process.argv[4] === "true");
