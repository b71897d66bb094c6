/**
 * The README's table of Node.js versions (after `<!-- node-versions -->`)
 * against what is installed: package.json's `engines` and the `engines` of
 * the hard dependencies give the core's row; each host package's own
 * `engines` gives its subpath's row (for the host version installed here).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../support.js";

interface Pkg {
  version: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
}

const readPkg = (dir: string): Pkg => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Pkg;
const installed = (name: string): Pkg => readPkg(join(repoRoot, "node_modules", name));

/** The lowest Node.js a `>=X.Y.Z` range takes, as the README writes it (`22`, `20.6`); 0 for none. */
function lowest(range: string | undefined): string {
  if (range === undefined) return "0";
  const m = /^>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  assert.ok(m, `an engines range this test reads: ${range}`);
  return m[2] === undefined || m[2] === "0" ? m[1]! : `${m[1]}.${m[2]}`;
}

const byVersion = (a: string, b: string): number => {
  const [x, y] = [a.split(".").map(Number), b.split(".").map(Number)];
  return (x[0]! - y[0]!) * 1000 + ((x[1] ?? 0) - (y[1] ?? 0));
};

/** The table's rows: first cell → second cell. */
function table(): Map<string, string> {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
  const at = readme.indexOf("<!-- node-versions -->");
  assert.ok(at >= 0, "README: no <!-- node-versions --> table");
  const rows = new Map<string, string>();
  for (const line of readme.slice(at).split("\n").slice(2)) {
    if (line.trim() === "") {
      if (rows.size > 0) break;
      continue;
    }
    const cells = line.split("|").map((c) => c.trim());
    if (cells[1] !== undefined && !/^-+$/.test(cells[1]) && cells[1] !== "subpath or feature")
      rows.set(cells[1], cells[2] ?? "");
  }
  return rows;
}

/** The row whose first cell starts with `subpath`. */
function row(subpath: string): string {
  for (const [k, v] of table()) if (k.startsWith(subpath)) return v;
  assert.fail(`README node-versions table: no row for ${subpath}`);
}

test("the core's row is package.json's engines, which takes every hard dependency's", () => {
  const pkg = readPkg(repoRoot);
  const core = lowest(pkg.engines?.node);
  assert.equal(row("`compact-safe`,"), `>= ${core}`);
  for (const dep of Object.keys(pkg.dependencies ?? {})) {
    const need = lowest(installed(dep).engines?.node);
    assert.ok(
      byVersion(need, core) <= 0,
      `${dep} needs Node ${need}, more than engines ${pkg.engines?.node}`,
    );
  }
});

test("each subpath's row says what its host package (the version installed here) needs", () => {
  const need = (name: string): string => lowest(installed(name).engines?.node);
  const atLeast = (...names: string[]): string => names.map(need).sort(byVersion).at(-1)!;
  assert.equal(row("`compact-safe/ai-sdk`"), `>= ${atLeast("ai")}`);
  assert.equal(row("`compact-safe/langchain`"), `>= ${atLeast("langchain", "@langchain/core")}`);
  const openai = installed("openai").version.split(".")[0]!;
  assert.ok(
    row("`compact-safe/responses`").includes(`>= ${need("openai")} with openai ${openai}`),
    row("`compact-safe/responses`"),
  );
  const pi = installed("@mariozechner/pi-coding-agent").version.split(".").slice(0, 2).join(".");
  assert.ok(
    row("`compact-safe/pi`").includes(`>= ${need("@mariozechner/pi-coding-agent")} with pi ${pi}`),
    row("`compact-safe/pi`"),
  );
});
