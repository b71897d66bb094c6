/**
 * The pi hook recipe (examples/hooks/pi-session-compact.js), called as pi
 * 0.73.1 calls an extension: its default export gets the extension API and
 * registers a `session_compact` handler, which pi awaits with the event
 * (`compactionEntry`, `fromExtension`) and a context (`sessionManager`,
 * `cwd`, `hasUI`, `ui`). The audit runs in the built CLI.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { cliPath, repoRoot } from "../support.js";
import { piSessionText } from "../pi-session.js";
import { tempDir } from "./helpers.js";

const extensionFile = join(repoRoot, "examples", "hooks", "pi-session-compact.js");

type Handler = (event: unknown, ctx: unknown) => Promise<void> | void;

interface FakePi {
  handlers: Map<string, Handler>;
  entries: { customType: string; data: unknown }[];
  messages: { message: { customType: string; content: string; display: boolean }; options: unknown }[];
  notes: { text: string; level: string }[];
  /** Resolves when the extension has recorded its verdict. */
  recorded: Promise<void>;
}

/** The part of pi's extension API the recipe uses, recording what it is asked to do. */
async function loadExtension(options: { stale?: boolean } = {}): Promise<FakePi> {
  let done!: () => void;
  const fake: FakePi = {
    handlers: new Map(),
    entries: [],
    messages: [],
    notes: [],
    recorded: new Promise<void>((r) => (done = r)),
  };
  const api = {
    on: (event: string, handler: Handler) => fake.handlers.set(event, handler),
    appendEntry: (customType: string, data: unknown) => {
      // pi 0.73.1 throws this once the session the extension ran in is gone (print mode has exited).
      if (options.stale) {
        done();
        throw new Error("This extension ctx is stale after session replacement or reload.");
      }
      fake.entries.push({ customType, data });
      done();
    },
    sendMessage: (message: FakePi["messages"][number]["message"], options: unknown) =>
      fake.messages.push({ message, options }),
  };
  const mod = (await import(pathToFileURL(extensionFile).href)) as { default: (pi: unknown) => void };
  mod.default(api);
  return fake;
}

function context(fake: FakePi, sessionFile: string | undefined, cwd: string) {
  return {
    cwd,
    hasUI: true,
    sessionManager: { getSessionFile: () => sessionFile },
    ui: { notify: (text: string, level: string) => fake.notes.push({ text, level }) },
  };
}

/** The id of the last compaction entry in a pi session's text. */
function lastCompaction(text: string): Record<string, unknown> {
  const lines = text
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return lines.filter((l) => l.type === "compaction").at(-1)!;
}

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

test("pi session_compact hook: on a 5 MB session it holds pi up less than a second; errors are reported, never thrown", async (t) => {
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
  const started = performance.now();
  await handler(
    { type: "session_compact", compactionEntry: lastCompaction(text), fromExtension: false },
    context(fake, file, dir),
  );
  const held = performance.now() - started;
  assert.ok(held < 1000, `the handler held pi up ${Math.round(held)} ms`);
  await fake.recorded;
  const audited = performance.now() - started;
  t.diagnostic(
    `5 MB session: handler returned after ${Math.round(held)} ms, verdict after ${Math.round(audited)} ms`,
  );
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
  await new Promise((r) => setTimeout(r, 1500));
  assert.deepEqual(broken.entries, []);
  assert.deepEqual(
    broken.notes.map((n) => n.level),
    ["error", "error"],
  );
  assert.match(broken.notes[0]!.text, /^compact-safe: audit failed: .*nope\.jsonl/);
  assert.match(broken.notes[1]!.text, /^compact-safe: audit failed: .*ENOENT/);
});
