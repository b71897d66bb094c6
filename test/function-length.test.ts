/**
 * Issue 27: no function in `src/` is longer than 120 lines. Every function-like node with a body
 * (declarations, methods, accessors, constructors, function expressions, arrow functions) in a
 * `src/**\/*.ts` file (test and declaration files left out) is measured from its first to its last
 * line, both included, with the `typescript` package's parser.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { repoRoot } from "./support.js";

const MAX_LINES = 120;

/** A function longer than the limit: where it starts and how many lines it spans. */
export interface LongFunction {
  readonly file: string;
  readonly line: number;
  readonly name: string;
  readonly lines: number;
}

/** The functions of one source text longer than `max` lines. */
export function longFunctions(file: string, text: string, max = MAX_LINES): LongFunction[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) {
        const name = node.name ? node.name.getText(sf) : "<anonymous>";
        out.push({ file, line: first + 1, name, lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Every `.ts` source file under `dir` (recursively), test and declaration files left out. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.c?ts$/.test(entry.name) && !/\.test\.ts$|\.d\.c?ts$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

test("longFunctions finds a long function, a long arrow and a long method, and passes short ones", () => {
  const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join("\n");
  const text = [
    `export function long() {\n${body(MAX_LINES - 1)}\n}`,
    `export function short() {\n${body(MAX_LINES - 2)}\n}`,
    `export const arrow = () => {\n${body(MAX_LINES)}\n};`,
    `class C {\n  method() {\n${body(MAX_LINES)}\n  }\n}`,
  ].join("\n");
  const found = longFunctions("synthetic.ts", text);
  assert.deepEqual(
    found.map((f) => [f.name, f.lines]),
    [
      ["long", MAX_LINES + 1],
      ["<anonymous>", MAX_LINES + 2],
      ["method", MAX_LINES + 2],
    ],
  );
  assert.equal(found[0]!.line, 1);
});

test(`no function in src/ is longer than ${MAX_LINES} lines`, () => {
  const root = repoRoot;
  const long = sourceFiles(join(root, "src")).flatMap((path) =>
    longFunctions(relative(root, path).split("\\").join("/"), readFileSync(path, "utf8")),
  );
  assert.deepEqual(
    long.map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`),
    [],
  );
});
