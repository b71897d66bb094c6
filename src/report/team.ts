/**
 * The team page (`compact-safe report PATH…`): one self-contained HTML page over many sessions. It
 * holds the aggregate of `audit PATH…`, the sessions ranked by what they lost, and, for the sessions
 * ranked first, each session's own report page (`renderReportHtml`, the page `report FILE` writes)
 * gzipped in a data block; a click opens it in a sandboxed frame (decompressed in the page, shown
 * with `srcdoc`). The page is written in pieces (`teamPageHead`, one `teamPageDetail` per session,
 * `teamPageTail`), so that it is never held whole. Its Content-Security-Policy forbids every request
 * and lets only its own script and styles and the session report's run (by their hashes; a `srcdoc`
 * frame runs under the page's policy too).
 */
import type { AuditSummary, RankedSession } from "../route/audit-summary.js";
import { escapeHtml, pageTemplates, reportTemplates, scriptSafeJson, sha256 } from "./html.js";
import { mapStrings, showControls } from "./visible.js";

/** The team page's script and styles (read once). */
export function teamTemplates(): { script: string; css: string } {
  return pageTemplates("team");
}

/** The page's policy: no request of any kind; its own and the session report's script and styles only. */
export function teamContentSecurityPolicy(): string {
  const team = teamTemplates();
  const report = reportTemplates();
  return [
    "default-src 'none'",
    `script-src ${sha256(team.script)} ${sha256(report.script)}`,
    `style-src ${sha256(team.css)} ${sha256(report.css)}`,
    "img-src 'none'",
    "connect-src 'none'",
    "frame-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** A session as the page lists it: its rank data, and the number of its detail block (null: none in the page). */
export interface TeamRow extends RankedSession {
  detail: number | null;
}

export interface TeamPageData {
  /** The version of this data (the page's script reads it). */
  version: 1;
  generated_at: string;
  summary: AuditSummary;
  /** Every session with a compaction, worst first. */
  sessions: TeamRow[];
  /** Sessions without any compaction (counted, not listed). */
  without_compactions: number;
  /** How many sessions have their detail in the page (the first ones of `sessions`). */
  details: number;
}

/** The page up to its detail blocks: head, styles, the data. */
export function teamPageHead(data: TeamPageData): string {
  const { css } = teamTemplates();
  if (/<\/style/i.test(css)) throw new Error("templates/team.css would close its element");
  const safe = mapStrings(data, showControls);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${teamContentSecurityPolicy()}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="compact-safe report (team page version ${data.version})">
<title>${escapeHtml(`compact-safe: ${data.summary.sessions} sessions`)}</title>
<style>${css}</style>
</head>
<body>
<header><h1>compact-safe: <span id="title"></span></h1><div class="meta" id="meta"></div></header>
<main id="list">
<section id="aggregate"></section>
<section id="ranking"><h2>Sessions ranked by what they lost</h2><div id="ranking-note"></div><table id="sessions"><thead></thead><tbody></tbody></table></section>
</main>
<section id="detail" hidden><div class="bar"><button id="back" type="button">← all sessions</button><span id="detail-title"></span></div><iframe id="frame" sandbox="allow-scripts" title="the session's report"></iframe></section>
<noscript>This page is drawn by its own inline script; its data is in the page as JSON.</noscript>
<script type="application/json" id="team-data">${scriptSafeJson(safe)}</script>
`;
}

/** One session's report page, gzipped, as a data block (base64 holds no character that could end it). */
export function teamPageDetail(n: number, gzipped: Uint8Array): string {
  return `<script type="application/octet-stream" id="detail-${n}">${Buffer.from(gzipped).toString("base64")}</script>\n`;
}

/** The page after its detail blocks: its script. */
export function teamPageTail(): string {
  const { script } = teamTemplates();
  if (/<\/script|<!--/i.test(script)) throw new Error("templates/team.js would close its element");
  return `<script>${script}</script>
</body>
</html>
`;
}
