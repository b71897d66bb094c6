#!/usr/bin/env node
/**
 * A Claude Code `SessionStart` hook (matcher `compact`): when Claude Code
 * compacts a session, hand the model, through `additionalContext`, what the
 * survival contract says must survive and a summary alone does not keep: the
 * user's instructions of the last round as they wrote them, and the pinned
 * anchors.
 *
 * Claude Code 2.1.328 runs this hook while it compacts, before it writes the
 * compaction to the transcript (the hook's answer goes into the compacted
 * context), so the transcript then ends with the history being compacted:
 * the hook restates that history's protected last round. When the transcript
 * already records the compaction (a client that writes it first), the hook
 * audits it instead and restates what it lost.
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
import { auditEntries, importFile, liveContext, protectedRound, readAnchors } from "compact-safe";

const MAX_CONTEXT_CHARS = 8000;
const CONVERSATION = new Set(["user", "assistant", "tool_result"]);

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks).toString("utf8");
}

/** The user's words in the protected last round of `messages` (text blocks of its instructions). */
function lastRoundInstructions(messages) {
  return protectedRound(messages).instructionIndices.flatMap((i) =>
    messages[i].content.filter((b) => b.type === "text" && b.text.trim() !== "").map((b) => b.text),
  );
}

try {
  const input = JSON.parse(await readStdin());
  if (input.source !== "compact" || typeof input.transcript_path !== "string") process.exit(0);
  const { entries } = await importFile(input.transcript_path, { format: "claude-code" });
  const lastCompaction = entries.findLastIndex((e) => e.kind === "compaction");
  const lastMessage = entries.findLastIndex((e) => CONVERSATION.has(e.kind));
  const parts = [];
  if (lastCompaction > lastMessage) {
    // The compaction is already recorded: audit it.
    const last = auditEntries(entries).compactions.at(-1);
    if (last && !last.kept) {
      const l = last.losses;
      parts.push(`compact-safe: the compaction just made did not keep the survival contract (${last.reason}).`);
      if (l.user_texts.length > 0)
        parts.push(`The user's current instructions, as they wrote them:\n${l.user_texts.map((t) => `- ${t}`).join("\n")}`);
      if (l.tool_calls.length > 0)
        parts.push(`Tool calls of the last round no longer in the context: ${l.tool_calls.join(", ")}.`);
    }
  } else {
    // Claude Code is compacting the history the transcript ends with: restate its last round's instructions.
    const texts = lastRoundInstructions(liveContext(entries));
    if (texts.length > 0)
      parts.push(
        "compact-safe: the user's current instructions (the last round before this compaction), as they wrote them:\n" +
          texts.map((t) => `- ${t}`).join("\n"),
      );
  }
  const anchors = typeof input.cwd === "string" ? (await readAnchors(input.cwd))?.text : undefined;
  if (anchors) parts.push(`Pinned anchors (restated verbatim):\n${anchors}`);
  if (parts.length === 0) process.exit(0);
  const additionalContext = parts.join("\n\n").slice(0, MAX_CONTEXT_CHARS);
  process.stdout.write(
    JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext } }) + "\n",
  );
} catch (e) {
  process.stderr.write(`compact-safe hook: ${e instanceof Error ? e.message : String(e)}\n`);
}
