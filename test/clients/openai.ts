/**
 * The openai majors the peer range takes, on the Responses example of
 * docs/ADAPTERS.md: a project on openai 6.49 (installed into a cache folder
 * outside the tree, see responses-consumer.ts) and one on the clone's openai 7
 * each type-check the example as printed and run it against a fake Responses
 * server on 127.0.0.1. (npm test checks openai 7 only: it needs no registry.)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SpawnSyncReturns } from "node:child_process";
import { repoRoot } from "../support.js";
import {
  OPENAI_6,
  cachedOpenai,
  installPackage,
  packPackage,
  responsesConsumer,
} from "../responses-consumer.js";
import type { ClientModule, SessionVerdict } from "./types.js";

const SESSION = "docs/ADAPTERS.md example: responses";

/** One line of what a failed step printed (the first error line of tsc or node). */
function firstError(r: SpawnSyncReturns<string>): string {
  const lines = `${r.stdout}\n${r.stderr}`.split("\n").filter((l) => l.trim() !== "");
  const line = lines.find((l) => /error/i.test(l)) ?? lines[0] ?? "";
  return `exit ${r.status ?? r.signal}: ${line.trim()}`;
}

export const openaiChecks: ClientModule = async ({ log }) => {
  const out: SessionVerdict[] = [];
  const dir = mkdtempSync(join(tmpdir(), "cs-openai-"));
  try {
    const { tarball } = packPackage(dir);
    const majors: [string, () => string][] = [
      [OPENAI_6, () => cachedOpenai(OPENAI_6)],
      ["7 (the clone's)", () => join(repoRoot, "node_modules", "openai")],
    ];
    for (const [label, locate] of majors) {
      let openai: string;
      try {
        openai = locate();
      } catch (e) {
        const why = e instanceof Error ? e.message.split("\n")[0]! : String(e);
        log(`openai: cannot install openai ${label}: ${why}`);
        for (const check of ["type-check", "run"])
          out.push({
            client: "openai",
            session: SESSION,
            check: `${check} on openai ${label}`,
            ok: false,
            skipped: true,
            detail: `openai ${label} could not be installed (${why})`,
          });
        continue;
      }
      const project = join(dir, `openai-${out.length}`);
      installPackage(tarball, project);
      const checks = responsesConsumer(project, openai);
      const tsc = checks.typecheck();
      out.push({
        client: "openai",
        session: SESSION,
        check: `type-check on openai ${checks.openai}`,
        ok: tsc.status === 0,
        detail:
          tsc.status === 0 ? "tsc --strict: no error (library declarations checked too)" : firstError(tsc),
      });
      const run = checks.run();
      out.push({
        client: "openai",
        session: SESSION,
        check: `run on openai ${checks.openai}`,
        ok: run.status === 0,
        detail: run.status === 0 ? "ran as printed against a fake Responses server" : firstError(run),
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
};
