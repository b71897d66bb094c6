/** Paths and helpers shared by the test suites. */
import { existsSync, readdirSync } from "node:fs";
import { describe, test } from "node:test";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { kindForMessage, type JournalEntry, type Message } from "../src/model/index.js";

/** The repository root (tests run from dist/, two or three levels down). */
export const repoRoot = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("repository root not found");
    dir = up;
  }
  return dir;
})();

/** The shared folder beside the repository (corpus, peers, spec); override with COMPACT_SAFE_SHARED. */
export const sharedDir = resolve(process.env.COMPACT_SAFE_SHARED ?? join(repoRoot, "..", "shared"));
export const corpusDir = join(sharedDir, "corpus");
export const peerMatrix = join(sharedDir, "peers", "codewhale-matrix.json");
export const projectMatrix = join(repoRoot, "contract", "fixtures", "matrix.json");
export const cliPath = join(repoRoot, "dist", "src", "cli", "main.js");
/**
 * The small real Claude Code session bundled in the repository (examples/, MIT): the fixture of the
 * unit and e2e tests that need a real session file, so that they run on a clone without ../shared.
 */
export const exampleSession = join(repoRoot, "examples", "entire-1a-8a83a35a9b-0.jsonl");

/**
 * Why the corpus suites cannot run here, or false when they can. Only the absence of the corpus folder
 * skips them: with the folder present, a missing or broken file fails its suite. With
 * COMPACT_SAFE_REQUIRE_CORPUS=1 an absent corpus is an error, never a skip.
 */
export const corpusMissing: string | false = existsSync(corpusDir)
  ? false
  : `corpus missing: ${corpusDir} not found (the corpus suites need ../shared beside the clone, or COMPACT_SAFE_SHARED)`;
if (corpusMissing && process.env.COMPACT_SAFE_REQUIRE_CORPUS === "1") {
  throw new Error(`${corpusMissing}; COMPACT_SAFE_REQUIRE_CORPUS=1 forbids skipping the corpus suites`);
}

/**
 * A corpus suite: the tests that read ../shared (the corpus, the peer matrix). They are registered under a
 * `corpus: NAME` suite when the corpus is present; without it, one skipped test named so says why.
 */
export function corpusSuite(name: string, body: () => void): void {
  if (corpusMissing) test(`corpus: ${name}`, { skip: corpusMissing }, () => {});
  else describe(`corpus: ${name}`, body);
}

/** Every session file of the corpus (sidecars and licences excluded), as paths. */
export function corpusFiles(): string[] {
  if (corpusMissing) throw new Error(corpusMissing);
  const out: string[] = [];
  for (const sub of readdirSync(corpusDir, { withFileTypes: true })) {
    if (!sub.isDirectory() || sub.name === "LICENSES") continue;
    for (const f of readdirSync(join(corpusDir, sub.name))) {
      if (f.endsWith(".metadata.json")) continue;
      out.push(join(corpusDir, sub.name, f));
    }
  }
  return out.sort();
}

/** Deep-freezes a value (to prove that a function never mutates its input). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}

/** A journal of `messages` in one chain under a header (ids `h`, `m0`, `m1`, …), for unit tests. */
export function linearJournal(messages: readonly Message[]): JournalEntry[] {
  const at = "2026-12-01T00:00:00Z";
  const entries: JournalEntry[] = [
    {
      id: "h",
      parent_id: null,
      kind: "header",
      created_at: at,
      payload: { session_id: "s", created_at: at, schema_version: 2, source_format: "journal" },
    },
  ];
  messages.forEach((m, i) =>
    entries.push({
      id: `m${i}`,
      parent_id: i === 0 ? "h" : `m${i - 1}`,
      kind: kindForMessage(m),
      created_at: at,
      payload: m,
    } as JournalEntry),
  );
  return entries;
}

/** An OpenAI Chat Completions message array as JSON: a user ask, `results` large tool results (600 lines each), an answer. */
export function toolSession(results: number): string {
  const ms: unknown[] = [{ role: "user", content: "Fix the failing tests." }];
  for (let k = 0; k < results; k++) {
    const args = JSON.stringify({ command: `npm test -- ${k}` });
    ms.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id: `c${k}`, type: "function", function: { name: "bash", arguments: args } }],
    });
    ms.push({ role: "tool", tool_call_id: `c${k}`, content: `line ${k}\n`.repeat(600) });
  }
  ms.push({ role: "assistant", content: "All green." });
  return JSON.stringify(ms);
}
