/**
 * Crash campaign: the built `compact-safe` binary killed with SIGKILL at
 * random moments while it runs `compact --in-place`, `compact --out`,
 * `import --out` or `restore` on copies of real sessions (the corpus files
 * under 1 MB and the bundled example) in temporary folders.
 *
 * After each kill:
 * - every original byte is intact (the source file, or the journal's
 *   existing lines);
 * - the journal reads back with no problem, with 0 or 1 complete new entry
 *   of the right kind (an `--out` journal is absent or complete);
 * - a lock left behind is complete and names the killed process;
 * - the next run on the same path succeeds (a left lock is broken, not
 *   "locked"), and afterwards no temporary, claim or lock file is left.
 *
 * Seeded and reproducible: the trials (command, source, kill delay as a
 * fraction of the command's measured duration) come from the seed; a
 * failure prints the seed, the trial, the command and the kill delay, and
 * `--only TRIAL` runs that trial alone.
 *
 * Usage: node dist/test/fuzz/crash-campaign.js [--runs N] [--seed S] [--jobs J] [--only TRIAL]
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseJournal } from "../../src/journal/index.js";
import type { JournalEntry } from "../../src/model/index.js";
import { corpusFiles, corpusMissing, exampleSession } from "../support.js";
import { exited, pool, run, spawnCli, tempDir } from "../e2e/helpers.js";
import { mulberry32 } from "./rng.js";

export type CrashCommand = "compact" | "compact-out" | "import" | "restore";
export const CRASH_COMMANDS: readonly CrashCommand[] = ["compact", "compact-out", "import", "restore"];

export interface CrashCampaignOptions {
  /** Kills to make (default 200). */
  runs?: number;
  /** Seed of the trial choices (default 1). */
  seed?: number;
  /** Trials run at once (default 2). */
  jobs?: number;
  /** Run only these trial numbers (of the `runs` the seed makes). */
  only?: readonly number[];
  /** Progress and failure lines (default: none). */
  log?: (line: string) => void;
}

export interface CrashFailure {
  trial: number;
  seed: number;
  /** The command line as run (`compact-safe …`, paths in the trial's temp folder). */
  command: string;
  source: string;
  delayMs: number;
  problem: string;
  /** How to run this trial alone. */
  reproduce: string;
}

export interface CrashCampaignResult {
  seed: number;
  runs: number;
  clean: number;
  failures: CrashFailure[];
  /** Trials per command. */
  byCommand: Record<CrashCommand, number>;
  /** Killed before writing anything / killed after its write landed / finished before the kill. */
  untouched: number;
  written: number;
  finished: number;
}

/** The sessions killed over: the bundled example, and corpus files under 1 MB of every format (when present). */
export function campaignSources(): string[] {
  const small = corpusMissing ? [] : corpusFiles().filter((f) => statSync(f).size < 1_000_000);
  return [exampleSession, ...small];
}

interface Trial {
  index: number;
  command: CrashCommand;
  source: string;
  /** Kill delay as a fraction of the measured duration of the command on that source. */
  fraction: number;
}

/** The trials a seed makes: half the kills spread over the whole run, half over its last 40 % (where it writes). */
export function planTrials(seed: number, runs: number, sources: readonly string[]): Trial[] {
  const rng = mulberry32(seed);
  const rnd = (): number => rng.next();
  return Array.from({ length: runs }, (_, index) => {
    const command = CRASH_COMMANDS[Math.floor(rnd() * CRASH_COMMANDS.length)]!;
    const source = sources[Math.floor(rnd() * sources.length)]!;
    const fraction = rnd() < 0.5 ? rnd() * 1.1 : 0.6 + rnd() * 0.5;
    return { index, command, source, fraction };
  });
}

const TARGET = "5000";

/** Per source: a pristine journal, and one with a compaction (for restore), made once. */
interface Prepared {
  journal: string;
  compacted: string;
  /** Entries of a finished `import` and `compact --out` of the source. */
  importedEntries: number;
  /** Measured durations (ms) of each command on this source. */
  durations: Record<CrashCommand, number>;
}

function args(command: CrashCommand, dir: string, input: string, out: string): string[] {
  switch (command) {
    case "compact":
      return ["compact", input, "--in-place", "--target", TARGET, "--workspace", dir];
    case "compact-out":
      return ["compact", input, "--out", out, "--target", TARGET, "--workspace", dir];
    case "import":
      return ["import", input, "--out", out];
    case "restore":
      return ["restore", input];
  }
}

async function timed(argv: string[]): Promise<{ ms: number; code: number | null; stderr: string }> {
  const t0 = process.hrtime.bigint();
  const r = await run(argv);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, code: r.code, stderr: r.stderr };
}

async function prepare(source: string, dir: string): Promise<Prepared> {
  mkdirSync(dir, { recursive: true });
  const journal = join(dir, "pristine.jsonl");
  const compacted = join(dir, "compacted.jsonl");
  const imp = await timed(["import", source, "--out", journal]);
  if (imp.code !== 0) throw new Error(`${source}: import failed: ${imp.stderr}`);
  copyFileSync(journal, compacted);
  const comp = await timed(args("compact", dir, compacted, ""));
  if (comp.code !== 0) throw new Error(`${source}: compact failed: ${comp.stderr}`);
  const probe = join(dir, "probe.jsonl");
  const out = await timed(args("compact-out", dir, source, probe));
  if (out.code !== 0) throw new Error(`${source}: compact --out failed: ${out.stderr}`);
  copyFileSync(compacted, probe);
  const rest = await timed(args("restore", dir, probe, ""));
  if (rest.code !== 0) throw new Error(`${source}: restore failed: ${rest.stderr}`);
  rmSync(probe, { force: true });
  return {
    journal,
    compacted,
    importedEntries: parseJournal(readFileSync(journal)).entries.length,
    durations: { compact: comp.ms, "compact-out": out.ms, import: imp.ms, restore: rest.ms },
  };
}

/** Files a killed or finished run must not leave behind once the next run is done. */
function leftovers(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.includes(".tmp-") || n.endsWith(".lock") || n.includes(".lock."));
}

function kindsAdded(
  bytes: Buffer,
  before: number,
  file: string,
): { entries: JournalEntry[]; problems: string[] } {
  const { entries, report } = parseJournal(bytes, file);
  return {
    entries: entries.slice(before),
    problems: report.problems.map((p) => `line ${p.line}: ${p.reason}`),
  };
}

/** Runs one trial; a problem (string) or null when clean. */
async function runTrial(
  trial: Trial,
  prep: Prepared,
  dir: string,
  tally: { untouched: number; written: number; finished: number },
): Promise<{ command: string; delayMs: number; problem: string | null }> {
  mkdirSync(dir, { recursive: true });
  const ext =
    trial.command === "import" || trial.command === "compact-out" ? basename(trial.source) : "j.jsonl";
  const input = join(dir, ext);
  const out = join(dir, "out.jsonl");
  const inPlace = trial.command === "compact" || trial.command === "restore";
  copyFileSync(inPlace ? (trial.command === "restore" ? prep.compacted : prep.journal) : trial.source, input);
  const original = readFileSync(input);
  const originalEntries = inPlace ? parseJournal(original).entries.length : 0;
  const argv = args(trial.command, dir, input, out);
  const delayMs = prep.durations[trial.command] * trial.fraction;
  const command = `compact-safe ${argv.join(" ")}`;
  const fail = (problem: string) => ({ command, delayMs, problem });

  const child = spawnCli(argv);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdout?.resume();
  const timer = setTimeout(() => child.kill("SIGKILL"), delayMs);
  const end = await exited(child);
  clearTimeout(timer);
  if (end.signal === null) {
    tally.finished++;
    if (end.code !== 0) return fail(`finished before the kill with exit ${end.code}: ${stderr.trim()}`);
  }

  // 1. every original byte intact
  const now = readFileSync(input);
  if (inPlace) {
    if (!now.subarray(0, original.length).equals(original))
      return fail("the journal's original bytes changed");
  } else if (!now.equals(original)) return fail("the source file changed");

  // 2. the journal reads back with no problem; 0 or 1 complete new entry
  let landed = false;
  if (inPlace) {
    const { entries, problems } = kindsAdded(now, originalEntries, input);
    if (problems.length > 0) return fail(`the journal does not read back cleanly: ${problems[0]}`);
    if (entries.length > 1) return fail(`${entries.length} new entries`);
    if (entries.length === 0 && now.length !== original.length)
      return fail("bytes appended without an entry");
    const want = trial.command === "compact" ? "compaction" : "branch_summary";
    if (entries.length === 1) {
      if (entries[0]!.kind !== want) return fail(`the new entry is a ${entries[0]!.kind}, not a ${want}`);
      landed = true;
    }
  } else {
    let outBytes: Buffer | null = null;
    try {
      outBytes = readFileSync(out);
    } catch {
      outBytes = null;
    }
    if (outBytes !== null) {
      const want = prep.importedEntries + (trial.command === "compact-out" ? 1 : 0);
      const { entries, problems } = kindsAdded(outBytes, 0, out);
      if (problems.length > 0) return fail(`the new journal does not read back cleanly: ${problems[0]}`);
      if (entries.length !== want) return fail(`the new journal has ${entries.length} entries, not ${want}`);
      landed = true;
    }
  }
  if (end.signal !== null) {
    if (landed) tally.written++;
    else tally.untouched++;
  }

  // 3. a lock left behind is complete and names the killed process
  const lockFile = `${inPlace ? input : out}.lock`;
  let lockRaw: string | null = null;
  try {
    lockRaw = readFileSync(lockFile, "utf8");
  } catch {
    lockRaw = null;
  }
  if (lockRaw !== null) {
    let pid: unknown;
    try {
      pid = (JSON.parse(lockRaw) as { pid?: unknown }).pid;
    } catch {
      return fail(`the lock left behind is incomplete: ${JSON.stringify(lockRaw.slice(0, 80))}`);
    }
    if (pid !== child.pid) return fail(`the lock left behind names pid ${String(pid)}, not ${child.pid}`);
  }

  // 4. the next run on the same path succeeds, and leaves nothing behind
  const nextArgv = !inPlace && landed ? [...argv, "--force"] : argv; // an --out journal that landed is replaced (backed up)
  const next = await run(nextArgv, { timeoutMs: 60_000 });
  const restoredAlready = trial.command === "restore" && landed;
  // a restore that landed may find an earlier compaction to undo (0) or none left (2)
  const okCodes = trial.command === "compact" ? [0, 1] : restoredAlready ? [0, 2] : [0]; // 1: nothing left to shrink
  if (next.code === null || !okCodes.includes(next.code))
    return fail(
      `the next run (${nextArgv.join(" ")}) exited ${next.code ?? next.signal}: ${next.stderr.trim()}`,
    );
  if (restoredAlready && next.code === 2 && !/no compaction on the active path/.test(next.stderr))
    return fail(`the next restore failed for another reason: ${next.stderr.trim()}`);
  const target = inPlace ? input : out;
  const after = kindsAdded(readFileSync(target), 0, target);
  if (after.problems.length > 0)
    return fail(`after the next run, the journal has a problem: ${after.problems[0]}`);
  const left = leftovers(dir);
  if (left.length > 0) return fail(`left behind after the next run: ${left.join(", ")}`);
  return { command, delayMs, problem: null };
}

/** Runs the campaign; never throws for a failed trial (see `failures`). */
export async function runCrashCampaign(options: CrashCampaignOptions = {}): Promise<CrashCampaignResult> {
  const runs = options.runs ?? 200;
  const seed = options.seed ?? 1;
  const log = options.log ?? (() => undefined);
  const sources = campaignSources();
  if (corpusMissing) log(`crash campaign: sources: the bundled example only (${corpusMissing})`);
  const trials = planTrials(seed, runs, sources).filter(
    (t) => options.only === undefined || options.only.includes(t.index),
  );
  const { dir, cleanup } = tempDir("cs-crash-");
  try {
    const prepared = new Map<string, Prepared>();
    for (const source of new Set(trials.map((t) => t.source))) {
      prepared.set(source, await prepare(source, join(dir, `source-${prepared.size}`)));
    }
    const tally = { untouched: 0, written: 0, finished: 0 };
    const byCommand = Object.fromEntries(CRASH_COMMANDS.map((c) => [c, 0])) as Record<CrashCommand, number>;
    const failures: CrashFailure[] = [];
    let done = 0;
    await pool(trials, options.jobs ?? 2, async (trial) => {
      byCommand[trial.command]++;
      const trialDir = join(dir, `trial-${trial.index}`);
      const r = await runTrial(trial, prepared.get(trial.source)!, trialDir, tally);
      if (r.problem !== null) {
        const failure: CrashFailure = {
          trial: trial.index,
          seed,
          command: r.command,
          source: trial.source,
          delayMs: Math.round(r.delayMs * 10) / 10,
          problem: r.problem,
          reproduce: `node dist/test/fuzz/crash-campaign.js --seed ${seed} --runs ${runs} --only ${trial.index}`,
        };
        failures.push(failure);
        log(
          `FAIL seed ${seed} trial ${trial.index}: ${r.command} killed after ${failure.delayMs} ms: ${r.problem}\n` +
            `  reproduce: ${failure.reproduce}`,
        );
      } else rmSync(trialDir, { recursive: true, force: true });
      done++;
      if (done % 25 === 0) log(`crash campaign: ${done}/${trials.length} trials run`);
    });
    return {
      seed,
      runs: trials.length,
      clean: trials.length - failures.length,
      failures: failures.sort((a, b) => a.trial - b.trial),
      byCommand,
      ...tally,
    };
  } finally {
    cleanup();
  }
}

function parseArgs(argv: string[]): CrashCampaignOptions {
  const o: CrashCampaignOptions = {};
  const num = (flag: string, v: string | undefined): number => {
    const n = Number(v);
    if (v === undefined || !Number.isInteger(n) || n < 0) throw new Error(`${flag} needs a whole number`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--runs") o.runs = num(a, argv[++i]);
    else if (a === "--seed") o.seed = num(a, argv[++i]);
    else if (a === "--jobs") o.jobs = Math.max(1, num(a, argv[++i]));
    else if (a === "--only") o.only = [...(o.only ?? []), num(a, argv[++i])];
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let options: CrashCampaignOptions;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(
      `crash-campaign: ${(e as Error).message}\nusage: crash-campaign [--runs N] [--seed S] [--jobs J] [--only TRIAL]\n`,
    );
    process.exit(2);
  }
  const t0 = Date.now();
  const r = await runCrashCampaign({ ...options, log: (l) => process.stderr.write(`${l}\n`) });
  const per = CRASH_COMMANDS.map((c) => `${c} ${r.byCommand[c]}`).join(", ");
  process.stdout.write(
    `crash campaign: ${r.clean}/${r.runs} clean (seed ${r.seed}; ${per}; ` +
      `${r.untouched} killed before writing, ${r.written} killed after the write landed, ${r.finished} finished first; ` +
      `${((Date.now() - t0) / 1000).toFixed(0)} s)\n`,
  );
  process.exit(r.failures.length === 0 ? 0 : 1);
}
