/**
 * No message type is converted outside `src/wire/` (docs/ARCHITECTURE.md's
 * `wire` layer). The checkable rule: each wire module owns the names of its
 * provider's elements that are not the model's own vocabulary (block, part,
 * item and role types, and the fields only that wire has); no source file
 * outside `src/wire/` holds one of them as a string literal, so none builds
 * or tests a provider's element by its name. Comments and prose inside
 * template text are not string literals (the TypeScript parser decides).
 *
 * It cannot pass vacuously: every owned name must be a string literal of its
 * own module (a name the module stopped reading fails here), the checker
 * finds a planted literal, and every wire module is imported from outside
 * `src/wire/` by the layers the issue names (importers, exporters, the guard,
 * the adapters, the summarizers).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import ts from "typescript";
import { repoRoot } from "./support.js";

/** Each wire module's names (see the module comment). */
export const OWNED: Readonly<Record<string, readonly string[]>> = {
  anthropic: ["document", "search_result", "container_upload", "mcp_tool_use", "mcp_tool_result"],
  "openai-chat": ["tool_call_id", "reasoning_content"],
  responses: [
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "local_shell_call_output",
    "input_text",
    "output_text",
    "input_image",
  ],
  "ai-sdk": ["tool-call", "tool-result", "tool-approval-request", "tool-approval-response", "reasoning-file"],
  langchain: ["additional_kwargs", "usage_metadata", "invalid_tool_calls", "response_metadata"],
  pi: ["toolCall", "toolResult", "bashExecution", "compactionSummary", "branchSummary"],
};

const ANY_OWNED = new RegExp(Object.values(OWNED).flat().join("|"));

/** The string literals of a source text, with their lines. */
export function stringLiterals(file: string, text: string): { text: string; line: number }[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: { text: string; line: number }[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n))
      out.push({ text: n.text, line: sf.getLineAndCharacterOfPosition(n.getStart()).line + 1 });
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The owned names a file outside `src/wire/` holds as string literals, as `file:line: "name" (module)`. */
export function conversionsOutside(file: string, text: string): string[] {
  if (!ANY_OWNED.test(text)) return []; // no owned name anywhere in the text: nothing to parse
  const owner = new Map<string, string>();
  for (const [m, names] of Object.entries(OWNED)) for (const n of names) owner.set(n, m);
  return stringLiterals(file, text)
    .filter((l) => owner.has(l.text))
    .map((l) => `${file}:${l.line}: "${l.text}" (src/wire/${owner.get(l.text)}.ts's)`);
}

/** The source files a file imports (static, re-exported or dynamic), repository-relative. */
function importsOf(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const add = (spec: ts.Node | undefined): void => {
    if (spec && ts.isStringLiteral(spec) && spec.text.startsWith("."))
      out.push(normalize(join(dirname(file), spec.text.replace(/\.js$/, ".ts"))));
  };
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) add(n.moduleSpecifier);
    else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) add(n.arguments[0]);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function sources(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.c?ts$/.test(e.name) && !/\.test\.ts$/.test(e.name) && !e.name.endsWith(".d.ts"))
        out.push(relative(repoRoot, p));
    }
  };
  walk(join(repoRoot, "src"));
  return out.sort();
}

test("the checker finds an owned name held as a string literal, and not one in a comment or a larger string", () => {
  const text = [
    `// a comment may name "function_call"`,
    `/** and "toolCall" */`,
    `const t = "see \`tool-call\` parts";`,
    `if (p.type === "tool-call") f();`,
    "const u = `input_text`;",
  ].join("\n");
  assert.deepEqual(conversionsOutside("src/x/y.ts", text), [
    `src/x/y.ts:4: "tool-call" (src/wire/ai-sdk.ts's)`,
    `src/x/y.ts:5: "input_text" (src/wire/responses.ts's)`,
  ]);
});

test("every owned name is a string literal of its own wire module", () => {
  for (const [m, names] of Object.entries(OWNED)) {
    const file = `src/wire/${m}.ts`;
    const held = new Set(stringLiterals(file, readFileSync(join(repoRoot, file), "utf8")).map((l) => l.text));
    assert.ok(names.length > 0, `${m}: no names`);
    for (const n of names) assert.ok(held.has(n), `${file} does not hold "${n}"`);
  }
});

test("no message type is converted outside src/wire/: no other source file holds a wire module's names", () => {
  const found = sources()
    .filter((f) => !f.startsWith("src/wire/"))
    .flatMap((f) => conversionsOutside(f, readFileSync(join(repoRoot, f), "utf8")));
  assert.deepEqual(found, []);
});

test("every wire module is used from outside src/wire/, by the layers that read and write messages", () => {
  const importers = new Map<string, Set<string>>();
  for (const f of sources()) {
    if (f.startsWith("src/wire/")) continue;
    for (const to of importsOf(f, readFileSync(join(repoRoot, f), "utf8"))) {
      if (!to.startsWith("src/wire/")) continue;
      const set = importers.get(to) ?? new Set<string>();
      set.add(f);
      importers.set(to, set);
    }
  }
  for (const m of Object.keys(OWNED))
    assert.ok(
      (importers.get(`src/wire/${m}.ts`)?.size ?? 0) > 0,
      `src/wire/${m}.ts is imported by no other layer`,
    );
  const users = [...importers.values()].flatMap((s) => [...s]);
  for (const place of [
    "src/formats/import/",
    "src/formats/export/",
    "src/guard/",
    "src/adapters/",
    "src/summarizers/",
  ])
    assert.ok(
      users.some((f) => f.startsWith(place)),
      `nothing under ${place} reads or writes messages through src/wire/`,
    );
});
