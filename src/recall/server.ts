/**
 * The recall server (`compact-safe mcp`): a Model Context Protocol server on
 * the official SDK that serves a session's saved history to the agent that
 * resumes after a compaction, with three tools: `recall`, `search_history`
 * and `history_outline` (see `tools.ts`). Every failure (a bad ref, a missing
 * or unreadable session, an offset past the end) is the tool's error answer
 * (`isError`), never a crash of the server.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { safeHead } from "../redact/redact.js";
import { redactQuotedLine } from "../redact/quoted.js";
import type { HistorySource } from "./find.js";
import { RecallSource } from "./source.js";
import { errorAnswer, historyOutline, recall, searchHistory, type ToolAnswer } from "./tools.js";
import type { HistoryIndex } from "./history.js";

export const RECALL_TOOLS = ["recall", "search_history", "history_outline"] as const;

const INSTRUCTIONS =
  "The saved history of this coding session, as it was before compact-safe compacted it. A checkpoint or a " +
  "pruned tool result cites refs (tool:ID, msg:HASH); call recall with one to get the original back, " +
  "search_history to find older messages, history_outline for the compactions and what each summarized.";

function result(a: ToolAnswer): CallToolResult {
  return { content: a.texts.map((text) => ({ type: "text" as const, text })), isError: a.isError };
}

/** Runs one tool on the session as it is now; any failure is an error answer. */
async function answer(source: RecallSource, run: (ix: HistoryIndex) => ToolAnswer): Promise<CallToolResult> {
  try {
    const loaded = await source.load();
    if (!loaded.ok) return result(errorAnswer(redactQuotedLine(loaded.error)));
    return result(run(loaded.index));
  } catch (e) {
    // Redacted before the cut: a secret the cut split would no longer match its rule.
    const why = redactQuotedLine(`compact-safe recall failed: ${e instanceof Error ? e.message : String(e)}`);
    return result(errorAnswer(why.length > 1000 ? `${safeHead(why, 1000)}…` : why));
  }
}

const offset = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe("where to go on from (the number the last page names)");

/** The MCP server over a session source, its tools registered (not connected). */
export function createRecallServer(source: HistorySource, version: string): McpServer {
  const s = new RecallSource(source);
  const server = new McpServer({ name: "compact-safe", version }, { instructions: INSTRUCTIONS });
  server.registerTool(
    "recall",
    {
      description:
        "The exact original (secrets redacted) of something compaction removed, by the ref the checkpoint or a " +
        "pruned tool result cites: tool:ID (a tool result), msg:HASH (a message), compaction:ID (the context a " +
        "compaction replaced). Long originals come in pages of at most 8 KiB: pass the offset the page names.",
      inputSchema: { ref: z.string().describe("the ref, e.g. tool:toolu_01A… or msg:3f2a…"), offset },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ ref, offset: from }) => answer(s, (ix) => recall(ix, ref, from ?? 0)),
  );
  server.registerTool(
    "search_history",
    {
      description:
        "Messages and tool results of the saved history (from before the compactions too) holding every word " +
        "of the query (case ignored; a quoted phrase is one word), newest first, each with its ref for recall.",
      inputSchema: {
        query: z.string().describe("words to find"),
        limit: z.number().int().min(1).max(50).optional().describe("matches at most (default 10)"),
        offset: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe("matches to skip (the number the last answer names)"),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ query, limit, offset: from }) =>
      answer(s, (ix) => searchHistory(ix, query, limit ?? 10, from ?? 0)),
  );
  server.registerTool(
    "history_outline",
    {
      description:
        "The compactions of this session, oldest first: who made each, its survival-contract verdict, and the " +
        "user messages and tool results it summarized or pruned (with their refs).",
      inputSchema: { offset },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ offset: from }) => answer(s, (ix) => historyOutline(ix, from ?? 0)),
  );
  return server;
}

/** Serves the session over standard input and output until the client closes it. */
export async function serveRecall(source: HistorySource, version: string): Promise<void> {
  const server = createRecallServer(source, version);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
    process.stdin.once("close", () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
