/**
 * The formats layer's corpus suite (skipped, saying so, on a clone without
 * ../shared). Every real session in ../shared/corpus: it imports, every line is
 * accounted for, the known broken lines are reported with their numbers, the
 * live context exports to request bodies the providers accept, and
 * export-then-import gives the same messages.
 *
 * Round-trip normalisation: both sides go through `prepareForProvider` (the
 * exporter's own repair, see prepare.ts), which drops meta/usage and what the
 * provider cannot carry, pairs calls with results, inserts the minimal first
 * user message and (Anthropic) merges same-role neighbours. Anthropic system
 * prompts are compared as their text joined by blank lines (the exporter
 * sends one system string).
 */
import assert from "node:assert/strict";
import { corpusDir, corpusFiles, corpusSuite } from "../../test/support.js";
import { test } from "node:test";
import { liveContext } from "../journal/tree.js";
import type { Message } from "../model/index.js";
import { parseJournalEntry } from "../model/index.js";
import { checkProviderShape } from "./export/check-shape.js";
import { detectFormat, detectLines, importBytes, importFile, importText } from "./detect.js";
import { formatEntry } from "./registry.js";
import { importAgentFile, type AgentFormat } from "./import-agent.js";
import { toAnthropicRequest } from "./export/anthropic.js";
import { toOpenAIRequest } from "./export/openai.js";
import { prepareForProvider, type Provider } from "./export/prepare.js";
import type { ImportResult } from "./common/types.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { importClaudeCode } from "./import/claude-code.js";
import { isPlainUser } from "../contract/classify.js";

/** The broken lines named in SOURCES.md, with the line numbers found in the files. */
const KNOWN_BROKEN: Record<string, { line: number; reason: RegExp }[]> = {
  "entire-7d-66f047ac98-0.jsonl": [{ line: 172, reason: /two JSON values concatenated/ }],
  "pi-mono-root-compact.jsonl": [{ line: 1013, reason: /two JSON values concatenated/ }],
  "pi-mono-root-session.jsonl": [{ line: 440, reason: /two JSON values concatenated/ }],
  "gjc-03-raddit-dashboard-pr.jsonl": [{ line: 31, reason: /invalid JSON escape/ }],
};
/** Imported compactions expected per file (SOURCES.md: compact_boundary / compaction counts; pi-mono-root-compact's is on its broken last line). */
const COMPACTIONS: Record<string, number> = {
  "entire-fc-99c919b212-0.jsonl": 1,
  "entire-cd-95adddad32-0.jsonl": 3,
  "entire-0e-3fdc072c53-0.jsonl": 1,
  "entire-98-78b713483d-0.jsonl": 1,
  "pi-mono-before-compaction.jsonl": 2,
  "pi-mono-root-compact.jsonl": 1,
  "pi-mono-root-session.jsonl": 1,
  "gjc-03-raddit-dashboard-pr.jsonl": 1,
};

function table(name: string, r: ImportResult): string {
  let toolCalls = 0;
  let results = 0;
  let thinking = 0;
  let messages = 0;
  for (const e of r.entries) {
    if (e.kind === "header" || e.kind === "compaction" || e.kind === "branch_summary") continue;
    messages++;
    for (const b of (e.payload as Message).content) {
      if (b.type === "tool_use") toolCalls++;
      if (b.type === "tool_result") results++;
      if (b.type === "thinking" || b.type === "redacted_thinking") thinking++;
    }
  }
  const reasons = new Map<string, number>();
  for (const s of r.report.skipped) {
    const key = `${s.by_design ? "" : "BROKEN "}${s.reason.replace(/\(.*$/, "").trim()}`;
    reasons.set(key, (reasons.get(key) ?? 0) + 1);
  }
  const rows = [
    `| ${name} | ${r.report.format} | lines ${r.report.total} | imported ${r.report.imported} | skipped ${r.report.skipped.length} |`,
    `|  | messages ${messages} | tool calls ${toolCalls} | results ${results} | thinking ${thinking} | prior compactions ${r.report.by_entry_kind.compaction ?? 0} | synthetic ${r.report.synthetic_results} | in flight ${r.report.in_flight_calls} |`,
    ...[...reasons].map(([k, n]) => `|  | skipped: ${k} × ${n} |`),
  ];
  return rows.join("\n");
}

function normalise(
  messages: readonly Message[],
  provider: Provider,
): { system: string; messages: Message[] } {
  const p = prepareForProvider(messages, provider);
  const system = p.system
    .flatMap((m) => m.content)
    .map((b) => (b as { text?: string }).text ?? JSON.stringify(b))
    .join("\n\n");
  return { system, messages: p.messages };
}

corpusSuite("formats", () => {
  const files = corpusFiles();

  test("the corpus is present", () => {
    assert.ok(files.length >= 20, `expected the 20 corpus files under ${corpusDir}, found ${files.length}`);
  });

  test("an import whose importer takes over the lines detection parsed (from the text, or from the bytes a line at a time) is the importer's own import", () => {
    let checked = 0;
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      const format = detectFormat(text, file);
      const entry = formatEntry(format);
      // The JSONL importers that take over detection's lines (the others' imports stamp the import time).
      if (!["claude-code", "codex", "pi"].includes(format)) continue;
      const own = entry.importer(text, file, {});
      assert.deepEqual(importText(text, file), own, file);
      // Read from its bytes a line at a time (never decoded whole): the same import.
      const bytes = readFileSync(file);
      assert.equal(detectLines(bytes)?.format, format, `${file}: detected from its lines`);
      assert.deepEqual(importBytes(bytes, file), own, file);
      checked++;
    }
    assert.ok(checked >= 15, `checked ${checked}`);
  });

  test("an agent's hook import (its importer alone, lines decoded one by one) is the import of the file", async () => {
    const agents: readonly AgentFormat[] = ["claude-code", "codex", "pi"];
    let checked = 0;
    for (const file of files) {
      const format = agents.find((a) => file.includes(`/${a}/`));
      if (format === undefined) continue;
      assert.deepEqual(await importAgentFile(file, format), await importFile(file, { format }), file);
      checked++;
    }
    assert.ok(checked >= 10, `${checked} agent sessions checked`);
  });

  for (const file of files) {
    const name = file.split("/").pop()!;
    test(`corpus ${name}: imports, accounts for every line, exports, round-trips`, async () => {
      const r = await importFile(file);
      console.log(table(name, r));
      const { report } = r;
      // Every line accounted for.
      assert.equal(report.imported + report.skipped.length, report.total);
      assert.ok(report.total > 0);
      const lines = new Set(report.skipped.map((s) => s.line));
      assert.equal(lines.size, report.skipped.length, "a line is skipped at most once");
      // Known broken lines, exactly.
      const broken = report.skipped.filter((s) => !s.by_design);
      const expected = KNOWN_BROKEN[name] ?? [];
      assert.deepEqual(
        broken.map((b) => b.line),
        expected.map((e) => e.line),
        `broken lines of ${name}: ${JSON.stringify(broken)}`,
      );
      for (const e of expected) assert.match(broken.find((b) => b.line === e.line)!.reason, e.reason);
      assert.equal(report.by_entry_kind.compaction ?? 0, COMPACTIONS[name] ?? 0, "prior compactions");
      // Every entry is a valid journal entry, ids are unique, parents exist.
      const ids = new Set<string>();
      for (const [i, e] of r.entries.entries()) {
        parseJournalEntry(e, `entries[${i}]`);
        assert.ok(!ids.has(e.id), `duplicate id ${e.id}`);
        ids.add(e.id);
      }
      for (const e of r.entries)
        if (e.parent_id) assert.ok(ids.has(e.parent_id), `missing parent ${e.parent_id} of ${e.id}`);
      assert.equal(r.entries[0]!.kind, "header");
      // Live context: with a compaction on the path, it starts with a recognised checkpoint.
      const live = liveContext(r.entries);
      assert.ok(live.length > 0);
      // Exports are accepted.
      const anthropic = toAnthropicRequest(live);
      const openai = toOpenAIRequest(live);
      assert.deepEqual(checkProviderShape(anthropic, "anthropic"), { ok: true });
      assert.deepEqual(checkProviderShape(openai, "openai"), { ok: true });
      assert.ok(
        !JSON.stringify(anthropic).includes('"meta"') || !anthropic.messages.some((m) => "meta" in m),
      );
      // Round trips.
      const backA = importText(JSON.stringify(anthropic), `${name}.anthropic.json`, { format: "anthropic" });
      assert.deepEqual(normalise(liveContext(backA.entries), "anthropic"), normalise(live, "anthropic"));
      const backO = importText(JSON.stringify(openai), `${name}.openai.json`, { format: "openai" });
      assert.deepEqual(normalise(liveContext(backO.entries), "openai"), normalise(live, "openai"));
    });
  }
});

/** Prompts queued while Claude Code worked, read where the model read them (claude-code-queue.test.ts has the shapes). */
corpusSuite("Claude Code queued prompts", () => {
  const files = [
    "entire-7d-66f047ac98-0.jsonl",
    "entire-98-78b713483d-0.jsonl",
    "entire-ad-a8171575ce-0.jsonl",
    "entire-fc-99c919b212-0.jsonl",
  ];
  test("every prompt delivered mid-turn is a user message right before the first new assistant message after its remove", () => {
    let users = 0;
    for (const f of files) {
      const text = readFileSync(join(corpusDir, "claude-code", f), "utf8");
      const raw = text.split("\n").map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>;
        } catch {
          return {};
        }
      });
      const r = importClaudeCode(text, f);
      const queued = r.entries.filter(
        (e) => e.kind === "user" && (e.payload as Message).meta?.queued === true,
      );
      const enqueued = raw.filter((o) => o.type === "queue-operation" && o.operation === "enqueue");
      assert.equal(
        queued.length,
        enqueued.length,
        `${f}: every enqueue of these sessions was delivered mid-turn`,
      );
      for (const q of queued) {
        const child = r.entries.find((e) => e.parent_id === q.id)!;
        assert.ok(
          child.kind === "assistant" || (child.payload as Message).meta?.queued === true,
          `${f}: ${q.id}`,
        );
        const m = q.payload as Message;
        if (isPlainUser(m) && m.meta?.is_meta !== true) users++;
      }
    }
    // entire-7d: "stop", "the branch name"; entire-ad: 3; entire-fc: 2 (entire-98's six are agent notifications).
    assert.equal(users, 7);
  });
});
