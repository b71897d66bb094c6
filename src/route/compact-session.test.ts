/**
 * The library's route for a compaction out of place: what `compact-safe
 * compact --out` and `--fork` do, as one call. Each test works in a
 * temporary folder; the source file is never modified.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importFile, importText } from "../formats/detect.js";
import { parseJournal, readJournal } from "../journal/index.js";
import { CompactSafeError } from "../model/errors.js";
import type { CompactionEntry } from "../model/index.js";
import { SummarizerError, type Summarizer } from "../summarizers/types.js";
import { DEFAULT_LADDER_BUDGET_MS } from "../engine/compact.js";
import { exampleSession, toolSession as session } from "../../test/support.js";
import { compactSession, ForkFormatError } from "./compact-session.js";
import { ladderBudget } from "./compact-journal.js";

function tmp(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), "cs-route-session-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function sessionFile(dir: string, results = 8): string {
  const file = join(dir, "s.json");
  writeFileSync(file, session(results));
  return file;
}

test("compactSession --out: a new journal of the imported entries plus ONE compaction entry; the source untouched", async (t) => {
  const dir = tmp(t);
  const file = sessionFile(dir);
  const bytes = readFileSync(file);
  const out = join(dir, "j.jsonl");
  const steps: string[] = [];
  const outcome = await compactSession(file, { out, target: 2000, onStep: (s) => steps.push(s) });
  assert.equal(outcome.kind, "compacted");
  if (outcome.kind !== "compacted") return;
  assert.deepEqual(outcome.output, { kind: "journal", path: out });
  assert.equal(outcome.format, "openai");
  assert.deepEqual(steps, ["reading", "compacting", "writing"]);
  const imported = importText(session(8), file).entries;
  const written = (await readJournal(out)).entries;
  assert.equal(written.length, imported.length + 1);
  assert.deepEqual(
    written.slice(0, -1).map((e) => e.kind),
    imported.map((e) => e.kind),
  );
  const entry = written.at(-1) as CompactionEntry;
  assert.equal(entry.kind, "compaction");
  assert.equal(entry.parent_id, written.at(-2)!.id);
  assert.deepEqual(entry.payload, outcome.result.payload);
  assert.deepEqual(readFileSync(file), bytes);
});

test("compactSession without out writes nothing and returns the new journal's text", async (t) => {
  const dir = tmp(t);
  const file = sessionFile(dir);
  const outcome = await compactSession(file, { target: 2000 });
  assert.equal(outcome.kind, "compacted");
  if (outcome.kind !== "compacted" || outcome.output?.kind !== "journal" || outcome.output.path !== null)
    return assert.fail(`expected the journal's text, got ${JSON.stringify(outcome.output)}`);
  const { entries, report } = parseJournal(outcome.output.text, "text");
  assert.deepEqual(report.problems, []);
  assert.equal(entries.at(-1)!.kind, "compaction");
  assert.deepEqual((entries.at(-1) as CompactionEntry).payload, outcome.result.payload);
  assert.deepEqual(readdirSync(dir), ["s.json"]);
});

test("compactSession reads standard input's bytes as given (content), named as the caller names it", async (t) => {
  const dir = tmp(t);
  const out = join(dir, "j.jsonl");
  const outcome = await compactSession("(stdin)", { content: Buffer.from(session(8)), out, target: 2000 });
  assert.equal(outcome.kind, "compacted");
  assert.equal(outcome.file, "(stdin)");
  assert.equal((await readJournal(out)).entries.at(-1)!.kind, "compaction");
});

test("compactSession --fork writes a new Claude Code session beside the original, with the resume command", async (t) => {
  const dir = tmp(t);
  const orig = join(dir, "orig.jsonl");
  copyFileSync(exampleSession, orig);
  const bytes = readFileSync(orig);
  const outcome = await compactSession(orig, { fork: true, workspace: dir });
  assert.equal(outcome.kind, "compacted");
  const fork = outcome.output;
  if (fork?.kind !== "fork") return assert.fail(`expected a fork, got ${JSON.stringify(fork)}`);
  assert.equal(fork.path, join(dir, `${fork.sessionId}.jsonl`));
  assert.equal(fork.resume, `claude --resume ${fork.sessionId}`);
  assert.equal(readFileSync(fork.path, "utf8"), fork.text);
  assert.deepEqual(readFileSync(orig), bytes, "the original is untouched");
  // Read back, the fork is a Claude Code session of the compacted history.
  const back = await importFile(fork.path);
  assert.equal(back.report.format, "claude-code");
  assert.ok(back.entries.length > 1);
  // At --out, never over an existing file unless force.
  const taken = join(dir, "taken.jsonl");
  writeFileSync(taken, "x");
  await assert.rejects(
    compactSession(orig, { fork: true, out: taken, workspace: dir }),
    (e: unknown) => e instanceof CompactSafeError && e.code === "output_exists",
  );
  assert.equal(readFileSync(taken, "utf8"), "x");
  const forced = await compactSession(orig, { fork: true, out: taken, force: true, workspace: dir });
  assert.equal(forced.output?.path, taken);
  assert.notEqual(readFileSync(taken, "utf8"), "x");
  assert.deepEqual(readFileSync(orig), bytes);
});

test("compactSession --fork refuses a format without a fork writer and a cut last line; nothing written", async (t) => {
  const dir = tmp(t);
  const file = sessionFile(dir);
  await assert.rejects(
    compactSession(file, { fork: true, target: 2000 }),
    (e: unknown) =>
      e instanceof ForkFormatError && e.code === "unknown_format" && e.format === "openai" && e.file === file,
  );
  const cut = join(dir, "cut.jsonl");
  writeFileSync(cut, readFileSync(exampleSession, "utf8").trimEnd() + '\n{"type":"user","mess');
  await assert.rejects(
    compactSession(cut, { fork: true, workspace: dir }),
    (e: unknown) =>
      e instanceof CompactSafeError &&
      e.code === "unknown_format" &&
      /a fork would lose that line, so nothing was written/.test(e.message),
  );
  assert.deepEqual(readdirSync(dir).sort(), ["cut.jsonl", "s.json"]);
});

test("a refusal leaves the original untouched and writes no output", async (t) => {
  const dir = tmp(t);
  const file = sessionFile(dir);
  const bytes = readFileSync(file);
  const out = join(dir, "j.jsonl");
  const failing: Summarizer = {
    name: "failing",
    model: "none",
    summarize: () => Promise.reject(new SummarizerError("deterministic", "refused by the test")),
  };
  const refused = await compactSession(file, { out, target: 200, summarizer: failing });
  assert.equal(refused.kind, "refused");
  if (refused.kind === "refused") assert.equal(refused.error.kind, "summarizer_failed");
  assert.equal(refused.output, null);
  assert.equal(existsSync(out), false, "no journal written");
  assert.deepEqual(readFileSync(file), bytes);
  // An existing journal at out is refused (journal_exists), and kept as it was.
  writeFileSync(out, "keep");
  await assert.rejects(
    compactSession(file, { out, target: 2000 }),
    (e: unknown) => e instanceof CompactSafeError && e.code === "journal_exists",
  );
  assert.equal(readFileSync(out, "utf8"), "keep");
  // Out is never the file itself.
  await assert.rejects(
    compactSession(file, { out: file, force: true, target: 2000 }),
    (e: unknown) => e instanceof CompactSafeError && e.code === "output_is_input",
  );
  assert.deepEqual(readFileSync(file), bytes);
  // A dry run writes nothing either.
  const dry = await compactSession(file, { out: join(dir, "dry.jsonl"), target: 2000, dryRun: true });
  assert.equal(dry.kind, "compacted");
  assert.equal(dry.output, null);
  assert.deepEqual(readdirSync(dir).sort(), ["j.jsonl", "s.json"]);
});

test("the summary ladder's budget is never shorter than one request's timeout", async (t) => {
  assert.equal(ladderBudget({}), DEFAULT_LADDER_BUDGET_MS);
  assert.equal(ladderBudget({ requestTimeoutMs: 1000 }), DEFAULT_LADDER_BUDGET_MS);
  assert.equal(ladderBudget({ requestTimeoutMs: 600_000 }), 600_000);
  assert.equal(ladderBudget({ budgetMs: 10_000, requestTimeoutMs: 20_000 }), 20_000);
  assert.equal(ladderBudget({ budgetMs: 10_000 }), 10_000);
  // Through the route: a first request that times out after 400 s (on a fake clock) is retried when
  // the request timeout is 10 minutes, and ends the ladder under the default 5-minute budget otherwise.
  const dir = tmp(t);
  const file = sessionFile(dir);
  const run = (requestTimeoutMs: number | undefined) => {
    let clock = 0;
    let calls = 0;
    const slow: Summarizer = {
      name: "slow",
      model: "fake",
      summarize: () => {
        calls++;
        if (calls === 1) {
          clock += 400_000;
          return Promise.reject(new SummarizerError("transient", "timed out after 400000 ms"));
        }
        return Promise.resolve({
          text: "## Goal\nFix the failing tests.\n\n## Next step\nNone.",
          model: "fake",
        });
      },
    };
    return compactSession(file, {
      target: 200,
      summarizer: slow,
      now: () => clock,
      sleep: () => Promise.resolve(),
      requestTimeoutMs,
    });
  };
  const cut = await run(undefined);
  assert.equal(cut.kind, "refused");
  if (cut.kind === "refused") assert.match(cut.error.message, /not retried: .* time budget/);
  const retried = await run(600_000);
  assert.equal(retried.kind, "compacted", JSON.stringify(retried.kind === "refused" ? retried.error : null));
});
