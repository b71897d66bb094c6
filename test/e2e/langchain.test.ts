/** A LangChain message dump through the built binary: detected, imported with every message accounted for, compacted, validated. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../support.js";
import { readJournalSync } from "../../src/journal/index.js";
import { liveContext } from "../../src/journal/tree.js";
import { importFile } from "../../src/formats/detect.js";
import { validateSurvivalContract } from "../../src/contract/validate.js";
import { isCheckpoint } from "../../src/contract/classify.js";
import { run, tempDir } from "./helpers.js";

/** A dump written by LangChain's own mapChatMessagesToStoredMessages after a createAgent run (see its README). */
const fixture = join(repoRoot, "test", "fixtures", "langchain", "agent-session.json");

test("compact-safe import: a LangChain dump is detected and every message accounted for", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const out = join(dir, "j.jsonl");
    const r = await run(["import", fixture, "--out", out, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { report?: Record<string, unknown> } & Record<string, unknown>;
    const rep = (report.report ?? report) as {
      format: string;
      total: number;
      imported: number;
      skipped: unknown[];
      by_source_kind: Record<string, number>;
    };
    const stored = JSON.parse(readFileSync(fixture, "utf8")) as unknown[];
    assert.equal(rep.format, "langchain");
    assert.equal(rep.total, stored.length);
    assert.equal(rep.imported, stored.length);
    assert.deepEqual(rep.skipped, []);
    assert.deepEqual(rep.by_source_kind, { human: 1, ai: 5, tool: 5 });
    const live = liveContext(readJournalSync(out).entries);
    assert.equal(live.length, stored.length);
    // The failed read is an error result, paired with its call.
    const failed = live
      .flatMap((m) => m.content)
      .find((b) => b.type === "tool_result" && (b as { is_error?: boolean }).is_error);
    assert.ok(failed && (failed as { tool_use_id: string }).tool_use_id === "call_a0e3");
  } finally {
    cleanup();
  }
});

test("compact-safe compact --out: the LangChain dump's compaction validates against the survival contract", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const out = join(dir, "c.jsonl");
    const r = await run(["compact", fixture, "--out", out, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const receipt = JSON.parse(r.stdout) as { path: string; tokens_before: number; tokens_after: number };
    assert.equal(receipt.path, "summary");
    assert.ok(receipt.tokens_after < receipt.tokens_before);
    const original = (await importFile(fixture)).entries;
    const before = liveContext(original);
    const after = liveContext(readJournalSync(out).entries);
    assert.equal(after.filter(isCheckpoint).length, 1);
    const verdict = validateSurvivalContract(before, after);
    assert.ok(verdict.valid, verdict.reason ?? "");
    const a = await run(["audit", out]);
    assert.equal(a.code, 0, a.stdout + a.stderr);
    assert.match(a.stdout, /1 of 1 compaction kept the survival contract/);
  } finally {
    cleanup();
  }
});

test("a broken message of a dump is reported by its path; --format langchain on another format names what it looks like", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const stored = JSON.parse(readFileSync(fixture, "utf8")) as Record<string, unknown>[];
    const broken = join(dir, "broken.json");
    writeFileSync(
      broken,
      JSON.stringify({
        messages: [...stored.slice(0, 3), { type: "tool", data: { content: "x" } }, ...stored.slice(3)],
      }),
    );
    const r = await run(["import", broken, "--out", join(dir, "b.jsonl"), "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const rep = JSON.parse(r.stdout) as {
      report?: { skipped: { line: number; reason: string }[] };
      skipped?: { line: number; reason: string }[];
    };
    const skipped = (rep.report ?? rep).skipped!;
    assert.deepEqual(
      skipped.map((s) => [s.line, s.reason]),
      [[4, "messages[3].data.tool_call_id: a tool message needs its tool_call_id (a string)"]],
    );
    const openai = join(dir, "o.json");
    writeFileSync(
      openai,
      JSON.stringify([
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ]),
    );
    const w = await run(["import", openai, "--out", join(dir, "o.jsonl"), "--format", "langchain"]);
    assert.equal(w.code, 2);
    assert.match(
      w.stderr,
      /o\.json: none of its 2 messages reads as langchain; it looks like an openai session/,
    );
  } finally {
    cleanup();
  }
});
