/**
 * `npm run bench:audit`: `compact-safe audit PATH… --json` over the corpus repeated to at least 1,000
 * sessions (symbolic links in a temporary folder, laid out by agent), as a user runs it: each run is a
 * child process that runs the command's own entry point (`dist/src/cli/main.js`, its JSON Lines
 * written to nowhere), measured from the process's start (its modules loaded, the walk, the worker
 * pool, the aggregate).
 *
 * It runs under the machine's Node and the pinned Node 22 and 24 that users run (scripts/node-version.mjs
 * installs them into a cache folder; `--node this` measures the machine's alone), and reports for
 * each: sessions per second, the CPU per byte of the batch on one worker against `JSON.parse` of the
 * same bytes on that Node (decoded, every JSONL line, on one core), the speed-up from one worker to
 * two (and to all cores when there are more), and the peak RSS. Bars (issue 47), on every Node:
 *   - CPU per byte at most 3x `JSON.parse`'s;
 *   - speed-up at least 1.6x from one worker to two;
 *   - peak RSS at most 200 MB per worker above the largest session (bytes) in flight.
 * The load average is printed before and after: on a shared machine the speed-up measured while
 * others run is low. Exit 1 when a bar is missed.
 *
 *   npm run bench:audit [-- --sessions N] [-- --node this] [-- --json]
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { nodesToMeasure } from "./nodes.js";

const here = fileURLToPath(import.meta.url);
const repoRoot = join(here, "..", "..", "..");
const corpusDir = join(repoRoot, "..", "shared", "corpus");
const cliMain = join(here, "..", "..", "src", "cli", "main.js");

const BAR_CPU_PER_BYTE = 3;
const BAR_SPEEDUP = 1.6;
const BAR_RSS_PER_WORKER = 200 * 1024 * 1024;
interface ChildResult {
  jobs: number;
  exitCode: number;
  /** The JSON Lines written: one a session (or file skipped), then the summary. */
  lines: number;
  wallMs: number;
  cpuMs: number;
  maxRssBytes: number;
}

/**
 * The child: `compact-safe audit DIR --jobs N --json` through the command's own entry point, its
 * output to nowhere (as `> /dev/null`); wall and CPU time from the process's start.
 */
async function child(dir: string, jobs: number): Promise<void> {
  const write = process.stdout.write.bind(process.stdout);
  let lines = 0;
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) lines++;
    const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
    if (done) queueMicrotask(done);
    return true;
  }) as typeof process.stdout.write;
  process.argv = [process.execPath, cliMain, "audit", dir, "--jobs", String(jobs), "--json"];
  await import(pathToFileURL(cliMain).href);
  const c = process.cpuUsage();
  const result: ChildResult = {
    jobs,
    exitCode: Number(process.exitCode ?? 0),
    lines,
    wallMs: performance.now(),
    cpuMs: (c.user + c.system) / 1000,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  };
  // 1 is the command's verdict (a compaction lost what must survive), not a failure of the run.
  if (result.exitCode > 1) throw new Error(`compact-safe audit exited ${result.exitCode}`);
  write(`${JSON.stringify(result)}\n`);
  process.exitCode = 0;
}

/** The corpus's session files (sidecars and licences left out). */
function corpusSessions(): string[] {
  const out: string[] = [];
  for (const sub of readdirSync(corpusDir, { withFileTypes: true })) {
    if (!sub.isDirectory() || sub.name === "LICENSES") continue;
    for (const f of readdirSync(join(corpusDir, sub.name)))
      if (!f.endsWith(".metadata.json")) out.push(join(corpusDir, sub.name, f));
  }
  return out.sort();
}

/** JSON.parse of the files' bytes as the batch reads them (decoded; a JSONL line by line), on this thread. */
function parseCpuMs(files: readonly string[], times: number): number {
  const bufs = files.map((f) => readFileSync(f));
  const c0 = process.cpuUsage();
  for (let r = 0; r < times; r++)
    for (const b of bufs) {
      const text = b.toString("utf8");
      if (text.trimStart().startsWith("[") || !text.includes("\n")) {
        JSON.parse(text);
        continue;
      }
      for (const line of text.split("\n")) {
        if (line === "") continue;
        try {
          JSON.parse(line);
        } catch {
          // a broken line (the corpus has one): parsed as far as it goes, as the importers do
        }
      }
    }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

/** The parse's child: the page cache warmed by one pass, then `times` passes measured. */
function parseChild(times: number): void {
  const files = corpusSessions();
  parseCpuMs(files, 1);
  process.stdout.write(`${JSON.stringify({ parseMs: parseCpuMs(files, times) })}\n`);
}

function lastJson<T>(node: string, args: readonly string[]): T {
  const outText = execFileSync(node, [here, ...args], { encoding: "utf8", maxBuffer: 1 << 24 });
  return JSON.parse(outText.trim().split("\n").at(-1)!) as T;
}

const runChild = (node: string, dir: string, jobs: number) =>
  lastJson<ChildResult>(node, ["--child", dir, String(jobs)]);

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

interface NodeResult {
  node: string;
  parse_cpu_ms: number;
  runs: {
    jobs: number;
    wall_ms: number;
    cpu_ms: number;
    sessions_per_s: number;
    peak_rss: string;
    cores_had: number;
    rss_bar: string;
  }[];
  cpu_per_byte_vs_parse: number;
  speedup_1_to_2: number;
  speedup_1_to_all: number | undefined;
  cpu_2_vs_1: number;
  bars: { cpu_per_byte: boolean; speedup: boolean; peak_rss: boolean };
}

/** One Node's runs: the parse, one worker, two, all cores (when more than two). */
function measureNode(
  node: { bin: string; version: string },
  dir: string,
  o: { sessions: number; times: number; largest: number; cores: number },
): NodeResult {
  const parseMs = lastJson<{ parseMs: number }>(node.bin, ["--parse", String(o.times)]).parseMs;
  const one = runChild(node.bin, dir, 1);
  const two = runChild(node.bin, dir, 2);
  const all = o.cores > 2 ? runChild(node.bin, dir, o.cores) : undefined;
  for (const r of [one, two, ...(all ? [all] : [])])
    if (r.lines !== o.sessions + 1)
      throw new Error(
        `Node ${node.version}, --jobs ${r.jobs}: ${r.lines} JSON Lines for ${o.sessions} sessions and the summary`,
      );
  const cpuRatio = one.cpuMs / parseMs;
  const speedup = one.wallMs / two.wallMs;
  const runs = [one, two, ...(all ? [all] : [])];
  return {
    node: node.version,
    parse_cpu_ms: Math.round(parseMs),
    runs: runs.map((r) => ({
      jobs: r.jobs,
      wall_ms: Math.round(r.wallMs),
      cpu_ms: Math.round(r.cpuMs),
      sessions_per_s: Number(((o.sessions / r.wallMs) * 1000).toFixed(1)),
      peak_rss: mb(r.maxRssBytes),
      cores_had: Number((r.cpuMs / r.wallMs).toFixed(2)),
      rss_bar: mb(r.jobs * BAR_RSS_PER_WORKER + o.largest),
    })),
    cpu_per_byte_vs_parse: Number(cpuRatio.toFixed(2)),
    speedup_1_to_2: Number(speedup.toFixed(2)),
    speedup_1_to_all: all ? Number((one.wallMs / all.wallMs).toFixed(2)) : undefined,
    cpu_2_vs_1: Number((two.cpuMs / one.cpuMs).toFixed(2)),
    bars: {
      cpu_per_byte: cpuRatio <= BAR_CPU_PER_BYTE,
      speedup: speedup >= BAR_SPEEDUP,
      peak_rss: runs.every((r) => r.maxRssBytes <= r.jobs * BAR_RSS_PER_WORKER + o.largest),
    },
  };
}

function printNode(r: NodeResult, cores: number): void {
  const ok = (b: boolean) => (b ? "ok" : "MISSED");
  console.log(`  Node ${r.node}:`);
  for (const x of r.runs)
    console.log(
      `    --jobs ${x.jobs}: ${(x.wall_ms / 1000).toFixed(2)} s, ${x.sessions_per_s} sessions/s, CPU ${(x.cpu_ms / 1000).toFixed(2)} s (${x.cores_had} cores busy on average), peak RSS ${x.peak_rss} (bar ${x.rss_bar})`,
    );
  console.log(
    `    CPU per byte: ${r.cpu_per_byte_vs_parse.toFixed(2)}x JSON.parse of the same bytes (${(r.parse_cpu_ms / 1000).toFixed(2)} s on one core; bar <= ${BAR_CPU_PER_BYTE}x): ${ok(r.bars.cpu_per_byte)}`,
  );
  console.log(
    `    speed-up 1 -> 2 workers: ${r.speedup_1_to_2.toFixed(2)}x (bar >= ${BAR_SPEEDUP}x): ${ok(r.bars.speedup)}; CPU of 2 workers against 1: ${r.cpu_2_vs_1.toFixed(2)}x (what the pool adds)`,
  );
  if (r.speedup_1_to_all !== undefined)
    console.log(`    speed-up 1 -> ${cores} workers: ${r.speedup_1_to_all}x`);
  console.log(`    peak RSS: ${ok(r.bars.peak_rss)} (at most 200 MB per worker above the largest session)`);
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === "--child") {
    await child(argv[1]!, Number(argv[2]));
    return 0;
  }
  if (argv[0] === "--parse") {
    parseChild(Number(argv[1]));
    return 0;
  }
  const want = argv.includes("--sessions") ? Number(argv[argv.indexOf("--sessions") + 1]) : 1000;
  const files = corpusSessions();
  const times = Math.ceil(want / files.length);
  const dir = mkdtempSync(join(tmpdir(), "cs-bench-audit-"));
  try {
    for (let r = 0; r < times; r++)
      for (const f of files) {
        const sub = join(dir, `r${String(r).padStart(3, "0")}`, f.split("/").at(-2)!);
        mkdirSync(sub, { recursive: true });
        symlinkSync(f, join(sub, f.split("/").at(-1)!));
      }
    const largest = Math.max(...files.map((f) => statSync(f).size));
    const bytes = files.reduce((n, f) => n + statSync(f).size, 0) * times;
    const sessions = files.length * times;
    const cores = availableParallelism();
    const json = argv.includes("--json");
    const date = new Date().toISOString();
    const machine = `${cpus()[0]?.model ?? "?"}, ${cores} cores, ${mb(totalmem())}`;
    if (!json) {
      console.log(`bench:audit: ${date}; ${machine}`);
      console.log(
        `  compact-safe audit DIR --jobs N --json: ${sessions} sessions, ${mb(bytes)} (the corpus's ${files.length} sessions x ${times}); largest ${mb(largest)}`,
      );
    }
    const nodes = nodesToMeasure(argv);
    const loadBefore = load();
    const results: NodeResult[] = [];
    for (const node of nodes) {
      const r = measureNode(node, dir, { sessions, times, largest, cores });
      results.push(r);
      if (!json) printNode(r, cores);
    }
    const loadAfter = load();
    if (json)
      console.log(
        JSON.stringify(
          {
            date,
            machine,
            sessions,
            bytes,
            largest_session_bytes: largest,
            nodes: results,
            load_average: { before: loadBefore, after: loadAfter },
          },
          null,
          2,
        ),
      );
    else console.log(`  load average (1, 5, 15 min): before ${loadBefore}; after ${loadAfter}`);
    return results.every((r) => Object.values(r.bars).every(Boolean)) ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main(process.argv.slice(2));
