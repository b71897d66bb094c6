/**
 * The report as one self-contained HTML page: the data model embedded as
 * JSON, the page's own script and styles inline (the template files
 * `templates/report.js` and `templates/report.css`, shipped with the
 * package). The page renders the model client-side with textContent only, so
 * session text is never parsed as markup; a Content-Security-Policy forbids
 * every request and lets only the page's own script and styles run (by their
 * hashes). The control characters of session text (ESC, the bidi
 * overrides and isolates, …) are shown as visible stand-ins (`showControls`).
 */
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import type { ReportModel } from "./model.js";
import { mapStrings, showControls } from "./visible.js";

const TEMPLATES = new URL("../../../templates/", import.meta.url);

const templates = new Map<string, { script: string; css: string }>();

/** A page's script and styles, `templates/NAME.js` and `templates/NAME.css` (read once). */
export function pageTemplates(name: "report" | "team"): { script: string; css: string } {
  let t = templates.get(name);
  if (t === undefined) {
    t = {
      script: readFileSync(new URL(`${name}.js`, TEMPLATES), "utf8"),
      css: readFileSync(new URL(`${name}.css`, TEMPLATES), "utf8"),
    };
    templates.set(name, t);
  }
  return t;
}

/** The session page's script and styles (read once). */
export function reportTemplates(): { script: string; css: string } {
  return pageTemplates("report");
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;",
  );
}

/**
 * JSON that is safe inside `<script type="application/json">`: `<`, `>`,
 * `&`, U+2028 and U+2029 are written as `\uXXXX` escapes, so no text in it
 * can close the element or open a comment; `JSON.parse` reads it back unchanged.
 */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** A Content-Security-Policy source that allows exactly `text` (its SHA-256). */
export function sha256(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/** The Content-Security-Policy of the page: no request of any kind; only its own script and styles. */
export function contentSecurityPolicy(script: string, css: string): string {
  return [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(css)}`,
    "img-src 'none'",
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** The page's text. */
export function renderReportHtml(report: ReportModel): string {
  const { script, css } = reportTemplates();
  // Session text is shown, never acted on: its control and bidi characters become visible stand-ins.
  const model = mapStrings(report, showControls);
  if (/<\/script|<!--/i.test(script) || /<\/style/i.test(css))
    throw new Error("templates/report.*: the page's own script or styles would close their element");
  const title = `compact-safe report: ${model.source.file}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(script, css)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="compact-safe report (model version ${model.version})">
<title>${escapeHtml(title)}</title>
<style>${css}</style>
</head>
<body>
<header><h1>compact-safe report: <span id="file"></span></h1><div class="meta" id="meta"></div></header>
<div id="app">
<nav id="views"><h2>Compactions</h2><div id="view-list"></div></nav>
<main>
<section id="overview"><div id="verdict"></div><div id="bars"></div></section>
<div id="toolbar"><span class="legend" id="legend"></span><input id="search" type="search" placeholder="search (/)" aria-label="search the history" autocomplete="off"><span id="match-count"></span></div>
<div id="timeline" tabindex="0"><div id="spacer"></div></div>
</main>
<aside><div class="tabs"><button id="tab-message" type="button">Message</button><button id="tab-checkpoint" type="button">Checkpoint</button></div><div id="panel"></div></aside>
</div>
<noscript>This report is drawn by its own inline script; the data is in the page as JSON (compact-safe report --json prints it).</noscript>
<script type="application/json" id="report-data">${scriptSafeJson(model)}</script>
<script>${script}</script>
</body>
</html>
`;
}
