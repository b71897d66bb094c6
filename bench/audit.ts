/**
 * `npm run bench:audit`: `compact-safe audit PATH…` over the corpus repeated to at least 1,000
 * sessions (symbolic links in a temporary folder, laid out by agent). Each run is a child process
 * (its own peak RSS) that runs the batch as the command does (`runAuditBatch`: the worker pool, the
 * aggregate, the JSON Lines written to nowhere).
 *
 * It reports sessions per second, the CPU per byte of the batch on one worker against `JSON.parse`
 * of the same bytes (decoded, every JSONL line, on one core), the speed-up from one worker to two
 * (and to all cores when there are more), and the peak RSS. Bars (issue 47):
 *   - CPU per byte at most 3x `JSON.parse`'s;
 *   - speed-up at least 1.6x from one worker to two;
 *   - peak RSS at most 200 MB per worker above the largest session (bytes) in flight.
 * The load average is printed before and after: on a shared machine the speed-up measured while
 * others run is low. Exit 1 when a bar is missed.
 *
 *   npm run bench:audit [-- --sessions N] [-- --json]
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(import.meta.url);
const repoRoot = join(here, "..", "..", "..");
const corpusDir = join(repoRoot, "..", "shared", "corpus");

const BAR_CPU_PER_BYTE = 3;
const BAR_SPEEDUP = 1.6;
const BAR_RSS_PER_WORKER = 200 * 1024 * 1024;

interface ChildResult {
  jobs: number;
  sessions: number;
  skipped: number;
  bytes: number;
  wallMs: number;
  cpuMs: number;
  maxRssBytes: number;
}

/** The child: one batch run, measured from inside. */
async function child(dir: string, jobs: number): Promise<void> {
  const { runAuditBatch } = await import("../src/cli/commands/audit-batch.js");
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let out = 0;
  const summary = await runAuditBatch({ paths: [dir], home: false, jobs, progress: false }, (r) => {
    out += JSON.stringify(r).length; // as --json writes it, to nowhere
  });
  const c = process.cpuUsage(c0);
  const result: ChildResult = {
    jobs,
    sessions: summary.sessions,
    skipped: summary.skipped.length,
    bytes: summary.bytes,
    wallMs: performance.now() - t0,
    cpuMs: (c.user + c.system) / 1000,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  };
  if (out === 0) throw new Error("nothing written");
  process.stdout.write(`${JSON.stringify(result)}\n`);
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

function runChild(dir: string, jobs: number): ChildResult {
  const outText = execFileSync(process.execPath, [here, "--child", dir, String(jobs)], {
    encoding: "utf8",
    maxBuffer: 1 << 24,
  });
  return JSON.parse(outText.trim().split("\n").at(-1)!) as ChildResult;
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === "--child") {
    await child(argv[1]!, Number(argv[2]));
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
    const cores = availableParallelism();
    const loadBefore = load();
    // Warm the page cache, then measure.
    parseCpuMs(files, 1);
    const parseMs = parseCpuMs(files, times);
    const one = runChild(dir, 1);
    const two = runChild(dir, 2);
    const all = cores > 2 ? runChild(dir, cores) : undefined;
    const loadAfter = load();
    const cpuRatio = one.cpuMs / parseMs;
    const speedup = one.wallMs / two.wallMs;
    const rssRuns = [one, two, ...(all ? [all] : [])];
    const rssOk = rssRuns.every((r) => r.maxRssBytes <= r.jobs * BAR_RSS_PER_WORKER + largest);
    const bars = {
      cpu_per_byte: cpuRatio <= BAR_CPU_PER_BYTE,
      speedup: speedup >= BAR_SPEEDUP,
      peak_rss: rssOk,
    };
    const result = {
      date: new Date().toISOString(),
      machine: `${cpus()[0]?.model ?? "?"}, ${cores} cores, ${mb(totalmem())}`,
      node: process.version,
      sessions: one.sessions,
      bytes: one.bytes,
      largest_session_bytes: largest,
      parse_cpu_ms: Math.round(parseMs),
      runs: rssRuns.map((r) => ({
        jobs: r.jobs,
        wall_ms: Math.round(r.wallMs),
        cpu_ms: Math.round(r.cpuMs),
        sessions_per_s: Number(((r.sessions / r.wallMs) * 1000).toFixed(1)),
        peak_rss: mb(r.maxRssBytes),
        cores_had: Number((r.cpuMs / r.wallMs).toFixed(2)),
        rss_bar: mb(r.jobs * BAR_RSS_PER_WORKER + largest),
      })),
      cpu_per_byte_vs_parse: Number(cpuRatio.toFixed(2)),
      speedup_1_to_2: Number(speedup.toFixed(2)),
      speedup_1_to_all: all ? Number((one.wallMs / all.wallMs).toFixed(2)) : undefined,
      load_average: { before: loadBefore, after: loadAfter },
      bars,
    };
    if (argv.includes("--json")) console.log(JSON.stringify(result, null, 2));
    else {
      console.log(`bench:audit: ${result.date}; ${result.machine}; Node ${result.node}`);
      console.log(
        `  ${one.sessions} sessions, ${mb(one.bytes)} (the corpus's ${files.length} sessions x ${times}); largest ${mb(largest)}`,
      );
      for (const r of result.runs)
        console.log(
          `  --jobs ${r.jobs}: ${(r.wall_ms / 1000).toFixed(2)} s, ${r.sessions_per_s} sessions/s, CPU ${(r.cpu_ms / 1000).toFixed(2)} s (${r.cores_had} cores busy on average), peak RSS ${r.peak_rss} (bar ${r.rss_bar})`,
        );
      console.log(
        `  CPU per byte: ${cpuRatio.toFixed(2)}x JSON.parse of the same bytes (${(parseMs / 1000).toFixed(2)} s on one core; bar <= ${BAR_CPU_PER_BYTE}x): ${bars.cpu_per_byte ? "ok" : "MISSED"}`,
      );
      console.log(
        `  speed-up 1 -> 2 workers: ${speedup.toFixed(2)}x (bar >= ${BAR_SPEEDUP}x): ${bars.speedup ? "ok" : "MISSED"}; CPU of 2 workers against 1: ${(two.cpuMs / one.cpuMs).toFixed(2)}x (what the pool adds)`,
      );
      if (result.speedup_1_to_all !== undefined)
        console.log(`  speed-up 1 -> ${cores} workers: ${result.speedup_1_to_all}x`);
      console.log(
        `  peak RSS: ${bars.peak_rss ? "ok" : "MISSED"} (at most 200 MB per worker above the largest session)`,
      );
      console.log(`  load average (1, 5, 15 min): before ${loadBefore}; after ${loadAfter}`);
    }
    return Object.values(bars).every(Boolean) ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main(process.argv.slice(2));
