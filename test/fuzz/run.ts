/**
 * `npm run fuzz`: the full campaign (10,000 in-process cases, 300 through the
 * command line by default), then the crash campaign when
 * test/fuzz/crash-campaign.ts is present. Prints the counts per outcome and
 * every failure with its reproducer; exit 1 on any failure.
 *
 *   node dist/test/fuzz/run.js [--seed N] [--cases N] [--cli-cases N] [--only I,J,...]
 *                              [--crash-runs N] [--no-crash] [--profile fuzz|test]
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatReport, runCampaign } from "./harness.js";
import type { Profile } from "./generate.js";

function parseArgs(argv: string[]) {
  const o = {
    seed: Date.now() % 2 ** 31,
    cases: 10_000,
    cliCases: 300,
    only: undefined as number[] | undefined,
    crashRuns: 200,
    crash: true,
    profile: "fuzz" as Profile,
  };
  const int = (flag: string, v: string | undefined): number => {
    if (v === undefined || !/^\d+$/.test(v)) {
      console.error(`fuzz: ${flag} expects a whole number, got ${JSON.stringify(v)}`);
      process.exit(2);
    }
    return Number(v);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--seed") o.seed = int(a, argv[++i]);
    else if (a === "--cases") o.cases = int(a, argv[++i]);
    else if (a === "--cli-cases") o.cliCases = int(a, argv[++i]);
    else if (a === "--crash-runs") o.crashRuns = int(a, argv[++i]);
    else if (a === "--no-crash") o.crash = false;
    else if (a === "--only") o.only = (argv[++i] ?? "").split(",").map((x) => int(a, x));
    else if (a === "--profile") {
      const p = argv[++i];
      if (p !== "fuzz" && p !== "test") {
        console.error(`fuzz: --profile expects fuzz or test, got ${JSON.stringify(p)}`);
        process.exit(2);
      }
      o.profile = p;
    } else {
      console.error(`fuzz: unknown argument ${JSON.stringify(a)}`);
      process.exit(2);
    }
  }
  return o;
}

/** What `runCrashCampaign` reports (another part of the suite writes it): runs, clean runs, failure lines. */
interface CrashCampaignResult {
  runs?: number;
  total?: number;
  clean?: number;
  failures?: unknown[];
}

async function crashCampaign(runs: number, seed: number): Promise<{ ok: boolean; line: string }> {
  const module = new URL("./crash-campaign.js", import.meta.url);
  if (!existsSync(fileURLToPath(module)))
    return { ok: true, line: "crash campaign: test/fuzz/crash-campaign.ts is not in this build (skipped)" };
  const { runCrashCampaign } = (await import(module.href)) as {
    runCrashCampaign: (o: { runs: number; seed: number }) => Promise<CrashCampaignResult>;
  };
  const r = await runCrashCampaign({ runs, seed });
  const total = r.runs ?? r.total ?? runs;
  if (typeof r.clean !== "number")
    return { ok: false, line: `crash campaign: unexpected result ${JSON.stringify(r).slice(0, 300)}` };
  const lines = [
    `crash campaign: ${r.clean}/${total} clean`,
    ...(r.failures ?? []).map((f) => `  ${typeof f === "string" ? f : JSON.stringify(f)}`),
  ];
  return { ok: r.clean === total, line: lines.join("\n") };
}

const o = parseArgs(process.argv.slice(2));
console.log(
  `fuzz: seed ${o.seed}, ${o.only ? `cases ${o.only.join(",")}` : `${o.cases} cases in process, ${o.cliCases} through the command line`} (profile ${o.profile})`,
);
let progress = 0;
const report = await runCampaign({
  seed: o.seed,
  cases: o.cases,
  cliCases: o.cliCases,
  only: o.only,
  profile: o.profile,
  log: (line) => {
    if (o.only) console.log(line);
    else if (++progress % 50 === 1) process.stderr.write(`fuzz: ${progress} failures so far…\n`);
  },
});
console.log(formatReport(report));
if (report.failures.length > 0) {
  const dir = join(tmpdir(), "compact-safe-fuzz");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `seed-${o.seed}-failures.jsonl`);
  writeFileSync(file, report.failures.map((f) => JSON.stringify(f)).join("\n") + "\n");
  console.log(`every failure, one JSON object a line: ${file}`);
}
let ok = report.failures.length === 0;
if (o.crash && !o.only) {
  const crash = await crashCampaign(o.crashRuns, o.seed);
  console.log(crash.line);
  ok &&= crash.ok;
}
process.exitCode = ok ? 0 : 1;
