/**
 * The README's format table (Command line → Formats) lists every format the
 * importers know, in their order, with the export and write-back each one
 * really has: `export --to` targets and the fork writers.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { FORMAT_NAMES } from "../../src/formats/shared/types.js";
import { forkWriterFor } from "../../src/formats/write-back/writers.js";
import { EXPORT_TARGETS } from "../../src/cli/commands/export.js";

const root = resolve(import.meta.dirname, "..", "..", "..");

/** The rows of the README's format table: format, import, export and write-back cells. */
function formatRows(readme: string): { format: string; imp: string; exp: string; fork: string }[] {
  const section = readme.split("\n### Formats\n")[1]?.split("\n### ")[0];
  assert.ok(section, "README: no '### Formats' section");
  return section
    .split("\n")
    .filter((l) => /^\| `[a-z][a-z-]*`/.test(l))
    .map((l) => {
      const cells = l.split("|").map((c) => c.trim());
      return { format: cells[1].replace(/`/g, ""), imp: cells[3], exp: cells[4], fork: cells[5] };
    });
}

test("the README's format table lists every format with its real import, export and write-back", () => {
  const rows = formatRows(readFileSync(join(root, "README.md"), "utf8"));
  assert.deepEqual(
    rows.map((r) => r.format),
    [...FORMAT_NAMES],
  );
  const targets = new Set<string>(EXPORT_TARGETS);
  for (const r of rows) {
    assert.equal(r.imp, "yes", `${r.format}: import`);
    const to = /^`--to ([a-z-]+)`$/.exec(r.exp)?.[1];
    assert.equal(to, targets.has(r.format) ? r.format : undefined, `${r.format}: export cell ${r.exp}`);
    const hasWriter = forkWriterFor(r.format as (typeof FORMAT_NAMES)[number]) !== undefined;
    assert.equal(r.fork.startsWith("yes"), hasWriter, `${r.format}: write-back cell ${r.fork}`);
  }
});
