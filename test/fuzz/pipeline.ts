/**
 * One fuzz case through the library, in process: import (the formats layer
 * or the journal reader, from the bytes, as the CLI chooses) → the live
 * context → compactMessagesSafe with the extractive summarizer → both
 * validators on the canonical messages → the direct checks (oracle.ts) →
 * the validator on the exported Anthropic and OpenAI bodies read back (what
 * `compact-safe validate` sees).
 *
 * Outcomes: `clear-error` (a FormatError or ModelError with a one-line
 * message: the CLI's exit 2), `refusal` (the engine's `ok: false`), or
 * `compacted`; anything else is a failure with a class and a message.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Message } from "../../src/model/types.js";
import { looksLikeJournalEntry, ModelError } from "../../src/model/index.js";
import {
  FormatError,
  importText,
  providerRequestTokens,
  toAnthropicRequest,
  toOpenAIRequest,
} from "../../src/formats/index.js";
import { liveContext, parseJournal } from "../../src/journal/index.js";
import { compactMessagesSafe, fastEstimator } from "../../src/engine/index.js";
import { extractiveSummarizer } from "../../src/summarizers/index.js";
import { validateSurvivalContract } from "../../src/contract/index.js";
import { repoRoot } from "../support.js";
import type { FuzzCase } from "./generate.js";
import { directChecks } from "./oracle.js";

export type OutcomeClass = "clear-error" | "refusal" | "compacted" | "failure";

export interface Failure {
  /** Stage and check, e.g. `direct:bound`, `crash:import`, `ts-validator`. */
  cls: string;
  message: string;
}

export interface CaseOutcome {
  index: number;
  outcome: OutcomeClass;
  /** The error message, refusal kind or compaction path. */
  detail: string;
  failures: Failure[];
  ms: number;
}

interface Verdict {
  valid: boolean;
  reason: string | null;
}
interface Independent {
  validateSurvivalContract(original: unknown, replacement: unknown, opts: object): Verdict;
}
let independent: Independent | undefined;
async function independentValidator(): Promise<Independent> {
  independent ??= (await import(
    pathToFileURL(join(repoRoot, "contract", "validate_survival_contract.mjs")).href
  )) as Independent;
  return independent;
}

const firstLine = (e: unknown): string =>
  (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).split("\n")[0]!.slice(0, 300);

/** An error the CLI reports as exit 2 with one line. */
function isClearError(e: unknown): boolean {
  return (e instanceof FormatError || e instanceof ModelError) && !e.message.includes("\n");
}

/** Is the first non-blank line a journal entry? (asked as src/cli/io.ts looksLikeJournal asks it) */
function looksLikeJournal(bytes: Buffer): boolean {
  const line = bytes
    .toString("utf8")
    .split("\n")
    .find((l) => l.trim() !== "");
  if (line === undefined) return false;
  try {
    return looksLikeJournalEntry(JSON.parse(line));
  } catch {
    return false;
  }
}

/** Imports the bytes as the CLI would; a clear error (string) or the live context. */
export function load(c: FuzzCase): { error: string } | { live: Message[] } {
  if (looksLikeJournal(c.bytes)) {
    const { entries, report } = parseJournal(c.bytes, c.fileName);
    if (entries.length === 0 && report.problems.length > 0) return { error: "no readable journal entry" };
    return { live: liveContext(entries) };
  }
  const { entries } = importText(c.bytes.toString("utf8"), c.fileName);
  if (entries.length === 0) return { error: "nothing could be imported" };
  return { live: liveContext(entries) };
}

/** Reads an exported body back as `validate` does (through the importer of that provider). */
/** A request body read back the way `validate` reads it (repeated tool ids kept as written on both sides). */
function readBack(body: unknown, format: "anthropic" | "openai"): Message[] {
  return liveContext(importText(JSON.stringify(body), `${format}.json`, { format, toolIds: "keep" }).entries);
}

/**
 * The failures of one case as they are found, and `done`, which closes the
 * case: any failure makes the outcome a failure; the time runs from here.
 */
export function caseRecorder(index: number): {
  failures: Failure[];
  done: (outcome: OutcomeClass, detail: string) => CaseOutcome;
} {
  const t0 = performance.now();
  const failures: Failure[] = [];
  const done = (outcome: OutcomeClass, detail: string): CaseOutcome => ({
    index,
    outcome: failures.length > 0 ? "failure" : outcome,
    detail,
    failures,
    ms: Math.round(performance.now() - t0),
  });
  return { failures, done };
}

export async function runInProcess(c: FuzzCase): Promise<CaseOutcome> {
  const { failures, done } = caseRecorder(c.index);

  let live: Message[];
  try {
    const r = load(c);
    if ("error" in r) return done("clear-error", r.error);
    live = r.live;
  } catch (e) {
    if (isClearError(e)) return done("clear-error", firstLine(e));
    failures.push({ cls: "crash:import", message: firstLine(e) });
    return done("failure", "");
  }

  const path = c.pruneOnly ? "prune-only" : undefined;
  let result: Awaited<ReturnType<typeof compactMessagesSafe>>;
  try {
    result = await compactMessagesSafe(live, {
      summarizer: extractiveSummarizer(),
      anchors: c.anchors,
      target: c.target,
      pruneOnly: c.pruneOnly,
      trigger: "manual",
      // As the command line does: shrinking judged on the exported requests too.
      requestSizes: (ms) => providerRequestTokens(ms, fastEstimator.text),
    });
  } catch (e) {
    failures.push({ cls: "crash:compact", message: firstLine(e) });
    return done("failure", "");
  }
  if (!result.ok) return done("refusal", `${result.error.kind}${path ? " (prune-only)" : ""}`);

  const opts = { anchors: c.anchors, path: result.path };
  const check = (cls: string, fn: () => Verdict | void) => {
    try {
      const v = fn();
      if (v && !v.valid) failures.push({ cls, message: v.reason ?? "rejected" });
    } catch (e) {
      failures.push({ cls: `crash:${cls}`, message: firstLine(e) });
    }
  };
  check("ts-validator", () => validateSurvivalContract(live, result.replacement, opts));
  const mjs = await independentValidator();
  check("mjs-validator", () => mjs.validateSurvivalContract(live, result.replacement, opts));
  check("direct", () => {
    for (const f of directChecks({
      original: live,
      replacement: result.replacement,
      path: result.path,
      checkpoint: result.checkpoint,
      anchors: c.anchors,
    }))
      failures.push({
        cls: f.check === "export-crash" ? "crash:export" : `direct:${f.check}`,
        message: f.message,
      });
  });
  for (const [format, toBody] of [
    ["anthropic", toAnthropicRequest],
    ["openai", toOpenAIRequest],
  ] as const) {
    check(`export-validate:${format}`, () =>
      validateSurvivalContract(
        readBack(toBody(live), format),
        readBack(toBody(result.replacement), format),
        opts,
      ),
    );
  }
  return done("compacted", result.path);
}
