/** The commands one by one through the built binary: help, version, anchors, context, dry-run, restore, validate, errors. */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { exampleSession, projectMatrix, repoRoot } from "../support.js";
import { acquireLock, readJournalSync } from "../../src/journal/index.js";
import { FORMAT_NAMES } from "../../src/formats/registry.js";
import { matrixLikeMjs, oneLineError, run, tempDir } from "./helpers.js";

const small = exampleSession;
const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string };

async function imported(dir: string, name = "j.jsonl"): Promise<string> {
  const j = join(dir, name);
  const r = await run(["import", small, "--out", j]);
  assert.equal(r.code, 0, r.stderr);
  return j;
}

test("--version prints the package version; --help of the program and of every command exits 0", async () => {
  const v = await run(["--version"]);
  assert.equal(v.code, 0);
  assert.equal(v.stdout.trim(), pkg.version);
  const top = await run(["--help"]);
  assert.equal(top.code, 0);
  for (const c of ["validate", "import", "export", "compact", "context", "anchor", "restore", "report"])
    assert.match(top.stdout, new RegExp(`\\b${c}\\b`));
  for (const args of [
    ["validate"],
    ["import"],
    ["export"],
    ["compact"],
    ["context"],
    ["anchor"],
    ["anchor", "show"],
    ["anchor", "set"],
    ["anchor", "clear"],
    ["restore"],
    ["report"],
  ]) {
    const h = await run([...args, "--help"]);
    assert.equal(h.code, 0, `${args.join(" ")} --help: ${h.stderr}`);
    assert.match(h.stdout, /^Usage: compact-safe /, args.join(" "));
  }
  const compactHelp = (await run(["compact", "--help"])).stdout;
  for (const opt of [
    "--format",
    "--out",
    "--in-place",
    "--summarizer",
    "--model",
    "--base-url",
    "--window",
    "--threshold",
    "--target",
    "--workspace",
    "--background",
    "--focus",
    "--prune-only",
    "--dry-run",
    "--json",
  ]) {
    assert.ok(compactHelp.includes(opt), `compact --help lacks ${opt}`);
  }
});

test("usage errors exit 2 with one line: unknown command, unknown option, missing argument, bad number", async () => {
  for (const args of [
    ["bogus"],
    ["context"],
    ["compact", small, "--nope"],
    ["compact", small, "--target", "abc"],
    ["export", small],
    ["validate", "only-one.json"],
  ]) {
    const r = await run(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    oneLineError(r.stderr);
  }
});

test("missing file and unknown format: exit 2, one line naming the file; --debug adds the stack", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const missing = join(dir, "nope.jsonl");
    for (const cmd of [
      ["import", missing, "--out", join(dir, "j")],
      ["export", missing, "--to", "openai"],
      ["compact", missing, "--out", join(dir, "j")],
      ["context", missing],
    ]) {
      const r = await run(cmd);
      assert.equal(r.code, 2, cmd.join(" "));
      assert.match(oneLineError(r.stderr), new RegExp(`${missing}: no such file`));
    }
    const junk = join(dir, "junk.txt");
    writeFileSync(junk, "hello, I am not a session\n");
    const r = await run(["import", junk, "--out", join(dir, "j")]);
    assert.equal(r.code, 2);
    assert.ok(
      oneLineError(r.stderr).includes(`not a known session format (tried: ${FORMAT_NAMES.join(", ")})`),
      r.stderr,
    );
    const forced = await run(["import", small, "--format", "word-doc", "--out", join(dir, "j")]);
    assert.equal(forced.code, 2);
    assert.match(oneLineError(forced.stderr), /unknown format "word-doc"/);
    const dbg = await run(["--debug", "context", missing]);
    assert.equal(dbg.code, 2);
    assert.match(dbg.stderr, /^compact-safe: .*no such file\n/);
    assert.match(dbg.stderr, /\n\s+at /, "--debug prints a stack");
  } finally {
    cleanup();
  }
});

test("validate --matrix: same output and exit code as the dependency-free .mjs validator", async () => {
  await matrixLikeMjs([projectMatrix]);
});

test("validate --matrix: a disagreeing case exits 1; a broken matrix exits 2 naming the file and JSON path", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const m = JSON.parse(readFileSync(projectMatrix, "utf8")) as { cases: { id: string; expect: string }[] };
    m.cases[0]!.expect = m.cases[0]!.expect === "pass" ? "fail" : "pass";
    const flipped = join(dir, "flipped.json");
    writeFileSync(flipped, JSON.stringify(m));
    const r = await run(["validate", "--matrix", flipped]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, new RegExp(`^DISAGREE ${flipped} ${m.cases[0]!.id}: expected `));
    assert.match(r.stdout, new RegExp(`ok ${m.cases.length - 1} survival-contract fixtures\\n$`));

    const broken = join(dir, "broken.json");
    const bad = JSON.parse(readFileSync(projectMatrix, "utf8")) as {
      cases: { original: { content: unknown[] }[] }[];
    };
    bad.cases[2]!.original[0]!.content = [{ type: "tool_use", name: "x", input: {} }];
    writeFileSync(broken, JSON.stringify(bad));
    const b = await run(["validate", "--matrix", broken]);
    assert.equal(b.code, 2);
    assert.match(
      oneLineError(b.stderr),
      new RegExp(`${broken}: cases\\[2\\]\\.original\\[0\\]\\.content\\[0\\].*"id"`),
    );
    writeFileSync(broken, "{ not json");
    const nj = await run(["validate", "--matrix", broken]);
    assert.equal(nj.code, 2);
    assert.match(oneLineError(nj.stderr), new RegExp(`${broken}: not JSON`));
  } finally {
    cleanup();
  }
});

test("validate ORIGINAL REPLACEMENT: exit 0 valid, 1 violation with the reason on one line, --json", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const original = [
      { role: "user", content: [{ type: "text", text: "old request" }] },
      { role: "assistant", content: [{ type: "text", text: "old answer" }] },
      { role: "user", content: [{ type: "text", text: "fix the failing test" }] },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "t1", name: "bash", input: { cmd: "npm test" } }],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "1 failing" }] },
    ];
    const checkpoint = {
      role: "user",
      content: [
        {
          type: "text",
          text: "[compact-safe checkpoint]\nThe user asked for an old request; it was answered.\n\n## Coverage\nsummary; last round kept: 0 messages (0 tool results, 0 assistant); anchors 0 chars\n\n## Anchors\nRULE-42",
        },
      ],
    };
    const good = [checkpoint, ...original.slice(2)];
    const dropped = [checkpoint, original[2], original[3]];
    const o = join(dir, "o.json");
    const g = join(dir, "g.json");
    const d = join(dir, "d.json");
    writeFileSync(o, JSON.stringify(original));
    writeFileSync(g, JSON.stringify({ messages: good }));
    writeFileSync(d, JSON.stringify(dropped));
    const ok = await run(["validate", o, g, "--json"]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(JSON.parse(ok.stdout), { valid: true, reason: null });
    const bad = await run(["validate", o, d]);
    assert.equal(bad.code, 1);
    assert.match(oneLineError(bad.stderr), /^compact-safe: contract violation: .*t1/);
    const badJson = await run(["validate", o, d, "--json"]);
    assert.equal(badJson.code, 1);
    const v = JSON.parse(badJson.stdout) as { valid: boolean; reason: string };
    assert.equal(v.valid, false);
    assert.match(v.reason, /t1/);
    assert.equal((await run(["validate", o, g, "--anchors", "RULE-42"])).code, 0);
    assert.equal((await run(["validate", o, g, "--anchors", "RULE-43"])).code, 1);
    const af = join(dir, "anchors.md");
    writeFileSync(af, "RULE-42\n");
    assert.equal((await run(["validate", o, g, "--anchors-file", af])).code, 0);
    const pruneOnly = await run(["validate", o, g, "--path", "prune-only"]);
    assert.equal(pruneOnly.code, 1, "prune-only must not write a new checkpoint");
    const notJson = join(dir, "n.json");
    writeFileSync(notJson, "[");
    const nj = await run(["validate", notJson, g]);
    assert.equal(nj.code, 2);
    assert.match(oneLineError(nj.stderr), new RegExp(`${notJson}:1: truncated JSON`));
    writeFileSync(
      notJson,
      JSON.stringify([{ role: "user", content: [{ type: "tool_result", content: "x" }] }]),
    );
    const malformed = await run(["validate", notJson, g]);
    assert.equal(malformed.code, 2);
    assert.match(oneLineError(malformed.stderr), /\[0\]\.content\[0\]/);
  } finally {
    cleanup();
  }
});

test("import: report with counts per kind and skipped lines; refuses to overwrite without --force; --json", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const j = join(dir, "j.jsonl");
    const r = await run(["import", small, "--out", j]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /218 lines, 163 imported, 55 skipped by design, 0 broken/);
    assert.match(r.stdout, /entries by kind:[\s\S]*assistant\s+39/);
    assert.match(r.stdout, /by design: progress event .*lines 2, 3, 4/);
    const again = await run(["import", small, "--out", j]);
    assert.equal(again.code, 2);
    assert.match(oneLineError(again.stderr), /already exists \(use --force/);
    const forced = await run(["import", small, "--out", j, "--force", "--json"]);
    assert.equal(forced.code, 0, forced.stderr);
    const rep = JSON.parse(forced.stdout) as {
      journal: string;
      report: { total: number; imported: number; skipped: unknown[] };
    };
    assert.equal(rep.journal, j);
    assert.equal(rep.report.imported + rep.report.skipped.length, rep.report.total);
    assert.ok(
      readdirSync(dir).some((f) => f.startsWith("j.jsonl.bak-")),
      "the replaced journal was backed up",
    );
    // A broken line (two JSON values on one line) is reported with its number and the rest imports.
    const lines = readFileSync(small, "utf8").split("\n");
    lines[4] = '{"type":"user"}{"type":"assistant"}';
    const brokenSrc = join(dir, "broken.jsonl");
    writeFileSync(brokenSrc, lines.join("\n"));
    const broken = await run(["import", brokenSrc, "--out", join(dir, "b.jsonl")]);
    assert.equal(broken.code, 0, broken.stderr);
    assert.match(broken.stdout, /1 broken/);
    assert.match(
      broken.stdout,
      /line 5: .*two JSON values concatenated/,
      "the broken line is reported with its number",
    );
  } finally {
    cleanup();
  }
});

test("export: anthropic, openai and journal bodies of the live context; a non-journal input works too", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const j = await imported(dir);
    const a = await run(["export", j, "--to", "anthropic"]);
    assert.equal(a.code, 0, a.stderr);
    const body = JSON.parse(a.stdout) as { messages: { role: string }[] };
    assert.equal(body.messages[0]!.role, "user");
    const o = await run(["export", small, "--to", "openai", "--out", join(dir, "o.json")]);
    assert.equal(o.code, 0, o.stderr);
    assert.ok(
      Array.isArray(
        (JSON.parse(readFileSync(join(dir, "o.json"), "utf8")) as { messages: unknown[] }).messages,
      ),
    );
    const jl = await run(["export", j, "--to", "journal", "--out", join(dir, "live.jsonl")]);
    assert.equal(jl.code, 0, jl.stderr);
    const back = readJournalSync(join(dir, "live.jsonl"));
    assert.deepEqual(back.report.problems, [], "the exported journal reads back cleanly");
    assert.equal(back.entries[0]!.kind, "header");
    const bad = await run(["export", j, "--to", "gemini"]);
    assert.equal(bad.code, 2, bad.stderr);
  } finally {
    cleanup();
  }
});

test("anchors: set, show, legacy file, symlink refused, clear; compaction restates them and context sees it", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const ws = join(dir, "ws");
    mkdirSync(ws);
    const none = await run(["anchor", "show", "--workspace", ws]);
    assert.equal(none.code, 0);
    assert.equal(none.stdout, "");
    mkdirSync(join(ws, ".deepseek"));
    writeFileSync(join(ws, ".deepseek", "anchors.md"), "legacy: keep the API stable\n");
    assert.equal((await run(["anchor", "show", "--workspace", ws])).stdout, "legacy: keep the API stable\n");
    const set = await run(["anchor", "set", "Never force-push to main.", "--workspace", ws]);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(readFileSync(join(ws, ".codewhale", "anchors.md"), "utf8"), "Never force-push to main.\n");
    const shown = await run(["anchor", "show", "--workspace", ws, "--json"]);
    assert.deepEqual(JSON.parse(shown.stdout), {
      file: join(ws, ".codewhale", "anchors.md"),
      text: "Never force-push to main.\n",
    });

    const j = await imported(dir);
    const cmp = await run(["compact", j, "--target", "5000", "--workspace", ws, "--json"]);
    assert.equal(cmp.code, 0, cmp.stderr);
    assert.equal(
      (JSON.parse(cmp.stdout) as { coverage: { anchors_chars: number } }).coverage.anchors_chars,
      "Never force-push to main.".length,
    );
    const ctx = JSON.parse((await run(["context", j, "--workspace", ws, "--json"])).stdout) as {
      anchors: Record<string, unknown>;
    };
    assert.deepEqual(ctx.anchors, {
      pinned: true,
      file: join(ws, ".codewhale", "anchors.md"),
      chars: 25,
      restated: true,
      error: null,
    });
    const human = await run(["context", j, "--workspace", ws]);
    assert.match(human.stdout, /anchors\s+25 chars pinned .*restated verbatim in the checkpoint/);
    await run(["anchor", "set", "A different rule.", "--workspace", ws]);
    const ctx2 = JSON.parse((await run(["context", j, "--workspace", ws, "--json"])).stdout) as {
      anchors: { restated: boolean };
    };
    assert.equal(ctx2.anchors.restated, false, "changed anchors are not in the old checkpoint");

    const cleared = await run(["anchor", "clear", "--workspace", ws]);
    assert.equal(cleared.code, 0);
    assert.equal(existsSync(join(ws, ".codewhale", "anchors.md")), false);
    assert.equal(existsSync(join(ws, ".deepseek", "anchors.md")), false);

    const target = join(dir, "outside.md");
    writeFileSync(target, "not yours");
    symlinkSync(target, join(ws, ".codewhale", "anchors.md"));
    for (const args of [
      ["anchor", "show"],
      ["anchor", "set", "x"],
    ]) {
      const r = await run([...args, "--workspace", ws]);
      assert.equal(r.code, 2, args.join(" "));
      assert.match(oneLineError(r.stderr), /anchors\.md: is a symbolic link/);
    }
    const c = await run(["compact", j, "--target", "5000", "--workspace", ws, "--dry-run"]);
    assert.equal(c.code, 2, "compact refuses to read anchors through a symlink");
    assert.equal(readFileSync(target, "utf8"), "not yours");
  } finally {
    cleanup();
  }
});

test("compact --dry-run writes nothing (journal and non-journal); --in-place on a session file is a usage error", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const j = await imported(dir);
    const before = readFileSync(j);
    const filesBefore = readdirSync(dir).sort();
    const d = await run(["compact", j, "--dry-run", "--target", "5000", "--json", "--workspace", dir]);
    assert.equal(d.code, 0, d.stderr);
    const receipt = JSON.parse(d.stdout) as {
      journal: unknown;
      checkpoint_id: unknown;
      path: string;
      tokens_after: number;
      tokens_before: number;
    };
    assert.equal(receipt.journal, null);
    assert.equal(receipt.checkpoint_id, null);
    assert.ok(receipt.tokens_after < receipt.tokens_before);
    const human = await run(["compact", j, "--dry-run", "--target", "5000", "--workspace", dir]);
    assert.match(human.stdout, /^dry run: compacted/);
    assert.match(human.stdout, /nothing written/);
    const d2 = await run(["compact", small, "--dry-run", "--target", "5000", "--workspace", dir]);
    assert.equal(d2.code, 0, d2.stderr);
    assert.deepEqual(readFileSync(j), before);
    assert.deepEqual(readdirSync(dir).sort(), filesBefore);

    const inPlace = await run(["compact", small, "--in-place"]);
    assert.equal(inPlace.code, 2);
    assert.match(oneLineError(inPlace.stderr), /use --out JOURNAL/);
    const noOut = await run(["compact", small]);
    assert.equal(noOut.code, 2);
    assert.match(oneLineError(noOut.stderr), /use --out JOURNAL/);
  } finally {
    cleanup();
  }
});

test("compact a session file to --out: a new journal with one compaction entry; the source is untouched", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const srcBefore = statSync(small).mtimeMs;
    const bgFile = join(dir, "bg.json");
    writeFileSync(
      bgFile,
      JSON.stringify([{ id: "job-7", kind: "shell", command: "npm run watch", status: "running" }]),
    );
    const out = join(dir, "out.jsonl");
    const r = await run([
      "compact",
      small,
      "--out",
      out,
      "--target",
      "5000",
      "--background",
      bgFile,
      "--workspace",
      dir,
      "--json",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const receipt = JSON.parse(r.stdout) as { checkpoint_id: string; journal: string };
    assert.equal(receipt.journal, out);
    const { entries, report } = readJournalSync(out);
    assert.deepEqual(report.problems, []);
    const comps = entries.filter((e) => e.kind === "compaction");
    assert.equal(comps.length, 1);
    const c = comps[0]!;
    assert.equal(c.id, receipt.checkpoint_id);
    assert.equal(c.parent_id, entries[entries.length - 2]!.id, "parented on the previous leaf");
    assert.deepEqual(Object.keys(c.payload).sort(), [
      "coverage",
      "model",
      "path",
      "replacement",
      "summary",
      "tokens_after",
      "tokens_before",
      "trigger",
    ]);
    assert.equal(c.payload.trigger, "manual");
    const text = JSON.stringify(c.payload.replacement);
    assert.ok(
      text.includes("job-7") && text.includes("npm run watch"),
      "background handles restated in the checkpoint",
    );
    assert.equal(statSync(small).mtimeMs, srcBefore);
    const badBg = join(dir, "badbg.json");
    writeFileSync(badBg, JSON.stringify([{ id: "a", kind: "x" }, { kind: "y" }]));
    const e = await run(["compact", small, "--out", join(dir, "x.jsonl"), "--background", badBg]);
    assert.equal(e.code, 2);
    assert.match(oneLineError(e.stderr), new RegExp(`${badBg}: \\[1\\]: missing "id"`));
  } finally {
    cleanup();
  }
});

test("context before and after compaction, and restore (append-only) brings the full history back", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const j = await imported(dir);
    type View = {
      messages: number;
      estimated_tokens: number;
      last_compaction: { id: string } | null;
      checkpoints: number;
      billed_parent_prompt_tokens: number | null;
      in_flight_calls: unknown[];
    };
    const v0 = JSON.parse((await run(["context", j, "--json", "--workspace", dir])).stdout) as View;
    assert.equal(v0.last_compaction, null);
    assert.equal(v0.checkpoints, 0);
    assert.ok(
      v0.billed_parent_prompt_tokens !== null && v0.billed_parent_prompt_tokens > 0,
      "Claude Code records billed usage",
    );
    assert.deepEqual(v0.in_flight_calls, []);
    const h0 = await run(["context", j, "--window", "100000", "--workspace", dir]);
    assert.match(h0.stdout, /estimated tokens\s+[\d,]+ of 100,000/);
    assert.match(h0.stdout, /last compaction\s+none on the active path/);

    const noComp = await run(["restore", j]);
    assert.equal(noComp.code, 2);
    assert.match(oneLineError(noComp.stderr), /no compaction on the active path/);

    const cmp = JSON.parse(
      (await run(["compact", j, "--target", "5000", "--json", "--workspace", dir])).stdout,
    ) as { checkpoint_id: string };
    const bytesAfterCompact = readFileSync(j);
    const v1 = JSON.parse((await run(["context", j, "--json", "--workspace", dir])).stdout) as View;
    assert.equal(v1.last_compaction?.id, cmp.checkpoint_id);
    assert.equal(v1.checkpoints, 1);
    assert.ok(v1.messages < v0.messages);
    const h1 = await run(["context", j, "--workspace", dir]);
    assert.match(h1.stdout, /last compaction\s+summary, manual/);
    assert.match(h1.stdout, /coverage\s+summary; last round kept: \d+ messages/);
    assert.match(h1.stdout, /checkpoints\s+1 \(\[compact-safe checkpoint\]\)/);

    const unknown = await run(["restore", j, "--before", "no-such-id"]);
    assert.equal(unknown.code, 2);
    const r = await run(["restore", j, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout) as { compaction_id: string; messages: number };
    assert.equal(res.compaction_id, cmp.checkpoint_id);
    assert.equal(res.messages, v0.messages);
    const after = readFileSync(j);
    assert.deepEqual(after.subarray(0, bytesAfterCompact.length), bytesAfterCompact, "restore only appends");
    const v2 = JSON.parse((await run(["context", j, "--json", "--workspace", dir])).stdout) as View;
    assert.equal(v2.last_compaction, null);
    assert.equal(v2.messages, v0.messages);
    assert.equal(v2.estimated_tokens, v0.estimated_tokens);
    const { entries } = readJournalSync(j);
    assert.equal(
      entries.filter((e) => e.kind === "compaction").length,
      1,
      "the compaction is still in the journal",
    );

    // Compacting again after the restore branches from the restored leaf, and --before names a compaction explicitly.
    const again = JSON.parse(
      (await run(["compact", j, "--target", "5000", "--json", "--workspace", dir])).stdout,
    ) as { checkpoint_id: string };
    const r2 = await run(["restore", j, "--before", again.checkpoint_id]);
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal((JSON.parse((await run(["context", j, "--json"])).stdout) as View).messages, v0.messages);
  } finally {
    cleanup();
  }
});

test("a locked journal: compact and restore exit 4 at once, and write nothing", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const j = await imported(dir);
    const before = readFileSync(j);
    const lock = await acquireLock(j);
    try {
      const r = await run(["compact", j, "--target", "5000", "--workspace", dir]);
      assert.equal(r.code, 4, r.stderr);
      assert.match(oneLineError(r.stderr), /journal is locked by pid \d+/);
      const rs = await run(["restore", j]);
      assert.equal(rs.code, 4);
    } finally {
      await lock.release();
    }
    assert.deepEqual(readFileSync(j), before);
    assert.equal(
      (await run(["compact", j, "--target", "5000", "--workspace", dir])).code,
      0,
      "works once the lock is released",
    );
  } finally {
    cleanup();
  }
});

test("NO_COLOR and pipes: no escape codes in the output", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const j = await imported(dir);
    const r = await run(["context", j], { env: { NO_COLOR: "1" } });
    assert.equal(r.code, 0);
    assert.ok(!r.stdout.includes("\u001b["), "no ANSI escapes when NO_COLOR is set");
    const r2 = await run(["context", j], { env: { NO_COLOR: undefined } });
    assert.ok(!r2.stdout.includes("\u001b["), "no ANSI escapes when stdout is not a TTY");
    assert.equal(r2.stderr, "", "no progress bar when stderr is not a TTY");
  } finally {
    cleanup();
  }
});

test("compact --if-needed: under --threshold of --window nothing is written; over it, it compacts", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const j = await imported(dir);
    const before = readFileSync(j);
    const under = await run([
      "compact",
      j,
      "--if-needed",
      "--window",
      "1000000",
      "--threshold",
      "80",
      "--workspace",
      dir,
      "--json",
    ]);
    assert.equal(under.code, 0, under.stderr);
    assert.equal((JSON.parse(under.stdout) as { compacted: boolean }).compacted, false);
    assert.deepEqual(readFileSync(j), before);
    const over = await run([
      "compact",
      j,
      "--if-needed",
      "--window",
      "20000",
      "--threshold",
      "50",
      "--workspace",
      dir,
      "--json",
    ]);
    assert.equal(over.code, 0, over.stderr);
    const receipt = JSON.parse(over.stdout) as { target: number; checkpoint_id: string };
    assert.equal(receipt.target, 10000, "default target: half the window");
    assert.equal(readJournalSync(j).entries.at(-1)!.id, receipt.checkpoint_id);
    const bad = await run(["compact", j, "--threshold", "120"]);
    assert.equal(bad.code, 2);
    assert.match(oneLineError(bad.stderr), /--threshold: expected a percentage/);
  } finally {
    cleanup();
  }
});

test("compact on a history that cannot shrink: exit 0, 'nothing to compact' with the reason, path none, nothing written", async () => {
  const { dir, cleanup } = tempDir();
  try {
    // One request and one exchange: the whole history is the protected round.
    const history = [
      { role: "user", content: "Run the tests." },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "bash", arguments: '{"cmd":"npm test"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "all 12 passed" },
      { role: "assistant", content: "All 12 tests pass." },
    ];
    const src = join(dir, "h.json");
    writeFileSync(src, JSON.stringify(history));
    const j = join(dir, "j.jsonl");
    assert.equal((await run(["import", src, "--out", j])).code, 0);
    const before = readFileSync(j);
    const human = await run(["compact", j, "--workspace", dir]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(
      human.stdout,
      /^nothing to compact: the whole history \(\d+ tokens\) is the protected last round/,
    );
    const json = await run(["compact", j, "--json", "--workspace", dir]);
    assert.equal(json.code, 0, json.stderr);
    const receipt = JSON.parse(json.stdout) as { path: string; compacted: boolean; reason: string };
    assert.equal(receipt.path, "none");
    assert.equal(receipt.compacted, false);
    assert.match(receipt.reason, /protected last round/);
    assert.deepEqual(readFileSync(j), before);
    const out = join(dir, "new.jsonl");
    const viaOut = await run(["compact", src, "--out", out, "--workspace", dir]);
    assert.equal(viaOut.code, 0, viaOut.stderr);
    assert.equal(existsSync(out), false, "no journal written when nothing was compacted");
  } finally {
    cleanup();
  }
});

test("compact --summary-tokens bounds the note; a bad value is a usage error", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const j = await imported(dir);
    const sizes: number[] = [];
    for (const n of [400, 1500]) {
      const r = await run([
        "compact",
        j,
        "--dry-run",
        "--json",
        "--target",
        "100",
        "--summary-tokens",
        String(n),
        "--workspace",
        dir,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const receipt = JSON.parse(r.stdout) as {
        summary_budget: number;
        target_missed: string | null;
        target_reached: boolean;
      };
      assert.equal(receipt.summary_budget, n);
      assert.equal(receipt.target_reached, false);
      assert.match(receipt.target_missed ?? "", /tokens/);
      const human = await run([
        "compact",
        j,
        "--dry-run",
        "--target",
        "100",
        "--summary-tokens",
        String(n),
        "--workspace",
        dir,
      ]);
      assert.match(
        human.stdout,
        new RegExp(`note: ${n.toLocaleString("en-US")}-token budget, ([\\d,]+) characters`),
      );
      sizes.push(Number(/token budget, ([\d,]+) characters/.exec(human.stdout)![1].replace(/,/g, "")));
      assert.match(human.stdout, /target not reached: /);
    }
    assert.ok(sizes[0] <= 400 * 4 && sizes[0] < sizes[1], `note sizes ${sizes.join(", ")}`);
    const bad = await run(["compact", j, "--dry-run", "--summary-tokens", "zero"]);
    assert.equal(bad.code, 2);
    assert.match(oneLineError(bad.stderr), /--summary-tokens/);
  } finally {
    cleanup();
  }
});
