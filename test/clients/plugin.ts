/**
 * The Claude Code plugin (`.claude-plugin/marketplace.json` at the repository's root, the plugin in
 * `plugins/compact-safe/`) in the real Claude Code, installed as a user installs it:
 *
 * 1. compact-safe installed the README's way for a tarball (`npm pack` of this tree, then
 *    `npm install -g` of the tarball into a temporary npm prefix, offline from the npm cache first),
 *    so that `compact-safe` is on PATH;
 * 2. a clone of the repository (`git clone` of its committed tree) added as a marketplace
 *    (`claude plugin marketplace add CLONE`) and the plugin installed from it (`claude plugin install
 *    compact-safe@compact-safe`), in a temporary HOME;
 * 3. a corpus session compacted by Claude Code itself (`claude -p /compact --resume`) against the fake
 *    Anthropic server, with anchors pinned in the workspace, then resumed: the request after the
 *    compaction must carry what the plugin's SessionStart hook restated (the pinned anchors) and offer
 *    the plugin's recall server's three tools (`recall`, `search_history`, `history_outline`).
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { randomUUID } from "node:crypto";
import { repoRoot } from "../support.js";
import { startFakeServer } from "./fake-server.js";
import { answerAnthropic, CANNED_SUMMARY } from "./fake-anthropic.js";
import { runProcess } from "./run-process.js";
import { installNewestClaude, PINNED_CLIENTS } from "./install.js";
import { sessionId } from "./claude-code.js";
import type { ClientContext, SessionVerdict } from "./types.js";

/** The corpus session compacted (its last round holds an instruction of the user). */
export const PLUGIN_SESSION = "claude-code/entire-1a-8a83a35a9b-0.jsonl";

/** The recall server's tools, as Claude Code names a plugin's MCP tools (`mcp__plugin_<plugin>_<server>__<tool>`). */
const RECALL_TOOLS = ["recall", "search_history", "history_outline"];

const npm = process.platform === "win32" ? "npm.cmd" : "npm";

function step(what: string, r: { code: number | null; stdout: string; stderr: string }): void {
  if (r.code !== 0) throw new Error(`${what}: exit ${r.code}: ${(r.stderr || r.stdout).trim().slice(-400)}`);
}

/** Installs the tarball of this tree into `prefix` (offline from the npm cache when it can); returns its bin folder. */
async function installTarball(root: string, prefix: string): Promise<string> {
  // npm gets the machine's environment (its cache, certificates and proxy), not the test's HOME.
  const machine = Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const packed = await runProcess(npm, ["pack", "--silent", "--pack-destination", root], {
    cwd: repoRoot,
    env: machine,
    timeoutMs: 300_000,
  });
  step("npm pack", packed);
  const tarball = join(root, packed.stdout.trim().split("\n").at(-1)!);
  const env = { ...machine, npm_config_prefix: prefix };
  const args = ["install", "-g", "--no-audit", "--no-fund", "--loglevel=error", tarball];
  let r = await runProcess(npm, [...args, "--offline"], { env, timeoutMs: 300_000 });
  if (r.code !== 0) r = await runProcess(npm, [...args, "--prefer-offline"], { env, timeoutMs: 600_000 });
  step(`npm install -g ${tarball}`, r);
  return join(prefix, "bin");
}

/** The check with the pinned Claude Code, and again with the newest the registry serves when it is another. */
export async function pluginChecks(ctx: ClientContext): Promise<SessionVerdict[]> {
  const out = await pluginCheck(ctx, ctx.bin, PINNED_CLIENTS["@anthropic-ai/claude-code"]);
  const newest = await installNewestClaude(ctx.log).catch((e: Error) => ({ skipped: e.message }));
  if ("skipped" in newest)
    out.push({
      ...out[0]!,
      check: `${out[0]!.check} (newest)`,
      ok: true,
      skipped: true,
      detail: newest.skipped,
    });
  else if (!newest.pinned) out.push(...(await pluginCheck(ctx, newest.bin, newest.version)));
  return out;
}

async function pluginCheck(ctx: ClientContext, claudeBin: string, which: string): Promise<SessionVerdict[]> {
  const verdict = (ok: boolean, detail: string): SessionVerdict => ({
    client: "claude-code",
    session: PLUGIN_SESSION,
    check: `plugin: marketplace add, install, /compact (Claude Code ${which})`,
    ok,
    detail,
  });
  const root = mkdtempSync(join(tmpdir(), "cs-plugin-"));
  const server = await startFakeServer((req, res) => answerAnthropic(req, res));
  try {
    const bin = await installTarball(root, join(root, "prefix"));
    const clone = join(root, "clone");
    execFileSync("git", ["clone", "--quiet", "--no-hardlinks", repoRoot, clone], { stdio: "ignore" });
    const home = join(root, "home");
    const workspace = join(home, "work");
    mkdirSync(workspace, { recursive: true });
    const env = {
      HOME: home,
      // The hook and the server are the `compact-safe` of the install, run by this Node.
      PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: "fake-key",
      DISABLE_TELEMETRY: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
    };
    const claude = (args: string[], timeoutMs = 180_000) =>
      runProcess(join(claudeBin, "claude"), args, { cwd: workspace, env, timeoutMs });
    step("claude plugin marketplace add", await claude(["plugin", "marketplace", "add", clone]));
    const installed = await claude(["plugin", "install", "compact-safe@compact-safe"]);
    step("claude plugin install compact-safe@compact-safe", installed);
    const listed = await claude(["plugin", "list"]);
    step("claude plugin list", listed);
    if (!listed.stdout.includes("compact-safe@compact-safe"))
      return [
        verdict(false, `claude plugin list does not show the plugin: ${listed.stdout.trim().slice(0, 300)}`),
      ];

    // A corpus session in the workspace's project folder, and anchors pinned in the workspace.
    const projectDir = join(home, ".claude", "projects", workspace.replace(/[/.]/g, "-"));
    mkdirSync(projectDir, { recursive: true });
    const text = readFileSync(join(ctx.corpus, PLUGIN_SESSION), "utf8");
    const id = sessionId(text);
    const file = join(projectDir, `${id}.jsonl`);
    writeFileSync(file, text);
    const anchor = `plugin check ${randomUUID()}: keep the public API stable`;
    step(
      "compact-safe anchor set",
      await runProcess(join(bin, "compact-safe"), ["anchor", "set", anchor, "--workspace", workspace], {
        env,
      }),
    );
    step("claude -p /compact", await claude(["-p", "/compact", "--resume", id, "--output-format", "json"]));
    const after = readFileSync(file, "utf8");
    if (!after.includes('"compact_boundary"') || !after.includes(CANNED_SUMMARY.slice(0, 40)))
      return [verdict(false, "claude /compact wrote no compact boundary with the fake's summary")];
    const from = server.requests.length;
    step("claude -p continue", await claude(["-p", "continue", "--resume", id, "--output-format", "json"]));
    const request = server.requests
      .slice(from)
      .filter((r) => r.path.startsWith("/v1/messages") && !r.path.includes("count_tokens"))
      .at(-1);
    if (request === undefined) return [verdict(false, "no /v1/messages request after the compaction")];
    const body = JSON.stringify(request.body);
    const restated = `Pinned anchors (restated verbatim):\\n${anchor}`;
    const tools = RECALL_TOOLS.map((t) => new RegExp(`mcp__plugin_compact-safe_compact-safe__${t}\\b`));
    const missing = RECALL_TOOLS.filter((_, i) => !tools[i]!.test(body));
    const problems = [
      ...(body.includes(restated)
        ? []
        : ["the hook's restated anchors are not in the request after /compact"]),
      ...(missing.length > 0
        ? [`the request offers no ${missing.join(", ")} tool of the plugin's server`]
        : []),
    ];
    if (problems.length > 0) return [verdict(false, problems.join("; "))];
    const cache = join(home, ".claude", "plugins");
    return [
      verdict(
        true,
        `installed from a clone's marketplace (${existsSync(cache) ? readdirSync(cache).length : 0} entries in ~/.claude/plugins); ` +
          `after /compact the request carried the hook's restated anchors and offered ${RECALL_TOOLS.map((t) => `mcp__plugin_compact-safe_compact-safe__${t}`).join(", ")}`,
      ),
    ];
  } catch (e) {
    return [verdict(false, (e as Error).message.split("\n")[0]!)];
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}
