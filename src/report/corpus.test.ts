/** The report of every corpus session: a view per active compaction with the audit's verdict; the page under 1.5x the session. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { basename } from "node:path";
import { auditEntries } from "../route/audit.js";
import { importFile } from "../formats/index.js";
import { corpusFiles, corpusSuite } from "../../test/support.js";
import { reportEntries, renderReportHtml } from "./index.js";

corpusSuite("report", () => {
  for (const file of corpusFiles()) {
    test(`${basename(file)}: every active compaction has a view with the audit's verdict; the page stays under 1.5x`, async () => {
      const { entries } = await importFile(file);
      const bytes = statSync(file).size;
      const model = await reportEntries(entries, {
        source: { file, format: "detected", bytes },
        window: 200_000,
      });
      const audits = new Map(auditEntries(entries).compactions.map((c) => [c.id, c]));
      for (const v of model.views) {
        if (v.preview) continue;
        const audit = audits.get(v.id);
        assert.ok(audit, `${v.id} is audited`);
        assert.equal(v.verdict.kept, audit.kept);
        assert.equal(v.rows.length, audit.messages_before);
        assert.equal(
          Object.values(v.counts).reduce((n, c) => n + c, 0),
          v.rows.length,
        );
      }
      const html = renderReportHtml(model);
      assert.ok(Buffer.byteLength(html) <= 1.5 * bytes, `${Buffer.byteLength(html)} > 1.5 × ${bytes}`);
    });
  }
});
