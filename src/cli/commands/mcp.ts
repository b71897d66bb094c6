/**
 * `compact-safe mcp [SESSION | --state DIR] [--project DIR]`: the recall server, a Model Context Protocol
 * server over standard input and output (src/recall/server.ts) serving a session's saved history to the
 * agent: `recall`, `search_history` and `history_outline`. The MCP SDK is loaded only here, when the
 * command runs. Nothing is printed on standard output but the protocol; a problem with the session is each
 * tool's error answer, so the server starts even when there is no session yet.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { usageError } from "../errors.js";

interface McpFlags {
  state?: string;
  project?: string;
}

function version(): string {
  const url = new URL("../../../../package.json", import.meta.url);
  return (JSON.parse(readFileSync(url, "utf8")) as { version: string }).version;
}

export function register(program: Command): void {
  program
    .command("mcp")
    .summary("serve a session's saved history to the agent (MCP server over stdio: recall, search_history)")
    .description(
      "A Model Context Protocol server over standard input and output with three tools: recall(ref), the exact " +
        "original (redacted) of a pruned tool result, a message or a summarized span by the ref a checkpoint " +
        "cites (tool:ID, msg:HASH, compaction:ID); search_history(query, limit), matching messages from before " +
        "the compactions, newest first; history_outline(), the compactions with their verdicts. Answers are " +
        "bounded to 8 KiB and paged with offset.\n\n" +
        "SESSION is a journal or any session file compact-safe reads; --state DIR the guard's state folder (its " +
        "newest session journal, no other file there); by default the newest session Claude Code, Codex or pi recorded for the project " +
        "folder (--project, default the current folder), looked up again on each call.\n\n" +
        "Set up: claude mcp add compact-safe -- compact-safe mcp",
    )
    .argument("[session]", "a journal or a session file of any importable format")
    .option("--state <dir>", "the guard's state folder: serve its newest session journal")
    .option(
      "--project <dir>",
      "the project folder whose newest agent session is served (default: the current folder)",
    )
    .action(async (session: string | undefined, o: McpFlags) => {
      if (session !== undefined && o.state !== undefined)
        throw usageError("mcp: give SESSION or --state, not both");
      if (session === "-")
        throw usageError("mcp: standard input carries the protocol; name the session file");
      const [{ serveRecall }, { projectSource }] = await Promise.all([
        import("../../recall/server.js"),
        import("../../recall/find.js"),
      ]);
      const source =
        session !== undefined
          ? { kind: "file" as const, file: resolve(session) }
          : o.state !== undefined
            ? { kind: "state" as const, dir: resolve(o.state) }
            : projectSource(o.project);
      await serveRecall(source, version());
    });
}
