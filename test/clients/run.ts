/**
 * `npm run test:clients`: the real-client tests. Installs the pinned Claude
 * Code, Codex and pi into a cache folder outside the tree, runs each against
 * a fake model server on 127.0.0.1 with a temporary HOME, on corpus sessions,
 * and prints one verdict line per session and check. Exits 1 when a check
 * fails, 2 when it cannot run (no corpus, install failed).
 *
 * Options: `--only claude-code,codex,pi,pi1,guard,openai,recall,plugin` runs some of them only (`pi1`:
 * the pi checks again with pi 1.x on Node 22, and the pi README example on it,
 * see pi1.ts; `guard`: the checks of `compact-safe guard` with the three
 * agents, see guard.ts; `openai`: the Responses example on openai 6 and 7, see openai.ts;
 * `recall`: Claude Code and Codex with `compact-safe mcp` configured, recalling the stubs of a
 * prune-only fork, see recall.ts; `plugin`: the Claude Code plugin of `.claude-plugin/`, added from a
 * clone and installed by Claude Code, then a /compact, see plugin.ts);
 * `--guard-only streams,scenarios,newest,fresh,upstream,extractive,today,remote` runs some of
 * the guard's groups of checks only (`fresh`: a new Claude Code session on
 * its default model through `compact-safe guard -- claude`, pinned and newest;
 * `today`: the agents as they are today, see guard-today.ts; `remote`: Codex's remote
 * compaction on its built-in provider, without and through the guard, see codex-remote.ts).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cliPath, corpusDir } from "../support.js";
import { checkVersions, installClients } from "./install.js";
import { claudeCodeClient } from "./claude-code.js";
import { codexClient } from "./codex.js";
import { piClient } from "./pi.js";
import { pi1Client } from "./pi1.js";
import { GUARD_PARTS, guardChecks } from "./guard.js";
import { openaiChecks } from "./openai.js";
import { recallChecks } from "./recall.js";
import { pluginChecks } from "./plugin.js";
import type { ClientModule, SessionVerdict } from "./types.js";

const CLIENTS: Record<string, ClientModule> = {
  "claude-code": claudeCodeClient,
  codex: codexClient,
  pi: piClient,
  pi1: pi1Client,
  guard: guardChecks,
  openai: openaiChecks,
  recall: recallChecks,
  plugin: pluginChecks,
};

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const onlyAt = args.indexOf("--only");
  const only =
    onlyAt >= 0 ? (args[onlyAt + 1] ?? "").split(",").filter((x) => x !== "") : Object.keys(CLIENTS);
  const unknown = only.filter((c) => !(c in CLIENTS));
  if (unknown.length > 0) {
    log(`test:clients: unknown client ${unknown.join(", ")} (known: ${Object.keys(CLIENTS).join(", ")})`);
    return 2;
  }
  const partsAt = args.indexOf("--guard-only");
  const guardParts = partsAt >= 0 ? (args[partsAt + 1] ?? "").split(",").filter((x) => x !== "") : undefined;
  const unknownParts = (guardParts ?? []).filter((p) => !GUARD_PARTS.includes(p));
  if (unknownParts.length > 0 || guardParts?.length === 0) {
    log(
      `test:clients: --guard-only: unknown group ${unknownParts.join(", ") || "(none given)"} (known: ${GUARD_PARTS.join(", ")})`,
    );
    return 2;
  }
  if (!existsSync(join(corpusDir, "claude-code"))) {
    log(`test:clients: the corpus is not at ${corpusDir} (the real-client tests resume its sessions)`);
    return 2;
  }
  let bin: string;
  try {
    bin = await installClients(log);
    for (const v of await checkVersions(bin)) log(`clients: ${v}`);
  } catch (e) {
    log(`test:clients: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
  const verdicts: SessionVerdict[] = [];
  for (const name of only) {
    const started = Date.now();
    const got = await CLIENTS[name]!({ bin, corpus: corpusDir, cli: cliPath, log, guardParts });
    for (const v of got) {
      const mark = v.skipped === true ? "skip" : v.ok ? "ok  " : "FAIL";
      console.log(
        v.client === "guard"
          ? `${mark} guard: ${v.check}  [${v.session}]  ${v.detail}`
          : `${mark} ${v.client.padEnd(11)} ${v.session}  [${v.check}]  ${v.detail}`,
      );
    }
    log(`${name}: ${got.length} checks in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    verdicts.push(...got);
  }
  const skipped = verdicts.filter((v) => v.skipped === true).length;
  const run = verdicts.filter((v) => v.skipped !== true);
  const failed = run.filter((v) => !v.ok).length;
  const sessions = new Set(run.map((v) => `${v.client} ${v.session}`)).size;
  console.log(
    `test:clients: ${run.length - failed}/${run.length} checks passed on ${sessions} sessions (${only.join(", ")})${skipped > 0 ? `; ${skipped} skipped` : ""}`,
  );
  return failed === 0 && run.length > 0 ? 0 : 1;
}

process.exitCode = await main();
