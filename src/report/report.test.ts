/** The report's data model (fates, bars, verdict, bounds) and the page's text (escaping, the embedded model). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { basename } from "node:path";
import type { Message } from "../model/index.js";
import { auditEntries } from "../route/audit.js";
import { importFile } from "../formats/index.js";
import { exampleSession, linearJournal } from "../../test/support.js";
import { SECRET_SAMPLES, leakedFragments, plant } from "../../test/secret-samples.js";
import {
  buildReportModel,
  reportEntries,
  renderReportHtml,
  scriptSafeJson,
  reportTemplates,
  TEXT_HEAD,
  TEXT_TAIL,
  type ReportModel,
} from "./index.js";

const u = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const a = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });
const call = (id: string, command: string): Message => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "Bash", input: { command } }],
});
const result = (id: string, content: string): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content }],
});

const HOSTILE =
  "</script><script>window.__pwned=1</script><img src=x onerror=\"document.title='pwned'\"><!-- \u2028 &amp;";

/** A small history: an older task with two large reads, then the current round with a 20 KB result. */
function history(): Message[] {
  return [
    u("Fix the bug in parser.ts"),
    call("c1", "cat parser.ts"),
    result("c1", `parser source ${"p".repeat(5000)}`),
    call("c2", "cat lexer.ts"),
    result("c2", `lexer source ${"l".repeat(5000)} ${HOSTILE}`),
    a("I read both files."),
    u("now run the tests"),
    call("c3", "npm test"),
    result("c3", `test log ${"t".repeat(20_000)} END-OF-LOG`),
    call("c4", "git status"),
    result("c4", "nothing to commit"),
    a("The tests pass."),
  ];
}

const journal = linearJournal;

const source = { file: "test.jsonl", format: "journal", bytes: 1 };

/** The model embedded in the page, read back. */
function embedded(html: string): unknown {
  const open = '<script type="application/json" id="report-data">';
  const from = html.indexOf(open) + open.length;
  return JSON.parse(html.slice(from, html.indexOf("</script>", from)));
}

test("the summary preview marks each message by its fate: retained user text, summarized, protected, bounded", async () => {
  const model = await reportEntries(journal(history()), { source, window: 200_000 });
  assert.equal(model.views.length, 1);
  const v = model.views[0]!;
  assert.equal(v.id, "preview");
  assert.equal(v.path, "summary");
  const fates = v.rows.map((r) => r.fate);
  assert.deepEqual(fates, [
    "kept", // the older user text, retained
    "summarized",
    "summarized",
    "summarized",
    "summarized",
    "kept", // the recent tail: the newest whole message before the round, kept verbatim too (keepRecentTokens)
    "kept", // the current round from here
    "kept",
    "bounded", // the 20 KB result: head and tail
    "kept",
    "kept",
    "kept",
  ]);
  assert.equal(v.rows[0]!.why, "retained user text");
  assert.equal(v.rows[5]!.why, "kept verbatim");
  assert.equal(v.rows[6]!.why, undefined);
  assert.equal(model.why_default.kept, "protected round");
  assert.deepEqual(v.counts, { kept: 7, bounded: 1, stubbed: 0, summarized: 4, dropped: 0 });
  assert.equal(v.verdict.kept, true);
  assert.ok(v.checkpoint !== null && v.checkpoint.coverage !== null && v.checkpoint.summary.length > 0);
  // Calls joined to their results.
  assert.equal(v.rows[8]!.call, 7);
  assert.deepEqual(v.rows[7]!.results, [8]);
  // Bars: the tool results shrink, a checkpoint appears.
  assert.ok(v.tokens.after.tool_results < v.tokens.before.tool_results);
  assert.equal(v.tokens.before.checkpoint, 0);
  assert.ok(v.tokens.after.checkpoint > 0);
});

test("a prune-only compaction shows its stubs", async () => {
  const entries = journal(history());
  const model = await reportEntries(entries, { source, window: 200_000, preview: false });
  assert.equal(model.views.length, 0);
  const { compactEntries } = await import("../route/compact-journal.js");
  const { extractiveSummarizer } = await import("../summarizers/extractive/index.js");
  const outcome = await compactEntries(entries, { summarizer: extractiveSummarizer(), pruneOnly: true });
  assert.equal(outcome.kind, "compacted");
  if (outcome.kind !== "compacted") return;
  const withIt = [...entries, outcome.entry];
  const v = buildReportModel(withIt, { source, window: 200_000 }).views[0]!;
  assert.equal(v.path, "prune-only");
  assert.deepEqual(
    v.rows.map((r) => r.fate),
    ["kept", "kept", "stubbed", "kept", "stubbed", "kept", "kept", "kept", "bounded", "kept", "kept", "kept"],
  );
  assert.equal(v.checkpoint, null);
});

test("a lost instruction is marked on its row and the verdict is the audit's", () => {
  const h = history();
  const entries = journal(h);
  // A compaction that keeps only a summary: the current instruction and the round are lost.
  entries.push({
    id: "c",
    parent_id: `m${h.length - 1}`,
    kind: "compaction",
    created_at: "2026-12-01T00:00:01Z",
    payload: {
      summary: "did things",
      tokens_before: 1,
      tokens_after: 1,
      model: "x",
      path: "summary",
      coverage: null,
      trigger: "auto",
      source_agent: "claude-code",
      replacement: [u("This session is being continued from a previous conversation. did things")],
    },
  });
  const model = buildReportModel(entries, { source, window: 200_000 });
  const v = model.views[0]!;
  const audit = auditEntries(entries).compactions[0]!;
  assert.equal(v.verdict.kept, audit.kept);
  assert.equal(v.verdict.kept, false);
  assert.equal(v.verdict.reason, audit.reason);
  assert.deepEqual(v.rows[6]!.lost, ["user text lost"]);
  assert.deepEqual(v.rows[7]!.lost, ["tool call c3 lost"]);
  assert.equal(v.rows[0]!.lost, undefined);
  assert.equal(v.counts.summarized, h.length);
  assert.equal(
    v.checkpoint?.marker,
    "This session is being continued from a previous conversation. did things",
  );
});

test("--compaction picks one view; an unknown id names the ones there are", async () => {
  const entries = journal(history());
  const one = await reportEntries(entries, { source, window: 200_000, only: "preview" });
  assert.equal(one.views.length, 1);
  await assert.rejects(
    reportEntries(entries, { source, window: 200_000, only: "nope" }),
    /no compaction "nope" on the active path \(there are: preview\)/,
  );
});

test("long texts keep head and tail with their size; secrets are redacted", async () => {
  const secret = "AKIA" + "Z7QX2LMN4PRT8VWY";
  const h = history();
  h.splice(4, 1, result("c2", `${secret} ${"x".repeat(50_000)} tail-mark`));
  const model = await reportEntries(journal(h), { source, window: 200_000 });
  const text = JSON.stringify(model);
  assert.ok(!text.includes(secret), "the AWS key is redacted");
  const block = model.messages.flatMap((m) => m.blocks).find((b) => b.tail?.endsWith("tail-mark"));
  assert.ok(block);
  assert.equal(block.text.length, TEXT_HEAD);
  assert.equal(block.tail!.length, TEXT_TAIL);
  assert.ok(block.chars !== undefined && block.chars > 50_000);
});

test("the page escapes session text: hostile markup stays text, the embedded model is the --json model", async () => {
  const model = await reportEntries(journal(history()), {
    source: { ...source, file: "<b>x</b>.jsonl" },
    window: 1,
  });
  const html = renderReportHtml(model);
  assert.ok(!html.includes("<script>window.__pwned"), "no script from the session");
  assert.ok(!html.includes("<img src=x"), "no element from the session");
  assert.ok(!html.includes("\u2028"));
  assert.ok(html.includes("<title>compact-safe report: &lt;b&gt;x&lt;/b&gt;.jsonl</title>"));
  // Exactly the page's own two script elements.
  assert.equal(html.match(/<script/g)?.length, 2);
  assert.equal(html.match(/<\/script>/g)?.length, 2);
  assert.deepEqual(embedded(html), JSON.parse(JSON.stringify(model)));
  assert.match(html, /http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/);
});

test("scriptSafeJson writes <, >, &, U+2028 and U+2029 as escapes and reads back unchanged", () => {
  const value = { s: "</script><!-- a && b > c \u2028\u2029" };
  const json = scriptSafeJson(value);
  assert.ok(!/[<>&\u2028\u2029]/.test(json));
  assert.deepEqual(JSON.parse(json), value);
});

test("the example session's report: the page holds the --json model and stays under 1.5x the session", async () => {
  const { entries } = await importFile(exampleSession);
  const bytes = statSync(exampleSession).size;
  const model: ReportModel = await reportEntries(entries, {
    source: { file: basename(exampleSession), format: "claude-code", bytes },
    window: 200_000,
  });
  const html = renderReportHtml(model);
  assert.ok(Buffer.byteLength(html) <= 1.5 * bytes);
  assert.deepEqual(embedded(html), JSON.parse(JSON.stringify(model)));
});

test("the page's script never parses markup: no innerHTML, outerHTML, insertAdjacentHTML, document.write or eval", () => {
  const { script } = reportTemplates();
  for (const sink of [
    "innerHTML",
    "outerHTML",
    "insertAdjacentHTML",
    "document.write",
    "eval(",
    "new Function",
    "srcdoc",
  ])
    assert.ok(!script.includes(sink), `templates/report.js uses ${sink}`);
  assert.ok(script.includes("textContent"));
});

test("the verdict's reason quotes a lost text cut short: no part of a secret the cut splits reaches the report", () => {
  for (const sample of SECRET_SAMPLES) {
    // The contract quotes the lost instruction's first 60 characters: the secret is planted across that cut.
    for (const at of [40, 50, 58]) {
      const h = [...history().slice(0, 6), u(plant(sample, at, 400, false)), ...history().slice(7)];
      const entries = journal(h);
      entries.push({
        id: "c",
        parent_id: `m${h.length - 1}`,
        kind: "compaction",
        created_at: "2026-12-01T00:00:01Z",
        payload: {
          summary: "did things",
          tokens_before: 1,
          tokens_after: 1,
          model: "x",
          path: "summary",
          coverage: null,
          trigger: "auto",
          source_agent: "claude-code",
          replacement: [u("This session is being continued from a previous conversation. did things")],
        },
      });
      const v = buildReportModel(entries, { source, window: 200_000 }).views[0]!;
      assert.equal(v.verdict.kept, false);
      assert.deepEqual(leakedFragments(v.verdict.reason ?? "", sample), [], `${sample.kind} at ${at}`);
    }
  }
});
