/**
 * `compact --fork` (write-back for Claude Code): a NEW session file beside the
 * original, the original untouched, the resume command printed; its context,
 * read back, keeps what must survive of the original's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, copyFileSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exampleSession } from "../support.js";
import { run, tempDir, assertForkKeepsContract, forkOf } from "./helpers.js";
import { openaiReply, startFakeProvider } from "../fake-provider.js";

test("compact --fork writes a new Claude Code session beside the original and prints how to resume it", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const orig = join(dir, "orig.jsonl");
  copyFileSync(exampleSession, orig);
  const bytes = readFileSync(orig);
  const receipt = await forkOf(orig, dir);
  assert.equal(receipt.fork.path, join(dir, `${receipt.fork.session_id}.jsonl`));
  assert.equal(receipt.fork.resume, `claude --resume ${receipt.fork.session_id}`);
  assert.deepEqual(readFileSync(orig), bytes, "the original is never modified");
  assert.deepEqual(readdirSync(dir).sort(), [`${receipt.fork.session_id}.jsonl`, "orig.jsonl"].sort());
  // Every line of the fork carries its new session id; the first two are the boundary and the summary.
  const lines = readFileSync(receipt.fork.path, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.ok(lines.every((l) => l.sessionId === receipt.fork.session_id));
  assert.equal(lines[0]!.subtype, "compact_boundary");
  assert.equal(lines[1]!.isCompactSummary, true);
  for (let i = 2; i < lines.length; i++) assert.equal(lines[i]!.parentUuid, lines[i - 1]!.uuid);
  // Read back as the agent's session, its context keeps what must survive of the original's.
  await assertForkKeepsContract(dir, orig, receipt.fork.path, receipt.path);
});

test("compact --fork: another agent's session, a journal and an existing --out are clear errors that write nothing", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const orig = join(dir, "orig.jsonl");
  copyFileSync(exampleSession, orig);
  const j = join(dir, "j.jsonl");
  assert.equal((await run(["import", orig, "--out", j])).code, 0);
  const journal = await run(["compact", j, "--fork"]);
  assert.equal(journal.code, 2);
  assert.match(journal.stderr, /--fork writes an agent's own session/);
  const codex = join(dir, "rollout.json");
  writeFileSync(
    codex,
    JSON.stringify([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]),
  );
  const other = await run(["compact", codex, "--fork"]);
  assert.equal(other.code, 2);
  assert.match(other.stderr, /--fork writes agent sessions \(claude-code.*\); this file is openai,/);
  writeFileSync(join(dir, "taken.jsonl"), "x");
  const taken = await run(["compact", orig, "--fork", "--out", join(dir, "taken.jsonl"), "--workspace", dir]);
  assert.equal(taken.code, 2);
  assert.match(taken.stderr, /taken\.jsonl: already exists/);
  assert.equal(readFileSync(join(dir, "taken.jsonl"), "utf8"), "x");
});

test("a session forced to another agent's --format is a clear error that names the format it looks like, and writes nothing", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const orig = join(dir, "orig.jsonl");
  copyFileSync(exampleSession, orig);
  const bytes = readFileSync(orig);
  for (const format of ["codex", "pi", "openai", "anthropic", "journal"]) {
    for (const args of [
      ["compact", orig, "--fork", "--format", format, "--workspace", dir],
      ["compact", orig, "--out", join(dir, "j.jsonl"), "--format", format, "--workspace", dir],
      ["import", orig, "--out", join(dir, "j.jsonl"), "--format", format],
    ]) {
      const r = await run(args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(
        r.stderr,
        /it looks like a claude-code session \(give --format claude-code, or leave the format to be detected\)/,
        args.join(" "),
      );
      assert.equal(r.stderr.trim().split("\n").length, 1, "one line");
    }
  }
  assert.deepEqual(readFileSync(orig), bytes);
  assert.deepEqual(readdirSync(dir), ["orig.jsonl"], "nothing written");
});

/** The example session's lines, without the empty string after the final newline. */
function exampleLines(): string[] {
  return readFileSync(exampleSession, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
}

test("compact --fork refuses a session whose last line is cut off (the agent still writing it): one line naming it, nothing written", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const lines = exampleLines();
  const cut = join(dir, "cut.jsonl");
  writeFileSync(cut, lines.join("\n") + "\n" + lines.at(-1)!.slice(0, 200));
  const bytes = readFileSync(cut);
  const r = await run(["compact", cut, "--fork", "--workspace", dir]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(
      `cut\\.jsonl:${lines.length + 1}: truncated last line .*a fork would lose that line, so nothing was written`,
    ),
  );
  assert.equal(r.stderr.trim().split("\n").length, 1);
  assert.deepEqual(readFileSync(cut), bytes);
  assert.deepEqual(readdirSync(dir), ["cut.jsonl"]);
});

test("compact --fork keeps a last tool call still in flight: the fork ends with that call, unanswered, as the original does", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const lines = exampleLines();
  const calls = lines.map((l) => JSON.parse(l) as { type?: string; message?: { content?: unknown } });
  const last = calls.findLastIndex(
    (o) =>
      o.type === "assistant" &&
      Array.isArray(o.message?.content) &&
      (o.message.content as Array<{ type?: string }>).some((b) => b.type === "tool_use"),
  );
  const file = join(dir, "inflight.jsonl");
  writeFileSync(file, lines.slice(0, last + 1).join("\n") + "\n");
  const r = await run(["compact", file, "--fork", "--json", "--target", "2000", "--workspace", dir]);
  assert.equal(r.code, 0, r.stderr);
  const receipt = JSON.parse(r.stdout) as { fork: { path: string } };
  const forkLast = JSON.parse(readFileSync(receipt.fork.path, "utf8").trim().split("\n").at(-1)!) as {
    message: { content: Array<{ type: string; id?: string }> };
  };
  const original = calls[last]!.message!.content as Array<{ type: string; id?: string }>;
  assert.deepEqual(
    forkLast.message.content.filter((b) => b.type === "tool_use").map((b) => b.id),
    original.filter((b) => b.type === "tool_use").map((b) => b.id),
  );
});

test("compact --fork refuses when the session grows while it is compacted (the agent appending): nothing written, the original as the agent left it", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const orig = join(dir, "orig.jsonl");
  copyFileSync(exampleSession, orig);
  const appended = JSON.stringify({
    type: "queue-operation",
    operation: "enqueue",
    timestamp: "2026-12-01T00:00:00Z",
  });
  // The summarizer's request arrives while compact-safe is at work: the agent appends a line then.
  const provider = await startFakeProvider(() => {
    appendFileSync(orig, appended + "\n");
    return openaiReply.text("## Objective\nFix the git status breakage.\n\n## Next step\nDocument it.");
  });
  t.after(() => provider.close());
  const before = readFileSync(orig, "utf8");
  const r = await run(
    [
      "compact",
      orig,
      "--fork",
      "--summarizer",
      "openai",
      "--model",
      "fake",
      "--base-url",
      provider.openaiBaseURL,
      "--target",
      "2000",
      "--workspace",
      dir,
    ],
    { env: { OPENAI_API_KEY: "sk-test" } },
  );
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /orig\.jsonl: the session changed while it was compacted \(is the agent still writing it\?\); nothing written/,
  );
  assert.ok(provider.requestCount >= 1);
  assert.equal(readFileSync(orig, "utf8"), before + appended + "\n", "only the agent's line was added");
  assert.deepEqual(readdirSync(dir), ["orig.jsonl"]);
});

/** A small Codex rollout in the shape Codex 0.5x writes: four rounds of reasoning, a shell call, and a patch. */
function codexRollout(): string {
  const at = "2025-11-02T10:00:00.000Z";
  const line = (type: string, payload: unknown) => JSON.stringify({ timestamp: at, type, payload });
  const meta = {
    id: "019a4000-0000-7000-8000-000000000001",
    timestamp: at,
    cwd: "/home/u/proj",
    originator: "codex_cli_rs",
    cli_version: "0.57.0",
    instructions: "Prefer small commits.",
    source: "cli",
    model_provider: "openai",
    git: { commit_hash: "0123abcd", branch: "main", repository_url: "git@example.com:u/proj.git" },
  };
  const out = [
    line("session_meta", meta),
    line("response_item", {
      type: "message",
      role: "user",
      content: [
        {
          type: "input_text",
          text: "<environment_context>\n  <cwd>/home/u/proj</cwd>\n</environment_context>",
        },
      ],
    }),
  ];
  for (let r = 1; r <= 4; r++) {
    out.push(
      line("turn_context", {
        cwd: "/home/u/proj",
        approval_policy: "on-request",
        model: "gpt-5-codex",
        summary: "auto",
      }),
    );
    out.push(
      line("event_msg", {
        type: "user_message",
        message: `step ${r}: read part ${r} and fix it`,
        images: [],
      }),
    );
    out.push(
      line("response_item", {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: `step ${r}: read part ${r} and fix it` }],
      }),
    );
    out.push(
      line("response_item", {
        type: "reasoning",
        summary: [{ type: "summary_text", text: `**Reading part ${r}**` }],
        content: null,
        encrypted_content: `gAAAAB${Buffer.from(`opaque reasoning ${r} `.repeat(20)).toString("base64")}`,
      }),
    );
    out.push(
      line("response_item", {
        type: "function_call",
        name: "shell",
        arguments: `{"command":["bash","-lc","cat src/part${r}.ts"],"workdir":"/home/u/proj"}`,
        call_id: `call_read_${r}`,
      }),
    );
    out.push(
      line("response_item", {
        type: "function_call_output",
        call_id: `call_read_${r}`,
        output: JSON.stringify({
          output: `export const part${r} = [\n${"  'a line of part',\n".repeat(400)}];\n`,
          metadata: { exit_code: 0, duration_seconds: 0.1 },
        }),
      }),
    );
    out.push(
      line("response_item", {
        type: "custom_tool_call",
        status: "completed",
        call_id: `call_patch_${r}`,
        name: "apply_patch",
        input: `*** Begin Patch\n*** Update File: src/part${r}.ts\n@@\n-  'a line of part',\n+  'a fixed line',\n*** End Patch`,
      }),
    );
    out.push(
      line("response_item", {
        type: "custom_tool_call_output",
        call_id: `call_patch_${r}`,
        output: JSON.stringify({
          output: `Success. Updated the following files:\nM src/part${r}.ts\n`,
          metadata: { exit_code: 0 },
        }),
      }),
    );
    out.push(
      line("response_item", {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: `Part ${r} is fixed.` }],
      }),
    );
    out.push(line("event_msg", { type: "token_count", info: null }));
  }
  return out.join("\n") + "\n";
}

test("compact --fork writes a new Codex rollout beside the original, resumed by `codex resume ID`", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const orig = join(dir, "rollout-2025-11-02T10-00-00-019a4000-0000-7000-8000-000000000001.jsonl");
  writeFileSync(orig, codexRollout());
  const bytes = readFileSync(orig);
  const r = await run(["compact", orig, "--fork", "--json", "--target", "1500", "--workspace", dir]);
  assert.equal(r.code, 0, r.stderr);
  const receipt = JSON.parse(r.stdout) as {
    path: string;
    fork: { path: string; session_id: string; resume: string };
  };
  assert.equal(receipt.path, "summary");
  const id = receipt.fork.session_id;
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(id, "019a4000-0000-7000-8000-000000000001");
  assert.match(
    receipt.fork.path,
    new RegExp(`^${dir}/rollout-\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d-${id}\\.jsonl$`),
  );
  assert.equal(receipt.fork.resume, `codex resume ${id}`);
  assert.deepEqual(readFileSync(orig), bytes, "the original is never modified");
  assert.equal(readdirSync(dir).length, 2);

  const lines = readFileSync(receipt.fork.path, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
  assert.deepEqual(
    lines.map((l) => `${l.type}${l.type === "event_msg" ? `:${String(l.payload.type)}` : ""}`),
    ["session_meta", "compacted", "event_msg:context_compacted", "event_msg:user_message"],
  );
  const meta = lines[0]!.payload;
  assert.equal(meta.id, id);
  const origMeta = (
    JSON.parse(bytes.toString("utf8").split("\n")[0]!) as { payload: Record<string, unknown> }
  ).payload;
  for (const k of ["cwd", "originator", "cli_version", "instructions", "source", "model_provider", "git"])
    assert.deepEqual(meta[k], origMeta[k], k);
  assert.equal(lines[3]!.payload.message, "step 4: read part 4 and fix it");
  // The checkpoint is the compaction's message and the first user item of its replacement history.
  const compacted = lines[1]!.payload as { message: string; replacement_history: Record<string, unknown>[] };
  assert.match(compacted.message, /^\[compact-safe checkpoint\]\n/);
  const items = compacted.replacement_history;
  assert.ok(
    items.some(
      (it) => it.role === "user" && JSON.stringify(it.content).includes("[compact-safe checkpoint]"),
    ),
  );
  // Every call is followed by its output of the matching type; reasoning and calls are the original's items.
  const origText = bytes.toString("utf8");
  items.forEach((it, i) => {
    if (it.type === "function_call" || it.type === "custom_tool_call") {
      const outType = `${String(it.type)}_output`;
      assert.ok(
        items.slice(i + 1).some((o) => o.type === outType && o.call_id === it.call_id),
        `${String(it.call_id)} has no ${outType}`,
      );
    }
    if (it.type === "reasoning" || it.type === "function_call" || it.type === "custom_tool_call")
      assert.ok(origText.includes(JSON.stringify(it)), `${String(it.type)} rewritten`);
  });
  assert.ok(items.some((it) => it.type === "reasoning"));
  // Read back through our Codex importer, its context keeps what must survive of the original's.
  await assertForkKeepsContract(dir, orig, receipt.fork.path, receipt.path);
});

test("compact --fork: a Codex rollout given --format claude-code is a clear error that writes nothing", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const orig = join(dir, "rollout.jsonl");
  writeFileSync(orig, codexRollout());
  const bytes = readFileSync(orig);
  for (const args of [["--fork"], ["--out", join(dir, "j.jsonl")]]) {
    const r = await run(["compact", orig, "--format", "claude-code", ...args, "--workspace", dir]);
    assert.equal(r.code, 2, r.stdout);
    assert.match(
      r.stderr,
      /rollout\.jsonl: none of its \d+ lines reads as claude-code; it looks like a codex session \(give --format codex/,
    );
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
  assert.deepEqual(readdirSync(dir), ["rollout.jsonl"]);
  assert.deepEqual(readFileSync(orig), bytes);
});

test("compact --fork on a session whose last line is broken but complete (two values on one line) warns, skips it as every command does, and writes the fork", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const lines = exampleLines();
  const file = join(dir, "broken.jsonl");
  writeFileSync(file, [...lines, '{"type":"queue-operation"}{"type":"queue-operation"}'].join("\n") + "\n");
  const r = await run(["compact", file, "--fork", "--json", "--workspace", dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(`broken\\.jsonl:${lines.length + 1}: two JSON values concatenated on one line`),
  );
  const receipt = JSON.parse(r.stdout) as { fork: { path: string } };
  assert.ok(readFileSync(receipt.fork.path, "utf8").length > 0);
});

test("a forced format that imports nothing of a file no format reads is an error naming the first unreadable message, not an empty journal", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  // Messages of an agent no importer reads: forcing the OpenAI one must not import them as empty.
  const file = join(dir, "other.json");
  writeFileSync(
    file,
    JSON.stringify({
      messages: [
        { kind: "human", text: "Rename the loader." },
        { kind: "bot", text: "Done." },
      ],
    }),
  );
  for (const args of [
    ["import", file, "--format", "openai", "--out", join(dir, "j.jsonl")],
    ["compact", file, "--format", "openai", "--out", join(dir, "j.jsonl"), "--workspace", dir],
  ]) {
    const r = await run(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stdout}`);
    assert.equal(
      r.stderr,
      `compact-safe: ${file}: none of its 2 messages reads as openai; message 1: messages[0]: not a message object with a "role"\n`,
    );
  }
  assert.deepEqual(readdirSync(dir), ["other.json"]);
});

test("a Gemini CLI session forced to another format names gemini-cli; forcing gemini-cli on another agent's file names that agent (exit 2, nothing written)", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const file = join(dir, "gemini.json");
  writeFileSync(
    file,
    JSON.stringify({
      sessionId: "s1",
      projectHash: "h",
      messages: [
        { type: "user", content: "Rename the loader." },
        { type: "gemini", content: "Done.", thoughts: [], toolCalls: [] },
      ],
    }),
  );
  const r = await run(["import", file, "--format", "openai", "--out", join(dir, "j.jsonl")]);
  assert.equal(r.code, 2, r.stdout);
  assert.equal(
    r.stderr,
    `compact-safe: ${file}: none of its 2 messages reads as openai; it looks like a gemini-cli session (give --format gemini-cli, or leave the format to be detected)\n`,
  );
  const detected = await run(["import", file, "--out", join(dir, "j.jsonl"), "--json"]);
  assert.equal(detected.code, 0, detected.stderr);
  assert.equal((JSON.parse(detected.stdout) as { report: { format: string } }).report.format, "gemini-cli");
  rmSync(join(dir, "j.jsonl"));
  // Another agent's session forced to gemini-cli: a Codex rollout (JSONL) and an opencode export (JSON).
  const rollout = join(dir, "rollout.jsonl");
  writeFileSync(
    rollout,
    [
      { type: "session_meta", payload: { id: "r1", timestamp: "2026-11-30T10:00:00Z" } },
      {
        type: "response_item",
        payload: { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
      },
    ]
      .map((o) => JSON.stringify(o))
      .join("\n") + "\n",
  );
  const oc = join(dir, "oc.json");
  writeFileSync(
    oc,
    JSON.stringify({
      info: { id: "ses_1" },
      messages: [{ info: { id: "m1", role: "user" }, parts: [{ type: "text", text: "hi" }] }],
    }),
  );
  for (const [f, other, n, unit] of [
    [rollout, "a codex", 2, "lines"],
    [oc, "an opencode", 1, "messages"],
  ] as const) {
    const w = await run([
      "compact",
      f,
      "--format",
      "gemini-cli",
      "--out",
      join(dir, "j.jsonl"),
      "--workspace",
      dir,
    ]);
    assert.equal(w.code, 2, w.stdout);
    assert.match(
      w.stderr,
      new RegExp(
        `^compact-safe: [^\\n]*: none of its ${n} ${unit} reads as gemini-cli; it looks like ${other} session \\(give --format ${other.split(" ")[1]}, or leave the format to be detected\\)\\n$`,
      ),
    );
  }
  assert.deepEqual(readdirSync(dir).sort(), ["gemini.json", "oc.json", "rollout.jsonl"]);
});

test("compact --out on a Gemini CLI session and an opencode export (detected) writes a journal whose compaction keeps the contract", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const big = (k: number) => `part ${k}: ` + "lorem ipsum dolor sit amet ".repeat(300);
  const gemini = {
    sessionId: "s1",
    projectHash: "h",
    startTime: "2026-11-30T10:00:00.000Z",
    messages: [1, 2, 3, 4, 5].flatMap((k) => [
      { id: `u${k}`, type: "user", content: `Read part ${k}.` },
      {
        id: `g${k}`,
        type: "gemini",
        content: `Reading part ${k}.`,
        toolCalls: [
          {
            id: `r${k}`,
            name: "read_file",
            args: { path: `p${k}` },
            status: "success",
            result: [{ functionResponse: { id: `r${k}`, name: "read_file", response: { output: big(k) } } }],
          },
        ],
      },
    ]),
  };
  const opencode = {
    info: { id: "ses_1" },
    messages: [1, 2, 3, 4, 5].flatMap((k) => [
      { info: { id: `mu${k}`, role: "user" }, parts: [{ type: "text", text: `Read part ${k}.` }] },
      {
        info: { id: `ma${k}`, role: "assistant" },
        parts: [
          { type: "step-start" },
          {
            type: "tool",
            callID: `r${k}`,
            tool: "read",
            state: { status: "completed", input: { filePath: `p${k}` }, output: big(k) },
          },
          { type: "text", text: `Part ${k} read.` },
        ],
      },
    ]),
  };
  for (const [name, doc, format] of [
    ["gemini.json", gemini, "gemini-cli"],
    ["ses_1.json", opencode, "opencode"],
  ] as const) {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify(doc));
    const out = join(dir, `${name}.journal.jsonl`);
    const r = await run(["compact", file, "--out", out, "--target", "1500", "--json", "--workspace", dir]);
    assert.equal(r.code, 0, r.stderr);
    const journal = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { kind: string; payload: Record<string, unknown> });
    assert.equal(journal[0]!.payload.source_format, format);
    assert.equal(journal.filter((e) => e.kind === "compaction").length, 1, name);
    // The compaction in the journal is checked again from the file: the contract holds.
    const audit = await run(["audit", out, "--json"]);
    assert.equal(audit.code, 0, audit.stderr + audit.stdout);
    assert.equal((JSON.parse(audit.stdout) as { kept: number }).kept, 1, audit.stdout);
  }
});
