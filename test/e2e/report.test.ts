/** `compact-safe report`: the page and its --json model agree; one-line errors. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { exampleSession } from "../support.js";
import { oneLineError, run, tempDir } from "./helpers.js";

function embedded(html: string): unknown {
  const open = '<script type="application/json" id="report-data">';
  const from = html.indexOf(open) + open.length;
  return JSON.parse(html.slice(from, html.indexOf("</script>", from)));
}

test("report: compact-safe's own compaction and the preview; the page embeds exactly the --json model", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const j = join(dir, "j.jsonl");
  assert.equal((await run(["compact", exampleSession, "--out", j])).code, 0);
  const page = join(dir, "r.html");
  const r = await run(["report", j, "--out", page]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^report written to .*r\.html \([\d,]+ bytes; 2 compactions shown, 2 kept the contract;/,
  );
  const json = await run(["report", j, "--json"]);
  assert.equal(json.code, 0, json.stderr);
  const model = JSON.parse(json.stdout) as { views: { id: string; source: string }[] };
  assert.deepEqual(
    model.views.map((v) => v.source),
    ["compact-safe", "preview"],
  );
  assert.deepEqual(embedded(readFileSync(page, "utf8")), model);
  // One compaction only.
  const one = await run(["report", j, "--json", "--compaction", model.views[0]!.id]);
  assert.equal((JSON.parse(one.stdout) as { views: unknown[] }).views.length, 1);
  // The default page name, in the current folder.
  const d = await run(["report", exampleSession], { cwd: dir });
  assert.equal(d.code, 0, d.stderr);
  assert.match(readFileSync(join(dir, "entire-1a-8a83a35a9b-0.report.html"), "utf8"), /^<!doctype html>/);
});

test("report: a missing file and an unknown compaction are one-line usage errors (exit 2)", async () => {
  const missing = await run(["report", "/nonexistent/s.jsonl"]);
  assert.equal(missing.code, 2);
  assert.equal(oneLineError(missing.stderr), "compact-safe: /nonexistent/s.jsonl: no such file");
  const unknown = await run(["report", exampleSession, "--compaction", "nope", "--json"]);
  assert.equal(unknown.code, 2);
  assert.match(
    oneLineError(unknown.stderr),
    /^compact-safe: .*entire-1a-8a83a35a9b-0\.jsonl: no compaction "nope" on the active path \(there are: preview\)$/,
  );
});
