/**
 * `compact-safe audit PATH…` over many sessions (folders, several files, `--home`): the sessions
 * are audited on a pool of worker threads (`--jobs`), a progress bar is drawn on a terminal, and one
 * aggregate is printed; `--json` writes JSON Lines (schema 1, docs/AUDIT_JSONL.md): a record per
 * session (and per file skipped), then the summary. `--shard K/N` audits the sessions whose path
 * hashes to shard K; `--merge FILE…` reads the JSON Lines of shards back into the same aggregate.
 */
import { once } from "node:events";
import { createReadStream, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { createInterface } from "node:readline";
import type { FormatName } from "../../formats/registry.js";
import {
  AUDIT_SCHEMA,
  LOST_KINDS,
  type SessionRecord,
  type SkippedRecord,
} from "../../route/audit-schema.js";
import {
  addRecord,
  emptySummary,
  finishSummary,
  compareRecords,
  type AuditSummary,
  type RankedSession,
} from "../../route/audit-summary.js";
import { AuditPool } from "../audit-pool.js";
import type { AuditTask } from "../audit-worker.js";
import { findSessions, homeFolders, parseShard, rootName, shardOf, type Found } from "../audit-walk.js";
import { usageError } from "../errors.js";
import { num, out, shown, style } from "../output.js";

export interface BatchOptions {
  paths: readonly string[];
  home: boolean;
  jobs?: number;
  shard?: string;
  format?: FormatName;
  showText?: boolean;
  /** Draw the progress bar (on stderr, when it is a terminal). */
  progress?: boolean;
  /** The files, when the caller found them already (`batchFiles`). */
  files?: readonly Found[];
}

/** The default `--jobs`: the machine's cores. */
export function defaultJobs(): number {
  return Math.max(1, availableParallelism());
}

/** The files of a batch, in root and path order, this shard's only. */
export async function batchFiles(o: Pick<BatchOptions, "paths" | "home" | "shard">): Promise<Found[]> {
  const shard = o.shard === undefined ? undefined : parseShard(o.shard);
  const files: Found[] = [];
  for await (const f of findSessions(o.paths, o.home))
    if (shard === undefined || shardOf(f.path, shard.n) === shard.k) files.push(f);
  return files.sort(compareRecords);
}

/** A progress bar on stderr (a terminal only): sessions done of found, rate, time left; redrawn at most 10 times a second. */
export function progressBar(total: number, show: boolean): { tick(): void; done(): void } {
  const stream = process.stderr;
  if (!show || stream.isTTY !== true || total === 0) return { tick: () => undefined, done: () => undefined };
  const start = Date.now();
  let n = 0;
  let drawn = 0;
  const draw = () => {
    const width = 28;
    const filled = Math.round((n / total) * width);
    const secs = (Date.now() - start) / 1000;
    const rate = secs > 0 ? n / secs : 0;
    const left = rate > 0 ? Math.ceil((total - n) / rate) : 0;
    stream.write(
      `\r\u001b[2K[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${num(n)}/${num(total)} files, ${rate.toFixed(1)}/s, ${left}s left`,
    );
  };
  return {
    tick() {
      n++;
      const now = Date.now();
      if (now - drawn >= 100 || n === total) {
        drawn = now;
        draw();
      }
    },
    done() {
      stream.write("\r\u001b[2K");
    },
  };
}

/** The bidi controls, which JSON.stringify writes as they are: escaped, as every `--json` writes them. */
const JSON_BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** One JSON Lines record. */
export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value).replace(JSON_BIDI, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}\n`;
}

/**
 * Audits the batch: each record (a session, a file skipped) is handed to `emit` in root and path order
 * as soon as those before it are; returns the aggregate.
 */
export async function runAuditBatch(
  o: BatchOptions,
  emit: (r: SessionRecord | SkippedRecord) => void | Promise<void> = () => undefined,
): Promise<AuditSummary> {
  const files = o.files ?? (await batchFiles(o));
  const summary = emptySummary();
  summary.run.shard = o.shard === undefined ? null : o.shard.trim();
  if (files.length === 0) return finishSummary(summary);
  const jobs = Math.max(1, Math.min(o.jobs ?? defaultJobs(), files.length));
  const pool = new AuditPool(jobs);
  const bar = progressBar(files.length, o.progress !== false);
  let blocked: Promise<void> | undefined;
  try {
    async function* tasks(): AsyncGenerator<AuditTask> {
      for (const f of files) {
        if (blocked !== undefined) await blocked;
        yield { kind: "audit", n: 0, ...f, format: o.format, showText: o.showText };
      }
    }
    await pool.map(tasks(), (a) => {
      bar.tick();
      const record = a.ok ? ("record" in a ? a.record : undefined) : a.skipped;
      if (record === undefined) return;
      addRecord(summary, record);
      const wrote = emit(record);
      if (wrote instanceof Promise) blocked = wrote.then(() => (blocked = undefined));
    });
    if (blocked !== undefined) await blocked;
  } finally {
    bar.done();
    await pool.close();
  }
  return finishSummary(summary);
}

/** Writes a line on stdout, waiting when the reader is behind (so that a slow pipe does not fill memory). */
async function writeLine(text: string): Promise<void> {
  const stdout = process.stdout;
  // A reader that stopped (`| head`) wants no more: the run finishes and exits with its own code.
  if (stdout.destroyed || stdout.writableEnded) return;
  if (!stdout.write(text)) {
    draining ??= once(stdout, "drain")
      .catch(() => undefined)
      .then(() => {
        draining = undefined;
      });
    await draining;
  }
}
let draining: Promise<void> | undefined;

/** Reads the JSON Lines of `audit --json` runs (shards) into one aggregate; `each` sees every record. */
export async function mergeAudits(
  files: readonly string[],
  each: (r: SessionRecord | SkippedRecord) => void | Promise<void> = () => undefined,
): Promise<{ summary: AuditSummary; warnings: string[] }> {
  const summary = emptySummary();
  const shards: string[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  for (const file of files) {
    const input = createReadStream(file);
    const opened = await new Promise<Error | undefined>((resolve) => {
      input.once("error", resolve);
      input.once("readable", () => resolve(undefined));
    });
    if (opened !== undefined) {
      const code = (opened as NodeJS.ErrnoException).code;
      throw usageError(
        `${file}: ${code === "ENOENT" ? "no such file" : `cannot be read (${code ?? opened.message})`}`,
      );
    }
    let line = 0;
    let summaries = 0;
    for await (const text of createInterface({ input, crlfDelay: Infinity })) {
      line++;
      if (text.trim() === "") continue;
      let r: { schema?: unknown; type?: unknown; run?: { shard?: unknown } } & Record<string, unknown>;
      try {
        r = JSON.parse(text) as typeof r;
      } catch {
        throw usageError(`${file}:${line}: not JSON (expected the JSON Lines of compact-safe audit --json)`);
      }
      if (r === null || typeof r !== "object" || r.schema !== AUDIT_SCHEMA)
        throw usageError(
          `${file}:${line}: not an audit record of schema ${AUDIT_SCHEMA} (expected the JSON Lines of compact-safe audit --json)`,
        );
      if (r.type === "summary") {
        summaries++;
        shards.push(typeof r.run?.shard === "string" ? r.run.shard : "all");
        continue;
      }
      if (r.type !== "session" && r.type !== "skipped")
        throw usageError(`${file}:${line}: unknown record type ${JSON.stringify(r.type)}`);
      const rec = r as unknown as SessionRecord | SkippedRecord;
      const key = `${rec.root}\u0000${rec.path}`;
      if (seen.has(key)) {
        duplicates++;
        continue;
      }
      seen.add(key);
      addRecord(summary, rec);
      await each(rec);
    }
    if (summaries === 0)
      throw usageError(`${file}: no summary record (an audit --json run that did not finish?)`);
  }
  summary.run.merged = shards;
  return { summary: finishSummary(summary), warnings: shardWarnings(shards, duplicates) };
}

/** What a merge says about its shards: one missing, or given twice; sessions read twice are counted once. */
function shardWarnings(shards: readonly string[], duplicates: number): string[] {
  const warnings: string[] = [];
  if (duplicates > 0)
    warnings.push(`${num(duplicates)} record${duplicates === 1 ? "" : "s"} given twice, counted once`);
  const parsed = shards.map((s) => /^(\d+)\/(\d+)$/.exec(s)).filter((m) => m !== null);
  if (parsed.length !== shards.length || parsed.length === 0) return warnings;
  const n = new Set(parsed.map((m) => m![2]));
  if (n.size !== 1) {
    warnings.push(`the shards are of different splits (${shards.join(", ")})`);
    return warnings;
  }
  const total = Number([...n][0]);
  const have = new Set(parsed.map((m) => Number(m![1])));
  const missing = Array.from({ length: total }, (_, i) => i + 1).filter((k) => !have.has(k));
  if (missing.length > 0)
    warnings.push(
      `shard${missing.length === 1 ? "" : "s"} ${missing.map((k) => `${k}/${total}`).join(", ")} not given: the aggregate is partial`,
    );
  return warnings;
}

const KIND_NAMES: Record<(typeof LOST_KINDS)[number], string> = {
  instructions: "instructions",
  tool_rounds: "tool rounds",
  assistant_texts: "assistant texts",
  checkpoint: "checkpoint",
  anchors: "anchors",
  other: "other",
};

const plural = (n: number, one: string, many = `${one}s`) => `${num(n)} ${n === 1 ? one : many}`;

function pct(part: number, whole: number): string {
  return whole === 0 ? "" : ` (${((part / whole) * 100).toFixed(part === whole || part === 0 ? 0 : 1)}%)`;
}

/** A table's rows with each column padded to its widest cell (numbers right-aligned). */
function columns(rows: readonly (readonly string[])[], right: ReadonlySet<number>): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    `  ${r.map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ")}`.trimEnd(),
  );
}

function lostPieces(s: RankedSession): string {
  const l = s.lost_items;
  return [
    [l.user_texts, "user text"],
    [l.tool_calls, "tool call"],
    [l.tool_results, "tool result"],
    [l.assistant_texts, "assistant text"],
  ]
    .filter(([n]) => (n as number) > 0)
    .map(([n, what]) => plural(n as number, what as string))
    .join(", ");
}

/** The aggregate as printed. */
export function summaryLines(s: AuditSummary): string[] {
  const c = s.counts;
  const lines: string[] = [];
  const files = s.sessions + s.skipped.length;
  lines.push(
    `${plural(s.sessions, "session")} audited (${num(s.bytes)} bytes)` +
      (files !== s.sessions ? `, ${plural(s.skipped.length, "file")} skipped` : "") +
      (s.not_sessions > 0 ? `; ${plural(s.not_sessions, "other file")} not sessions, ignored` : ""),
  );
  if (c.compactions === 0) lines.push("no compaction recorded in these sessions");
  else {
    lines.push(
      `compactions: ${num(c.compactions)}; judged ${num(c.judged)}: ` +
        `${style.green(`${num(c.kept)} kept the contract`)}${pct(c.kept, c.judged)}, ` +
        `${c.lost > 0 ? style.red(`${num(c.lost)} lost what must survive`) : "0 lost what must survive"}${pct(c.lost, c.judged)}` +
        (c.repaired > 0 ? ` (${num(c.repaired)} repaired by the guard)` : "") +
        `; ${num(c.not_judgeable)} not judgeable`,
    );
    lines.push(
      `lost, by kind (compactions): ${LOST_KINDS.map((k) => `${KIND_NAMES[k]} ${num(s.lost_kinds[k])}`).join(", ")}`,
    );
    lines.push(
      `tokens: ${num(s.tokens.before)} before the compactions, ${num(s.tokens.after)} after` +
        (s.tokens.before > 0 ? ` (${((1 - s.tokens.after / s.tokens.before) * 100).toFixed(1)}% fewer)` : ""),
    );
  }
  if (s.by_agent.length > 0) {
    lines.push("by agent and version:");
    const rows = [
      ["agent", "version", "sessions", "compactions", "kept", "lost", "repaired", "not judgeable"],
      ...s.by_agent.map((a) => [
        a.agent,
        a.version ?? "(not recorded)",
        num(a.sessions),
        num(a.compactions),
        num(a.kept),
        num(a.lost),
        num(a.repaired),
        num(a.not_judgeable),
      ]),
    ];
    lines.push(...columns(rows, new Set([2, 3, 4, 5, 6, 7])));
  }
  if (s.worst.length > 0) {
    lines.push("sessions that lost the most:");
    for (const w of s.worst)
      lines.push(
        `  ${w.path} (${w.agent}${w.version ? ` ${w.version}` : ""}): ${plural(w.counts.lost, "compaction")} of ${num(w.counts.compactions)} lost ${lostPieces(w) || "what must survive"}` +
          (w.counts.repaired > 0 ? `, ${num(w.counts.repaired)} repaired` : ""),
      );
  }
  if (s.skipped.length > 0) {
    const shownCount = 5;
    const list = s.skipped.slice(0, shownCount).map((k) => k.reason);
    const more = s.skipped.length - list.length;
    lines.push(
      `${plural(s.skipped.length, "file")} skipped: ${list.join("; ")}${more > 0 ? `; and ${num(more)} more (--json lists them)` : ""}`,
    );
  }
  lines.push(
    c.unrepaired > 0
      ? style.red(
          `${plural(c.unrepaired, "compaction")} lost what must survive and ${c.unrepaired === 1 ? "was" : "were"} not repaired`,
        )
      : c.compactions > 0
        ? style.green("no compaction lost what must survive unrepaired")
        : "nothing to judge",
  );
  return lines;
}

export interface AuditBatchCliOptions {
  home?: boolean;
  jobs?: number;
  shard?: string;
  merge?: boolean;
  json?: boolean;
  showText?: boolean;
  progress?: boolean;
  format?: FormatName;
}

/** The command: a run or a merge; prints JSON Lines or the aggregate; returns the exit code. */
export async function auditBatchCommand(paths: readonly string[], o: AuditBatchCliOptions): Promise<number> {
  const emit = o.json ? (r: SessionRecord | SkippedRecord) => writeLine(jsonLine(r)) : undefined;
  let summary: AuditSummary;
  if (o.merge) {
    if (o.home || o.shard !== undefined)
      throw usageError(
        "--merge reads the JSON Lines of earlier runs: give it their files, without --home or --shard",
      );
    if (paths.length === 0) throw usageError("--merge needs the JSON Lines files of the runs to merge");
    const merged = await mergeAudits(paths, emit);
    summary = merged.summary;
    for (const w of merged.warnings)
      process.stderr.write(`${shown(style.yellow(`compact-safe: warning: ${w}`, process.stderr))}\n`);
  } else {
    if (paths.length === 0 && !o.home) throw usageError("give the files or folders to audit, or --home");
    if (o.home && paths.length === 0) {
      const found = homeFolders().filter((h) => existsDir(h.dir));
      if (found.length === 0)
        process.stderr.write(
          `${shown(
            `compact-safe: no agent folder found (looked in ${homeFolders()
              .map((h) => rootName(h.dir))
              .join(", ")})`,
          )}\n`,
        );
    }
    summary = await runAuditBatch(
      {
        paths,
        home: o.home === true,
        jobs: o.jobs,
        shard: o.shard,
        format: o.format,
        showText: o.showText,
        progress: o.progress,
      },
      emit,
    );
  }
  if (o.json) await writeLine(jsonLine(summary));
  else for (const l of summaryLines(summary)) out(l);
  return summary.counts.unrepaired > 0 ? 1 : 0;
}

function existsDir(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
