/**
 * The npm package as a user installs it: `npm pack`, the tarball unpacked into
 * a fresh node_modules beside the dependencies it declares (linked from this
 * clone's install, so no registry is needed) and nothing else: not the
 * optional peers (the provider SDKs, the exact tokenizer).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exampleSession, repoRoot } from "../support.js";
import { installPackage, linkPackage, packPackage, responsesConsumer } from "../responses-consumer.js";

const OPTIONAL = ["openai", "@anthropic-ai/sdk", "gpt-tokenizer"];
const REQUIRE_LINE =
  'compact-safe is an ES module: use import { ... } from "compact-safe" or await import("compact-safe") (or Node.js 20.19+ / 22.12+, where require() loads it)';

let dir = "";
let app = "";
let installed = "";
let packed: string[] = [];
let tarball = "";

function sh(
  cmd: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", ...env },
    timeout: 180_000,
    killSignal: "SIGKILL",
    maxBuffer: 64 * 1024 * 1024,
  });
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  assert.equal(r.status, 0, `${what}: exit ${r.status} ${r.signal ?? ""}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** Links `name` and what it depends on from this clone's node_modules into `app`. */
const link = (name: string, seen: Set<string>): void => linkPackage(app, name, seen);

const node = (args: readonly string[], env: Record<string, string> = {}) =>
  sh(process.execPath, args, app, env);
const cli = (args: readonly string[], env: Record<string, string> = {}) =>
  node([join(installed, "dist", "src", "cli", "main.js"), ...args], env);

describe("the packed package, installed", { concurrency: false }, () => {
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "cs-pack-"));
    ({ tarball, files: packed } = packPackage(dir));
    app = join(dir, "app");
    installed = installPackage(tarball, app);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("the tarball holds the licence, the third-party notices and the package links", () => {
    assert.ok(packed.includes("LICENSE"), "LICENSE");
    assert.ok(packed.includes("THIRD_PARTY_NOTICES.md"), "THIRD_PARTY_NOTICES.md");
    assert.match(
      readFileSync(join(installed, "LICENSE"), "utf8"),
      /^MIT License\n\nCopyright \(c\) 2026 the compact-safe authors\n/,
    );
    const notices = readFileSync(join(installed, "THIRD_PARTY_NOTICES.md"), "utf8");
    // The bundled gitleaks rules ship with their licence.
    assert.ok(packed.includes("dist/src/redact/secret-rules/gitleaks.json"));
    assert.match(notices, /gitleaks v8\.27\.2/);
    assert.match(notices, /Copyright \(c\) 2019 Zachary Rice/);
    const pkg = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as Record<string, unknown>;
    assert.equal(pkg.license, "MIT");
    for (const field of ["repository", "homepage", "bugs"]) assert.ok(pkg[field], field);
  });

  test("no source map and no reference to one (the sources are not shipped)", () => {
    assert.deepEqual(
      packed.filter((p) => p.endsWith(".map")),
      [],
    );
    assert.ok(!packed.some((p) => p.startsWith("src/")), "the package ships dist/, not src/");
    const stack = [join(installed, "dist")];
    const pointing: string[] = [];
    while (stack.length > 0) {
      const d = stack.pop()!;
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) stack.push(p);
        else if (/\.(c|m)?js$/.test(e.name) && readFileSync(p, "utf8").includes("//# sourceMappingURL="))
          pointing.push(p);
      }
    }
    assert.deepEqual(pointing, []);
  });

  test("require('compact-safe') loads the module where Node can, and says in one line what to do where it cannot", () => {
    const names = node([
      "--input-type=module",
      "-e",
      "console.log(Object.keys(await import('compact-safe')).join())",
    ]);
    ok(names, "import");
    if (process.features.require_module) {
      const r = node(["-e", "console.log(Object.keys(require('compact-safe')).join())"]);
      assert.equal(ok(r, "require"), names.stdout);
      assert.equal(r.stderr, "", "no warning");
    }
    const old = node(["--no-experimental-require-module", "-e", "require('compact-safe')"]);
    assert.equal(old.status, 1);
    assert.ok(old.stderr.split("\n").includes(`Error: ${REQUIRE_LINE}`), old.stderr);
    assert.doesNotMatch(old.stderr, /No "exports" main defined/);
  });

  test("the bin runs from the install, without the optional packages", () => {
    for (const name of OPTIONAL)
      assert.ok(!existsSync(join(app, "node_modules", name)), `${name} is not installed`);
    const version = (JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { version: string })
      .version;
    assert.equal(ok(cli(["--version"]), "--version").trim(), version);
  });

  test("a compaction with the default summarizer works from the install, without the optional packages", () => {
    const journal = join(dir, "example.journal");
    ok(cli(["import", exampleSession, "--out", journal]), "import");
    const receipt = JSON.parse(
      ok(cli(["compact", journal, "--in-place", "--target", "2000", "--json"]), "compact"),
    ) as {
      path?: string;
    };
    assert.equal(receipt.path, "summary");
    // The library too: import, compact a history offline.
    const script = `
      import { compactMessagesSafe, extractiveSummarizer } from "compact-safe";
      const history = [{ role: "user", content: [{ type: "text", text: "Port the parser." }] }];
      for (let i = 0; i < 40; i++) {
        history.push({ role: "assistant", content: [{ type: "tool_use", id: "c" + i, name: "Read", input: { file_path: "src/p" + i + ".ts" } }] });
        history.push({ role: "user", content: [{ type: "tool_result", tool_use_id: "c" + i, content: "const x = 1;\\n".repeat(400) }] });
      }
      history.push({ role: "user", content: [{ type: "text", text: "Now write the tests." }] });
      const r = await compactMessagesSafe(history, { summarizer: extractiveSummarizer(), target: 3000 });
      console.log(r.ok);
    `;
    assert.equal(ok(node(["--input-type=module", "-e", script]), "library compaction").trim(), "true");
    // compact-safe/responses is typed with openai's types, and runs without openai.
    const items = `
      import { fromResponsesItems } from "compact-safe/responses";
      console.log(fromResponsesItems([{ role: "user", content: "hi" }]).length);
    `;
    assert.equal(ok(node(["--input-type=module", "-e", items]), "compact-safe/responses").trim(), "1");
    // compact-safe/guard: the proxy, its core and types, from the install.
    const guard = `
      import { startGuard, createGuardCore } from "compact-safe/guard";
      const g = await startGuard({ core: createGuardCore(), log: () => {} });
      console.log(typeof g.url, /^http:\\/\\/127\\.0\\.0\\.1:\\d+$/.test(g.url));
      await g.close();
    `;
    assert.equal(ok(node(["--input-type=module", "-e", guard]), "compact-safe/guard").trim(), "string true");
  });

  test("a feature whose optional package is missing says which package to install, in one line", () => {
    const r = cli(["compact", exampleSession, "--dry-run", "--summarizer", "anthropic", "--model", "m"], {
      ANTHROPIC_API_KEY: "placeholder",
    });
    assert.equal(r.status, 2, r.stderr);
    assert.equal(
      r.stderr,
      "compact-safe: the anthropic summarizer needs the package @anthropic-ai/sdk, which is not installed (npm install @anthropic-ai/sdk@1)\n",
    );
    const o = cli(["compact", exampleSession, "--dry-run", "--summarizer", "openai", "--model", "m"], {
      OPENAI_API_KEY: "placeholder",
    });
    assert.equal(o.status, 2, o.stderr);
    assert.equal(
      o.stderr,
      "compact-safe: the openai-compatible summarizer needs the package openai, which is not installed (npm install openai@7)\n",
    );
    const script = `
      import { exactEstimator } from "compact-safe";
      await exactEstimator().then(() => console.log("loaded"), (e) => console.log(e.code + ": " + e.message));
    `;
    assert.equal(
      ok(node(["--input-type=module", "-e", script]), "exactEstimator").trim(),
      "missing_package: exactEstimator() needs the package gpt-tokenizer, which is not installed (npm install gpt-tokenizer@4)",
    );
  });

  test("a TypeScript consumer type-checks against the package without the optional packages", () => {
    link("@types/node", new Set());
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2022",
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ["node"],
        },
        files: ["esm.ts", "cjs.cts"],
      }),
    );
    writeFileSync(
      join(app, "esm.ts"),
      [
        'import { anthropicSummarizer, compactMessagesSafe, exactEstimator, extractiveSummarizer, openaiCompatibleSummarizer, type Message } from "compact-safe";',
        'const history: Message[] = [{ role: "user", content: [{ type: "text", text: "hi" }] }];',
        "const r = await compactMessagesSafe(history, { summarizer: extractiveSummarizer(), target: 10 });",
        "export const ok: boolean = r.ok;",
        "export const all = [anthropicSummarizer, openaiCompatibleSummarizer, exactEstimator];",
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(app, "cjs.cts"),
      'import cs = require("compact-safe");\nexport const f: typeof cs.extractiveSummarizer = cs.extractiveSummarizer;\n',
    );
    const tsc = join(repoRoot, "node_modules", "typescript", "bin", "tsc");
    ok(node([tsc, "-p", join(app, "tsconfig.json")]), "tsc");
  });

  test("a TypeScript project on openai 7 type-checks the Responses example as printed, and runs it", () => {
    // Its own install beside the first (which has no openai): compact-safe's types are then openai 7's.
    const project = join(dir, "openai7");
    installPackage(tarball, project);
    const checks = responsesConsumer(project, join(repoRoot, "node_modules", "openai"));
    assert.match(checks.openai, /^7\./, "the clone's openai (the devDependency) is 7.x");
    ok(checks.typecheck(), `tsc on openai ${checks.openai}`);
    ok(checks.run(), `the example on openai ${checks.openai}`);
  });
});
