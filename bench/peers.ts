/**
 * `npm run bench:peers`: compact-safe, pi (`@mariozechner/pi-coding-agent`)
 * and LangChain (`summarizationMiddleware`) side by side, on every corpus
 * session that compact-safe imports (the live context of the active path, as
 * `npm run bench` compacts it) and on synthetic histories (bench/synthetic.ts,
 * 1k / 10k / 100k messages by default). Not part of `npm test`.
 *
 * Each library gets the same messages (converted, untimed, into its own
 * types with the project's converters, src/adapters/pi-convert.ts and
 * src/adapters/langchain.ts, a fresh copy for every cold call; the conversion
 * is checked to give the messages back), the same instant stand-in
 * summarizer and the same budget (peers-core.ts `BUDGET_TEXT`; how each
 * library's options are set: peers-libs.ts). Per input and library:
 *
 * - times: the child's CPU time (`process.cpuUsage()`, user + system), as
 *   `npm run bench` takes them (bench/measure.ts): on this shared machine
 *   wall-clock time moved 3x within minutes while CPU time stayed within a
 *   few percent. Each as a ratio to `JSON.parse` of the input timed beside it
 *   in the same child; the median over `--cold-reps` children (default 3, the
 *   libraries interleaved) of each child's figure;
 * - cold, the headline (the figure the bar uses), as `npm run bench`'s: in a
 *   fresh child, untimed warm-up calls on fresh copies (up to 500 within
 *   about 1.5 s, no forced collection between them) bring the code to JIT
 *   steady state; then timed pairs (up to 7, 3 over 20k messages, within
 *   about 4 s, at least one: peers-core.ts `repsFor`, `timeAnother`) of a parse and a call on a fresh copy that nothing has touched
 *   (each copy a fresh `JSON.parse`, converted untimed into the library's own
 *   types); the median of the pairs' ratios;
 * - first: the child's very first call, on the freshly imported messages
 *   (it also compiles the library's code: a start-up cost), against the
 *   parse timed just before it; reported beside cold, not judged;
 * - warm: after the same warm-up, repeated calls on the same objects (one
 *   untimed call fills the library's caches first), interleaved with parses
 *   (as many as the cold pairs, within about 3 s); the median of the ratios;
 * - what the stand-in summarizer was sent on the first call: characters and
 *   tokens (`fastEstimator`);
 * - the survival contract: the result converted back to compact-safe
 *   messages, `validateSurvivalContract(original, result)`; valid, or the
 *   first violation.
 *
 * A synthetic history is written once as JSON to a temporary folder, and
 * each child parses it (fresh objects, and the text of its parse baseline).
 * A child gets 45 s: one over it is reported as timed out, the library's
 * other repetitions on that input are not run, nor its larger synthetic
 * sizes.
 *
 * Exit status: 0 when the bar is met, 1 when it is not, 2 when it cannot
 * run (corpus missing, bad options, nothing selected). The bar (peers-core.ts
 * `barVerdict`): compact-safe's result keeps the survival contract on every
 * corpus session. Speed (cold, first, warm) and summarizer input are
 * reported beside pi's and LangChain's, not judged: neither peer redacts or
 * keeps the contract, so it does less than compact-safe.
 *
 * Options: `--json` (one JSON object), `--only <substring>`, `--sizes
 * 1000,10000` (`none`: corpus only), `--cold-reps N`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { importFile } from "../src/formats/index.js";
import { liveContext } from "../src/journal/tree.js";
import { estimateTokens } from "../src/engine/tokens.js";
import type { Message } from "../src/model/index.js";
import { syntheticSession } from "./synthetic.js";
import {
  corpusFiles,
  gc,
  isJsonl,
  parseSessionText,
  runJsonChild,
  timedPairs,
  timeMs,
  timeMsAsync,
  warmUp,
} from "./harness.js";
import {
  barVerdict,
  budgetTokens,
  BUDGET_TEXT,
  gatherRows,
  isFailure,
  LIBS,
  parseArgs,
  renderTable,
  type ChildFailure,
  type ChildReport,
  COLD_BUDGET_MS,
  repsFor,
  WARM_BUDGET_MS,
  type Lib,
} from "./peers-core.js";
import { Recorder, roundTrip, setupLib } from "./peers-libs.js";

const here = fileURLToPath(import.meta.url);
const repoRoot = resolve(dirname(here), "..", "..");
const corpusDir = resolve(
  process.env.COMPACT_SAFE_CORPUS ??
    join(process.env.COMPACT_SAFE_SHARED ?? join(repoRoot, "..", "shared"), "corpus"),
);
/** A child that runs longer than this is stopped and reported as failed. */
const CHILD_TIMEOUT_MS = 45_000;
const TIMED_OUT = "timed out";

const syntheticName = (n: number): string => `synthetic-${n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : n}`;

// ---------------------------------------------------------------------------------------------
// Child: one library, one input, one fresh process

interface Input {
  input: string;
  kind: "corpus" | "synthetic";
  messages: Message[];
  bytes: number;
  text: string;
  jsonl: boolean;
}

async function loadInput(spec: string): Promise<Input> {
  if (spec.startsWith("synthetic:")) {
    // synthetic:N:FILE, FILE holding JSON.stringify(syntheticSession(N)), written once by the parent.
    const [, n, file] = /^synthetic:(\d+):(.*)$/.exec(spec)!;
    const text = readFileSync(file!, "utf8");
    return {
      input: syntheticName(Number(n)),
      kind: "synthetic",
      messages: JSON.parse(text) as Message[],
      bytes: Buffer.byteLength(text),
      text,
      jsonl: false,
    };
  }
  const file = spec.slice("file:".length);
  const { entries } = await importFile(file);
  return {
    input: basename(file),
    kind: "corpus",
    messages: liveContext(entries),
    bytes: statSync(file).size,
    text: readFileSync(file, "utf8"),
    jsonl: isJsonl(file),
  };
}

async function child(lib: Lib, rep: number, spec: string, tokensBefore: number): Promise<ChildReport> {
  const inp = await loadInput(spec);
  const { messages } = inp;
  const budget = budgetTokens(tokensBefore);
  const rec = new Recorder();
  const runner = await setupLib(lib, budget, rec);
  const parse = (): number => timeMs(() => parseSessionText(inp.text, inp.jsonl));
  // Fresh copies of the messages, each converted into the library's own types (untimed).
  // (A synthetic input's text is already JSON.stringify of its messages.)
  const json = inp.kind === "synthetic" ? inp.text : JSON.stringify(messages);
  const fresh = () => runner.prepare(JSON.parse(json) as Message[]);

  // first: the process's very first call, on the freshly imported messages.
  const firstPrepared = runner.prepare(messages);
  gc();
  const first_parse_ms = parse();
  rec.reset();
  let outcome = { outcome: "", compacted: false };
  const { ms: first_ms } = await timeMsAsync(async () => {
    outcome = await firstPrepared.run();
  });
  const summarizer = rec.size();
  const checked = firstPrepared.check();

  await warmUp(() => {
    rec.reset();
    return fresh().run();
  });
  const most = repsFor(messages.length);
  const source = () => parseSessionText(inp.text, inp.jsonl);
  // cold: a parse, then a call on a fresh copy that nothing has touched, interleaved.
  const cold = await timedPairs(
    source,
    () => {
      const prepared = fresh();
      rec.reset();
      return () => prepared.run();
    },
    most,
    { budgetMs: COLD_BUDGET_MS },
  );
  // warm: the same objects again and again (one untimed call fills the library's caches).
  const same = fresh();
  await same.run();
  const warm = await timedPairs(
    source,
    () => {
      rec.reset();
      return () => same.run();
    },
    most,
    { budgetMs: WARM_BUDGET_MS, gcBeforeCall: true },
  );
  rec.reset();

  return {
    lib,
    input: inp.input,
    kind: inp.kind,
    rep,
    messages: messages.length,
    bytes: inp.bytes,
    tokens_before: tokensBefore,
    budget,
    first_ms,
    first_parse_ms,
    cold,
    warm,
    summarizer,
    outcome: outcome.outcome,
    compacted: outcome.compacted,
    result_messages: checked.result_messages,
    contract: checked.contract,
    roundtrip: rep === 0 ? await roundTrip(lib, messages) : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Parent

function runChild(
  lib: Lib,
  rep: number,
  spec: string,
  input: string,
  tokensBefore: number,
): ChildReport | ChildFailure {
  const r = runJsonChild<ChildReport>([here, "--child", lib, String(rep), spec, String(tokensBefore)], {
    maxBufferMB: 64,
    timeoutMs: CHILD_TIMEOUT_MS,
  });
  if ("report" in r) return r.report;
  const why = r.timedOut ? `${TIMED_OUT} after ${CHILD_TIMEOUT_MS / 1000} s` : r.why;
  return { lib, input, kind: spec.startsWith("synthetic:") ? "synthetic" : "corpus", rep, failed: why };
}

function packageVersion(name: string): string {
  let dir = dirname(fileURLToPath(import.meta.resolve(name)));
  for (;;) {
    const p = join(dir, "package.json");
    if (existsSync(p)) {
      const pkg = JSON.parse(readFileSync(p, "utf8")) as { name?: string; version?: string };
      if (pkg.name === name) return pkg.version ?? "?";
    }
    const up = dirname(dir);
    if (up === dir) return "?";
    dir = up;
  }
}

async function parent(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if ("error" in args) {
    console.error(`bench:peers: ${args.error}`);
    return 2;
  }
  if (!existsSync(corpusDir)) {
    console.error(
      `bench:peers: corpus missing: ${corpusDir} not found (the corpus is ../shared/corpus beside the clone, or COMPACT_SAFE_CORPUS)`,
    );
    return 2;
  }
  const specs = [
    ...corpusFiles(corpusDir).map((f) => `file:${f}`),
    ...args.sizes.map((n) => `synthetic:${n}`),
  ].filter((s) => !args.only || s.includes(args.only));
  if (specs.length === 0) {
    console.error(`bench:peers: no input matches --only ${JSON.stringify(args.only)}`);
    return 2;
  }
  const versions: Record<string, string> = {
    "compact-safe": (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string })
      .version,
    "@mariozechner/pi-coding-agent": packageVersion("@mariozechner/pi-coding-agent"),
    "@mariozechner/pi-ai": packageVersion("@mariozechner/pi-ai"),
    langchain: packageVersion("langchain"),
    "@langchain/core": packageVersion("@langchain/core"),
    node: process.version,
  };
  const started = Date.now();
  const reports: (ChildReport | ChildFailure)[] = [];
  const tmp = mkdtempSync(join(tmpdir(), "compact-safe-peers-"));
  // Stopped (Ctrl-C, a kill): the synthetic histories go too; the `finally` below would not run.
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => {
      rmSync(tmp, { recursive: true, force: true });
      process.exit(signal === "SIGINT" ? 130 : 143);
    });
  /** The smallest synthetic size on which a library timed out: larger ones are not run for it. */
  const timedOutAt = new Map<Lib, number>();
  try {
    for (const s of specs) {
      let spec = s;
      let input = basename(s.slice("file:".length));
      let size = 0;
      // The session's size is estimated here, once: in a child it would warm compact-safe's
      // estimator (its code and its per-message cache) before the cold call.
      let tokensBefore: number;
      if (s.startsWith("synthetic:")) {
        size = Number(s.slice("synthetic:".length));
        input = syntheticName(size);
        const file = join(tmp, `${input}.json`);
        const messages = syntheticSession(size);
        tokensBefore = estimateTokens(messages);
        writeFileSync(file, JSON.stringify(messages));
        spec = `${s}:${file}`;
      } else {
        const imported = await importFile(s.slice("file:".length)).catch((e: unknown) => e as Error);
        if (imported instanceof Error) {
          for (const lib of LIBS)
            reports.push({
              lib,
              input,
              kind: "corpus",
              rep: 0,
              failed: `compact-safe does not import it: ${imported.message}`,
            });
          continue;
        }
        tokensBefore = estimateTokens(liveContext(imported.entries));
      }
      const skip = new Set<Lib>();
      for (const lib of LIBS) {
        const at = timedOutAt.get(lib);
        if (size > 0 && at !== undefined && size > at) {
          skip.add(lib);
          reports.push({
            lib,
            input,
            kind: "synthetic",
            rep: 0,
            failed: `not run (${TIMED_OUT} on ${syntheticName(at)})`,
          });
        }
      }
      for (let rep = 0; rep < args.coldReps; rep++) {
        for (const lib of LIBS) {
          if (skip.has(lib)) continue;
          if (!args.json) process.stderr.write(`\r${input} ${lib} ${rep + 1}/${args.coldReps}        `);
          const r = runChild(lib, rep, spec, input, tokensBefore);
          reports.push(r);
          if (!isFailure(r)) continue;
          if (!args.json) process.stderr.write(`\n  ${lib} failed: ${r.failed}\n`);
          // A child over the time limit: the library's other repetitions on this input would be too.
          if (r.failed.startsWith(TIMED_OUT)) {
            skip.add(lib);
            if (size > 0) timedOutAt.set(lib, Math.min(size, timedOutAt.get(lib) ?? Infinity));
          }
        }
      }
      if (size > 0) rmSync(join(tmp, `${input}.json`), { force: true });
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  if (!args.json) process.stderr.write("\n");
  const rows = gatherRows(reports);
  const bar = barVerdict(rows);
  const seconds = (Date.now() - started) / 1000;
  const machine = `${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 1024 ** 3)} GB`;
  const meta = { versions, date: new Date().toISOString(), machine, coldReps: args.coldReps, seconds };
  if (args.json) console.log(JSON.stringify({ ...meta, budget: BUDGET_TEXT, rows, bar }));
  else console.log(renderTable(rows, meta, bar));
  return bar.met ? 0 : 1;
}

const argv = process.argv.slice(2);
if (argv[0] === "--child") {
  const r = await child(argv[1] as Lib, Number(argv[2]), argv[3]!, Number(argv[4]));
  process.stdout.write(`${JSON.stringify(r)}\n`);
  // pi's and LangChain's modules may hold handles open; the report is written.
  process.exit(0);
} else {
  process.exitCode = await parent(argv);
}
