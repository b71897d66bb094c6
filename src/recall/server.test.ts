/**
 * The recall server, driven by the MCP SDK's own client over a stdio transport that spawns the built
 * binary (`dist/src/cli/main.js mcp`): its tools, `recall` of a stubbed result byte for byte (redacted
 * where it held a secret), paging, and clear error answers for a bad ref, a missing session and a
 * session that grows while the server runs.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exampleSession } from "../../test/support.js";
import { readJournal } from "../journal/read.js";
import { redactSecrets } from "../redact/redact.js";
import { pageOf } from "./tools.js";
import { call, compactInto, connect, recallWhole, stubbedOriginals } from "../../test/recall-client.js";

const SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const big = `${"log line of the build\n".repeat(40)}token=${SECRET}\nend`;

/** A Claude Code session of one old large result holding a secret, then a last round. */
function secretSession(): string {
  const line = (o: object) => JSON.stringify(o);
  const base = { sessionId: "s1", cwd: "/tmp", version: "2.1.0", type: "user", isSidechain: false };
  const rows: object[] = [
    { ...base, uuid: "u1", parentUuid: null, message: { role: "user", content: "run the build" } },
    {
      ...base,
      type: "assistant",
      uuid: "a1",
      parentUuid: "u1",
      message: {
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_big", name: "Bash", input: { command: "make" } }],
      },
    },
    {
      ...base,
      uuid: "r1",
      parentUuid: "a1",
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_big", content: big }] },
    },
  ];
  let parent = "r1";
  for (let i = 0; i < 3; i++) {
    rows.push({
      ...base,
      uuid: `u${i + 2}`,
      parentUuid: parent,
      message: { role: "user", content: `step ${i}` },
    });
    rows.push({
      ...base,
      type: "assistant",
      uuid: `a${i + 2}`,
      parentUuid: `u${i + 2}`,
      message: {
        role: "assistant",
        content: [{ type: "tool_use", id: `toolu_${i}`, name: "Bash", input: { command: `ls ${i}` } }],
      },
    });
    rows.push({
      ...base,
      uuid: `r${i + 2}`,
      parentUuid: `a${i + 2}`,
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: `ok ${i}` }],
      },
    });
    parent = `r${i + 2}`;
  }
  return rows.map(line).join("\n") + "\n";
}

let dir = "";
before(() => {
  dir = mkdtempSync(join(tmpdir(), "cs-recall-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe("compact-safe mcp, through the SDK's client", { concurrency: false }, () => {
  test("lists its three tools; recall gives back every stubbed result of a compacted session byte for byte", async () => {
    const journal = join(dir, "example.jsonl");
    compactInto(exampleSession, journal);
    const stubbed = await stubbedOriginals(journal);
    assert.ok(stubbed.size > 0, "the compaction stubbed results");
    const client = await connect([journal]);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(tools, ["history_outline", "recall", "search_history"]);
      for (const [id, original] of stubbed)
        assert.equal(await recallWhole(client, `tool:${id}`), redactSecrets(original), id);
      const outline = await call(client, "history_outline", {});
      assert.equal(outline.isError, false);
      assert.match(outline.texts[0]!, /1 compaction recorded/);
      assert.match(outline.texts[0]!, /prune-only.*kept the survival contract/);
      const [first] = stubbed.keys();
      assert.ok(outline.texts[0]!.includes(`tool:${first}`), "the outline names what was pruned");
    } finally {
      await client.close();
    }
  });

  test("a secret in a stubbed result comes back redacted; a long original comes in bounded pages", async () => {
    const session = join(dir, "secret.jsonl");
    writeFileSync(session, secretSession());
    const journal = join(dir, "secret-journal.jsonl");
    compactInto(session, journal);
    const client = await connect([journal]);
    try {
      const whole = await recallWhole(client, "tool:toolu_big");
      assert.ok(!whole.includes(SECRET), "the secret is not given back");
      assert.match(whole, /token=\[REDACTED:[a-z-]+\]\nend$/);
      assert.equal(whole, redactSecrets(big));
      const hits = await call(client, "search_history", { query: "build" });
      assert.equal(hits.isError, false);
      assert.match(hits.texts[0]!, /tool:toolu_big \(tool result, message \d+, compacted away\)/);
      assert.ok(!hits.texts[0]!.includes(SECRET));
    } finally {
      await client.close();
    }
    // Pages: every one within the bound, joined they give the text back (multi-byte characters included).
    const text = `${"é😀a".repeat(5000)}`;
    let joined = "";
    for (let from = 0; from < text.length;) {
      const page = pageOf(text, from, 1000);
      assert.ok(page.length > 0 && Buffer.byteLength(page, "utf8") <= 1000);
      joined += page;
      from += page.length;
    }
    assert.equal(joined, text);
  });

  test("a bad ref, an unknown one, a missing session and a session that grows get clear error answers", async () => {
    const journal = join(dir, "grow.jsonl");
    compactInto(exampleSession, journal);
    const missing = join(dir, "not-yet.jsonl");
    const client = await connect([journal]);
    const none = await connect([missing]);
    try {
      const bad = await call(client, "recall", { ref: "bogus" });
      assert.equal(bad.isError, true);
      assert.match(bad.texts[0]!, /not a recall ref: "bogus" \(expected tool:ID/);
      const unknown = await call(client, "recall", { ref: "tool:toolu_nope" });
      assert.equal(unknown.isError, true);
      assert.match(unknown.texts[0]!, /no tool result for call "toolu_nope"/);
      const past = await call(client, "recall", {
        ref: `tool:${[...(await stubbedOriginals(journal)).keys()][0]}`,
        offset: 10_000_000,
      });
      assert.equal(past.isError, true);
      assert.match(past.texts[0]!, /past the end/);
      const gone = await call(none, "search_history", { query: "x" });
      assert.equal(gone.isError, true);
      assert.match(gone.texts[0]!, /not-yet\.jsonl: no such session file/);
      // The session grows while the server runs: a new result is found; a torn last line is no crash.
      const { entries } = await readJournal(journal);
      const leaf = entries.at(-1)!;
      const entry = {
        id: "e-new",
        parent_id: leaf.id,
        kind: "tool_result",
        created_at: new Date().toISOString(),
        payload: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_new", content: "fresh output" }],
        },
      };
      appendFileSync(journal, `${JSON.stringify(entry)}\n{"id":"torn`);
      const fresh = await call(client, "recall", { ref: "tool:toolu_new" });
      assert.equal(fresh.isError, false, fresh.texts.join("\n"));
      assert.equal(fresh.texts[1], "fresh output");
      // The file replaced by something that is no session: an error answer, and the server still answers.
      writeFileSync(journal, "not a session\n");
      const broken = await call(client, "history_outline", {});
      assert.equal(broken.isError, true);
      assert.match(broken.texts[0]!, /grow\.jsonl: cannot be read as a session/);
      assert.deepEqual((await client.listTools()).tools.length, 3);
      // And the missing session, once it exists, is served.
      compactInto(exampleSession, missing);
      const later = await call(none, "history_outline", {});
      assert.equal(later.isError, false, later.texts.join("\n"));
    } finally {
      await client.close();
      await none.close();
    }
  });

  test("the default session: the newest one Claude Code recorded for the project folder", async () => {
    const home = join(dir, "home");
    const project = join(dir, "proj");
    const folder = join(home, ".claude", "projects", project.replace(/[^A-Za-z0-9]/g, "-"));
    mkdirSync(folder, { recursive: true });
    mkdirSync(project, { recursive: true });
    writeFileSync(join(folder, "s1.jsonl"), secretSession());
    const client = await connect(["--project", project], {
      HOME: home,
      CLAUDE_CONFIG_DIR: "",
      CODEX_HOME: "",
      PI_CODING_AGENT_DIR: "",
    });
    try {
      const r = await call(client, "search_history", { query: "run the build" });
      assert.equal(r.isError, false, r.texts.join("\n"));
      assert.match(r.texts[0]!, /msg:[0-9a-f]{12} \(user/);
    } finally {
      await client.close();
    }
  });
});
