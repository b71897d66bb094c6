/// <reference lib="dom" />
/**
 * `npm run test:browser`: the reports of `compact-safe report` opened in a
 * real headless Chromium (Debian's `chromium`, driven by playwright-core; no
 * browser is downloaded). For corpus sessions with the agents' own
 * compactions, for a journal compacted by compact-safe, for a session with
 * hostile markup in a tool result, and for a 5 MB and a 100k-message
 * session, it checks: no console error and no request; the verdict shown is
 * `audit --json`'s; each fate's count shown is the model's, and filtering by
 * it shows that many rows; hostile markup stays inert text; search finds a
 * known string; the keyboard moves the selection; the first screen of the
 * 5 MB session is drawn in under a second. A screenshot of each report is
 * saved under bench-out/report-shots/ (outside git). `--docs` also writes the
 * README's picture, docs/report.png, from the example session's report.
 *
 * Exit 0 when every check passed; 1 otherwise.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { cliPath, corpusDir, exampleSession, repoRoot } from "../support.js";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const FIRST_RENDER_BAR_MS = 1000;
const ROW_H = 26;
const shotsDir = join(repoRoot, "bench-out", "report-shots");
const HOSTILE_TEXT = "<script>window.__pwned=1;document.title='pwned'</script>";
const HOSTILE_IMG = "<img src=x onerror=\"window.__pwned=2;document.title='pwned'\">";

let passed = 0;
let total = 0;
const failures: string[] = [];

function check(name: string, ok: boolean, detail = ""): void {
  total++;
  if (ok) passed++;
  else failures.push(`${name}${detail ? `: ${detail}` : ""}`);
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail && !ok ? ` (${detail})` : ""}`);
}

/** Debian's chromium: installed here when missing and running as root, else the command to run is printed. */
function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  const cmd = "apt-get install -y chromium";
  if (process.getuid?.() !== 0) {
    console.error(`test:browser: ${CHROMIUM} is missing; install Debian's chromium first: sudo ${cmd}`);
    process.exit(1);
  }
  console.log(`test:browser: ${CHROMIUM} is missing; running: ${cmd}`);
  let r = spawnSync("apt-get", ["install", "-y", "chromium"], {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (r.status !== 0) {
    spawnSync("apt-get", ["update"], { stdio: "inherit" });
    r = spawnSync("apt-get", ["install", "-y", "chromium"], {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  }
  if (r.status !== 0 || !existsSync(CHROMIUM)) {
    console.error(`test:browser: could not install chromium (${cmd} failed)`);
    process.exit(1);
  }
}

function cli(args: readonly string[]): string {
  return execFileSync(process.execPath, [cliPath, ...args], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
    env: { ...process.env, NO_COLOR: "1" },
  });
}

interface Audit {
  compactions: { id: string; kept: boolean; reason: string | null }[];
}
interface Model {
  messages: { role: string; blocks: { kind: string; text: string; tail?: string }[] }[];
  views: {
    id: string;
    preview: boolean;
    verdict: { kept: boolean };
    counts: Record<string, number>;
    rows: { m: number; fate: string }[];
  }[];
}

function auditOf(file: string): Audit {
  try {
    return JSON.parse(cli(["audit", file, "--json"])) as Audit;
  } catch (e) {
    // audit exits 1 on a violation and still prints its JSON.
    const out = (e as { stdout?: string }).stdout;
    if (typeof out === "string" && out.trim() !== "") return JSON.parse(out) as Audit;
    throw e;
  }
}

interface Input {
  name: string;
  file: string;
  /** A string the search must find. */
  search?: string;
  hostile?: boolean;
  /** Check the first-render bar on this one. */
  timed?: boolean;
  /** Check that rows are drawn on demand. */
  huge?: boolean;
  /** A search that selects a long result, to expand. */
  expand?: string;
}

/** A chat-completions array: `exchanges` reads of `resultChars` characters each. */
function syntheticSession(file: string, exchanges: number, resultChars: number, hostile = false): void {
  const msgs: unknown[] = [{ role: "system", content: "You are a coding agent." }];
  for (let i = 0; i < exchanges; i++) {
    if (i % 10 === 0) msgs.push({ role: "user", content: `Task ${i}: look at module ${i} and fix it` });
    msgs.push({
      role: "assistant",
      content: `Reading module ${i}`,
      tool_calls: [
        {
          id: `call_${i}`,
          type: "function",
          function: { name: "read_file", arguments: JSON.stringify({ path: `src/mod${i}.ts` }) },
        },
      ],
    });
    let body = `// module ${i}\n`;
    while (body.length < resultChars)
      body += `export function f${i}_${body.length}(x: number): number { return x * ${i} + ${body.length}; }\n`;
    msgs.push({ role: "tool", tool_call_id: `call_${i}`, content: body });
  }
  if (hostile) {
    msgs.push({
      role: "assistant",
      content: "Fetching the page",
      tool_calls: [
        { id: "call_h", type: "function", function: { name: "fetch", arguments: '{"url":"http://x"}' } },
      ],
    });
    msgs.push({
      role: "tool",
      tool_call_id: "call_h",
      content: `page: ${HOSTILE_TEXT} and ${HOSTILE_IMG} </script>`,
    });
  }
  msgs.push({ role: "user", content: "Thanks, now summarise what changed" });
  msgs.push({ role: "assistant", content: "All modules were read; nothing changed yet." });
  writeFileSync(file, JSON.stringify(msgs));
}

/** A string from the middle of the view's history: the first line of a text that has one long enough. */
function knownString(model: Model, view: Model["views"][number]): string | undefined {
  const rows = view.rows;
  for (let k = 0; k < rows.length; k++) {
    const r = rows[(Math.floor(rows.length / 2) + k) % rows.length]!;
    for (const b of model.messages[r.m]!.blocks) {
      const line = (b.text.split("\n")[0] ?? "").trim().slice(0, 32).trim();
      if (line.length >= 12 && (b.kind === "text" || b.kind === "tool_result")) return line;
    }
  }
  return undefined;
}

async function openReport(
  ctx: BrowserContext,
  html: string,
): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const page = await ctx.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  const url = `file://${html}`;
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("request", (r) => {
    if (r.url() !== url) requests.push(r.url());
  });
  await page.goto(url);
  await page.waitForSelector("html[data-ready]", { timeout: 30_000 });
  return { page, errors, requests };
}

async function shownCounts(page: Page): Promise<Record<string, number>> {
  return page.$$eval("#legend button", (bs) =>
    Object.fromEntries(
      bs.map((b) => [b.getAttribute("data-fate"), Number(b.querySelector(".n")?.textContent)]),
    ),
  );
}

async function testReport(ctx: BrowserContext, input: Input, work: string, docs: boolean): Promise<void> {
  const html = join(work, `${input.name}.html`);
  cli(["report", input.file, "--out", html]);
  const model = JSON.parse(cli(["report", input.file, "--json"])) as Model;
  const audit = auditOf(input.file);
  const auditById = new Map(audit.compactions.map((c) => [c.id, c]));
  const t = `${input.name}:`;
  const { page, errors, requests } = await openReport(ctx, html);
  const firstRender = Number(
    await page.evaluate(() => document.documentElement.getAttribute("data-first-render-ms")),
  );
  console.log(
    `     ${input.name}: ${statSync(input.file).size} bytes → ${statSync(html).size} bytes of page; first screen drawn at ${firstRender.toFixed(0)} ms; ${model.views.length} views`,
  );
  if (input.timed)
    check(
      `${t} first screen under ${FIRST_RENDER_BAR_MS} ms`,
      firstRender < FIRST_RENDER_BAR_MS,
      `${firstRender} ms`,
    );
  check(
    `${t} the page shows every compaction`,
    (await page.$$("#view-list button")).length === model.views.length,
  );

  // Verdicts and fate counts, view by view.
  for (const v of model.views) {
    await page.click(`#view-list button[data-view="${v.id}"]`);
    const kept = await page.getAttribute("#verdict", "data-kept");
    if (!v.preview) {
      const a = auditById.get(v.id);
      check(
        `${t} ${v.id} verdict is audit --json's`,
        a !== undefined && String(a.kept) === kept,
        `shown ${kept}, audit ${a?.kept}`,
      );
    } else check(`${t} preview verdict is the model's`, String(v.verdict.kept) === kept);
    const shown = await shownCounts(page);
    const fromRows: Record<string, number> = {};
    for (const r of v.rows) fromRows[r.fate] = (fromRows[r.fate] ?? 0) + 1;
    const same = Object.keys(v.counts).every(
      (f) => shown[f] === v.counts[f] && (fromRows[f] ?? 0) === v.counts[f],
    );
    check(`${t} ${v.id} fate counts shown are the model's`, same, JSON.stringify({ shown, model: v.counts }));
  }
  // Filtering on one fate shows exactly that many rows (the last view).
  const last = model.views[model.views.length - 1];
  if (last) {
    const fate = Object.keys(last.counts).find((f) => last.counts[f]! > 0)!;
    for (const f of Object.keys(last.counts))
      if (f !== fate) await page.click(`#legend button[data-fate="${f}"]`);
    const height = await page.$eval("#spacer", (e) => (e as HTMLElement).getBoundingClientRect().height);
    const drawnFates = await page.$$eval("#spacer .row", (rs) => rs.map((r) => r.getAttribute("data-fate")));
    check(
      `${t} filtered to "${fate}": ${last.counts[fate]} rows`,
      Math.round(height / ROW_H) === last.counts[fate] && drawnFates.every((f) => f === fate),
      `${height / ROW_H} rows`,
    );
    for (const f of Object.keys(last.counts))
      if (f !== fate) await page.click(`#legend button[data-fate="${f}"]`);
  }

  // Keyboard: Home selects the first row, j the next one.
  await page.click("#timeline");
  await page.keyboard.press("Home");
  const a = await page.getAttribute(".row.sel", "data-row");
  await page.keyboard.press("j");
  const b = await page.getAttribute(".row.sel", "data-row");
  await page.keyboard.press("k");
  const c = await page.getAttribute(".row.sel", "data-row");
  check(
    `${t} keyboard moves the selection (j, k)`,
    a === "0" && b !== null && Number(b) > 0 && c === "0",
    `${a} → ${b} → ${c}`,
  );
  if (input.huge && last) {
    await page.keyboard.press("End");
    const end = await page.getAttribute(".row.sel", "data-row");
    const drawn = (await page.$$("#spacer .row")).length;
    check(
      `${t} ${last.rows.length} rows, ${drawn} in the page; End reaches the last`,
      drawn < 200 && end === String(last.rows.length - 1),
      `drawn ${drawn}, end ${end}`,
    );
  }

  // Search: a known string (given, or taken from the model) is found and shown in the message panel.
  const known = input.search ?? (last ? knownString(model, last) : undefined);
  if (known) {
    await page.fill("#search", known);
    await page.waitForFunction(() =>
      /\d+ \/ \d+|no match/.test(document.getElementById("match-count")!.textContent ?? ""),
    );
    const count = await page.textContent("#match-count");
    const panel = ((await page.textContent("#panel")) ?? "").toLowerCase();
    check(
      `${t} search finds ${JSON.stringify(known)}`,
      /^1 \/ \d+$/.test(count ?? "") && panel.includes(known.toLowerCase()),
      `${count}`,
    );
  }
  if (input.expand) {
    await page.fill("#search", input.expand);
    await page.waitForFunction(() =>
      /\d+ \/ \d+/.test(document.getElementById("match-count")!.textContent ?? ""),
    );
    const label = (await page.textContent("#panel .more")) ?? "";
    const before = ((await page.textContent("#panel")) ?? "").length;
    await page.click("#panel .more");
    const panel = (await page.textContent("#panel")) ?? "";
    check(
      `${t} a long result is collapsed with its size and expands`,
      /^show all \([\d.]+ k?ch\)$/.test(label) &&
        panel.length > before &&
        /characters not in the report/.test(panel) &&
        (await page.$("#panel .more")) === null,
      `${label}; ${before} → ${panel.length} chars`,
    );
  }
  if (input.hostile) {
    await page.fill("#search", "onerror");
    await page.waitForFunction(() =>
      /\d+ \/ \d+/.test(document.getElementById("match-count")!.textContent ?? ""),
    );
    await page.click("#panel .more").catch(() => undefined);
    const panel = (await page.textContent("#panel")) ?? "";
    const state = await page.evaluate(() => ({
      pwned: (window as unknown as { __pwned?: unknown }).__pwned,
      title: document.title,
      scripts: document.scripts.length,
      imgs: document.images.length,
    }));
    check(
      `${t} hostile <script> and <img onerror> stay inert text`,
      state.pwned === undefined &&
        state.title.startsWith("compact-safe report") &&
        state.scripts === 2 &&
        state.imgs === 0 &&
        panel.includes(HOSTILE_TEXT) &&
        panel.includes(HOSTILE_IMG),
      JSON.stringify(state),
    );
  }
  check(`${t} no console error`, errors.length === 0, errors.slice(0, 3).join(" | "));
  check(`${t} no request`, requests.length === 0, requests.slice(0, 3).join(" "));

  await page.fill("#search", "");
  await page.keyboard.press("Escape");
  const shot = join(shotsDir, `${input.name}.png`);
  await page.screenshot({ path: shot });
  console.log(`     screenshot: ${shot}`);
  if (docs && input.name === "example") {
    const target = join(repoRoot, "docs", "report.png");
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.click("#timeline");
    await page.keyboard.press("Home");
    for (let i = 0; i < 6; i++) await page.keyboard.press("j");
    await page.screenshot({ path: target });
    console.log(`     README picture: ${target} (${statSync(target).size} bytes)`);
  }
  await page.close();
}

async function main(): Promise<void> {
  const docs = process.argv.includes("--docs");
  ensureChromium();
  if (!existsSync(corpusDir)) {
    console.error(`test:browser: the corpus is missing (${corpusDir}); it needs ../shared beside the clone`);
    process.exit(1);
  }
  mkdirSync(shotsDir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), "cs-browser-"));
  const profile = mkdtempSync(join(tmpdir(), "cs-chromium-"));
  try {
    // compact-safe's own compaction: the example compacted into a journal with the CLI.
    const journal = join(work, "example-compacted.jsonl");
    cli(["compact", exampleSession, "--out", journal]);
    const hostile = join(work, "hostile.json");
    syntheticSession(hostile, 30, 2000, true);
    const big = join(work, "five-mb.json");
    syntheticSession(big, 1200, 4000);
    const huge = join(work, "hundred-k.json");
    syntheticSession(huge, 50_000, 20);
    const inputs: Input[] = [
      { name: "example", file: exampleSession },
      { name: "example-compacted-journal", file: journal },
      {
        name: "claude-code-3-compactions",
        file: join(corpusDir, "claude-code", "entire-cd-95adddad32-0.jsonl"),
      },
      { name: "pi-compactions", file: join(corpusDir, "pi", "pi-mono-before-compaction.jsonl") },
      { name: "gjc-compactions", file: join(corpusDir, "gjc", "gjc-03-raddit-dashboard-pr.jsonl") },
      { name: "hostile", file: hostile, hostile: true, search: "module 7" },
      { name: "five-mb", file: big, timed: true, search: "module 1100", expand: "// module 1100" },
      { name: "hundred-k", file: huge, huge: true, search: "module 49990 and fix" },
    ];
    console.log(
      `test:browser: ${CHROMIUM} (${execFileSync(CHROMIUM, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()})`,
    );
    console.log(`     five-mb session: ${statSync(big).size} bytes; hundred-k: ${statSync(huge).size} bytes`);
    const ctx = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1400, height: 860 },
    });
    try {
      for (const input of inputs) {
        try {
          await testReport(ctx, input, work, docs);
        } catch (e) {
          check(`${input.name}: ran`, false, e instanceof Error ? e.message.split("\n")[0] : String(e));
        }
      }
    } finally {
      await ctx.close();
    }
    if (failures.length > 0) {
      console.log("\nfailed:");
      for (const f of failures) console.log(`  ${f}`);
    }
    console.log(`test:browser: ${passed}/${total} checks passed on ${inputs.length} reports`);
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
  process.exitCode = passed === total && total > 0 ? 0 : 1;
}

await main();
