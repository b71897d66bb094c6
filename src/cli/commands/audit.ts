/**
 * `compact-safe audit SESSION`: the survival contract's verdict on every
 * compaction a session records (Claude Code's, Codex's, pi's and
 * compact-safe's own), one line each and a summary line; exit 0 when every
 * one kept the contract or was repaired by the guard (a guard `--state`
 * journal: the repair keeps the contract against the context before the
 * compaction), 1 otherwise. `-` reads the session from stdin.
 */
import type { Command } from "commander";
import { auditEntries, NOT_JUDGEABLE, type CompactionAudit, type SessionAudit } from "../../route/index.js";
import { FORMAT_NAMES } from "../../formats/registry.js";
import { statSync } from "node:fs";
import { EXIT, usageError } from "../errors.js";
import { loadSession, parseFormat } from "../io.js";
import { positiveInt } from "../options.js";
import { STDIO } from "../stdin.js";
import { out, printJson, style } from "../output.js";

function lost(a: CompactionAudit): string {
  const l = a.losses;
  const parts = [
    [l.user_texts.length, "user text"],
    [l.tool_calls.length, "tool call"],
    [l.tool_results.length, "tool result"],
    [l.assistant_texts.length, "assistant text"],
  ]
    .filter(([n]) => (n as number) > 0)
    .map(([n, what]) => `${n} ${what}${n === 1 ? "" : "s"}`);
  return parts.length > 0 ? `lost ${parts.join(", ")}` : "";
}

/** What follows an agent's compaction that did not keep the contract in a guard's journal: its repair. */
function repairNote(a: CompactionAudit, byId: ReadonlyMap<string, CompactionAudit>): string {
  if (a.kept || a.repaired_by == null) return "";
  return byId.get(a.repaired_by)?.kept === true
    ? `; ${style.green(`repaired by the guard (${a.repaired_by})`)}`
    : `; the guard's repair (${a.repaired_by}) did not keep it either`;
}

/** One line per compaction. */
export function auditLines(audit: SessionAudit): string[] {
  const byId = new Map(audit.compactions.map((a) => [a.id, a]));
  const lines = audit.compactions.map((a) => {
    const head = `${a.id} (${a.source}, ${a.path}, ${a.messages_before} → ${a.messages_after} messages)`;
    if (a.repair_of != null) {
      const what = `the guard's repair of ${a.repair_of}`;
      return a.kept
        ? `${head}: ${what}: ${style.green("kept the contract against the context before it")}`
        : `${head}: ${what}: ${style.red(`VIOLATION: ${a.reason}`)}${lost(a) ? ` (${lost(a)})` : ""}`;
    }
    const native = a.provider_compaction;
    const notes = [
      native === null
        ? ""
        : native.opaque
          ? `${native.provider} native compaction, summary encrypted: judged on what else the context after it shows`
          : `${native.provider} native compaction, summary of ${native.summary_chars} characters`,
      lost(a),
      a.placeholder ? "placeholder summary" : "",
      a.stacked_checkpoints ? "stacked checkpoints" : "",
    ]
      .filter((s) => s !== "")
      .join("; ");
    if (!a.judgeable)
      return `${head}: ${style.yellow(`not judgeable: ${NOT_JUDGEABLE}`)}${notes ? ` (${notes})` : ""}`;
    if (a.kept && notes === "") return `${head}: ${style.green("kept the contract")}`;
    return `${head}: ${a.kept ? style.yellow("kept the contract") : style.red(`VIOLATION: ${a.reason}`)}${notes ? ` (${notes})` : ""}${repairNote(a, byId)}`;
  });
  // The guard's repairs are not counted as compactions of their own: they are told with the one they repair.
  // A compaction that cannot be judged is counted neither as kept nor as lost.
  const own = audit.compactions.filter((a) => a.repair_of == null);
  const judged = own.filter((a) => a.judgeable);
  const n = judged.length;
  const unjudged = own.length - n;
  const repairs = audit.compactions.length - own.length;
  const notJudged = unjudged === 0 ? "" : `${unjudged} not judgeable (${NOT_JUDGEABLE})`;
  lines.push(
    own.length === 0
      ? "no compaction recorded in this session"
      : n === 0
        ? `no compaction could be judged: ${notJudged}`
        : `${judged.filter((a) => a.kept).length} of ${n} compaction${n === 1 ? "" : "s"} kept the survival contract` +
          (notJudged ? `; ${notJudged}` : "") +
          (repairs === 0
            ? ""
            : `; ${audit.repaired} violation${audit.repaired === 1 ? "" : "s"} repaired by the guard` +
              (audit.unrepaired > 0 ? `, ${audit.unrepaired} not repaired` : "")),
  );
  return lines;
}

export function register(program: Command, setExit: (code: number) => void): void {
  program
    .command("audit")
    .summary("check every compaction a session records against the survival contract")
    .description(
      "For every compaction recorded in SESSION (Claude Code's, Codex's, pi's and compact-safe's own), the " +
        "contract's verdict on the live context just before it against the replacement it installed: " +
        "which user texts, tool calls, tool results and assistant texts of the protected last round were lost, " +
        "whether the summary is a placeholder, whether checkpoints stacked. In a guard's --state journal, the " +
        "guard's repair after a compaction is judged against the context before that compaction and told with " +
        "it. SESSION `-` reads standard input.\n\n" +
        "Several files, a folder (searched recursively for sessions of every format compact-safe reads) or " +
        "--home (the agents' own folders) audit every session found on a pool of worker threads (--jobs) and " +
        "print one aggregate: sessions, compactions kept / lost / not judgeable, lost by kind, by agent and " +
        "version, tokens before and after, the files skipped. --json writes JSON Lines (a record per session, " +
        "then a summary; schema 1, no conversation text unless --show-text). --shard K/N audits one shard; " +
        "--merge FILE… combines the shards' JSON Lines into the same aggregate.\n\n" +
        "Exit codes: 0 every compaction kept the contract or was repaired by the guard (or there is none); " +
        "1 at least one did not (and was not repaired); " +
        "2 usage or input error.",
    )
    .argument(
      "[paths...]",
      "a journal or a session file of any importable format, or - for standard input; several files or folders audit every session in them",
    )
    .option("--format <format>", `force the input format (${FORMAT_NAMES.join(", ")}); default: detected`)
    .option(
      "--json",
      "one session: print { compactions: [...], kept, not_judgeable, repaired, unrepaired }; many: JSON Lines, schema 1 (see docs/AUDIT_JSONL.md)",
    )
    .option(
      "--home",
      "audit the agents' own session folders (~/.claude/projects, $CODEX_HOME/sessions, pi's sessions)",
    )
    .option(
      "--jobs <n>",
      "worker threads for many sessions (default: the machine's cores)",
      positiveInt("--jobs"),
    )
    .option("--shard <k/n>", "audit only shard K of N (by a stable hash of each session's path)")
    .option(
      "--merge",
      "combine the JSON Lines of earlier --json runs (shards) given as PATHS into one aggregate",
    )
    .option("--show-text", "many sessions, --json: add the lost texts and the reasons, redacted")
    .option("--batch", "the aggregate (and --json as JSON Lines) even for one file")
    .option("--no-progress", "no progress bar (it is drawn on standard error when that is a terminal)")
    .action(async (paths: string[], o: AuditOptions) => {
      const format = parseFormat(o.format);
      const one =
        paths.length === 1 && !o.home && o.shard === undefined && !o.merge && !o.batch
          ? paths[0]!
          : undefined;
      if (one !== undefined && (one === STDIO || !isFolder(one))) {
        // `-` (standard input) is read by the same path as a file (see stdin.ts).
        const { entries } = await loadSession(one, format);
        const audit = auditEntries(entries);
        if (o.json) printJson(audit);
        else for (const l of auditLines(audit)) out(l);
        setExit(audit.unrepaired === 0 ? EXIT.OK : EXIT.VIOLATION);
        return;
      }
      if (paths.includes(STDIO)) throw usageError("- (standard input) is one session: audit it alone");
      const { auditBatchCommand } = await import("./audit-batch.js");
      setExit(await auditBatchCommand(paths, { ...o, format }));
    });
}

interface AuditOptions {
  format?: string;
  json?: boolean;
  home?: boolean;
  jobs?: number;
  shard?: string;
  merge?: boolean;
  showText?: boolean;
  batch?: boolean;
  progress?: boolean;
}

/** Whether a path is a folder (anything else, a missing path included, is read as one session). */
function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
