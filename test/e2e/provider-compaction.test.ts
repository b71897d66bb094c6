/** `context`, `audit` and `report` name a provider's native compaction (issue 28), through the built binary. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { repoRoot } from "../support.js";
import { run } from "./helpers.js";

const fixture = (name: string): string => join(repoRoot, "test", "fixtures", "provider-compaction", name);

test("context, audit and report name an Anthropic compaction block, a Responses compaction item and a Codex remote compaction", async () => {
  for (const [name, source, opaque] of [
    ["anthropic-body.json", "anthropic", false],
    ["responses-items.json", "openai", true],
    ["codex-remote-v2.jsonl", "codex", true],
  ] as const) {
    const ctx = await run(["context", fixture(name), "--json"]);
    assert.equal(ctx.code, 0, ctx.stderr);
    const v = JSON.parse(ctx.stdout) as { last_compaction: null | { source?: string; id: string } };
    assert.ok(v.last_compaction, `${name}: context sees no compaction`);
    const audit = await run(["audit", fixture(name)]);
    assert.equal(audit.code, 1, `${name}: ${audit.stdout}${audit.stderr}`);
    const line = audit.stdout.split("\n")[0]!;
    assert.match(line, new RegExp(`\\(${source}, summary, `), name);
    assert.match(line, /VIOLATION: last round/, name);
    assert.match(
      line,
      opaque ? /summary encrypted: judged on what else/ : /native compaction, summary of \d+ characters/,
      name,
    );
    // The report's view of it says so too (its data model, and the page's script that writes the note).
    const report = await run(["report", fixture(name), "--json"]);
    assert.equal(report.code, 0, report.stderr);
    const views = (
      JSON.parse(report.stdout) as {
        views: {
          preview: boolean;
          verdict: { kept: boolean; provider_compaction: null | { opaque: boolean } };
        }[];
      }
    ).views.filter((v) => !v.preview);
    assert.equal(views.length, 1, name);
    assert.equal(views[0]!.verdict.kept, false, name);
    assert.equal(views[0]!.verdict.provider_compaction?.opaque, opaque, name);
    const refused = await run(["export", fixture(name), "--to", "openai"]);
    assert.equal(refused.code, 2, name);
    assert.match(refused.stderr, /compaction .*export to openai cannot carry it/, name);
  }
});
