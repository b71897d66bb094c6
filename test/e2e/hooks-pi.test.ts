/**
 * compact-safe's pi extension (extensions/compact-safe.js), called as pi
 * 0.73.1 calls an extension: its default export gets the extension API and
 * registers a `session_compact` handler, which pi awaits with the event
 * (`compactionEntry`, `fromExtension`) and a context (`sessionManager`,
 * `cwd`, `hasUI`, `ui`). The audit runs in the built CLI (`compact-safe hook
 * pi`): the one beside the extension, or COMPACT_SAFE_BIN.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliPath } from "../support.js";
import { context, lastCompaction, loadExtension } from "../pi-extension.js";
import { piSessionText } from "../pi-session.js";
import { tempDir } from "./helpers.js";

test("pi session_compact hook: a compaction that lost the last round is reported, and the lost calls and the anchors are restated with the next prompt", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  process.env.COMPACT_SAFE_BIN = cliPath;
  t.after(() => delete process.env.COMPACT_SAFE_BIN);
  mkdirSync(join(dir, ".codewhale"));
  writeFileSync(join(dir, ".codewhale", "anchors.md"), "Never push to main.\n");
  // pi's own compaction after round 4 keeps round 4 only: round 3's exchange, protected, is lost.
  const text = piSessionText({ cwd: dir, rounds: 4, compactAfter: 4 });
  const file = join(dir, "session.jsonl");
  writeFileSync(file, text);
  const fake = await loadExtension();
  const handler = fake.handlers.get("session_compact");
  assert.ok(handler, "the extension registers a session_compact handler");
  const compactionEntry = lastCompaction(text);
  await handler({ type: "session_compact", compactionEntry, fromExtension: false }, context(fake, file, dir));
  await fake.recorded;
  assert.deepEqual(
    fake.entries.map((e) => e.customType),
    ["compact-safe-audit"],
  );
  const record = fake.entries[0]!.data as {
    compaction: string;
    kept: boolean;
    losses: { tool_calls: string[] };
  };
  assert.equal(record.compaction, compactionEntry.id);
  assert.equal(record.kept, false);
  assert.deepEqual(record.losses.tool_calls, ["toolu_r3a", "toolu_r3b"]);
  assert.equal(fake.notes.length, 1);
  assert.equal(fake.notes[0]!.level, "warning");
  assert.match(
    fake.notes[0]!.text,
    /^compact-safe: pi's compaction \S+ did not keep the survival contract: /,
  );
  assert.equal(fake.messages.length, 1);
  const sent = fake.messages[0]!;
  assert.deepEqual(sent.options, { deliverAs: "nextTurn" });
  assert.equal(sent.message.customType, "compact-safe");
  assert.match(
    sent.message.content,
    /Tool calls of the last round no longer in the context: toolu_r3a, toolu_r3b\./,
  );
  assert.match(sent.message.content, /Pinned anchors \(restated verbatim\):\nNever push to main\./);
});

test("pi session_compact hook: a kept compaction is reported as kept and nothing is restated without anchors", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  process.env.COMPACT_SAFE_BIN = cliPath;
  t.after(() => delete process.env.COMPACT_SAFE_BIN);
  // The compaction's kept range starts a round earlier (round 3): the protected round survives.
  const lines = piSessionText({ cwd: dir, rounds: 4, compactAfter: 4 })
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const round3 = lines.find((l) =>
    (l.message as { content?: { text?: string }[] } | undefined)?.content?.[0]?.text?.startsWith("Round 3:"),
  )!;
  const compaction = lines.find((l) => l.type === "compaction")!;
  compaction.firstKeptEntryId = round3.id;
  const file = join(dir, "session.jsonl");
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  const fake = await loadExtension();
  await fake.handlers.get("session_compact")!(
    { type: "session_compact", compactionEntry: compaction, fromExtension: false },
    context(fake, file, dir),
  );
  await fake.recorded;
  assert.equal((fake.entries[0]!.data as { kept: boolean }).kept, true);
  assert.deepEqual(
    fake.notes.map((n) => n.level),
    ["info"],
  );
  assert.match(fake.notes[0]!.text, /kept the survival contract/);
  assert.deepEqual(fake.messages, []);
});

test("pi session_compact hook: on a 5 MB session it records the verdict; errors are reported, never thrown", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  process.env.COMPACT_SAFE_BIN = cliPath;
  t.after(() => delete process.env.COMPACT_SAFE_BIN);
  const text = piSessionText({ cwd: dir, rounds: 460, resultBytes: 6000, compactAfter: 450 });
  assert.ok(text.length >= 5_000_000, `${text.length} bytes`);
  const file = join(dir, "big.jsonl");
  writeFileSync(file, text);
  const fake = await loadExtension();
  const handler = fake.handlers.get("session_compact")!;
  // How long it holds pi up is measured by `npm run bench:hooks`, not here.
  await handler(
    { type: "session_compact", compactionEntry: lastCompaction(text), fromExtension: false },
    context(fake, file, dir),
  );
  await fake.recorded;
  assert.equal(fake.entries.length, 1);

  // pi has gone by the time the verdict is ready: it is reported, and the handler does not throw.
  const stale = await loadExtension({ stale: true });
  await stale.handlers.get("session_compact")!(
    { type: "session_compact", compactionEntry: lastCompaction(text), fromExtension: false },
    context(stale, file, dir),
  );
  await stale.recorded;
  assert.equal(stale.notes.length, 1);
  assert.match(stale.notes[0]!.text, /^compact-safe: pi's compaction/);

  // A missing session file, or no compact-safe to run: a report through pi's UI, no exception.
  const broken = await loadExtension();
  await broken.handlers.get("session_compact")!(
    { type: "session_compact", compactionEntry: { id: "x" }, fromExtension: false },
    context(broken, join(dir, "nope.jsonl"), dir),
  );
  process.env.COMPACT_SAFE_BIN = join(dir, "no-such-compact-safe");
  await broken.handlers.get("session_compact")!(
    { type: "session_compact", compactionEntry: { id: "x" }, fromExtension: false },
    context(broken, file, dir),
  );
  // An in-memory session (no file) is left alone.
  await broken.handlers.get("session_compact")!(
    { type: "session_compact", compactionEntry: { id: "x" }, fromExtension: false },
    context(broken, undefined, dir),
  );
  // The two audits report when they end (no fixed wait: a loaded machine may take long).
  await until(() => broken.notes.length >= 2);
  assert.deepEqual(broken.entries, []);
  assert.deepEqual(
    broken.notes.map((n) => n.level),
    ["error", "error"],
  );
  const texts = broken.notes.map((n) => n.text);
  assert.ok(
    texts.some((t) => /^compact-safe: audit failed: .*nope\.jsonl/.test(t)),
    texts.join("\n"),
  );
  assert.ok(
    texts.some((t) => /^compact-safe: audit failed: .*no-such-compact-safe.*ENOENT/.test(t)),
    texts.join("\n"),
  );
});

test("pi session_compact hook: an audit that takes long does not hold pi up; its report follows when it ends", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  // A compact-safe that answers after 4 s: the handler must give up waiting long before.
  const slow = join(dir, "slow-compact-safe.mjs");
  writeFileSync(
    slow,
    `setTimeout(() => { process.stdout.write(JSON.stringify({ line: "compact-safe: pi's compaction c kept the survival contract", kept: true, record: { compaction: "c", kept: true, reason: null, losses: { user_texts: [], tool_calls: [], tool_results: [], assistant_texts: [] } } })); }, 4000);\n`,
  );
  process.env.COMPACT_SAFE_BIN = slow;
  t.after(() => delete process.env.COMPACT_SAFE_BIN);
  const text = piSessionText({ cwd: dir, rounds: 4, compactAfter: 3 });
  const file = join(dir, "session.jsonl");
  writeFileSync(file, text);
  const fake = await loadExtension();
  let returned = false;
  const handled = Promise.resolve(
    fake.handlers.get("session_compact")!(
      { type: "session_compact", compactionEntry: lastCompaction(text), fromExtension: false },
      context(fake, file, dir),
    ),
  ).then(() => (returned = true));
  // Whichever comes first: the handler returning (it waits at most 0.8 s) or the slow audit's report.
  await Promise.race([handled, fake.recorded]);
  assert.equal(returned, true, "the handler returned before the audit ended");
  assert.deepEqual(fake.entries, [], "no verdict yet");
  await fake.recorded;
  assert.equal(fake.entries.length, 1, "the verdict is recorded when the audit ends");
});

test("pi session_compact hook: a relative session path that starts with - is the session file, never an option", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  // No COMPACT_SAFE_BIN: the extension runs the compact-safe beside it (../dist/src/cli/main.js).
  const text = piSessionText({ cwd: dir, rounds: 4, compactAfter: 4 });
  writeFileSync(join(dir, "--format"), text);
  const previous = process.cwd();
  process.chdir(dir); // pi's folder: the session path is relative to it
  t.after(() => process.chdir(previous));
  const fake = await loadExtension();
  await fake.handlers.get("session_compact")!(
    { type: "session_compact", compactionEntry: lastCompaction(text), fromExtension: false },
    context(fake, "--format", dir),
  );
  await Promise.race([fake.recorded, new Promise((r) => setTimeout(r, 60_000))]);
  assert.deepEqual(
    fake.notes.map((n) => n.level),
    ["warning"],
    fake.notes.map((n) => n.text).join("\n"),
  );
  assert.equal((fake.entries[0]!.data as { kept: boolean }).kept, false);
});

/** Resolves once `done()` holds, checked every 20 ms (the test's own timeout bounds it). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 20));
}
