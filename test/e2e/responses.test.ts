/** The `responses` format end to end: import, compact --out and export --to responses of a Responses request body. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../support.js";
import { readJournalSync } from "../../src/journal/index.js";
import { CHECKPOINT_MARKER } from "../../src/contract/markers.js";
import { run, tempDir } from "./helpers.js";

const fixture = join(repoRoot, "test", "fixtures", "responses", "login-fix.json");
const doc = JSON.parse(readFileSync(fixture, "utf8")) as { input: Record<string, unknown>[] };
type Body = { input: Record<string, unknown>[] };

test("responses: import, compact --out and export --to responses; kept items come back as they were", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const imp = await run(["import", fixture, "--out", join(dir, "j.jsonl"), "--json"]);
    assert.equal(imp.code, 0, imp.stderr);
    const report = (JSON.parse(imp.stdout) as { report: { format: string; total: number; imported: number } })
      .report;
    assert.equal(report.format, "responses");
    assert.equal(report.total, doc.input.length);
    assert.equal(report.imported, doc.input.length);

    // Without a compaction the export is the input as it was (after the instructions' system message).
    const same = await run(["export", fixture, "--to", "responses"]);
    assert.equal(same.code, 0, same.stderr);
    assert.equal(JSON.stringify((JSON.parse(same.stdout) as Body).input.slice(1)), JSON.stringify(doc.input));

    const c = await run(["compact", fixture, "--out", join(dir, "c.jsonl"), "--target", "1000"]);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /path summary/);
    assert.ok(readJournalSync(join(dir, "c.jsonl")).entries.some((e) => e.kind === "compaction"));

    const e = await run([
      "export",
      join(dir, "c.jsonl"),
      "--to",
      "responses",
      "--out",
      join(dir, "body.json"),
    ]);
    assert.equal(e.code, 0, e.stderr);
    const body = JSON.parse(readFileSync(join(dir, "body.json"), "utf8")) as Body;
    assert.ok(body.input.length < doc.input.length);
    const texts = body.input.map((i) => JSON.stringify(i));
    // The protected round: from the last request on, every item as it was, byte for byte.
    const last = doc.input.findIndex((i) => i.role === "user" && String(i.content).startsWith("Thanks."));
    for (const it of doc.input.slice(last)) assert.ok(texts.includes(JSON.stringify(it)), JSON.stringify(it));
    const reasoning = body.input.filter((i) => i.type === "reasoning");
    assert.ok(reasoning.length > 0);
    for (const r of reasoning)
      assert.ok(
        doc.input.some((o) => o.type === "reasoning" && o.encrypted_content === r.encrypted_content),
        "encrypted_content byte for byte",
      );
    // One checkpoint, as a user message item.
    const checkpoints = body.input.filter(
      (i) =>
        i.role === "user" &&
        Array.isArray(i.content) &&
        String((i.content as { text?: string }[])[0]?.text ?? "").startsWith(CHECKPOINT_MARKER),
    );
    assert.equal(checkpoints.length, 1);
  } finally {
    cleanup();
  }
});
