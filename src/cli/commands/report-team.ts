/**
 * `compact-safe report PATH…` over many sessions (folders, several files, `--home`): one
 * self-contained team page (src/report/team.ts). The sessions are audited on the worker pool as
 * `audit PATH…` does; those with a compaction are ranked by what they lost; the first `--details`
 * of them are read again, one per worker at a time, for their own report page, which is written into
 * the team page as soon as it is made (the page is written to a temporary file beside --out, then
 * renamed: never held whole, never left half-written).
 */
import { createWriteStream } from "node:fs";
import { lstat, rename, rm } from "node:fs/promises";
import { once } from "node:events";
import type { FormatName } from "../../formats/registry.js";
import { compareRanked, rankedOf, type RankedSession } from "../../route/audit-summary.js";
import { teamPageDetail, teamPageHead, teamPageTail, type TeamRow } from "../../report/team.js";
import { AuditPool } from "../audit-pool.js";
import type { AuditTask } from "../audit-worker.js";
import type { Found } from "../audit-walk.js";
import { usageError } from "../errors.js";
import { num, out } from "../output.js";
import { batchFiles, defaultJobs, progressBar, runAuditBatch } from "./audit-batch.js";

export interface TeamReportOptions {
  out?: string;
  force?: boolean;
  home?: boolean;
  jobs?: number;
  details: number;
  window: number;
  format?: FormatName;
  progress?: boolean;
}

/** The default team page, in the current folder. */
export const DEFAULT_TEAM_PAGE = "team.report.html";

const key = (r: { root: string; path: string }) => `${r.root}\u0000${r.path}`;

export async function reportTeamCommand(paths: readonly string[], o: TeamReportOptions): Promise<void> {
  if (paths.length === 0 && !o.home) throw usageError("give the files or folders to report on, or --home");
  const target = o.out ?? DEFAULT_TEAM_PAGE;
  if (target === "-") throw usageError("the team page is written to a file: give --out PAGE");
  if (!o.force && (await lstat(target).catch(() => undefined)) !== undefined)
    throw usageError(`${target}: exists (give --force to replace it)`);
  const files = await batchFiles({ paths, home: o.home === true });
  const fileOf = new Map(files.map((f) => [key(f), f]));

  const ranked: RankedSession[] = [];
  let without = 0;
  const summary = await runAuditBatch(
    { paths, home: o.home === true, jobs: o.jobs, format: o.format, progress: o.progress, files },
    (r) => {
      if (r.type !== "session") return;
      if (r.counts.compactions > 0) ranked.push(rankedOf(r));
      else without++;
    },
  );
  ranked.sort(compareRanked);
  const details = Math.min(o.details, ranked.length);
  const rows: TeamRow[] = ranked.map((r, i) => ({ ...r, detail: i < details ? i : null }));

  const tmp = `${target}.tmp-${process.pid}`;
  const stream = createWriteStream(tmp, { flags: "wx" });
  const write = async (text: string) => {
    if (!stream.write(text)) await once(stream, "drain");
  };
  let written = 0;
  let failed = 0;
  try {
    await write(
      teamPageHead({
        version: 1,
        generated_at: new Date().toISOString(),
        summary,
        sessions: rows,
        without_compactions: without,
        details,
      }),
    );
    if (details > 0) {
      const pool = new AuditPool(Math.max(1, Math.min(o.jobs ?? defaultJobs(), details)));
      const bar = progressBar(details, o.progress !== false);
      let blocked: Promise<unknown> | undefined;
      const tasks = async function* (): AsyncGenerator<AuditTask> {
        for (const r of rows.slice(0, details)) {
          // The reader (the disk) is behind: wait, so that pages made do not pile up in memory.
          if (blocked !== undefined) await blocked;
          const f = fileOf.get(key(r)) as Found;
          yield {
            kind: "page",
            n: 0,
            file: f.file,
            root: f.root,
            path: f.path,
            named: f.named,
            format: o.format,
            window: o.window,
          };
        }
      };
      try {
        await pool.map(tasks(), (a) => {
          bar.tick();
          if (!(a.ok && "page" in a)) {
            failed++;
            return;
          }
          written++;
          if (!stream.write(teamPageDetail(a.n, a.page)))
            blocked = once(stream, "drain").then(() => (blocked = undefined));
        });
        if (blocked !== undefined) await blocked;
      } finally {
        bar.done();
        await pool.close();
      }
    }
    await write(teamPageTail());
    stream.end();
    await once(stream, "finish");
    await rename(tmp, target);
  } catch (e) {
    stream.destroy();
    await rm(tmp, { force: true });
    throw e;
  }
  out(
    `team page written to ${target} (${num(summary.sessions)} sessions, ${num(ranked.length)} with a compaction; ${num(written)} session reports in the page${failed > 0 ? `, ${num(failed)} could not be made` : ""})`,
  );
}
