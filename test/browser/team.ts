/// <reference lib="dom" />
/**
 * `npm run test:browser` (second part): the team page of `compact-safe report PATH…` opened in a
 * real headless Chromium (Debian's `chromium`, driven by playwright-core), over the corpus's sessions
 * laid out as the agents keep them plus a session whose lost instruction holds hostile markup. It
 * checks: no console error and no request; the aggregate shown is `audit --json`'s summary; the
 * ranking lists every session with a compaction, worst first as the summary ranks them; a click opens
 * the session's own report in the frame, whose verdicts are `audit --json`'s for that session;
 * hostile markup stays inert text; the back button returns to the list. A screenshot is saved under
 * bench-out/report-shots/team.png (outside git).
 *
 * Exit 0 when every check passed; 1 otherwise.
 */
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Frame } from "playwright-core";
import { cliPath, corpusDir, exampleSession, repoRoot } from "../support.js";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
];
const HOSTILE =
  "<img src=x onerror=\"window.__pwned=1;document.title='pwned'\"><script>window.__pwned=2</script>";

let passed = 0;
let total = 0;
const failures: string[] = [];
function check(name: string, ok: boolean, detail = ""): void {
  total++;
  if (ok) passed++;
  else failures.push(`${name}${detail ? `: ${detail}` : ""}`);
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail && !ok ? ` (${detail})` : ""}`);
}

function cli(args: readonly string[]): string {
  try {
    return execFileSync(process.execPath, [cliPath, ...args], {
      encoding: "utf8",
      maxBuffer: 1 << 30,
      env: { ...process.env, NO_COLOR: "1" },
    });
  } catch (e) {
    // audit exits 1 when a compaction lost what must survive, and still prints.
    const out = (e as { stdout?: string }).stdout;
    if (typeof out === "string" && out !== "") return out;
    throw e;
  }
}

/** The corpus's Claude Code, Codex and pi sessions in their agents' folders, and a hostile lossy journal. */
function layout(dir: string): void {
  for (const sub of ["claude-code", "codex", "pi"]) {
    const to = join(
      dir,
      sub === "claude-code"
        ? ".claude/projects/-home-u-p"
        : sub === "codex"
          ? ".codex/sessions/2025/11/12"
          : ".pi/agent/sessions/--home-u-p--",
    );
    mkdirSync(to, { recursive: true });
    for (const f of readdirSync(join(corpusDir, sub)))
      if (f.endsWith(".jsonl")) copyFileSync(join(corpusDir, sub, f), join(to, f));
  }
  const j = join(dir, "journals", "hostile.jsonl");
  mkdirSync(join(dir, "journals"));
  execFileSync(process.execPath, [cliPath, "import", exampleSession, "--out", j]);
  const lines = readFileSync(j, "utf8").trim().split("\n");
  const leaf = (JSON.parse(lines.at(-1)!) as { id: string }).id;
  const user = {
    id: "hostile-user",
    parent_id: leaf,
    kind: "user",
    created_at: "2026-12-01T00:00:00Z",
    payload: { role: "user", content: [{ type: "text", text: `Please fix it ${HOSTILE}` }] },
  };
  const lossy = {
    id: "hostile-compaction",
    parent_id: "hostile-user",
    kind: "compaction",
    created_at: "2026-12-01T00:00:01Z",
    payload: {
      summary: "s",
      tokens_before: 100,
      tokens_after: 5,
      model: "m",
      path: "summary",
      coverage: null,
      trigger: "auto",
      replacement: [{ role: "user", content: [{ type: "text", text: "Summary." }] }],
    },
  };
  writeFileSync(j, `${lines.join("\n")}\n${JSON.stringify(user)}\n${JSON.stringify(lossy)}\n`);
}

interface Summary {
  sessions: number;
  counts: { compactions: number; kept: number; lost: number; not_judgeable: number };
  worst: { path: string }[];
}

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    console.error(
      `test:browser (team): ${CHROMIUM} is missing; install Debian's chromium first (apt-get install -y chromium)`,
    );
    process.exit(1);
  }
  if (!existsSync(corpusDir)) {
    console.error(`test:browser (team): the corpus is missing (${corpusDir})`);
    process.exit(1);
  }
  const work = mkdtempSync(join(tmpdir(), "cs-team-browser-"));
  const profile = mkdtempSync(join(tmpdir(), "cs-team-profile-"));
  try {
    layout(work);
    const page = join(work, "team.html");
    cli(["report", work, "--out", page, "--no-progress"]);
    const lines = cli(["audit", work, "--json"]).trim().split("\n");
    const summary = JSON.parse(lines.at(-1)!) as Summary;
    const records = lines
      .slice(0, -1)
      .map((l) => JSON.parse(l) as { type: string; path: string; counts?: { compactions: number } });
    const withCompactions = records.filter((r) => r.type === "session" && r.counts!.compactions > 0);

    const ctx = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1400, height: 860 },
    });
    try {
      const tab = await ctx.newPage();
      const errors: string[] = [];
      const requests: string[] = [];
      const url = `file://${page}`;
      tab.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
      tab.on("pageerror", (e) => errors.push(e.message));
      ctx.on("request", (r) => {
        const u = r.url();
        if (u !== url && !u.startsWith("about:") && !u.startsWith("data:")) requests.push(u);
      });
      await tab.goto(url);
      await tab.waitForSelector("html[data-ready]", { timeout: 30_000 });
      const text = async (sel: string) => ((await tab.textContent(sel)) ?? "").trim();
      const n = (s: string) => Number(s.replace(/,/g, ""));
      check(
        "the aggregate's sessions are audit --json's",
        n(await text("#agg-sessions .v")) === summary.sessions,
        await text("#agg-sessions .v"),
      );
      check("its compactions", n(await text("#agg-compactions .v")) === summary.counts.compactions);
      check("kept", n(await text("#agg-kept .v")) === summary.counts.kept);
      check("lost", n(await text("#agg-lost .v")) === summary.counts.lost && summary.counts.lost > 0);
      const rows = await tab.$$eval("#sessions tbody tr", (trs) =>
        trs.map((tr) => (tr.querySelector("td.path")?.textContent ?? "").trim()),
      );
      check(
        "the ranking lists every session with a compaction",
        rows.length === withCompactions.length,
        `${rows.length} vs ${withCompactions.length}`,
      );
      check(
        "worst first, as audit ranks them",
        summary.worst.every((w, i) => rows[i] === w.path),
        JSON.stringify({ rows: rows.slice(0, 3), worst: summary.worst.slice(0, 3).map((w) => w.path) }),
      );
      const byAgent = await tab.$$eval("#by-agent tbody tr", (trs) => trs.length);
      check("a row per agent and version", byAgent > 3);

      // Open each session's report (the hostile one among them): its verdicts are audit --json's.
      for (let i = 0; i < rows.length; i++) {
        await tab.click(`#sessions tbody tr[data-rank="${i}"] a`);
        await tab.waitForSelector(`html[data-detail-ready="${i}"]`, { timeout: 30_000 });
        const frame = tab.frames().find((f) => f !== tab.mainFrame()) as Frame;
        await frame.waitForSelector("html[data-ready]", { timeout: 30_000 });
        const audit = JSON.parse(cli(["audit", join(work, rows[i]!), "--json"])) as {
          compactions: { id: string; kept: boolean | null }[];
        };
        const views = await frame.$$eval("#view-list button", (bs) =>
          bs.map((b) => b.getAttribute("data-view")),
        );
        let same = views.length > 0;
        for (const c of audit.compactions.filter((x) => views.includes(x.id))) {
          await frame.click(`#view-list button[data-view="${c.id}"]`);
          same &&= (await frame.getAttribute("#verdict", "data-kept")) === String(c.kept);
        }
        check(`${rows[i]}: its report opens in the frame with audit's verdicts`, same, JSON.stringify(views));
        if (rows[i] === "journals/hostile.jsonl") {
          const pwned =
            (await frame.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)) ??
            (await tab.evaluate(() => (window as unknown as { __pwned?: number }).__pwned));
          check(
            "hostile markup stays text (nothing ran)",
            pwned === undefined && (await tab.title()) !== "pwned",
          );
          mkdirSync(join(repoRoot, "bench-out", "report-shots"), { recursive: true });
          await tab.screenshot({ path: join(repoRoot, "bench-out", "report-shots", "team-detail.png") });
        }
        await tab.click("#back");
        await tab.waitForSelector("#list:not([hidden])");
      }
      check("the back button returns to the list", await tab.isVisible("#sessions"));
      await tab.screenshot({ path: join(repoRoot, "bench-out", "report-shots", "team.png"), fullPage: true });
      check("no console error", errors.length === 0, errors.join(" | "));
      check("no request", requests.length === 0, requests.join(" "));
    } finally {
      await ctx.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    console.log("\nfailed:");
    for (const f of failures) console.log(`  ${f}`);
  }
  console.log(`test:browser (team): ${passed}/${total} checks passed`);
  process.exitCode = passed === total && total > 0 ? 0 : 1;
}

await main();
