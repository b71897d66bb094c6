/**
 * `npx compact-safe mcp` from a packed install: the tarball of this tree (`npm pack`) installed into a
 * fresh project with the dependencies it declares linked from this clone's install (no registry;
 * npx runs offline), a corpus session compacted prune-only there by the installed command, and the MCP
 * SDK's own client on `npx compact-safe mcp JOURNAL`: it lists the three tools, and `recall` gives back
 * every stubbed result byte for byte, redacted as compact-safe redacts.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { corpusDir, corpusSuite } from "../../support.js";
import { installPackage, packPackage } from "../../responses-consumer.js";
import { call, connectTo, recallWhole, stubbedOriginals } from "../../recall-client.js";
import { redactSecrets } from "../../../src/redact/redact.js";

/** A Claude Code session whose prune-only compaction stubs a dozen results, two of them holding a secret. */
const SESSION = "claude-code/entire-d3-7d736cbc10-0.jsonl";

const npx = process.platform === "win32" ? "npx.cmd" : "npx";

corpusSuite("compact-safe mcp from a packed install", () => {
  let dir = "";
  let app = "";
  /** npm offline: a lookup in the registry fails instead of reaching it. */
  const env = (): Record<string, string> => ({
    ...(process.env as Record<string, string>),
    npm_config_offline: "true",
    npm_config_update_notifier: "false",
    NO_COLOR: "1",
  });

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "cs-mcp-packed-"));
    const { tarball } = packPackage(dir);
    app = join(dir, "app");
    installPackage(tarball, app);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("npx compact-safe mcp lists its tools to the SDK's client and recalls every stubbed result", async () => {
    const journal = join(dir, "session.journal.jsonl");
    const compacted = spawnSync(
      npx,
      ["compact-safe", "compact", join(corpusDir, SESSION), "--out", journal, "--prune-only", "--json"],
      { cwd: app, env: env(), encoding: "utf8", timeout: 180_000, killSignal: "SIGKILL" },
    );
    assert.equal(compacted.status, 0, `npx compact-safe compact: ${compacted.stderr}`);
    assert.equal((JSON.parse(compacted.stdout) as { path: string }).path, "prune-only");
    const stubbed = await stubbedOriginals(journal);
    assert.ok(stubbed.size > 0, "the compaction stubbed results");
    const secrets = [...stubbed.values()].filter((o) => redactSecrets(o) !== o).length;
    assert.ok(secrets > 0, "some stubbed original holds a secret");

    let client: Client | undefined;
    try {
      client = await connectTo({
        command: npx,
        args: ["compact-safe", "mcp", journal],
        cwd: app,
        env: env(),
      });
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(tools, ["history_outline", "recall", "search_history"]);
      for (const [id, original] of stubbed) {
        const back = await recallWhole(client, `tool:${id}`);
        assert.equal(back, redactSecrets(original), id);
        if (back !== original) assert.match(back, /\[REDACTED:[a-z-]+\]/, id);
      }
      const bad = await call(client, "recall", { ref: "tool:no_such_call" });
      assert.equal(bad.isError, true);
      assert.match(bad.texts[0]!, /^no tool result for call "no_such_call"/);
    } finally {
      await client?.close();
    }
  });
});
