/**
 * The documentation cites only what the repository holds: every relative Markdown link of every
 * Markdown file (README, docs/, the folders' READMEs) leads to a file or folder that exists (and to a
 * heading that exists, for a `#fragment` into a Markdown file); every repository path a document
 * names in backticks (`src/…`, `test/…`, `docs/…`, …) exists; every `*.md` file a document or a
 * source comment names is one of the repository's; and a command's help that points to a README
 * section names one the README has.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { repoRoot } from "../support.js";

const SKIP = new Set(["node_modules", "dist", ".git"]);

function walk(dir: string, keep: (file: string) => boolean, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(e.name)) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, keep, out);
    else if (keep(e.name)) out.push(p);
  }
  return out;
}

const markdown = walk(repoRoot, (n) => n.endsWith(".md"));
const sources = [
  ...walk(join(repoRoot, "src"), (n) => /\.[cm]?ts$/.test(n)),
  ...walk(join(repoRoot, "test"), (n) => /\.[cm]?ts$/.test(n)),
  ...walk(join(repoRoot, "scripts"), (n) => /\.m?js$/.test(n)),
];
const rel = (f: string): string => relative(repoRoot, f);
/** Every file name in the repository, for a bare `NAME.md` cited in prose. */
const mdNames = new Set(markdown.map((f) => basename(f)));

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchors(file: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (m) out.add(slug(m[1]!));
  }
  return out;
}

/** The text outside fenced code blocks. */
function prose(text: string): string {
  let fenced = false;
  return text
    .split("\n")
    .filter((l) => {
      if (l.startsWith("```")) {
        fenced = !fenced;
        return false;
      }
      return !fenced;
    })
    .join("\n");
}

test("every relative link of every Markdown file leads to a file (and heading) the repository holds", () => {
  const broken: string[] = [];
  for (const file of markdown) {
    for (const m of prose(readFileSync(file, "utf8")).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path, fragment] = target.split("#") as [string, string | undefined];
      const to = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!existsSync(to)) broken.push(`${rel(file)}: ${target}: no such file`);
      else if (fragment !== undefined && to.endsWith(".md") && !anchors(to).has(fragment))
        broken.push(`${rel(file)}: ${target}: no such heading`);
    }
  }
  assert.deepEqual(broken, []);
});

/** Folders at the repository's root whose paths the documents cite. */
const ROOTS =
  /^(?:src|test|docs|scripts|bench|examples|extensions|contract|prompts|templates|plugins|\.claude-plugin|\.ci)\//;

test("every repository path a document names in backticks exists", () => {
  const missing: string[] = [];
  for (const file of markdown) {
    for (const m of prose(readFileSync(file, "utf8")).matchAll(/`([^`\s]+)`/g)) {
      const cited = m[1]!.replace(/[:,.;)]+$/, "").replace(/:\d+(-\d+)?$/, "");
      if (!ROOTS.test(cited) || /[*<>{}…$]|\bX\b|NAME|VERSION/.test(cited)) continue;
      if (!existsSync(join(repoRoot, cited))) missing.push(`${rel(file)}: ${cited}`);
    }
  }
  assert.deepEqual(missing, []);
});

/**
 * Names of other tools' files that the text speaks of as such (an agent's instruction file, a project's
 * changelog in a test's history, the corpus's own list of sources), not documents it cites.
 */
const OTHERS = new Set(["CLAUDE.md", "AGENTS.md", "CHANGELOG.md", "SOURCES.md"]);

test("every .md file a document or a source comment names is the repository's own", () => {
  const foreign: string[] = [];
  for (const file of [...markdown, ...sources]) {
    if (file === join(repoRoot, "test", "docs", "links.test.ts")) continue;
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/(?<![\w/.-])((?:[\w.-]+\/)*[A-Z][\w-]*\.md)\b/g)) {
      const cited = m[1]!;
      if (OTHERS.has(cited)) continue;
      const exists =
        existsSync(resolve(dirname(file), cited)) ||
        existsSync(join(repoRoot, cited)) ||
        existsSync(resolve(dirname(file).replace(`${repoRoot}/`, `${repoRoot}/dist/`), cited)) ||
        (!cited.includes("/") && mdNames.has(cited));
      if (!exists) foreign.push(`${rel(file)}: ${cited}`);
    }
  }
  assert.deepEqual(foreign, []);
});

test("a command's help that points to a README section names a section the README has", () => {
  const readme = anchors(join(repoRoot, "README.md"));
  const pointers: string[] = [];
  const missing: string[] = [];
  for (const file of walk(join(repoRoot, "src", "cli"), (n) => n.endsWith(".ts"))) {
    for (const m of readFileSync(file, "utf8").matchAll(/README's ([A-Z][\w ]*?) section/g)) {
      pointers.push(m[1]!);
      if (!readme.has(slug(m[1]!))) missing.push(`${rel(file)}: the README's ${m[1]} section`);
    }
  }
  assert.ok(pointers.length >= 2, `help pointers found: ${pointers.join(", ")}`);
  assert.deepEqual(missing, []);
});
