/**
 * The fuzz campaign: in-process cases in a worker thread watched for hangs
 * (a case that does not finish in time is a failure; the worker is replaced
 * and the campaign goes on), then a subset through the command line. Every
 * failure gets a reproducer: seed, case index, origin and mutations, and the
 * failing input written under os.tmpdir().
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { fuzzSources, makeCase, type FuzzCase, type Profile } from "./generate.js";
import type { CaseOutcome, Failure, OutcomeClass } from "./pipeline.js";
import { runCliCase } from "./cli.js";

export interface CampaignOptions {
  seed: number;
  /** In-process cases: indices 0..cases-1 (or `only`). */
  cases: number;
  /** Command-line cases: `cliCases` indices spread evenly over the in-process ones. */
  cliCases: number;
  profile: Profile;
  /** Run only these case indices (both in process and through the CLI). */
  only?: number[];
  caseTimeoutMs?: number;
  cliTimeoutMs?: number;
  cliConcurrency?: number;
  log?: (line: string) => void;
  /** Where a failing case's input is written (default: `compact-safe-fuzz` in the system temp folder). */
  reproducerDir?: string;
}

export interface FailureRecord extends Failure {
  via: "in-process" | "cli";
  seed: number;
  profile: Profile;
  index: number;
  origin: string;
  mutations: string[];
  file: string;
}

export interface CampaignReport {
  seed: number;
  inProcess: Record<OutcomeClass, number>;
  cli: Record<OutcomeClass, number>;
  /** Outcome details: refusal kinds, compaction paths, error kinds. */
  details: Record<string, number>;
  failures: FailureRecord[];
  ms: number;
  slowest: { index: number; ms: number }[];
}

const emptyCounts = (): Record<OutcomeClass, number> => ({
  "clear-error": 0,
  refusal: 0,
  compacted: 0,
  failure: 0,
});

/** Writes the failing input in `dir` (default: `compact-safe-fuzz` under os.tmpdir()); returns its path. */
export function writeReproducer(c: FuzzCase, dir = join(tmpdir(), "compact-safe-fuzz")): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `seed-${c.seed}-case-${c.index}-${c.fileName}`);
  writeFileSync(file, c.bytes);
  return file;
}

/** A group key: the class and the message with numbers, quoted text and ids blurred. */
export function groupKey(f: Failure): string {
  const msg = f.message
    .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
    .replace(/\b(?:toolu|call|srv|inflight|orphan|fc|item)_[A-Za-z0-9_-]+/g, "ID")
    .replace(/\d+/g, "N")
    .slice(0, 120);
  return `${f.cls} :: ${msg}`;
}

export function reproducerLine(f: FailureRecord): string {
  return (
    `FAIL [${f.via}] ${f.cls}: ${f.message}\n` +
    `  seed=${f.seed} case=${f.index} origin=${f.origin}${f.mutations.length ? ` mutations=[${f.mutations.join("; ")}]` : ""}\n` +
    `  input: ${f.file}\n` +
    `  rerun: node dist/test/fuzz/run.js --seed ${f.seed} --only ${f.index} --profile ${f.profile}` +
    ` (inspect: node dist/test/fuzz/show.js ${f.seed} ${f.index} ${f.profile})`
  );
}

function inProcess(
  opts: CampaignOptions,
  indices: number[],
  onOutcome: (o: CaseOutcome) => void,
): Promise<void> {
  const timeout = opts.caseTimeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    let remaining = indices;
    const start = () => {
      if (remaining.length === 0) return resolve();
      const worker = new Worker(new URL("./worker.js", import.meta.url), {
        workerData: { seed: opts.seed, profile: opts.profile, indices: remaining },
        // About the main thread's stack, so stack overflows show as they would in the CLI.
        resourceLimits: { stackSizeMb: 1 },
      });
      let current: number | undefined;
      let finished = false;
      let timer: NodeJS.Timeout | undefined;
      const abandon = (cls: string, message: string) => {
        if (finished) return;
        finished = true;
        if (timer) clearTimeout(timer);
        const at = current === undefined ? 0 : remaining.indexOf(current);
        if (current !== undefined) {
          onOutcome({
            index: current,
            outcome: "failure",
            detail: "",
            failures: [{ cls, message }],
            ms: timeout,
          });
          remaining = remaining.slice(at + 1);
        }
        void worker.terminate().then(start, reject);
      };
      worker.on("message", (m: { type: string; index?: number; outcome?: CaseOutcome }) => {
        // A worker given up on (hang, crash) can still deliver messages before it is terminated: the case it
        // was running already has its failure, and the cases after it go to the next worker.
        if (finished) return;
        if (m.type === "start") {
          current = m.index;
          if (timer) clearTimeout(timer);
          timer = setTimeout(
            () => abandon("hang:in-process", `case did not finish within ${timeout} ms`),
            timeout,
          );
        } else if (m.type === "done") {
          if (timer) clearTimeout(timer);
          onOutcome(m.outcome!);
          current = undefined;
          remaining = remaining.slice(remaining.indexOf(m.outcome!.index) + 1);
        } else if (m.type === "end") {
          finished = true;
          void worker.terminate().then(() => resolve(), reject);
        }
      });
      worker.on("error", (e) =>
        abandon("crash:worker", `${e.name}: ${e.message}`.split("\n")[0]!.slice(0, 300)),
      );
      worker.on("exit", (code) => {
        if (!finished) abandon("crash:worker", `worker exited with code ${code}`);
      });
    };
    start();
  });
}

async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export async function runCampaign(opts: CampaignOptions): Promise<CampaignReport> {
  const t0 = performance.now();
  const log = opts.log ?? (() => {});
  const report: CampaignReport = {
    seed: opts.seed,
    inProcess: emptyCounts(),
    cli: emptyCounts(),
    details: {},
    failures: [],
    ms: 0,
    slowest: [],
  };
  const record = (via: "in-process" | "cli", o: CaseOutcome) => {
    (via === "cli" ? report.cli : report.inProcess)[o.outcome]++;
    if (o.outcome !== "failure") {
      const key = `${via} ${o.outcome}: ${
        o.outcome === "clear-error"
          ? o.detail
              .replace(/^[A-Za-z]+Error: /, "")
              .replace(/^\S+?:(\d+:)? /, "")
              .replace(/\d+/g, "N")
              .slice(0, 60)
          : o.detail
      }`;
      report.details[key] = (report.details[key] ?? 0) + 1;
    }
    if (via === "in-process") {
      report.slowest.push({ index: o.index, ms: o.ms });
      report.slowest.sort((a, b) => b.ms - a.ms);
      report.slowest.length = Math.min(report.slowest.length, 5);
    }
    if (o.failures.length === 0) return;
    let c: FuzzCase;
    let file: string;
    try {
      c = makeCase(opts.seed, o.index, opts.profile);
      file = writeReproducer(c, opts.reproducerDir);
    } catch (e) {
      // The generator itself failed: still report the case by seed and index.
      c = {
        seed: opts.seed,
        index: o.index,
        origin: `(generator failed: ${String(e).slice(0, 100)})`,
        mutations: [],
        fileName: "",
        bytes: Buffer.alloc(0),
        anchors: "",
        pruneOnly: false,
      };
      file = "(not written)";
    }
    for (const f of o.failures) {
      const rec: FailureRecord = {
        ...f,
        via,
        seed: opts.seed,
        profile: opts.profile,
        index: o.index,
        origin: c.origin,
        mutations: c.mutations,
        file,
      };
      report.failures.push(rec);
      log(reproducerLine(rec));
    }
  };

  const indices = opts.only ?? Array.from({ length: opts.cases }, (_, i) => i);
  await inProcess(opts, indices, (o) => record("in-process", o));

  const cliIndices = opts.only ?? spread(Math.max(opts.cases, opts.cliCases), opts.cliCases);
  await pool(cliIndices, opts.cliConcurrency ?? 2, async (i) => {
    const c = makeCase(opts.seed, i, opts.profile);
    record("cli", await runCliCase(c, opts.cliTimeoutMs ?? 60_000));
  });
  report.ms = Math.round(performance.now() - t0);
  return report;
}

/** `k` indices spread evenly over 0..n-1. */
function spread(n: number, k: number): number[] {
  if (k <= 0 || n <= 0) return [];
  if (k >= n) return Array.from({ length: n }, (_, i) => i);
  return Array.from({ length: k }, (_, i) => Math.floor((i * n) / k));
}

/** Failures grouped by cause (class and blurred message), one reproducer each, most frequent first. */
export function groupFailures(
  failures: readonly FailureRecord[],
): { key: string; count: number; first: FailureRecord }[] {
  const groups = new Map<string, { key: string; count: number; first: FailureRecord }>();
  for (const f of failures) {
    const key = groupKey(f);
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { key, count: 1, first: f });
  }
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

export function formatReport(r: CampaignReport): string {
  const line = (name: string, c: Record<OutcomeClass, number>) =>
    `${name}: ${c.compacted} compaction ok, ${c.refusal} refusal, ${c["clear-error"]} clear error (exit 2), ${c.failure} failure` +
    ` (of ${c.compacted + c.refusal + c["clear-error"] + c.failure})`;
  const out = [
    `fuzz seed ${r.seed}: ${(r.ms / 1000).toFixed(1)} s`,
    fuzzSources(),
    line("in process", r.inProcess),
    line("command line", r.cli),
    "outcomes:",
    ...Object.entries(r.details)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `  ${String(n).padStart(6)}  ${k}`),
    `slowest in-process cases: ${r.slowest.map((s) => `#${s.index} ${s.ms} ms`).join(", ")}`,
  ];
  const groups = groupFailures(r.failures);
  if (groups.length > 0) {
    out.push(`${r.failures.length} failures in ${groups.length} groups (one reproducer each):`);
    for (const g of groups)
      out.push(`- ${g.count}× ${g.key}`, reproducerLine(g.first).replace(/^/gm, "    "));
  }
  return out.join("\n");
}
