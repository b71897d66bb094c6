/**
 * The layers of `src/` and the one way their imports run, as docs/ARCHITECTURE.md's table states
 * them: a source file imports only from its own layer and the layers listed before it (types
 * included), and no circle of loaded imports exists between source files.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { repoRoot } from "./support.js";

/** File -> the files it imports (repository-relative, `.ts`). */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm;
/** A static import or re-export that brings types only: erased by the compiler, never loaded. */
const TYPE_ONLY =
  /^\s*(?:import|export)\s+(?:type\s[^;]*?|\{(?:\s*type\s+[^,}]+,?)+\s*\})\s*from\s*["'](\.{1,2}\/[^"']+)["']/gm;

/**
 * The relative imports of one source text, resolved against its file; with `runtime`, only those
 * that are loaded (type-only imports left out).
 */
export function importsOf(file: string, text: string, runtime = false): string[] {
  const resolve = (spec: string) =>
    normalize(join(dirname(file), spec.replace(/\.js$/, ".ts").replace(/\.cjs$/, ".cts")));
  const typeOnly = new Set<number>();
  if (runtime) for (const m of text.matchAll(TYPE_ONLY)) typeOnly.add(m.index + m[0].lastIndexOf(m[1]!));
  const out = new Set<string>();
  for (const m of text.matchAll(IMPORT)) {
    if (typeOnly.has(m.index + m[0].lastIndexOf(m[1]!))) continue;
    out.add(resolve(m[1]!));
  }
  return [...out];
}

/** The layer of a file under `src/`: its first folder, or `(root)`. */
export function layerOf(file: string): string {
  const parts = file.split("/");
  return parts.length > 2 ? parts[1]! : "(root)";
}

/** Imports that run down the table (to a layer listed after the importer's), or to an unlisted layer. */
export function layerViolations(graph: ImportGraph, order: readonly string[]): string[] {
  const rank = new Map(order.map((l, i) => [l, i]));
  const out: string[] = [];
  for (const [from, tos] of graph) {
    const a = rank.get(layerOf(from));
    if (a === undefined) {
      out.push(`${from}: layer ${layerOf(from)} is not in docs/ARCHITECTURE.md`);
      continue;
    }
    for (const to of tos) {
      if (!to.startsWith("src/")) continue;
      const b = rank.get(layerOf(to));
      if (b === undefined) out.push(`${from} -> ${to}: layer ${layerOf(to)} is not in docs/ARCHITECTURE.md`);
      else if (b > a)
        out.push(
          `${from} -> ${to}: ${layerOf(from)} imports ${layerOf(to)}, which docs/ARCHITECTURE.md lists after it`,
        );
    }
  }
  return out;
}

/** The circles of the graph (strongly connected sets of more than one file, or a file importing itself). */
export function importCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const set: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      set.push(w);
      if (w === v) break;
    }
    if (set.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(set.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** The layer names of docs/ARCHITECTURE.md's table, in its order (bottom up). */
export function documentedOrder(doc: string): string[] {
  return doc
    .split("\n")
    .filter((l) => /^\|\s*`[^`]+`\s*\|/.test(l))
    .map((l) => /`([^`]+)`/.exec(l)![1]!);
}

function sourceGraph(runtime: boolean): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.c?ts$/.test(e.name) && !/\.test\.ts$/.test(e.name) && !e.name.endsWith(".d.ts")) {
        const file = relative(repoRoot, p);
        graph.set(file, importsOf(file, readFileSync(p, "utf8"), runtime));
      }
    }
  };
  walk(join(repoRoot, "src"));
  return graph;
}

test("the checks find what they look for, on a small graph", () => {
  const text = `import type { A } from "./a.js";\nimport { type B, type C } from "./b.js";\nexport type { D } from "./d.js";\nimport { type E, f } from "./e.js";\nimport g from "./g.js";`;
  assert.deepEqual(importsOf("src/x/y.ts", text, true), ["src/x/e.ts", "src/x/g.ts"]);
  assert.equal(importsOf("src/x/y.ts", text).length, 5);
  assert.deepEqual(
    importsOf(
      "src/engine/a.ts",
      `import { x } from "../model/b.js";\nconst c = await import("./c.js");\nimport "./d.js";`,
    ),
    ["src/model/b.ts", "src/engine/c.ts", "src/engine/d.ts"],
  );
  const g = new Map([
    ["src/model/a.ts", ["src/engine/b.ts"]],
    ["src/engine/b.ts", ["src/model/a.ts"]],
    ["src/engine/c.ts", ["src/engine/c.ts"]],
    ["src/other/d.ts", []],
  ]);
  assert.deepEqual(layerViolations(g, ["model", "engine"]), [
    "src/model/a.ts -> src/engine/b.ts: model imports engine, which docs/ARCHITECTURE.md lists after it",
    "src/other/d.ts: layer other is not in docs/ARCHITECTURE.md",
  ]);
  assert.deepEqual(importCycles(g), [["src/engine/b.ts", "src/model/a.ts"], ["src/engine/c.ts"]]);
});

test("every import in src/ goes to its own layer or one listed before it in docs/ARCHITECTURE.md, and none runs in a circle", () => {
  const order = documentedOrder(readFileSync(join(repoRoot, "docs", "ARCHITECTURE.md"), "utf8"));
  assert.ok(order.length >= 10 && order[0] === "model", `table read: ${order.join(", ")}`);
  // The message types are converted in `wire` alone (test/wire.test.ts): below every layer that reads or writes them.
  for (const user of ["summarizers", "formats", "guard", "adapters"])
    assert.ok(
      order.indexOf("wire") >= 0 && order.indexOf("wire") < order.indexOf(user),
      `wire is not below ${user}`,
    );
  const graph = sourceGraph(false);
  const folders = new Set([...graph.keys()].map(layerOf));
  assert.deepEqual(
    [...folders].filter((f) => !order.includes(f)),
    [],
    "every folder of src/ is in the table",
  );
  // Types too: a type imported from a layer after it is still an arrow back up.
  assert.deepEqual(layerViolations(graph, order), []);
  // Circles of what is loaded.
  assert.deepEqual(importCycles(sourceGraph(true)), []);
  // Circles of types too (a type-only import is erased, but a circle of names is still one module
  // needing the other to be read): none, but for the guard's one, left to the guard's reorganisation
  // into subfolders (issue 46 item 2).
  const typeCircles = importCycles(sourceGraph(false)).filter(
    (c) => !c.every((f) => f.startsWith("src/guard/")),
  );
  assert.deepEqual(typeCircles, []);
});
