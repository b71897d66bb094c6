/**
 * The message types the library's adapters convert, read by the command line
 * too: an AI SDK `ModelMessage[]` file and LangChain messages as
 * `JSON.stringify` writes them, each detected and under `--format`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { aiSdkHistory } from "../ai-sdk-history.js";
import { run, tempDir } from "./helpers.js";

test("an AI SDK ModelMessage[] file: imported as ai-sdk (detected and with --format ai-sdk)", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, "chat.json");
    const history = await aiSdkHistory();
    writeFileSync(file, JSON.stringify(history, null, 2));
    for (const extra of [[], ["--format", "ai-sdk"]]) {
      const out = join(dir, `j${extra.length}.jsonl`);
      const r = await run(["import", file, "--out", out, "--json", ...extra]);
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as { report?: { format: string; imported: number } };
      const rep = (report.report ?? report) as { format: string; imported: number };
      assert.equal(rep.format, "ai-sdk");
      assert.equal(rep.imported, history.length);
    }
    const ctx = await run(["context", file]);
    assert.equal(ctx.code, 0, ctx.stderr);
    assert.match(ctx.stdout, /live messages\s+6/);
  } finally {
    cleanup();
  }
});

test("an AI SDK file with a broken tool result: one line naming the file, the message and the format", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, "chat.json");
    const history = (await aiSdkHistory()) as unknown as { content: { toolCallId?: string }[] }[];
    history[2]!.content[0]!.toolCallId = "";
    writeFileSync(file, JSON.stringify(history));
    const r = await run(["context", file]);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr.trim(),
      `compact-safe: ${file}: message 3: looks like an AI SDK message but content[0] (tool-result): "toolCallId" must be a non-empty string`,
    );
  } finally {
    cleanup();
  }
});

test("LangChain messages as JSON.stringify writes them: imported as langchain (detected and with --format langchain)", async () => {
  const { HumanMessage, AIMessage, ToolMessage } = await import("@langchain/core/messages");
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, "lc.json");
    writeFileSync(
      file,
      JSON.stringify([
        new HumanMessage("read a"),
        new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "read", args: { p: "a" } }] }),
        new ToolMessage({ content: "A", tool_call_id: "c1" }),
        new AIMessage("done"),
      ]),
    );
    for (const extra of [[], ["--format", "langchain"]]) {
      const out = join(dir, `j${extra.length}.jsonl`);
      const r = await run(["import", file, "--out", out, "--json", ...extra]);
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as { report?: { format: string; imported: number } };
      const rep = (report.report ?? report) as { format: string; imported: number };
      assert.equal(rep.format, "langchain");
      assert.equal(rep.imported, 4);
    }
  } finally {
    cleanup();
  }
});

test("a JSON array of pi agent messages: read as pi-messages, its tool result kept (was: read as openai, skipped)", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, "agent.json");
    writeFileSync(
      file,
      JSON.stringify([
        { role: "user", content: [{ type: "text", text: "read a" }], timestamp: 1 },
        {
          role: "assistant",
          content: [{ type: "toolCall", id: "c1", name: "read", arguments: { p: "a" } }],
          stopReason: "toolUse",
          timestamp: 2,
        },
        {
          role: "toolResult",
          toolCallId: "c1",
          toolName: "read",
          content: [{ type: "text", text: "A" }],
          timestamp: 3,
        },
        { role: "assistant", content: [{ type: "text", text: "done" }], stopReason: "stop", timestamp: 4 },
      ]),
    );
    const r = await run(["context", file]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\(pi-messages\)/);
    assert.match(r.stdout, /live messages\s+4/);
    assert.doesNotMatch(r.stdout + r.stderr, /skipped/);
  } finally {
    cleanup();
  }
});

test("validate reads Responses bodies as `export --to responses` writes them (was: exit 2)", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const session = join(dir, "chat.json");
    writeFileSync(session, JSON.stringify(await aiSdkHistory()));
    const body = join(dir, "body.json");
    const e = await run(["export", session, "--to", "responses", "--out", body]);
    assert.equal(e.code, 0, e.stderr);
    assert.ok(Array.isArray((JSON.parse(readFileSync(body, "utf8")) as { input?: unknown }).input));
    const same = await run(["validate", body, body, "--path", "prune-only"]);
    assert.equal(same.code, 0, same.stderr);
    assert.match(same.stdout, /^valid: /);
    // Read as messages: a body without the checkpoint the summary path writes is a violation, not an input error.
    const summary = await run(["validate", body, body]);
    assert.equal(summary.code, 1, summary.stderr);
    assert.match(summary.stderr, /contract violation: missing checkpoint/);
  } finally {
    cleanup();
  }
});

test("an empty file and a truncated JSON document are named for what they are (was: not a known session format)", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const empty = join(dir, "empty.json");
    writeFileSync(empty, "");
    const blank = join(dir, "blank.jsonl");
    writeFileSync(blank, "\n\n  \n");
    const cut = join(dir, "cut.json");
    const whole = JSON.stringify(await aiSdkHistory(), null, 2);
    writeFileSync(cut, whole.slice(0, Math.floor(whole.length / 2)));
    const cutLine = whole
      .slice(0, Math.floor(whole.length / 2))
      .trimEnd()
      .split("\n").length;
    const other = join(dir, "other.json");
    writeFileSync(other, whole);
    for (const args of [["context"], ["import", "--out", join(dir, "j.jsonl")], ["validate", other]]) {
      const [cmd, ...rest] = args;
      for (const [file, want] of [
        [empty, `${empty}: empty file`],
        [blank, `${blank}: empty file`],
        [cut, `${cut}:${cutLine}: truncated JSON (`],
      ] as const) {
        const r = await run(cmd === "validate" ? [cmd, file, ...rest] : [cmd!, file, ...rest]);
        assert.equal(r.code, 2, `${args.join(" ")} ${file}: ${r.stderr}`);
        assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
        assert.ok(r.stderr.startsWith(`compact-safe: ${want}`), `${args.join(" ")}: ${r.stderr}`);
        assert.doesNotMatch(r.stderr, /not a known session format/);
      }
    }
  } finally {
    cleanup();
  }
});
