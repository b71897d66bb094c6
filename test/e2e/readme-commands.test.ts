/**
 * The README's command examples, run as printed from what a fresh clone holds:
 * every line of a ```sh block that runs `node` or `npx compact-safe`, and every
 * inline `npx compact-safe ...` with no placeholder (SESSION, <command>, …). They
 * run in a temporary folder holding the clone's contract/ and examples/ (so a
 * path outside the clone, such as ../shared, fails), with `npx compact-safe`
 * as the built bin (what npx runs in the clone). A `# ok ...` comment is the
 * output the line must print. And the report-size figure the README states.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { cliPath, repoRoot } from "../support.js";

/** The README and the reference split out of it into docs/: their commands all run from a fresh clone. */
const DOCS = [
  "README.md",
  ...[
    "COMMANDS",
    "GUARD",
    "LIBRARY",
    "ADAPTERS",
    "ENFORCEMENT",
    "DECISIONS",
    "REAL_AGENTS",
    "PERFORMANCE",
    "DEVELOPMENT",
  ].map((d) => join("docs", `${d}.md`)),
];
const readme = DOCS.map((f) => readFileSync(join(repoRoot, f), "utf8")).join("\n");

interface Example {
  line: string;
  args: string[];
  expect?: string;
}

/** The runnable command examples of the README. */
export function readmeCommands(text: string): Example[] {
  const out: Example[] = [];
  const add = (raw: string) => {
    const hash = raw.indexOf(" #");
    const line = (hash >= 0 ? raw.slice(0, hash) : raw).trim();
    const comment = hash >= 0 ? raw.slice(hash + 2).trim() : "";
    const args = line.split(/\s+/);
    if (args.some((a) => /[<>…]/.test(a) || /^[A-Z][A-Z_]{2,}$/.test(a))) return; // a placeholder
    out.push({ line, args, expect: comment.startsWith("ok ") ? comment : undefined });
  };
  for (const block of text.matchAll(/^ *```sh\n([\s\S]*?)^ *```/gm)) {
    for (const raw of block[1].split("\n")) {
      const l = raw.trim();
      if (l.startsWith("node ") || l.startsWith("npx compact-safe ")) add(l);
    }
  }
  for (const m of text.matchAll(/`(npx compact-safe [^`]+)`/g)) add(m[1]);
  return out;
}

let clone = "";

describe("the README's commands run from a fresh clone", { concurrency: false }, () => {
  before(() => {
    clone = mkdtempSync(join(tmpdir(), "cs-readme-cmd-"));
    for (const dir of ["contract", "examples"])
      cpSync(join(repoRoot, dir), join(clone, dir), { recursive: true });
  });
  after(() => rmSync(clone, { recursive: true, force: true }));

  const commands = readmeCommands(readme);

  test("the README has runnable command examples (the validator, the matrix, the example's report)", () => {
    const lines = commands.map((c) => c.line);
    assert.ok(lines.includes("node contract/validate_survival_contract.mjs"), lines.join("\n"));
    assert.ok(
      lines.some((l) => l.startsWith("npx compact-safe validate --matrix")),
      lines.join("\n"),
    );
    assert.ok(
      lines.some((l) => l.startsWith("npx compact-safe report examples/")),
      lines.join("\n"),
    );
  });

  for (const c of commands) {
    test(c.line, () => {
      for (const a of c.args.slice(c.args[0] === "npx" ? 3 : 1)) {
        if (a.startsWith("-")) continue;
        assert.ok(!a.startsWith("../"), `${a}: a path outside the clone`);
        assert.ok(existsSync(join(clone, a)), `${a}: not in the clone`);
      }
      const argv = c.args[0] === "npx" ? [cliPath, ...c.args.slice(2)] : c.args.slice(1);
      const r = spawnSync(process.execPath, argv, {
        cwd: clone,
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1" },
        timeout: 180_000,
        killSignal: "SIGKILL",
      });
      assert.equal(r.status, 0, `exit ${r.status} ${r.signal ?? ""}: ${r.stderr}`);
      if (c.expect !== undefined) assert.equal(r.stdout.trim(), c.expect);
      if (c.args[2] === "report") {
        // "it writes <name>.report.html" in the current folder.
        const page = join(clone, `${basename(c.args[3]!).replace(/\.[^.]+$/, "")}.report.html`);
        assert.ok(statSync(page).size > 0, page);
      }
    });
  }

  test("the report-size figure: a fixed size the README states, plus the session's share", () => {
    const m = /the page is a fixed (\d+) KB/.exec(readme);
    assert.ok(m, "README: the report section states the page's fixed size");
    const stated = Number(m[1]);
    const session = join(clone, "two-messages.json");
    writeFileSync(
      session,
      JSON.stringify([
        { role: "user", content: "Fix the failing test in src/a.ts." },
        { role: "assistant", content: "I will read it." },
      ]),
    );
    const r = spawnSync(process.execPath, [cliPath, "report", session, "--out", join(clone, "two.html")], {
      cwd: clone,
      encoding: "utf8",
    });
    assert.equal(r.status, 0, r.stderr);
    const kb = statSync(join(clone, "two.html")).size / 1000;
    assert.ok(
      Math.abs(kb - stated) <= 1.5,
      `a ${statSync(session).size} B session gives ${kb} KB, README: ${stated} KB`,
    );
  });
});
