/**
 * Every list of formats a user reads is the format table's (src/formats/registry.ts):
 * the README's table (Command line → Formats) lists every format in the
 * table's order, with what it reads, its export and its write-back; the
 * command line's help names every format wherever it lists them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../support.js";
import { run } from "../e2e/helpers.js";
import { EXPORT_TARGETS, FORMATS, FORMAT_NAMES, type FormatEntry } from "../../src/formats/registry.js";

/** The rows of the README's format table: format, what it reads, import, export and write-back cells. */
function formatRows(
  readme: string,
): { format: string; reads: string; imp: string; exp: string; fork: string }[] {
  const section = readme.split("\n### Formats\n")[1]?.split("\n### ")[0];
  assert.ok(section, "README: no '### Formats' section");
  return section
    .split("\n")
    .filter((l) => /^\| `[a-z][a-z-]*`/.test(l))
    .map((l) => {
      const cells = l.split(" | ").map((c) => c.replace(/^\|/, "").replace(/\|$/, "").trim());
      return {
        format: cells[0].replace(/`/g, ""),
        reads: cells[1],
        imp: cells[2],
        exp: cells[3],
        fork: cells[4],
      };
    });
}

test("the README's format table is the format table: every format, what it reads, its export and write-back", () => {
  const rows = formatRows(readFileSync(join(repoRoot, "README.md"), "utf8"));
  assert.deepEqual(
    rows.map((r) => r.format),
    [...FORMAT_NAMES],
  );
  for (const [i, r] of rows.entries()) {
    const f: FormatEntry = FORMATS[i];
    assert.equal(r.reads, f.reads, `${r.format}: what it reads`);
    assert.equal(r.imp, "yes", `${r.format}: import`);
    assert.equal(r.exp, f.export ? `\`--to ${f.name}\`` : "—", `${r.format}: export cell`);
    if (f.fork) assert.equal(r.fork, `yes: \`${f.fork.resumes}\``, `${r.format}: write-back cell`);
    else assert.ok(!r.fork.startsWith("yes"), `${r.format}: write-back cell ${r.fork}`);
  }
});

/** Help text with its line wrapping undone. */
const flat = (s: string): string => s.replace(/\s+/g, " ");

test("import --help names every format: who writes it, and one line each with what it reads", async () => {
  const r = await run(["import", "--help"]);
  assert.equal(r.code, 0, r.stderr);
  const help = flat(r.stdout);
  // The description used to name seven of them by hand (no Gemini CLI, opencode, Responses, AI SDK, pi messages).
  for (const f of FORMATS) assert.ok(help.includes(f.title), `import --help does not name ${f.title}`);
  for (const title of ["Gemini CLI", "opencode", "OpenAI Responses items"])
    assert.ok(help.includes(title), `import --help does not name ${title}`);
  const listed = r.stdout.split("\nFormats (--format F forces one):\n")[1];
  assert.ok(listed, "import --help: no Formats section");
  // One row per format (its name at the left margin, wrapped lines indented further), in the table's order.
  const rows = listed.trimEnd().split(/\n(?= {2}\S)/);
  assert.deepEqual(
    rows.map((l) => l.trim().split(/\s+/)[0]),
    [...FORMAT_NAMES],
  );
  for (const [i, f] of FORMATS.entries())
    assert.equal(
      flat(rows[i]!).trim(),
      `${f.name} ${flat(f.reads.replace(/`/g, ""))}`,
      `import --help, ${f.name}`,
    );
});

test("every command that reads a session lists every format for --format; export and compact list theirs", async () => {
  for (const command of ["import", "export", "compact", "context", "report", "audit"]) {
    const r = await run([command, "--help"]);
    assert.equal(r.code, 0, `${command}: ${r.stderr}`);
    const help = flat(r.stdout);
    assert.ok(help.includes(`(${FORMAT_NAMES.join(", ")}); default: detected`), `${command} --help --format`);
  }
  const exportHelp = flat((await run(["export", "--help"])).stdout);
  for (const t of EXPORT_TARGETS) assert.ok(exportHelp.includes(`--to ${t}: `), `export --help: --to ${t}`);
  const forks = FORMATS.filter((f: FormatEntry) => f.fork !== undefined).map((f) => f.name);
  assert.ok(
    flat((await run(["compact", "--help"])).stdout).includes(`(${forks.join(", ")})`),
    "compact --help --fork",
  );
});
