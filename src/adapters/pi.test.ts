/**
 * The pi extension in a real pi 0.73.1 agent session (pi's SDK, pi's own
 * extension loading, pi-ai's faux model; test/pi-sdk.ts): compaction through
 * `session.compact()` commits compact-safe's checkpoint with a cut that keeps
 * the protected round; the committed compaction passes the audit (library and
 * CLI); a failing summarizer commits nothing; pi's own compaction is audited.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnSync } from "node:child_process";
import { piTestSession, runRounds, pi as piSdk } from "../../test/pi-sdk.js";
import { cliPath } from "../../test/support.js";
import type { Summarizer } from "../summarizers/types.js";
import { SummarizerError } from "../summarizers/types.js";
import { CHECKPOINT_MARKER } from "../contract/markers.js";
import { importPi } from "../formats/import/pi.js";
import { auditEntries } from "../route/audit.js";
import compactSafe, {
  PI_AUDIT_ENTRY,
  PI_REFUSAL_ENTRY,
  compactSafeExtension,
  fromPiMessages,
  piLiveContext,
  toPiMessages,
} from "./pi.js";

type Line = Record<string, unknown> & { type: string; id?: string };
const lines = (file: string): Line[] =>
  readFileSync(file, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);
const messageEntries = (ls: Line[]) =>
  ls.filter((l) => l.type === "message") as (Line & { message: Record<string, unknown> })[];
const texts = (m: Record<string, unknown>): string[] =>
  Array.isArray(m.content)
    ? (m.content as { type: string; text?: string }[]).filter((b) => b.type === "text").map((b) => b.text!)
    : typeof m.content === "string"
      ? [m.content]
      : [];

function notesCollector() {
  const notes: { text: string; level: string }[] = [];
  return { notes, notify: (text: string, level: string) => notes.push({ text, level }) };
}

test("pi extension: session.compact() commits compact-safe's checkpoint and a cut that keeps the protected round; the audit says the contract holds", async (t) => {
  const { notes, notify } = notesCollector();
  const s = await piTestSession({
    // keepRecentTokens 0: the protected round only (the recent tail before it: the next test).
    extensions: [compactSafeExtension({ notify, keepRecentTokens: 0 })],
    files: { "notes.txt": "a line of notes\n".repeat(300) },
  });
  t.after(s.cleanup);
  await runRounds(s, 1, 5);
  const before = s.session.messages.slice();
  const result = await s.session.compact();

  const ls = lines(s.sessionFile);
  const compaction = ls.find((l) => l.type === "compaction")!;
  assert.ok(compaction, "a compaction entry is written");
  assert.equal(compaction.fromHook, true, "the compaction came from the extension");
  assert.equal(compaction.summary, result.summary);
  assert.ok(
    (compaction.summary as string).startsWith(`${CHECKPOINT_MARKER}\n`),
    "the summary is compact-safe's checkpoint",
  );
  assert.match(
    compaction.summary as string,
    /\n## Coverage\nsummary; last round kept: 9 messages \(4 tool results, 4 assistant\)/,
  );
  // The cut: the older of the two latest exchanges (round 4's calls), so round 5 (the current round) is whole.
  const kept = messageEntries(ls).find((l) => l.id === compaction.firstKeptEntryId)!;
  assert.equal(kept.message.role, "assistant");
  assert.deepEqual(
    (kept.message.content as { type: string; id?: string }[])
      .filter((b) => b.type === "toolCall")
      .map((b) => b.id),
    ["call_r4a", "call_r4b"],
  );
  assert.ok((compaction.details as { compactSafe?: unknown }).compactSafe);

  // pi's context now: the summary, then the protected round verbatim.
  const after = s.session.messages;
  assert.equal(after[0]!.role, "compactionSummary");
  assert.deepEqual(after.slice(1), before.slice(before.length - (after.length - 1)));
  const userTexts = after.flatMap((m) => (m.role === "user" ? texts(m as never) : []));
  assert.deepEqual(userTexts, ["Round 5: read notes.txt and echo 5."]);
  const results = after
    .filter((m) => m.role === "toolResult")
    .map((m) => (m as { toolCallId: string }).toolCallId);
  assert.deepEqual(results, ["call_r4a", "call_r4b", "call_r5a", "call_r5b"]);

  // The audit: in the session (the extension's entry), by the library, and by the CLI.
  const audit = ls.find((l) => l.type === "custom" && l.customType === PI_AUDIT_ENTRY)!;
  assert.deepEqual(
    {
      compaction: (audit.data as { compaction: string }).compaction,
      kept: (audit.data as { kept: boolean }).kept,
    },
    { compaction: compaction.id, kept: true },
  );
  assert.deepEqual(
    notes.map((n) => n.level),
    ["info"],
  );
  assert.match(notes[0]!.text, /kept the survival contract \(25 → 10 messages\)/);
  const { entries } = importPi(readFileSync(s.sessionFile, "utf8"), s.sessionFile);
  const lib = auditEntries(entries);
  assert.equal(lib.compactions.length, 1);
  assert.equal(lib.compactions[0]!.kept, true, lib.compactions[0]!.reason ?? "");
  const cli = spawnSync(process.execPath, [cliPath, "audit", s.sessionFile, "--json"], { encoding: "utf8" });
  assert.equal(cli.status, 0, cli.stderr);
  assert.equal((JSON.parse(cli.stdout) as { kept: number }).kept, 1);

  // pi's messages go through compact-safe's messages and back unchanged.
  assert.deepEqual(toPiMessages(fromPiMessages(before)), before);
  assert.deepEqual(toPiMessages(fromPiMessages(after)), after);
});

test("pi extension: pi's keepRecentTokens keeps the newest messages before the protected round too; the contract holds", async (t) => {
  // Each read of notes.txt is about 1,500 tokens: a budget of 5,000 keeps the round and a few messages before it.
  const s = await piTestSession({
    extensions: [compactSafeExtension({ notify: () => {} })],
    files: { "notes.txt": "a line of notes\n".repeat(300) },
    compaction: { keepRecentTokens: 5_000 },
  });
  t.after(s.cleanup);
  await runRounds(s, 1, 5);
  const before = s.session.messages.slice();
  await s.session.compact();
  const ls = lines(s.sessionFile);
  const compaction = ls.find((l) => l.type === "compaction")!;
  // The coverage counts the protected round as before; the tail before it is plain verbatim context.
  assert.match(
    compaction.summary as string,
    /\n## Coverage\nsummary; last round kept: 9 messages \(4 tool results, 4 assistant\)/,
  );
  const after = s.session.messages;
  assert.equal(after[0]!.role, "compactionSummary");
  const kept = after.slice(1);
  assert.deepEqual(
    kept,
    before.slice(before.length - kept.length),
    "a suffix of pi's messages, as they were",
  );
  assert.ok(kept.length > 9, `more than the protected round is kept (${kept.length} messages)`);
  assert.ok(kept.length < before.length - 1, "something older is summarized");
  // pi's cut never splits a call from its result: every kept result has its call kept.
  const callIds = new Set(
    kept.flatMap((m) =>
      m.role === "assistant"
        ? (m.content as { type: string; id?: string }[]).filter((b) => b.type === "toolCall").map((b) => b.id)
        : [],
    ),
  );
  for (const m of kept)
    if (m.role === "toolResult") assert.ok(callIds.has((m as { toolCallId: string }).toolCallId));
  const { entries } = importPi(readFileSync(s.sessionFile, "utf8"), s.sessionFile);
  const [audit] = auditEntries(entries).compactions;
  assert.equal(audit!.kept, true, audit!.reason ?? "");

  // The extension's own option overrides pi's setting: 0 keeps the protected round only.
  const s0 = await piTestSession({
    extensions: [compactSafeExtension({ notify: () => {}, keepRecentTokens: 0 })],
    files: { "notes.txt": "a line of notes\n".repeat(300) },
    compaction: { keepRecentTokens: 5_000 },
  });
  t.after(s0.cleanup);
  await runRounds(s0, 1, 5);
  await s0.session.compact();
  assert.equal(s0.session.messages.length - 1, 9, "the protected round only");
});

test("pi extension: a second compaction folds the first checkpoint in (one checkpoint), and the live context matches pi's own", async (t) => {
  const { notify } = notesCollector();
  const s = await piTestSession({
    extensions: [compactSafeExtension({ notify })],
    files: { "notes.txt": "a line of notes\n".repeat(300) },
  });
  t.after(s.cleanup);
  await runRounds(s, 1, 4);
  await s.session.compact();
  await runRounds(s, 5, 3);
  const sm = s.session.sessionManager;
  // The extension's projection of the branch is pi's own (buildSessionContext).
  assert.deepEqual(
    piLiveContext(sm.getBranch()).map((m) => m.message),
    piSdk.buildSessionContext(sm.getEntries(), sm.getLeafId()).messages,
  );
  await s.session.compact();
  const after = s.session.messages;
  assert.equal(after.filter((m) => m.role === "compactionSummary").length, 1);
  const summary = (after[0] as { summary: string }).summary;
  assert.ok(summary.startsWith(`${CHECKPOINT_MARKER}\n`));
  assert.equal(summary.split(CHECKPOINT_MARKER).length, 2, "the first checkpoint is folded in, not stacked");
  const { entries } = importPi(readFileSync(s.sessionFile, "utf8"), s.sessionFile);
  const audits = auditEntries(entries).compactions;
  assert.deepEqual(
    audits.map((a) => a.kept),
    [true, true],
    audits.map((a) => a.reason).join("; "),
  );
  const cli = spawnSync(process.execPath, [cliPath, "audit", s.sessionFile], { encoding: "utf8" });
  assert.equal(cli.status, 0, cli.stdout + cli.stderr);
});

test("pi extension: the anchors pinned in pi's cwd are restated in the summary", async (t) => {
  const { notify } = notesCollector();
  const s = await piTestSession({
    extensions: [compactSafeExtension({ notify })],
    files: { "notes.txt": "notes\n".repeat(300), ".codewhale/anchors.md": "Never push to main.\n" },
  });
  t.after(s.cleanup);
  await runRounds(s, 1, 4);
  const r = await s.session.compact("the release steps");
  assert.match(r.summary, /## Anchors\nNever push to main\./);
  assert.match(
    r.summary,
    /## Objective\nFocus: the release/,
    "/compact's instructions are the summary's focus",
  );
  assert.match(r.summary, /anchors 19 chars/);
});

const failing: Summarizer = {
  name: "failing",
  model: "failing-1",
  summarize: async () => {
    throw new SummarizerError("deterministic", "401 invalid api key");
  },
};
const placeholder: Summarizer = {
  name: "placeholder",
  model: "placeholder-1",
  summarize: async () => ({ text: "(no summary available)", model: "placeholder-1" }),
};

for (const [name, summarizer] of [
  ["a failing summarizer", failing],
  ["a summarizer that only writes a placeholder", placeholder],
] as const) {
  test(`pi extension: ${name} commits nothing: the compaction is cancelled, with a notice and a record`, async (t) => {
    const { notes, notify } = notesCollector();
    const s = await piTestSession({
      extensions: [compactSafeExtension({ summarizer, notify })],
      files: { "notes.txt": "notes\n".repeat(300) },
    });
    t.after(s.cleanup);
    await runRounds(s, 1, 4);
    const before = s.session.messages.slice();
    await assert.rejects(s.session.compact(), /Compaction cancelled/);
    const ls = lines(s.sessionFile);
    assert.equal(ls.filter((l) => l.type === "compaction").length, 0, "no compaction entry");
    assert.deepEqual(s.session.messages, before, "pi's context is untouched");
    const record = ls.find((l) => l.type === "custom" && l.customType === PI_REFUSAL_ENTRY)!;
    const data = record.data as { kind: string; then: string; reason: string };
    assert.equal(data.then, "cancelled");
    assert.equal(data.kind, summarizer === failing ? "summarizer_failed" : "unusable_summary");
    assert.equal(notes.length, 1);
    assert.equal(notes[0]!.level, "warning");
    assert.match(notes[0]!.text, /^compact-safe: compaction cancelled, nothing committed: /);
    assert.ok(!ls.some((l) => JSON.stringify(l).includes("(no summary available)\\n")));
  });
}

test("pi extension: onFailure 'pi' lets pi's own compaction go ahead, and audits it (here it loses the protected round)", async (t) => {
  const { notes, notify } = notesCollector();
  const s = await piTestSession({
    extensions: [compactSafeExtension({ summarizer: failing, onFailure: "pi", notify })],
    files: { "notes.txt": "notes\n".repeat(300) },
    // pi keeps about 200 tokens: less than the last two exchanges.
    compaction: { keepRecentTokens: 200 },
  });
  t.after(s.cleanup);
  await runRounds(s, 1, 4);
  // pi's own summary, written by the (faux) model: the history, and the prefix of the turn it splits.
  const goal = piSdkAi.fauxAssistantMessage("## Goal\nRead the notes and echo, round by round.");
  s.faux.appendResponses([goal, goal]);
  const r = await s.session.compact();
  assert.match(r.summary, /^## Goal/);
  const ls = lines(s.sessionFile);
  const compaction = ls.find((l) => l.type === "compaction")!;
  assert.equal(compaction.fromHook, false);
  const refused = ls.find((l) => l.type === "custom" && l.customType === PI_REFUSAL_ENTRY)!;
  assert.equal((refused.data as { then: string }).then, "pi");
  const audit = ls.find((l) => l.type === "custom" && l.customType === PI_AUDIT_ENTRY)!;
  assert.equal((audit.data as { kept: boolean }).kept, false);
  assert.deepEqual(
    notes.map((n) => n.level),
    ["warning", "warning"],
  );
  assert.match(notes[1]!.text, /^compact-safe: pi's compaction \S+ did not keep the survival contract: /);
});

test("pi extension: the default export, in a project's .pi/extensions file that pi discovers and loads itself, compacts with the defaults", async (t) => {
  // An extension file as a user writes it: it re-exports the adapter's default.
  const adapter = fileURLToPath(new URL("./pi.js", import.meta.url));
  const s = await piTestSession({
    files: {
      "notes.txt": "notes\n".repeat(300),
      ".pi/extensions/compact-safe.ts": `export { default } from ${JSON.stringify(adapter)};\n`,
    },
  });
  t.after(s.cleanup);
  await runRounds(s, 1, 4);
  const r = await s.session.compact();
  assert.ok(r.summary.startsWith(`${CHECKPOINT_MARKER}\n`));
  const ls = lines(s.sessionFile);
  assert.equal(ls.find((l) => l.type === "compaction")!.fromHook, true);
  assert.equal(
    (ls.find((l) => l.type === "custom" && l.customType === PI_AUDIT_ENTRY)!.data as { kept: boolean }).kept,
    true,
  );
  assert.equal(typeof compactSafe, "function");
});

test("pi extension: a history that is all protected round is not compacted: cancelled, with an info notice", async (t) => {
  const { notes, notify } = notesCollector();
  const s = await piTestSession({ extensions: [compactSafeExtension({ notify })] });
  t.after(s.cleanup);
  await runRounds(s, 1, 1);
  await assert.rejects(s.session.compact(), /Compaction cancelled/);
  const ls = lines(s.sessionFile);
  assert.equal(ls.filter((l) => l.type === "compaction").length, 0);
  assert.equal(
    ls.filter((l) => l.type === "custom").length,
    0,
    "an honest outcome, not recorded as a failure",
  );
  assert.deepEqual(
    notes.map((n) => n.level),
    ["info"],
  );
  assert.match(notes[0]!.text, /nothing to compact/);
});

test("pi extension: a branch summary on the path is kept apart from the summary (the cut moves back to it), and the audit agrees", async (t) => {
  const { notify } = notesCollector();
  const s = await piTestSession({
    extensions: [compactSafeExtension({ notify })],
    files: { "notes.txt": "notes\n".repeat(300) },
  });
  t.after(s.cleanup);
  await runRounds(s, 1, 3);
  // Back to round 2's request, summarizing the abandoned round 2 and 3 (pi's summary, by the faux model).
  const round2 = messageEntries(lines(s.sessionFile)).find((l) =>
    texts(l.message)[0]?.startsWith("Round 2:"),
  )!;
  s.faux.appendResponses([piSdkAi.fauxAssistantMessage("Rounds 2 and 3 were tried and abandoned.")]);
  const nav = await s.session.navigateTree(round2.parentId as string, { summarize: true });
  assert.equal(nav.cancelled, false);
  await runRounds(s, 4, 4);
  await s.session.compact();
  const ls = lines(s.sessionFile);
  const compaction = ls.find((l) => l.type === "compaction")!;
  const summaryEntry = ls.find((l) => l.type === "branch_summary")!;
  assert.equal(compaction.firstKeptEntryId, summaryEntry.id);
  assert.ok(s.session.messages.some((m) => m.role === "branchSummary"));
  const { entries } = importPi(readFileSync(s.sessionFile, "utf8"), s.sessionFile);
  const [audit] = auditEntries(entries).compactions;
  assert.equal(audit!.kept, true, audit!.reason ?? "");
});

test("pi extension: pi's automatic compaction (context over its threshold) goes through the extension too", async (t) => {
  const { notes, notify } = notesCollector();
  const s = await piTestSession({
    extensions: [compactSafeExtension({ notify })],
    files: { "notes.txt": "a line of notes\n".repeat(150) },
    contextWindow: 4000,
    compaction: { enabled: true, reserveTokens: 1500, keepRecentTokens: 500 },
  });
  t.after(s.cleanup);
  const ends: { aborted: boolean; reason: string; errorMessage?: string }[] = [];
  s.session.subscribe((e) => {
    if (e.type === "compaction_end") ends.push(e as never);
  });
  await runRounds(s, 1, 6, true);
  const ls = lines(s.sessionFile);
  const compactions = ls.filter((l) => l.type === "compaction");
  assert.ok(compactions.length >= 1, `pi compacted by itself (${JSON.stringify(ends)})`);
  // Early on, the whole history is the protected round: those compactions are cancelled, with a notice.
  assert.ok(
    ends.every((e) => e.reason === "threshold" && !e.errorMessage),
    JSON.stringify(ends),
  );
  assert.equal(ends.filter((e) => !e.aborted).length, compactions.length);
  assert.equal(
    ends.filter((e) => e.aborted).length,
    notes.filter((n) => /nothing to compact/.test(n.text)).length,
  );
  for (const c of compactions) {
    assert.equal(c.fromHook, true);
    assert.ok((c.summary as string).startsWith(`${CHECKPOINT_MARKER}\n`));
  }
  assert.ok(
    notes.every((n) => n.level === "info"),
    JSON.stringify(notes),
  );
  const cli = spawnSync(process.execPath, [cliPath, "audit", s.sessionFile], { encoding: "utf8" });
  assert.equal(cli.status, 0, cli.stdout + cli.stderr);
});

test("pi extension: a long single-request task keeps the request as the user wrote it: the cut falls at it", async (t) => {
  const { notes, notify } = notesCollector();
  const s = await piTestSession({
    // keepRecentTokens 0: the cut is the protected round's, moved back to the request (a tail would hold it too).
    extensions: [compactSafeExtension({ notify, keepRecentTokens: 0 })],
    files: { "notes.txt": "a line of notes\n".repeat(300) },
  });
  t.after(s.cleanup);
  await runRounds(s, 1, 3);
  // One request, then four turns of calls before the answer: the request is before the two latest exchanges.
  const { fauxAssistantMessage, fauxToolCall } = piSdkAi;
  s.faux.appendResponses([
    ...[1, 2, 3, 4].map((n) =>
      fauxAssistantMessage([fauxToolCall("read", { path: "notes.txt" }, { id: `call_big${n}` })], {
        stopReason: "toolUse",
      }),
    ),
    fauxAssistantMessage("The big task is done."),
  ]);
  await s.session.prompt("Big task: read notes.txt four times, carefully.");
  const r = await s.session.compact();
  const ls = lines(s.sessionFile);
  const request = messageEntries(ls).find((l) => texts(l.message)[0]?.startsWith("Big task:"))!;
  assert.equal(r.firstKeptEntryId, request.id);
  assert.deepEqual(
    notes.map((n) => n.level),
    ["info"],
  );
  const { entries } = importPi(readFileSync(s.sessionFile, "utf8"), s.sessionFile);
  const [audit] = auditEntries(entries).compactions;
  assert.equal(audit!.kept, true, audit!.reason ?? "");
});

test("pi extension: an error in the extension (anchors that are a symbolic link) is reported and cancels; nothing is thrown into pi", async (t) => {
  const { notes, notify } = notesCollector();
  const s = await piTestSession({
    extensions: [compactSafeExtension({ notify })],
    files: { "notes.txt": "notes\n".repeat(300), "elsewhere.md": "Not the anchors.\n" },
  });
  t.after(s.cleanup);
  mkdirSync(join(s.cwd, ".codewhale"));
  symlinkSync(join(s.cwd, "elsewhere.md"), join(s.cwd, ".codewhale", "anchors.md"));
  await runRounds(s, 1, 3);
  await assert.rejects(s.session.compact(), /Compaction cancelled/);
  assert.equal(notes.length, 1);
  assert.equal(notes[0]!.level, "warning");
  assert.match(notes[0]!.text, /^compact-safe: compaction cancelled, nothing committed: .*anchors\.md/);
  assert.ok(!notes[0]!.text.includes("\n"));
  const ls = lines(s.sessionFile);
  assert.equal(ls.filter((l) => l.type === "compaction").length, 0);
  assert.equal((ls.find((l) => l.customType === PI_REFUSAL_ENTRY)!.data as { kind: string }).kind, "error");
});

const piSdkAi = await import("@mariozechner/pi-ai");
