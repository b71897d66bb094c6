/**
 * The public surface, pinned: the runtime names `src/index.ts` exports, and
 * docs/LIBRARY.md's library table, which must list exactly them. Changing the
 * public API means changing this list on purpose.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as api from "./index.js";
import { appendEntries, createJournal, headerEntry, rewriteJournal } from "./journal/write.js";
import { newEntryId, nowIso } from "./journal/tree.js";

/** The repository root: this file runs as dist/src/index.test.js. */
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

const PUBLIC = {
  model: ["CONSTANTS", "CompactSafeError", "ERROR_CODES", "ModelError", "parseMessages", "parseJournalEntry"],
  contract: [
    "validateSurvivalContract",
    "protectedRound",
    "isCheckpoint",
    "CHECKPOINT_MARKER",
    "KIND_RULES",
    "BLOCK_RULES",
    "LIVE_STATE_FIELDS",
    "loadMatrix",
    "runMatrix",
    "MatrixError",
  ],
  engine: [
    "compactMessagesSafe",
    "shouldCompact",
    "defaultTarget",
    "estimateTokens",
    "fastEstimator",
    "exactEstimator",
    "redactSecrets",
  ],
  summarizers: [
    "extractiveSummarizer",
    "createSummarizer",
    "SUMMARIZER_NAMES",
    "openaiCompatibleSummarizer",
    "anthropicSummarizer",
    "anthropicNativeSummarizer",
    "SummarizerError",
  ],
  journal: [
    "readJournal",
    "liveContext",
    "compactionEntry",
    "withJournalLock",
    "JournalLockedError",
    "readAnchors",
    "readLiveState",
  ],
  formats: [
    "importFile",
    "importText",
    "toAnthropicRequest",
    "toOpenAIRequest",
    "providerRequestTokens",
    "writeFork",
    "FormatError",
  ],
  route: [
    "compactJournal",
    "compactSession",
    "compactEntries",
    "auditEntries",
    "runHook",
    "claudeCodeHook",
    "codexHook",
    "piHook",
    "HookInputError",
    "HOOK_AGENTS",
  ],
  report: ["reportEntries", "buildReportModel", "renderReportHtml"],
};

test("src/index.ts exports exactly the pinned public names", () => {
  assert.deepEqual(Object.keys(api).sort(), Object.values(PUBLIC).flat().sort());
});

test("docs/LIBRARY.md's table lists exactly the public names, by layer", () => {
  const readme = readFileSync(join(repoRoot, "docs", "LIBRARY.md"), "utf8");
  const at = readme.indexOf("The main exports, by layer:");
  assert.ok(at >= 0, "docs/LIBRARY.md: the library table is missing");
  // The first table after the sentence, to its last row (later tables of the README are not this one).
  const lines = readme.slice(at).split("\n");
  const start = lines.findIndex((l) => l.startsWith("| "));
  const end = lines.findIndex((l, i) => i > start && !l.startsWith("| "));
  const rows = lines.slice(start, end === -1 ? undefined : end).slice(2); // header and rule
  const table: Record<string, string[]> = {};
  for (const row of rows) {
    const [layer, names] = row
      .split("|")
      .slice(1, 3)
      .map((c) => c.trim());
    // Runtime names come first; types may follow after a semicolon.
    table[layer!] = [...names!.split(";")[0]!.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)`/g)].map((m) => m[1]!);
  }
  assert.deepEqual(table, PUBLIC);
});

test("every library error class is a CompactSafeError with its stable code", () => {
  const cases: [Error, string][] = [
    [new api.ModelError("messages[0]", "bad"), "invalid_message"],
    [new api.FormatError("f: unknown"), "unknown_format"],
    [new api.MatrixError("m: bad"), "invalid_matrix"],
    [new api.SummarizerError("transient", "down"), "summarizer_failed"],
    [new api.JournalLockedError("j.lock", null), "journal_locked"],
  ];
  for (const [e, code] of cases) {
    assert.ok(e instanceof api.CompactSafeError, e.name);
    assert.equal((e as api.CompactSafeError).code, code);
    assert.ok((api.ERROR_CODES as readonly string[]).includes(code));
  }
});

test("docs/SURVIVAL_CONTRACT.md quotes every constant with its value", () => {
  const doc = readFileSync(join(repoRoot, "docs", "SURVIVAL_CONTRACT.md"), "utf8");
  for (const [k, v] of Object.entries(api.CONSTANTS)) {
    const row = new RegExp(`\\|\\s*\`${k}\`\\s*\\|\\s*${String(v).replace(".", "\\.")}\\s*\\|`);
    assert.match(doc, row, `docs/SURVIVAL_CONTRACT.md does not quote ${k} = ${v}`);
  }
});

test("the errors a user causes in the journal and the report are CompactSafeErrors with codes", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cs-codes-"));
  try {
    const code = (e: unknown): string | undefined => (e instanceof api.CompactSafeError ? e.code : undefined);
    const rejects = async (p: Promise<unknown>, want: string) =>
      assert.equal(await p.then(() => "no error", code), want);
    // A folder is not a journal, to read or to write.
    await rejects(api.readJournal(dir), "not_a_file");
    const header = headerEntry({
      session_id: "s",
      created_at: nowIso(),
      schema_version: 2,
      source_format: "journal",
    });
    await rejects(appendEntries(dir, [header]), "not_a_file");
    // Rewriting a journal that is not there.
    await rejects(rewriteJournal(join(dir, "none.jsonl"), []), "no_journal");
    // A journal must open with its header.
    const user = {
      kind: "user" as const,
      id: newEntryId(),
      parent_id: null,
      timestamp: nowIso(),
      payload: { role: "user", content: [] },
    };
    await rejects(createJournal(join(dir, "j.jsonl"), user as never, []), "invalid_message");
    // A compaction the report is asked for that the journal does not hold.
    assert.throws(
      () => api.buildReportModel([], { only: "nope" } as never),
      (e: unknown) => code(e) === "unknown_compaction" && /no compaction "nope"/.test((e as Error).message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
