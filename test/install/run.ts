/**
 * `npm run test:install`: the README's install, from a fresh clone, as a user does it, then every
 * recipe of the README run against what was installed. Offline: every npm step is `--offline` (the
 * packages come from the local npm cache, where this checkout's own `npm ci` put them). It takes a
 * few minutes (a whole `npm ci` and build in the clone), so it is a script of its own, not part of
 * `npm test`.
 *
 * 1. `git clone` of this repository (its committed tree) into a temporary folder.
 * 2. The README's step for a clone, `npm ci && npm run build && npm install -g .`, into a temporary
 *    npm prefix; and the step for a tarball, `npm install -g ./compact-safe-VERSION.tgz` (`npm pack`
 *    in the clone), into another.
 * 3. With each install's `bin` first on PATH, a temporary HOME and an empty working folder (nothing
 *    of this checkout on PATH): the quick start (`npm run demo` in the clone), `--version`, `npx
 *    compact-safe` (it finds the global install), `audit`, `compact --fork` and `report` on the
 *    example session, the hooks (Claude Code's and Codex's on their hook JSON; pi's extension file
 *    where the README says it is, loaded), the recall server (`compact-safe mcp`, listed by the MCP
 *    SDK's client), the guard (`compact-safe guard --upstream … -- COMMAND` forwarding a request to
 *    a fake server on 127.0.0.1), and the library (`npm install` of the tarball in an empty project,
 *    then `compactMessagesSafe`).
 *
 * Prints one line per check; exit 1 when one fails, 2 when it cannot run (git or npm missing).
 */
import { execFileSync, spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { repoRoot } from "../support.js";

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
/** The machine's environment (npm's cache, certificates), for the npm steps. */
const machine = Object.fromEntries(
  Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
);

function run(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; input?: string; timeoutMs?: number } = {},
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? machine,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      stderr += `\n(killed after ${options.timeoutMs ?? 120_000} ms)`;
    }, options.timeoutMs ?? 120_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

function must(what: string, r: Result): Result {
  if (r.code !== 0) throw new Error(`${what}: exit ${r.code}: ${(r.stderr || r.stdout).trim().slice(-500)}`);
  return r;
}

type Check = { name: string; ok: boolean; detail: string };
const checks: Check[] = [];
async function check(name: string, body: () => Promise<string>): Promise<void> {
  try {
    const detail = await body();
    checks.push({ name, ok: true, detail });
    console.log(`ok   ${name}  ${detail}`);
  } catch (e) {
    const detail = (e as Error).message.split("\n")[0]!;
    checks.push({ name, ok: false, detail });
    console.log(`FAIL ${name}  ${detail}`);
  }
}

/** The recipes of the README, run with `bin` (a global install's) first on PATH. */
async function recipes(
  label: string,
  bin: string,
  prefix: string,
  root: string,
  clone: string,
): Promise<void> {
  const home = join(root, `home-${label}`);
  const work = join(home, "work");
  mkdirSync(work, { recursive: true });
  // Only the install and Node on PATH: nothing of this checkout (its node_modules/.bin) is reachable.
  const env: Record<string, string> = {
    ...machine,
    HOME: home,
    PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
    npm_config_prefix: prefix,
    NO_COLOR: "1",
  };
  const cs = (args: string[], input?: string) =>
    run(join(bin, "compact-safe"), args, { cwd: work, env, input });
  const session = join(work, "session.jsonl");
  copyFileSync(join(clone, "examples", "entire-1a-8a83a35a9b-0.jsonl"), session);
  const p = `${label}: `;

  await check(`${p}compact-safe --version`, async () =>
    must("--version", await cs(["--version"])).stdout.trim(),
  );
  await check(`${p}npx compact-safe --version (the global install)`, async () =>
    must(
      "npx",
      await run(npm, ["exec", "--no-install", "--", "compact-safe", "--version"], { cwd: work, env }),
    ).stdout.trim(),
  );
  await check(`${p}audit SESSION`, async () => {
    const r = await cs(["audit", session]);
    if (r.code !== 0 && r.code !== 1) throw new Error(`audit: exit ${r.code}: ${r.stderr.trim()}`);
    return r.stdout.trim().split("\n")[0]!;
  });
  await check(`${p}compact SESSION --fork`, async () => {
    const r = must("compact --fork", await cs(["compact", session, "--fork", "--json"]));
    const receipt = JSON.parse(r.stdout) as { fork: { path: string; resume: string } };
    if (!existsSync(receipt.fork.path)) throw new Error(`the fork ${receipt.fork.path} was not written`);
    return receipt.fork.resume;
  });
  await check(`${p}report SESSION`, async () => {
    must("report", await cs(["report", session]));
    const page = readdirSync(work).find((f) => f.endsWith(".report.html"));
    if (page === undefined) throw new Error("no .report.html written");
    return page;
  });
  await check(`${p}hook claude-code (SessionStart, compact)`, async () => {
    must("anchor set", await cs(["anchor", "set", "keep the public API stable", "--workspace", work]));
    const input = JSON.stringify({
      session_id: "s",
      transcript_path: session,
      cwd: work,
      hook_event_name: "SessionStart",
      source: "compact",
    });
    const r = must("hook claude-code", await cs(["hook", "claude-code"], input));
    const out = JSON.parse(r.stdout) as { hookSpecificOutput: { additionalContext: string } };
    if (!out.hookSpecificOutput.additionalContext.includes("keep the public API stable"))
      throw new Error(`no anchors in ${r.stdout.slice(0, 200)}`);
    return `additionalContext of ${out.hookSpecificOutput.additionalContext.length} chars`;
  });
  await check(`${p}hook codex (PostCompact)`, async () => {
    const rollout = join(clone, "test", "fixtures", "codex", "codex-0.169.0-remote-compaction.jsonl");
    const input = JSON.stringify({ transcript_path: rollout, cwd: work, hook_event_name: "PostCompact" });
    const r = must("hook codex", await cs(["hook", "codex"], input));
    if (r.stderr.trim() !== "") throw new Error(r.stderr.trim());
    const out = r.stdout.trim() === "" ? undefined : (JSON.parse(r.stdout) as { systemMessage?: string });
    return out?.systemMessage?.split("\n")[0] ?? "nothing to say";
  });
  await check(`${p}pi's extension at $(npm root -g)/compact-safe/extensions/compact-safe.js`, async () => {
    const globalRoot = must("npm root -g", await run(npm, ["root", "-g"], { env })).stdout.trim();
    const file = join(globalRoot, "compact-safe", "extensions", "compact-safe.js");
    const r = must(
      "load the extension",
      await run(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `const m = await import(${JSON.stringify(file)}); console.log(typeof m.default);`,
        ],
        { env },
      ),
    );
    if (r.stdout.trim() !== "function") throw new Error(`its default export is ${r.stdout.trim()}`);
    if (!existsSync(join(globalRoot, "compact-safe", "dist", "src", "cli", "main.js")))
      throw new Error("the command it runs is not beside it");
    return "loads; its default export is the extension";
  });
  await check(`${p}mcp (the recall server, by the MCP SDK's client)`, async () => {
    const transport = new StdioClientTransport({
      command: join(bin, "compact-safe"),
      args: ["mcp", session],
      env,
      cwd: work,
      stderr: "pipe",
    });
    const client = new Client({ name: "install-test", version: "1" });
    await client.connect(transport);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      if (tools.join() !== "history_outline,recall,search_history")
        throw new Error(`tools: ${tools.join(", ")}`);
      return tools.join(", ");
    } finally {
      await client.close();
    }
  });
  await check(`${p}guard -- COMMAND (a request forwarded to a fake upstream)`, async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const agent =
        "const r = await fetch(process.env.ANTHROPIC_BASE_URL + '/v1/models'); console.log(r.status, await r.text());";
      const r = must(
        "guard",
        await cs([
          "guard",
          "--upstream",
          upstream,
          "--no-state",
          "--",
          process.execPath,
          "--input-type=module",
          "-e",
          agent,
        ]),
      );
      if (!r.stdout.includes('200 {"ok":true}') || seen.length !== 1)
        throw new Error(
          `the agent printed ${r.stdout.trim()}; the upstream saw ${seen.join(", ") || "nothing"}`,
        );
      return `the agent got 200 through the guard; the upstream saw ${seen[0]}`;
    } finally {
      server.close();
    }
  });
}

async function main(): Promise<number> {
  const root = mkdtempSync(join(tmpdir(), "cs-install-"));
  try {
    const clone = join(root, "clone");
    try {
      execFileSync("git", ["clone", "--quiet", "--no-hardlinks", repoRoot, clone], { stdio: "ignore" });
    } catch (e) {
      console.error(`test:install: git clone ${repoRoot} failed: ${(e as Error).message.split("\n")[0]}`);
      return 2;
    }
    const commit = execFileSync("git", ["-C", clone, "rev-parse", "--short", "HEAD"], {
      encoding: "utf8",
    }).trim();
    console.log(`test:install: a fresh clone of ${repoRoot} at ${commit}, in ${clone}`);
    const prefix = join(root, "prefix-clone");
    const offline = "--offline";
    await check("clone: npm ci && npm run build && npm install -g . (offline)", async () => {
      must(
        "npm ci",
        await run(npm, ["ci", offline, "--no-audit", "--no-fund", "--loglevel=error"], {
          cwd: clone,
          timeoutMs: 900_000,
        }),
      );
      must("npm run build", await run(npm, ["run", "build"], { cwd: clone, timeoutMs: 600_000 }));
      const env = { ...machine, npm_config_prefix: prefix };
      must(
        "npm install -g .",
        await run(npm, ["install", "-g", offline, "--no-audit", "--no-fund", "."], {
          cwd: clone,
          env,
          timeoutMs: 600_000,
        }),
      );
      return `compact-safe at ${join(prefix, "bin", "compact-safe")}`;
    });
    await check("quick start: npm run demo (in the clone)", async () => {
      const r = must("npm run demo", await run(npm, ["run", "demo"], { cwd: clone, timeoutMs: 600_000 }));
      const resume = r.stdout.split("\n").find((l) => l.includes("claude --resume"));
      if (resume === undefined) throw new Error("the demo printed no claude --resume line");
      return resume.trim();
    });
    if (checks.every((c) => c.ok)) await recipes("clone", join(prefix, "bin"), prefix, root, clone);

    const tprefix = join(root, "prefix-tarball");
    let tarball = "";
    await check("tarball: npm pack, then npm install -g ./compact-safe-VERSION.tgz (offline)", async () => {
      const packed = must(
        "npm pack",
        await run(npm, ["pack", "--silent"], { cwd: clone, timeoutMs: 300_000 }),
      );
      tarball = join(clone, packed.stdout.trim().split("\n").at(-1)!);
      const env = { ...machine, npm_config_prefix: tprefix };
      must(
        "npm install -g",
        await run(npm, ["install", "-g", offline, "--no-audit", "--no-fund", tarball], {
          cwd: root,
          env,
          timeoutMs: 600_000,
        }),
      );
      return `${tarball.split("/").at(-1)} installed in ${tprefix}`;
    });
    if (tarball !== "") {
      await recipes("tarball", join(tprefix, "bin"), tprefix, root, clone);
      await check("library: npm install the tarball in a project, then compactMessagesSafe", async () => {
        const app = join(root, "app");
        mkdirSync(app);
        writeFileSync(
          join(app, "package.json"),
          JSON.stringify({ name: "app", private: true, type: "module" }),
        );
        must(
          "npm install",
          await run(npm, ["install", offline, "--no-audit", "--no-fund", tarball], {
            cwd: app,
            timeoutMs: 600_000,
          }),
        );
        const script = `
          import { compactMessagesSafe, extractiveSummarizer } from "compact-safe";
          const t = (role, text) => ({ role, content: [{ type: "text", text }] });
          const history = [];
          for (let i = 0; i < 40; i++) history.push(t("user", "step " + i + " " + "x".repeat(400)), t("assistant", "did " + i));
          const r = await compactMessagesSafe(history, { summarizer: extractiveSummarizer(), target: 2000 });
          console.log(r.ok ? "ok " + r.path + " " + history.length + " -> " + r.replacement.length : "refused " + r.error.message);`;
        const r = must(
          "node",
          await run(process.execPath, ["--input-type=module", "-e", script], { cwd: app }),
        );
        if (!r.stdout.startsWith("ok ")) throw new Error(r.stdout.trim());
        return r.stdout.trim();
      });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const failed = checks.filter((c) => !c.ok).length;
  console.log(`test:install: ${checks.length - failed}/${checks.length} checks passed`);
  return failed === 0 ? 0 : 1;
}

process.exitCode = await main();
