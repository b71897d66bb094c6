/**
 * A user's project on a given `openai`: the packed package unpacked into a
 * fresh node_modules beside the dependencies it declares (linked from this
 * clone's install) and that openai, and nothing else. On it the Responses
 * example of docs/ADAPTERS.md is type-checked as printed (in a TypeScript
 * module that types `client` and `history` as the example's comment says,
 * followed by lines that pass openai's own items in and compact-safe's out)
 * and run as printed against a fake Responses server on 127.0.0.1.
 *
 * `npm test` checks it on the clone's openai (7, the devDependency; see
 * test/e2e/package.test.ts); `npm run test:clients` on openai 6.49 too,
 * installed into a cache folder outside the tree (test/clients/openai.ts).
 */
import { execFileSync, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { repoRoot } from "./support.js";
import { adapterExamples, exampleModule } from "./docs/readme-examples.js";

/** The oldest openai the peer range takes, checked by `npm run test:clients`. */
export const OPENAI_6 = "6.49.0";

export function sh(cmd: string, args: readonly string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
    timeout: 300_000,
    killSignal: "SIGKILL",
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** `npm pack` of this clone into `dest`: the tarball's path and the files it holds. */
export function packPackage(dest: string): { tarball: string; files: string[] } {
  const r = sh("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dest], repoRoot);
  if (r.status !== 0)
    throw new Error(`npm pack: exit ${r.status} ${r.signal ?? ""}\n${r.stdout}\n${r.stderr}`);
  const [info] = JSON.parse(r.stdout.slice(r.stdout.indexOf("["))) as [
    { filename: string; files: { path: string }[] },
  ];
  return { tarball: join(dest, info.filename), files: info.files.map((f) => f.path) };
}

/** Links `name` and, transitively, what it depends on, from this clone's node_modules into `app`'s. */
export function linkPackage(app: string, name: string, seen: Set<string>): void {
  if (seen.has(name)) return;
  seen.add(name);
  const from = join(repoRoot, "node_modules", name);
  const to = join(app, "node_modules", name);
  mkdirSync(dirname(to), { recursive: true });
  symlinkSync(from, to, "dir");
  const pkg = JSON.parse(readFileSync(join(from, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  for (const dep of Object.keys(pkg.dependencies ?? {})) {
    // A dependency installed inside the package's own node_modules comes with the link.
    if (!existsSync(join(from, "node_modules", dep))) linkPackage(app, dep, seen);
  }
}

/**
 * A project at `app` with the tarball installed as node_modules/compact-safe (and its dependencies), its
 * bin linked into node_modules/.bin and made executable, as npm links it (so `npx compact-safe` runs the
 * install, offline); returns that folder.
 */
export function installPackage(tarball: string, app: string): string {
  const installed = join(app, "node_modules", "compact-safe");
  mkdirSync(installed, { recursive: true });
  const tar = sh("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"], app);
  if (tar.status !== 0) throw new Error(`tar: ${tar.stderr}`);
  const pkg = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
    bin?: Record<string, string>;
  };
  const seen = new Set<string>();
  for (const dep of Object.keys(pkg.dependencies ?? {})) linkPackage(app, dep, seen);
  const bins = join(app, "node_modules", ".bin");
  mkdirSync(bins, { recursive: true });
  for (const [name, target] of Object.entries(pkg.bin ?? {})) {
    chmodSync(join(installed, target), 0o755);
    symlinkSync(join("..", "compact-safe", target), join(bins, name));
  }
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
  return installed;
}

/**
 * `openai@version` installed (once) into `$COMPACT_SAFE_OPENAI_DIR`, else
 * `$XDG_CACHE_HOME/compact-safe/openai`, else `~/.cache/compact-safe/openai`,
 * one subfolder per version; returns the package's folder. Throws when npm
 * cannot install it (e.g. no registry).
 */
export function cachedOpenai(version: string): string {
  const root =
    process.env.COMPACT_SAFE_OPENAI_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "compact-safe", "openai");
  const dir = join(root, version);
  const pkg = join(dir, "node_modules", "openai");
  const has = (): boolean =>
    existsSync(join(pkg, "package.json")) &&
    (JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as { version?: string }).version === version;
  if (has()) return pkg;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ private: true, description: "compact-safe: openai" }),
  );
  execFileSync(
    process.platform === "win32" ? "npm.cmd" : "npm",
    ["install", "--no-audit", "--no-fund", "--loglevel=error", `openai@${version}`],
    { cwd: dir, stdio: ["ignore", "ignore", "pipe"], timeout: 300_000 },
  );
  if (!has()) throw new Error(`npm installed no openai ${version} into ${dir}`);
  return pkg;
}

/** The TypeScript module: the example as printed between a typed preamble and lines passing items both ways. */
export function responsesConsumerSource(block: string): string {
  return [
    "// docs/ADAPTERS.md's Responses example as printed, in a TypeScript module on the project's own openai.",
    'import OpenAI from "openai";',
    'import type { ResponseInputItem, ResponseItem } from "openai/resources/responses/responses";',
    'import { fromResponsesItems, toResponsesItems, type ResponsesHistory } from "compact-safe/responses";',
    'const client = new OpenAI({ apiKey: "test", baseURL: "http://127.0.0.1:9/v1" });',
    "let history: ResponsesHistory = [];",
    "// --- README ---",
    block,
    "// --- openai's items in, compact-safe's out ---",
    'const own: ResponseInputItem[] = [{ role: "user", content: "hi" }, ...history];',
    "const back: ResponseInputItem[] = toResponsesItems(fromResponsesItems([...own, ...response.output]));",
    'const listed: ResponseItem[] = (await client.responses.inputItems.list("resp_1")).data;',
    "const again = await compactResponsesItems([...listed, ...response.output], { force: true });",
    "if (again.ok) history = again.items;",
    "history = own;",
    'export const sent = await client.responses.create({ model: "gpt-5", input: back });',
    'export const resent = await client.responses.create({ model: "gpt-5", input: history });',
    "",
  ].join("\n");
}

export interface ConsumerChecks {
  /** The openai version the project has. */
  openai: string;
  /** `tsc` on the TypeScript module (strict, library declarations checked too). */
  typecheck(): SpawnSyncReturns<string>;
  /** The example as printed (with its before- and after-files), run by this Node. */
  run(): SpawnSyncReturns<string>;
}

/** Adds `openai` (the folder of an installed openai package) and the two programs to the project at `app`. */
export function responsesConsumer(app: string, openai: string): ConsumerChecks {
  const block = adapterExamples().get("responses");
  if (block === undefined) throw new Error("docs/ADAPTERS.md has no <!-- example: responses --> block");
  symlinkSync(openai, join(app, "node_modules", "openai"), "dir");
  if (!existsSync(join(app, "node_modules", "@types", "node"))) linkPackage(app, "@types/node", new Set());
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
      files: ["responses.ts"],
    }),
  );
  writeFileSync(join(app, "responses.ts"), responsesConsumerSource(block));
  writeFileSync(join(app, "responses.mjs"), exampleModule("responses", block));
  const tsc = join(repoRoot, "node_modules", "typescript", "bin", "tsc");
  return {
    openai: (JSON.parse(readFileSync(join(openai, "package.json"), "utf8")) as { version: string }).version,
    typecheck: () => sh(process.execPath, [tsc, "-p", join(app, "tsconfig.json")], app),
    run: () => sh(process.execPath, [join(app, "responses.mjs")], app),
  };
}
