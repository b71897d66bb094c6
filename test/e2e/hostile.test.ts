/** Hostile input through the built binary: deep nesting, malformed blocks, hostile anchors. Clear errors, never a crash. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exampleSession } from "../support.js";
import { run, tempDir } from "./helpers.js";

const small = exampleSession;
const deep = (levels: number) => "[".repeat(levels) + "1" + "]".repeat(levels);
const base = { sessionId: "s1", cwd: "/x", version: "1.0.98", isSidechain: false, userType: "external" };
let clock = 0;
const line = (o: Record<string, unknown>) =>
  JSON.stringify({ ...base, timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, clock++)).toISOString(), ...o });

/** A Claude Code session of four exchanges; `second` is the JSON of the second line (an assistant message). */
function session(second: string): string {
  return [
    line({ type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "start" } }),
    second,
    line({ type: "user", uuid: "u3", parentUuid: "u2", message: { role: "user", content: "more" } }),
    line({
      type: "assistant",
      uuid: "u4",
      parentUuid: "u3",
      message: { role: "assistant", content: [{ type: "text", text: "y ".repeat(10_000) }] },
    }),
    line({ type: "user", uuid: "u5", parentUuid: "u4", message: { role: "user", content: "last" } }),
    "",
  ].join("\n");
}
const assistantWith = (content: string) =>
  line({
    type: "assistant",
    uuid: "u2",
    parentUuid: "u1",
    message: { role: "assistant", content: "@" },
  }).replace('"@"', content);

function noCrash(r: { stderr: string; code: number | null }): void {
  assert.doesNotMatch(r.stderr, /Maximum call stack|RangeError|TypeError|Cannot read properties|\n\s+at /);
  assert.ok(r.code !== null && r.code >= 0 && r.code <= 4, `exit ${r.code}`);
}

test("deep nesting: a session line over the limit is a broken line (import, compact --out, export, context); a JSON file over it exits 2 naming file and line", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const f = join(dir, "deep.jsonl");
    writeFileSync(
      f,
      session(
        assistantWith(JSON.stringify([{ type: "tool_use", id: "t1", name: "X", input: { a: 0 } }])).replace(
          '{"a":0}',
          deep(20_000),
        ),
      ),
    );
    const warn = new RegExp(
      `${f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:2: JSON nested deeper than 512 levels \\(the limit\\)`,
    );
    const imp = await run(["import", f, "--out", join(dir, "j.jsonl")]);
    noCrash(imp);
    assert.equal(imp.code, 0, imp.stderr);
    assert.match(imp.stdout, /line 2: JSON nested deeper than 512 levels \(the limit\)/);
    const cmp = await run(["compact", f, "--out", join(dir, "c.jsonl"), "--target", "1000"]);
    noCrash(cmp);
    assert.equal(cmp.code, 0, cmp.stderr);
    assert.match(cmp.stderr, warn);
    const exp = await run(["export", f, "--to", "anthropic"]);
    noCrash(exp);
    assert.equal(exp.code, 0, exp.stderr);
    assert.match(exp.stderr, warn);
    const seen = await run(["context", f]);
    noCrash(seen);
    assert.equal(seen.code, 0, seen.stderr);
    assert.match(seen.stdout, warn);
    // The journal reader: a deep line in a journal is a broken line with its number, the rest is read.
    const j = join(dir, "j.jsonl");
    const lines = readFileSync(j, "utf8").split("\n");
    lines.splice(2, 0, lines[1]!.replace(/"text":"[^"]*"/, `"text":${deep(600)}`));
    writeFileSync(j, lines.join("\n"));
    const ctx = await run(["context", j]);
    noCrash(ctx);
    assert.equal(ctx.code, 0, ctx.stderr);
    assert.match(ctx.stdout, /j\.jsonl:3: broken JSON: nested deeper than 512 levels/);

    // One JSON document: nothing to skip, an input error naming the file and line.
    const body = join(dir, "body.json");
    writeFileSync(
      body,
      JSON.stringify(
        { messages: [{ role: "user", content: [{ type: "text", text: "@" }] }] },
        null,
        1,
      ).replace('"@"', deep(20_000)),
    );
    for (const args of [
      ["import", body, "--out", join(dir, "b.jsonl")],
      ["validate", body, body],
    ]) {
      const r = await run(args);
      noCrash(r);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr, `compact-safe: ${body}:8: JSON nested deeper than 512 levels (the limit)\n`);
    }
  } finally {
    cleanup();
  }
});

test("a text block without text: compact --out, export, context and validate give the path-naming error import gives (exit 2)", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const f = join(dir, "notext.jsonl");
    writeFileSync(f, session(assistantWith(JSON.stringify([{ type: "text" }]))));
    const expected = `compact-safe: ${f}:2: content[0] (text): missing "text"\n`;
    for (const args of [
      ["import", f, "--out", join(dir, "j.jsonl")],
      ["compact", f, "--out", join(dir, "c.jsonl"), "--target", "1000"],
      ["compact", f, "--dry-run"],
      ["export", f, "--to", "openai"],
      ["context", f],
    ]) {
      const r = await run(args);
      noCrash(r);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(r.stderr, expected, args.join(" "));
    }
    const m = join(dir, "m.json");
    writeFileSync(
      m,
      JSON.stringify([
        { role: "user", content: [{ type: "text", text: "hi" }] },
        { role: "assistant", content: [{ type: "text" }] },
      ]),
    );
    const v = await run(["validate", m, m]);
    assert.equal(v.code, 2);
    assert.equal(v.stderr, `compact-safe: ${m}: (root)[1].content[0] (text): missing "text"\n`);
  } finally {
    cleanup();
  }
});

test("hostile anchors: shown escaped, restated escaped in the checkpoint (and validated so); over 64 KiB exit 2", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const ws = join(dir, "ws");
    mkdirSync(join(ws, ".codewhale"), { recursive: true });
    const file = join(ws, ".codewhale", "anchors.md");
    writeFileSync(file, "Rule: \x1b[2J\x1b]0;pwned\x07 keep tests green\x9b31m\n");
    const escaped = "Rule: \\x1b[2J\\x1b]0;pwned\\x07 keep tests green\\x9b31m\n";
    const show = await run(["anchor", "show", "--workspace", ws]);
    assert.equal(show.code, 0);
    assert.equal(show.stdout, escaped);
    assert.match(show.stderr, /4 control characters shown escaped/);

    const j = join(dir, "j.jsonl");
    assert.equal((await run(["import", small, "--out", j])).code, 0);
    const cmp = await run(["compact", j, "--target", "5000", "--workspace", ws, "--json"]);
    assert.equal(cmp.code, 0, cmp.stderr);
    const written = readFileSync(j, "utf8");
    assert.doesNotMatch(
      written,
      // eslint-disable-next-line no-control-regex
      /\x1b|\\u001b|\x07|\\u0007|\x9b|\\u009b/,
      "no raw control character in the journal",
    );
    assert.ok(
      written.includes(JSON.stringify(escaped.trim()).slice(1, -1)),
      "the checkpoint restates the escaped text",
    );
    const ctx = JSON.parse((await run(["context", j, "--workspace", ws, "--json"])).stdout) as {
      anchors: { restated: boolean };
    };
    assert.equal(ctx.anchors.restated, true);
    // validate --anchors-file compares the same (escaped) text the checkpoint restates.
    const before = join(dir, "before.json");
    const after = join(dir, "after.json");
    assert.equal((await run(["export", small, "--to", "anthropic", "--out", before])).code, 0);
    assert.equal((await run(["export", j, "--to", "anthropic", "--out", after])).code, 0);
    const v = await run(["validate", before, after, "--anchors-file", file]);
    assert.equal(v.code, 0, v.stderr);

    writeFileSync(file, "a".repeat(70_000));
    for (const args of [
      ["anchor", "show", "--workspace", ws],
      ["compact", j, "--target", "5000", "--workspace", ws],
    ]) {
      const r = await run(args);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(
        r.stderr,
        `compact-safe: ${file}: is larger than the 64 KiB limit for anchors (70000 bytes); shorten it\n`,
      );
    }
  } finally {
    cleanup();
  }
});
