/**
 * One fuzz case through the built command line (dist/src/cli/main.js), in a
 * temporary folder: compact (the source file with --out, or the journal that
 * `import` wrote, in place) → export the source (before) and the compacted
 * journal (after) → validate before after. Every process runs under a
 * timeout (a hang is a failure), must exit 0–4 without a signal, print no
 * stack trace, and when it fails, say why on one `compact-safe: ...` line
 * that is not a raw JavaScript error.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliPath } from "../support.js";
import type { FuzzCase } from "./generate.js";
import { caseRecorder, type CaseOutcome, type Failure } from "./pipeline.js";

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

function runCli(args: string[], cwd: string, timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: "1", COMPACT_SAFE_BACKOFF_MS: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      if (stdout.length < 1 << 20) stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < 1 << 20) stderr += d;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

const RAW_JS_ERROR =
  /\b(TypeError|RangeError|ReferenceError|SyntaxError: Unexpected|Maximum call stack|Cannot read propert|is not a function|is not iterable|undefined \(reading)/;

/** Problems with how a process ended (hang, crash, exit code, stack trace, error line). */
export function processProblems(step: string, r: Run, timeoutMs: number): Failure[] {
  const out: Failure[] = [];
  if (r.timedOut) return [{ cls: `cli-hang:${step}`, message: `no exit within ${timeoutMs} ms (killed)` }];
  if (r.signal !== null || r.code === null)
    return [{ cls: `cli-crash:${step}`, message: `killed by ${r.signal ?? "?"}` }];
  if (r.code < 0 || r.code > 4)
    out.push({ cls: `cli-exit:${step}`, message: `exit ${r.code}: ${r.stderr.split("\n")[0]}` });
  if (/^\s+at .+/m.test(r.stderr))
    out.push({
      cls: `cli-stack:${step}`,
      message: r.stderr
        .split("\n")
        .find((l) => l.trim() !== "")!
        .slice(0, 200),
    });
  if (r.code !== 0) {
    const lines = r.stderr
      .split("\n")
      .filter((l) => l.trim() !== "" && !l.startsWith("compact-safe: warning:"));
    if (lines.length !== 1 || !lines[0]!.startsWith("compact-safe: "))
      out.push({
        cls: `cli-error-lines:${step}`,
        message: `exit ${r.code} with ${lines.length} error lines: ${JSON.stringify(lines.slice(0, 2).join(" | ").slice(0, 200))}`,
      });
    else if (RAW_JS_ERROR.test(lines[0]!))
      out.push({ cls: `cli-raw-error:${step}`, message: lines[0]!.slice(0, 200) });
  }
  return out;
}

export async function runCliCase(c: FuzzCase, timeoutMs: number): Promise<CaseOutcome> {
  const { failures, done } = caseRecorder(c.index);
  const dir = mkdtempSync(join(tmpdir(), "cs-fuzz-cli-"));
  const step = async (name: string, args: string[], allowed: number[]): Promise<Run | undefined> => {
    const r = await runCli(args, dir, timeoutMs);
    const problems = processProblems(name, r, timeoutMs);
    failures.push(...problems);
    if (problems.length > 0) return undefined;
    if (!allowed.includes(r.code!)) {
      failures.push({
        cls: `cli-unexpected-exit:${name}`,
        message: `exit ${r.code}: ${r.stderr.trim().split("\n")[0] ?? ""}`.slice(0, 240),
      });
      return undefined;
    }
    return r;
  };
  try {
    const input = join(dir, c.fileName);
    writeFileSync(input, c.bytes);
    const ws = join(dir, "ws");
    mkdirSync(join(ws, ".codewhale"), { recursive: true });
    if (c.anchors.trim() !== "") writeFileSync(join(ws, ".codewhale", "anchors.md"), c.anchors);
    const provider = c.index % 2 === 0 ? "anthropic" : "openai";

    // Two routes: the source file compacted with --out, or imported first and the journal compacted in place.
    const direct = c.index % 3 === 0;
    const journal = direct ? "out.jsonl" : "j.jsonl";
    if (!direct) {
      const imp = await step("import", ["import", input, "--out", "j.jsonl"], [0, 2]);
      if (!imp) return done("failure", "");
      if (imp.code === 2) return done("clear-error", imp.stderr.trim().split("\n").pop() ?? "");
    }
    const args = ["compact", direct ? input : "j.jsonl", "--json", "--workspace", ws];
    if (direct) args.push("--out", "out.jsonl");
    if (c.pruneOnly) args.push("--prune-only");
    if (c.target !== undefined) args.push("--target", String(c.target));
    const comp = await step("compact", args, direct ? [0, 1, 2] : [0, 1]);
    if (!comp) return done("failure", "");
    if (comp.code === 2) return done("clear-error", comp.stderr.trim().split("\n").pop() ?? "");
    if (comp.code === 1) return done("refusal", comp.stderr.match(/refused \(([a-z_]+)\)/)?.[1] ?? "refused");
    const receipt = JSON.parse(comp.stdout) as { path: string };
    // Nothing to compact: exit 0, nothing written (checked here), counted as a refusal.
    if (receipt.path === "none") {
      if (direct && existsSync(join(dir, "out.jsonl"))) {
        failures.push({ cls: "cli-nothing-wrote", message: "nothing to compact, yet --out was written" });
        return done("failure", "");
      }
      return done("refusal", "nothing_to_compact");
    }

    // The source file's live context is the history before the compaction, in both routes.
    if (!(await step("export-before", ["export", input, "--to", provider, "--out", "before.json"], [0])))
      return done("failure", "");

    if (!(await step("export-after", ["export", journal, "--to", provider, "--out", "after.json"], [0])))
      return done("failure", "");
    const vargs = ["validate", "before.json", "after.json", "--path", receipt.path];
    if (c.anchors.trim() !== "") {
      writeFileSync(join(dir, "anchors.txt"), c.anchors);
      vargs.push("--anchors-file", "anchors.txt");
    }
    const v = await step("validate", vargs, [0, 1]);
    if (!v) return done("failure", "");
    if (v.code === 1)
      failures.push({
        cls: `cli-validate-rejects-export:${provider}`,
        message: v.stderr.trim().slice(0, 240),
      });
    return done("compacted", receipt.path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
