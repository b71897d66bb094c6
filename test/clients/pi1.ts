/**
 * pi 1.x (`@earendil-works/pi-coding-agent`, the package pi moved to after
 * `@mariozechner/pi-coding-agent` 0.73.1) beside the pinned pi 0.73: it needs
 * Node >= 22.19, so it is installed into its own clients-cache folder and run
 * with the pinned Node 22 of scripts/node-version.mjs (the suite itself runs on the
 * machine's Node). The same checks as pi.ts, on the same corpus sessions,
 * printed under the client name `pi-VERSION`: pi 1.x resumes a 0.73 session,
 * resumes compact-safe's fork of it, compacts the fork and the original
 * itself (the session pi 1.x then holds is one it wrote: its system message,
 * its compaction with `systemMessage`), and `audit` judges each compaction,
 * as the extension does in pi.
 *
 * Then the pi 1.x README example (docs/ADAPTERS.md `<!-- example: pi-1 -->`)
 * runs as printed on that Node: the module is written into a temporary folder
 * whose node_modules links `compact-safe` to this tree and `@earendil-works`
 * to the cache install, so that both resolve as they do for a user.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../support.js";
import { adapterExamples, exampleModule } from "../docs/readme-examples.js";
import { installPi1, PI1_VERSION, type Pi1Install } from "./install.js";
import { piChecks } from "./pi.js";
import { runProcess } from "./run-process.js";
import type { ClientContext, ClientModule, SessionVerdict } from "./types.js";

const CLIENT = `pi-${PI1_VERSION}` as const;

/** Runs the README's pi 1.x example on pi 1.x's Node; the verdict line. */
async function readmeExample(install: Pi1Install): Promise<SessionVerdict> {
  const check = "README example pi-1 runs as printed";
  const v = (ok: boolean, detail: string): SessionVerdict => ({
    client: CLIENT,
    session: "docs/ADAPTERS.md",
    check,
    ok,
    detail,
  });
  const body = adapterExamples().get("pi-1");
  if (body === undefined) return v(false, "docs/ADAPTERS.md has no <!-- example: pi-1 --> block");
  const dir = mkdtempSync(join(tmpdir(), "cs-clients-pi1-readme-"));
  try {
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(repoRoot, join(dir, "node_modules", "compact-safe"), "dir");
    symlinkSync(
      join(install.nodeModules, "@earendil-works"),
      join(dir, "node_modules", "@earendil-works"),
      "dir",
    );
    const file = join(dir, "pi-1.mjs");
    writeFileSync(file, exampleModule("pi-1", body));
    const r = await runProcess(install.node, [file], { cwd: dir, timeoutMs: 120_000 });
    if (r.code !== 0)
      return v(
        false,
        `exit ${r.code}: ${`${r.stderr}\n${r.stdout}`.trim().split("\n").slice(-6).join(" | ")}`,
      );
    return v(
      true,
      `ran on Node ${install.node.match(/\/node\/([\d.]+)\//)?.[1] ?? "22"}; ${r.stdout.trim() || "its assertions held"}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const pi1Client: ClientModule = async (ctx: ClientContext) => {
  let install: Pi1Install;
  try {
    install = await installPi1(ctx.log);
  } catch (e) {
    return [
      {
        client: CLIENT,
        session: "-",
        check: "install",
        ok: false,
        detail: (e instanceof Error ? e.message : String(e)).split("\n")[0]!,
      },
    ];
  }
  ctx.log(`clients: pi ${install.versionLine} (${install.cli}) on ${install.node}`);
  const verdicts = await piChecks(ctx, {
    client: CLIENT,
    command: [install.node, [install.cli]],
    settings: { compaction: { keepRecentTokens: 2000 } },
  });
  verdicts.push(await readmeExample(install));
  return verdicts;
};
