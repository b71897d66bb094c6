/** Helpers of the recall server's tests: the MCP SDK's client on `compact-safe mcp`, and compacted sessions. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, type StdioServerParameters } from "@modelcontextprotocol/sdk/client/stdio.js";
import { cliPath } from "./support.js";
import { readJournal } from "../src/journal/read.js";
import { isToolResult } from "../src/model/blocks.js";
import { STUB_PREFIX } from "../src/engine/prune.js";
import { ANSWER_BOUND_BYTES } from "../src/recall/tools.js";

type Texts = { texts: string[]; isError: boolean };

/** A client connected to `compact-safe mcp ARGS` (this checkout's built CLI). */
export function connect(args: string[], env: Record<string, string> = {}): Promise<Client> {
  return connectTo({
    command: process.execPath,
    args: [cliPath, "mcp", ...args],
    env: { ...(process.env as Record<string, string>), ...env },
  });
}

/** A client connected to the server a command starts (its standard error kept from the test's output). */
export async function connectTo(server: StdioServerParameters): Promise<Client> {
  const transport = new StdioClientTransport({ stderr: "pipe", ...server });
  const client = new Client({ name: "compact-safe-test", version: "1" });
  await client.connect(transport);
  return client;
}

export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Texts> {
  const r = (await client.callTool({ name, arguments: args })) as {
    content: { type: string; text: string }[];
    isError?: boolean;
  };
  return { texts: r.content.map((c) => c.text), isError: r.isError === true };
}

/** The whole original a `recall` gives, its pages joined (each page is the answer's second text). */
export async function recallWhole(client: Client, ref: string): Promise<string> {
  let out = "";
  for (;;) {
    const r = await call(client, "recall", { ref, offset: out.length });
    assert.equal(r.isError, false, r.texts.join("\n"));
    assert.ok(Buffer.byteLength(r.texts.join(""), "utf8") <= ANSWER_BOUND_BYTES, "an answer is bounded");
    out += r.texts[1];
    if (r.texts.length < 3) return out;
  }
}

/** The stubbed results of a journal's last compaction, with the original each replaced (by call id). */
export async function stubbedOriginals(journal: string): Promise<Map<string, string>> {
  const { entries } = await readJournal(journal);
  const originals = new Map<string, string>();
  for (const e of entries)
    if (e.kind !== "compaction" && e.kind !== "header" && e.kind !== "branch_summary")
      for (const b of e.payload.content)
        if (isToolResult(b) && !originals.has(b.tool_use_id)) originals.set(b.tool_use_id, b.content);
  const last = entries.filter((e) => e.kind === "compaction").at(-1);
  assert.ok(last !== undefined && last.kind === "compaction", "the journal records a compaction");
  const out = new Map<string, string>();
  for (const m of last.payload.replacement)
    for (const b of m.content)
      if (isToolResult(b) && b.content.startsWith(STUB_PREFIX)) {
        assert.ok(b.content.endsWith(`; recall tool:${b.tool_use_id}]`), b.content);
        out.set(b.tool_use_id, originals.get(b.tool_use_id)!);
      }
  return out;
}

/** Compacts a session prune-only into a new journal. */
export function compactInto(session: string, journal: string, extra: string[] = []): void {
  const r = spawnSync(
    process.execPath,
    [cliPath, "compact", session, "--out", journal, "--prune-only", ...extra],
    {
      encoding: "utf8",
    },
  );
  assert.equal(r.status, 0, r.stderr);
}
