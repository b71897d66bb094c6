#!/usr/bin/env node
/**
 * A Claude Code `SessionStart` hook (matcher `compact`): after Claude Code
 * compacts a session, audit that compaction with compact-safe and hand the
 * model, through `additionalContext`, the user instructions and tool results
 * of the last round that the compaction lost, and the pinned anchors.
 *
 * Claude Code passes the hook a JSON object on stdin (`transcript_path`,
 * `cwd`, `source`, ...). The hook prints one JSON object, or nothing when it
 * has nothing to add. It never fails the session: any error is reported on
 * stderr and the hook exits 0.
 *
 * settings.json:
 *   { "hooks": { "SessionStart": [ { "matcher": "compact",
 *       "hooks": [ { "type": "command", "command": "node /path/to/claude-code-session-start.mjs" } ] } ] } }
 */
import { auditEntries, importFile, readAnchors } from "compact-safe";

const MAX_CONTEXT_CHARS = 8000;

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks).toString("utf8");
}

try {
  const input = JSON.parse(await readStdin());
  if (input.source !== "compact" || typeof input.transcript_path !== "string") process.exit(0);
  const { entries } = await importFile(input.transcript_path, { format: "claude-code" });
  const last = auditEntries(entries).compactions.at(-1);
  const anchors = typeof input.cwd === "string" ? (await readAnchors(input.cwd))?.text : undefined;
  const parts = [];
  if (last && !last.kept) {
    const l = last.losses;
    parts.push(`compact-safe: the compaction just made did not keep the survival contract (${last.reason}).`);
    if (l.user_texts.length > 0)
      parts.push(`The user's current instructions, as they wrote them:\n${l.user_texts.map((t) => `- ${t}`).join("\n")}`);
    if (l.tool_calls.length > 0)
      parts.push(`Tool calls of the last round no longer in the context: ${l.tool_calls.join(", ")}.`);
  }
  if (anchors) parts.push(`Pinned anchors (restated verbatim):\n${anchors}`);
  if (parts.length === 0) process.exit(0);
  const additionalContext = parts.join("\n\n").slice(0, MAX_CONTEXT_CHARS);
  process.stdout.write(
    JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext } }) + "\n",
  );
} catch (e) {
  process.stderr.write(`compact-safe hook: ${e instanceof Error ? e.message : String(e)}\n`);
}
