/**
 * `npm run bench:host [-- --json] [--sizes 2000,20000,100000]`: what a host
 * pays per step, measured as an agent developer would, in one process, with
 * the hosts' own comparisons, and what the command line costs to start.
 *
 * - AI SDK: `compactSafePrepareStep` against the AI SDK's own
 *   `pruneMessages` (reasoning before the last message, tool calls before
 *   the last two messages) on the same `ModelMessage[]`.
 * - LangChain: `compactSafeMiddleware`'s `beforeModel` against
 *   `summarizationMiddleware`'s (the same `FakeListChatModel` as the
 *   summarizer, the same threshold figure: 0.8 of the window), on the same
 *   state.
 * - Responses: `compactResponsesItems` with a window (its pressure check),
 *   and pi's conversion (`fromPiMessages` ∘ `toPiMessages`), no peer.
 *
 * Histories: `syntheticSession(n)` (bench/synthetic.ts) converted to the
 * host's own types, n = 2k and 20k messages by default (the bars' sizes), 100k
 * with `--sizes 2000,20000,100000`: on 2026-12-02, at a load average of 17–29,
 * 2k and 20k took at most 31 minutes and 100k had not finished after
 * 40 more, so it is not a default. Cases: the first call (the AI SDK: the
 * adapter's first call and `pruneMessages`' first call, each the first call
 * of its code in a fresh process that imported both and read the history as
 * JSON, the two in turn, which first alternating, medians over 6 processes;
 * LangChain: a fresh instance), a later step (the same instance; the step appends a tool
 * call and its result, new objects), each without a compaction (a window far
 * above the history) and with one (a window that the first call, or the
 * appended messages, push past the threshold; an instant stand-in summarizer
 * for compact-safe's AI SDK adapter, `FakeListChatModel` for LangChain).
 * Each figure is the median CPU time (`process.cpuUsage`) of a few runs,
 * ours and the peer's interleaved so that a loaded machine slows both, each
 * after a full collection and a pause for the collector's threads to finish
 * (`settledGc`).
 *
 * The command line: `node dist/src/cli/main.js --version`, `context` on a
 * 5 MB Claude Code session (corpus sessions end to end, as bench/hooks.ts
 * builds them) and each hook recipe (`hook claude-code`, `hook codex`,
 * `hook pi`) on a 5 MB session, against bare `node -e 0`: the CPU time of the
 * child (user + system, read with bash's `times` builtin around the command,
 * so the command runs unchanged), median of five.
 *
 * Bars (issue 26, first calls as issue 46 decided): AI SDK first call on 20k
 * messages ≤ 3× pruneMessages' first call and
 * a later step ≤ 1×; the LangChain middleware with nothing to compact ≤ 2×
 * summarizationMiddleware (a later step, and the first call reported); growth
 * from 2k to 20k ≤ 12× for every adapter case; `--version` ≤ 2× `node -e 0`;
 * each hook recipe under 300 ms of CPU. Every figure is printed; exit 1 when
 * a bar is missed, 2 when the corpus is missing.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message } from "../src/model/index.js";
import type { Summarizer } from "../src/summarizers/types.js";
import { estimateTokens } from "../src/engine/tokens.js";
import { syntheticSession } from "./synthetic.js";
import { median, runJsonChild, settledGc, timeMsAsync } from "./harness.js";
import { STAND_IN_NOTE } from "./peers-core.js";
import { cliPath, corpusDir } from "../test/support.js";
import { claudeCodeSession, codexSession, piSession } from "./hook-sessions.js";
import { lastCompaction } from "../test/pi-extension.js";

interface Row {
  adapter: string;
  case: string;
  messages: number | null;
  ours_ms: number;
  peer: string | null;
  peer_ms: number | null;
  ratio: number | null;
}
interface Bar {
  bar: string;
  value: number;
  limit: number;
  ok: boolean;
}

const args = process.argv.slice(2);
const json = args.includes("--json");
const sizesArg = args[args.indexOf("--sizes") + 1];
const SIZES = args.includes("--sizes") && sizesArg ? sizesArg.split(",").map(Number) : [2_000, 20_000];
const runsFor = (n: number): number => (n <= 2_000 ? 9 : n <= 20_000 ? 5 : 3);
const cpu = async (f: () => unknown): Promise<number> => (await timeMsAsync(f)).ms;

/** Median CPU of `runs` interleaved runs of ours and the peer's on what `setup` (untimed) made for the run. */
async function pair<S>(
  runs: number,
  setup: () => Promise<S> | S,
  ours: (s: S) => Promise<unknown> | unknown,
  peer: ((s: S) => Promise<unknown> | unknown) | undefined,
): Promise<{ ours: number; peer: number | null }> {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = await setup();
    await settledGc();
    a.push(await cpu(() => ours(s)));
    if (peer) {
      await settledGc();
      b.push(await cpu(() => peer(s)));
    }
  }
  return { ours: median(a), peer: peer ? median(b) : null };
}

const standIn: Summarizer = {
  name: "stand-in",
  model: "stand-in",
  summarize: async () => ({ text: STAND_IN_NOTE, model: "stand-in" }),
};

/** The messages a step appends: an assistant tool call and its result (`bytes` of output). */
function stepMessages(k: number, bytes: number): Message[] {
  return [
    {
      role: "assistant",
      content: [
        { type: "text", text: `Reading the next file (${k}).` },
        { type: "tool_use", id: `step_${k}`, name: "Read", input: { file_path: `src/step${k}.ts` } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: `step_${k}`, content: `// step ${k}\n`.padEnd(bytes, "x") },
      ],
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// AI SDK

/** Fresh processes for the first calls (the order of the two alternating from one to the next). */
const FIRST_RUNS = 6;

/**
 * The adapter's first call and `pruneMessages`' first call, each the first call of its code in a
 * fresh process that has imported both and read the history (as JSON: no code of either has run),
 * the two in turn, which first alternating; the medians over `runs` processes.
 */
function firstCalls(base: unknown[], window: number, runs: number): { ours: number; peer: number } {
  const dir = mkdtempSync(join(tmpdir(), "cs-bench-first-"));
  const file = join(dir, "history.json");
  writeFileSync(file, JSON.stringify(base));
  const ours: number[] = [];
  const peer: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const order = i % 2 === 0 ? "ours" : "peer";
      const r = runJsonChild<{ ours: number; peer: number }>(
        [fileURLToPath(import.meta.url), "--first", file, String(window), order],
        { maxBufferMB: 16, name: "first call" },
      );
      if (!("report" in r)) throw new Error(`bench:host: ${r.why}`);
      ours.push(r.report.ours);
      peer.push(r.report.peer);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { ours: median(ours), peer: median(peer) };
}

/** In a fresh process (`--first FILE WINDOW ours|peer`): the two first calls, timed, in the order given. */
async function firstChild(
  file: string,
  window: number,
  order: string,
): Promise<{ ours: number; peer: number }> {
  const { compactSafePrepareStep } = await import("../src/adapters/ai-sdk.js");
  const { pruneMessages } = await import("ai");
  type MM = import("ai").ModelMessage;
  const messages = JSON.parse(readFileSync(file, "utf8")) as MM[];
  const step = compactSafePrepareStep({ window });
  const calls: Record<"ours" | "peer", () => unknown> = {
    ours: () => step({ messages, stepNumber: 0, steps: [] }),
    peer: () =>
      pruneMessages({
        messages,
        reasoning: "before-last-message",
        toolCalls: "before-last-2-messages",
        emptyMessages: "remove",
      }),
  };
  const out = { ours: 0, peer: 0 };
  for (const which of order === "ours" ? (["ours", "peer"] as const) : (["peer", "ours"] as const)) {
    await settledGc();
    out[which] = await cpu(calls[which]);
  }
  return out;
}

async function aiSdk(n: number, rows: Row[], firstRuns = FIRST_RUNS): Promise<void> {
  const { compactSafePrepareStep, toModelMessages } = await import("../src/adapters/ai-sdk.js");
  const { pruneMessages } = await import("ai");
  type MM = import("ai").ModelMessage;
  const history = syntheticSession(n);
  const base = toModelMessages(history);
  const est = estimateTokens(history);
  const roomy = est * 4;
  const prune = (messages: MM[]) =>
    pruneMessages({
      messages,
      reasoning: "before-last-message",
      toolCalls: "before-last-2-messages",
      emptyMessages: "remove",
    });
  const runs = runsFor(n);
  const add = (c: string, r: { ours: number; peer: number | null }, peer = "pruneMessages") =>
    rows.push({
      adapter: "ai-sdk",
      case: c,
      messages: n,
      ours_ms: r.ours,
      peer,
      peer_ms: r.peer,
      ratio: r.peer ? r.ours / r.peer : null,
    });
  const input = (messages: MM[], stepNumber: number) => ({ messages, stepNumber, steps: [] });
  // First call, nothing to compact: each the first call of its code, in fresh processes.
  if (firstRuns > 0) add("first call", firstCalls(base, roomy, firstRuns));
  // Later steps, nothing to compact: one warmed instance, each run a new step of two messages.
  const warm = compactSafePrepareStep({ window: roomy });
  await warm(input(base, 0));
  let grown = base;
  let k = 0;
  add(
    "later step",
    await pair(
      runs,
      () => {
        grown = [...grown, ...toModelMessages(stepMessages(k++, 400))];
        return grown;
      },
      (messages) => warm(input(messages, k)),
      (messages) => prune(messages),
    ),
  );
  // First call with a compaction.
  let compacted = 0;
  const tight = Math.floor(est / 0.9);
  add(
    "first call, compacts",
    await pair(
      Math.min(runs, 3),
      () => compactSafePrepareStep({ window: tight, summarizer: standIn, onCompaction: () => compacted++ }),
      (step) => step(input(base, 0)),
      () => prune(base),
    ),
  );
  // A later step whose two new messages push the history past the threshold.
  const extra = toModelMessages(stepMessages(999_999, 40_000));
  const after = estimateTokens([...history, ...stepMessages(999_999, 40_000)]);
  const between = Math.floor((est + after) / 2 / 0.8);
  add(
    "later step, compacts",
    await pair(
      Math.min(runs, 3),
      async () => {
        const step = compactSafePrepareStep({
          window: between,
          summarizer: standIn,
          onCompaction: () => compacted++,
        });
        await step(input(base, 0));
        return step;
      },
      (step) => step(input([...base, ...extra], 1)),
      () => prune([...base, ...extra]),
    ),
  );
  if (compacted < 2) throw new Error(`ai-sdk: the compaction cases did not compact (${compacted})`);
}

// ---------------------------------------------------------------------------------------------
// LangChain

async function langChain(n: number, rows: Row[]): Promise<void> {
  const { compactSafeMiddleware, toLangChainMessages } = await import("../src/adapters/langchain.js");
  const { summarizationMiddleware } = await import("langchain");
  const { FakeListChatModel } = await import("@langchain/core/utils/testing");
  type BaseMessage = import("@langchain/core/messages").BaseMessage;
  type Hook = (
    s: { messages: BaseMessage[] },
    runtime: object,
  ) => Promise<{ messages: BaseMessage[] } | undefined>;
  const hook = (mw: unknown): Hook => (mw as { beforeModel: Hook }).beforeModel;
  const model = () => new FakeListChatModel({ responses: [STAND_IN_NOTE] });
  const withIds = (ms: BaseMessage[]): BaseMessage[] => {
    for (const m of ms) if (!m.id) m.id = randomUUID();
    return ms;
  };
  const history = syntheticSession(n);
  const base = withIds(toLangChainMessages(history));
  const est = estimateTokens(history);
  const roomy = est * 4;
  const ours = (window: number, onCompaction?: () => void) =>
    hook(compactSafeMiddleware({ model: model(), window, onCompaction }));
  const theirs = (trigger: { tokens?: number; messages?: number }, keep: number) =>
    hook(summarizationMiddleware({ model: model(), trigger, keep: { tokens: keep } }));
  const runs = runsFor(n);
  const rt = { context: {} };
  const add = (c: string, r: { ours: number; peer: number | null }) =>
    rows.push({
      adapter: "langchain",
      case: c,
      messages: n,
      ours_ms: r.ours,
      peer: "summarizationMiddleware",
      peer_ms: r.peer,
      ratio: r.peer ? r.ours / r.peer : null,
    });
  const threshold = Math.floor(roomy * 0.8);
  add(
    "first call",
    await pair(
      runs,
      () => ({ o: ours(roomy), t: theirs({ tokens: threshold }, roomy / 2) }),
      (s) => s.o({ messages: base }, rt),
      (s) => s.t({ messages: base }, rt),
    ),
  );
  const warmOurs = ours(roomy);
  const warmTheirs = theirs({ tokens: threshold }, roomy / 2);
  await warmOurs({ messages: base }, rt);
  await warmTheirs({ messages: base }, rt);
  let grown = base;
  let k = 0;
  add(
    "later step",
    await pair(
      runs,
      () => {
        grown = [...grown, ...withIds(toLangChainMessages(stepMessages(k++, 400)))];
        return grown;
      },
      (messages) => warmOurs({ messages }, rt),
      (messages) => warmTheirs({ messages }, rt),
    ),
  );
  let compacted = 0;
  const tight = Math.floor(est / 0.9);
  add(
    "first call, compacts",
    await pair(
      Math.min(runs, 3),
      () => ({
        o: ours(tight, () => compacted++),
        t: theirs({ messages: base.length }, Math.floor(tight / 2)),
      }),
      (s) => s.o({ messages: base }, rt),
      (s) => s.t({ messages: base }, rt),
    ),
  );
  const extra = withIds(toLangChainMessages(stepMessages(999_999, 40_000)));
  const after = estimateTokens([...history, ...stepMessages(999_999, 40_000)]);
  const between = Math.floor((est + after) / 2 / 0.8);
  add(
    "later step, compacts",
    await pair(
      Math.min(runs, 3),
      async () => {
        const o = ours(between, () => compacted++);
        const t = theirs({ messages: base.length + 1 }, Math.floor(between / 2));
        await o({ messages: base }, rt);
        await t({ messages: base }, rt);
        return { o, t };
      },
      (s) => s.o({ messages: [...base, ...extra] }, rt),
      (s) => s.t({ messages: [...base, ...extra] }, rt),
    ),
  );
  if (compacted < 2) throw new Error(`langchain: the compaction cases did not compact (${compacted})`);
}

// ---------------------------------------------------------------------------------------------
// Responses and pi (no peer: their growth)

async function responsesAndPi(n: number, rows: Row[]): Promise<void> {
  const { compactResponsesItems, toResponsesItems } = await import("../src/adapters/responses.js");
  const { fromPiMessages, toPiMessages } = await import("../src/adapters/pi-convert.js");
  const history = syntheticSession(n);
  const items = toResponsesItems(history);
  const roomy = estimateTokens(history) * 4;
  const runs = runsFor(n);
  const r = await pair(
    runs,
    () => undefined,
    async () => {
      const out = await compactResponsesItems(items, { window: roomy });
      if (out.ok || out.error.kind !== "below_threshold")
        throw new Error("responses: expected no compaction");
    },
    undefined,
  );
  rows.push({
    adapter: "responses",
    case: "pressure check",
    messages: n,
    ours_ms: r.ours,
    peer: null,
    peer_ms: null,
    ratio: null,
  });
  const p = await pair(
    runs,
    () => undefined,
    () => fromPiMessages(toPiMessages(history)),
    undefined,
  );
  rows.push({
    adapter: "pi",
    case: "convert both ways",
    messages: n,
    ours_ms: p.ours,
    peer: null,
    peer_ms: null,
    ratio: null,
  });
}

// ---------------------------------------------------------------------------------------------
// The command line

/** CPU (user + system) and wall time of one child command, read with bash's `times` builtin. */
function childCpu(argv: string[], stdin: string | undefined, cwd: string): { cpu: number; wall: number } {
  const quoted = argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const started = process.hrtime.bigint();
  const r = spawnSync(
    "bash",
    ["-c", `${quoted} >/dev/null 2>&1 ${stdin === undefined ? "</dev/null" : ""}; times`],
    {
      input: stdin,
      encoding: "utf8",
      cwd,
    },
  );
  const wall = Number(process.hrtime.bigint() - started) / 1e6;
  const lines = r.stdout.trim().split("\n");
  const m = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/.exec(lines.at(-1) ?? "");
  if (r.status !== 0 || !m) throw new Error(`bench:host: could not time ${argv.join(" ")}: ${r.stderr}`);
  const s = (min: string, sec: string) => (Number(min) * 60 + Number(sec)) * 1000;
  return { cpu: s(m[1]!, m[2]!) + s(m[3]!, m[4]!), wall };
}

function cli(rows: Row[], dir: string): void {
  const node = process.execPath;
  const RUNS = 5;
  const measure = (argv: string[], stdin?: string) => {
    const xs: number[] = [];
    for (let i = 0; i < RUNS; i++) xs.push(childCpu(argv, stdin, dir).cpu);
    return median(xs);
  };
  const bare = measure([node, "-e", "0"]);
  const add = (c: string, ms: number) =>
    rows.push({
      adapter: "cli",
      case: c,
      messages: null,
      ours_ms: ms,
      peer: "node -e 0",
      peer_ms: bare,
      ratio: ms / bare,
    });
  add("--version", measure([node, cliPath, "--version"]));
  const cc = claudeCodeSession(dir);
  const mb = (f: string) => (statSync(f).size / (1024 * 1024)).toFixed(1);
  add(`context (${mb(cc)} MB claude-code)`, measure([node, cliPath, "context", cc]));
  add(
    `hook claude-code (${mb(cc)} MB)`,
    measure(
      [node, cliPath, "hook", "claude-code"],
      JSON.stringify({ hook_event_name: "SessionStart", source: "compact", transcript_path: cc, cwd: dir }),
    ),
  );
  const rollout = codexSession(dir);
  add(
    `hook codex (${mb(rollout)} MB)`,
    measure(
      [node, cliPath, "hook", "codex"],
      JSON.stringify({ hook_event_name: "PostCompact", trigger: "auto", transcript_path: rollout, cwd: dir }),
    ),
  );
  const { file: pi, text } = piSession(dir);
  add(
    `hook pi (${mb(pi)} MB)`,
    measure(
      [node, cliPath, "hook", "pi"],
      JSON.stringify({ session_file: pi, compaction_id: lastCompaction(text).id, cwd: dir }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------

function bars(rows: Row[]): Bar[] {
  const out: Bar[] = [];
  const find = (adapter: string, c: string, n: number | null) =>
    rows.find((r) => r.adapter === adapter && r.case.startsWith(c) && r.messages === n);
  const bar = (name: string, value: number | null | undefined, limit: number) => {
    if (value === null || value === undefined) return;
    out.push({ bar: name, value, limit, ok: value <= limit });
  };
  if (SIZES.includes(20_000)) {
    bar(
      "ai-sdk first call on 20k ≤ 3× pruneMessages' first call (fresh processes)",
      find("ai-sdk", "first call", 20_000)?.ratio,
      3,
    );
    bar("ai-sdk later step on 20k ≤ 1× pruneMessages", find("ai-sdk", "later step", 20_000)?.ratio, 1);
    bar(
      "langchain later step, nothing to compact, on 20k ≤ 2× summarizationMiddleware",
      find("langchain", "later step", 20_000)?.ratio,
      2,
    );
  }
  if (SIZES.includes(2_000) && SIZES.includes(20_000))
    for (const r of rows.filter((x) => x.messages === 20_000)) {
      const small = find(r.adapter, r.case, 2_000);
      if (small && small.case === r.case)
        bar(`growth 2k → 20k: ${r.adapter} ${r.case} ≤ 12×`, r.ours_ms / Math.max(small.ours_ms, 0.01), 12);
    }
  bar("--version ≤ 2× node -e 0 (CPU)", rows.find((r) => r.case === "--version")?.ratio, 2);
  for (const r of rows.filter((x) => x.case.startsWith("hook ")))
    bar(`${r.case} < 300 ms CPU`, r.ours_ms, 300);
  return out;
}

function fmt(x: number | null, d = 1): string {
  return x === null ? "-" : x.toFixed(d);
}

async function main(): Promise<number> {
  if (!existsSync(corpusDir)) {
    console.error(`bench:host: the corpus is not at ${corpusDir}`);
    return 2;
  }
  const rows: Row[] = [];
  // Warm-up (untimed): every code path once, on a small history.
  await aiSdk(200, [], 0);
  await langChain(200, []);
  await responsesAndPi(200, []);
  for (const n of SIZES) {
    await aiSdk(n, rows);
    await langChain(n, rows);
    await responsesAndPi(n, rows);
    if (!json) console.error(`bench:host: ${n} messages done`);
  }
  const dir = mkdtempSync(join(tmpdir(), "cs-bench-host-"));
  try {
    cli(rows, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const verdicts = bars(rows);
  const missed = verdicts.filter((b) => !b.ok).length;
  if (json) {
    console.log(
      JSON.stringify(
        { node: process.version, date: new Date().toISOString(), rows, bars: verdicts, missed },
        null,
        2,
      ),
    );
  } else {
    console.log(
      `${"adapter".padEnd(10)} ${"case".padEnd(34)} ${"messages".padStart(8)} ${"ours ms".padStart(9)} ${"peer".padEnd(24)} ${"peer ms".padStart(9)} ${"ratio".padStart(7)}`,
    );
    for (const r of rows)
      console.log(
        `${r.adapter.padEnd(10)} ${r.case.padEnd(34)} ${String(r.messages ?? "-").padStart(8)} ${fmt(r.ours_ms).padStart(9)} ${(r.peer ?? "-").padEnd(24)} ${fmt(r.peer_ms).padStart(9)} ${fmt(r.ratio, 2).padStart(7)}`,
      );
    console.log("");
    for (const b of verdicts)
      console.log(`${b.ok ? "ok  " : "MISS"} ${b.bar}: ${b.value.toFixed(2)} (limit ${b.limit})`);
    console.log(`bench:host: ${verdicts.length - missed}/${verdicts.length} bars met`);
  }
  return missed === 0 ? 0 : 1;
}

if (args[0] === "--first") {
  process.stdout.write(`${JSON.stringify(await firstChild(args[1]!, Number(args[2]), args[3]!))}\n`);
  process.exit(0);
} else process.exitCode = await main();
