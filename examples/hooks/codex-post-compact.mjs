#!/usr/bin/env node
/**
 * A Codex `PostCompact` hook: after Codex compacts a session (manually or
 * automatically), audit that compaction with compact-safe and tell the user,
 * through `systemMessage`, whether it kept the survival contract, and if not,
 * the instructions of the last round it lost, as they were written.
 *
 * Codex (0.169) passes the hook a JSON object on stdin (`session_id`,
 * `turn_id`, `transcript_path`, `cwd`, `hook_event_name`, `model`,
 * `trigger`). A `PostCompact` hook can only speak to the user
 * (`systemMessage`); it cannot add to the model's context, so the anchors are
 * not restated here. The hook prints one JSON object, or nothing when the
 * rollout records no compaction. It never fails the session: any error is
 * reported on stderr and the hook exits 0.
 *
 * ~/.codex/hooks.json (Codex asks you to trust a new hook once):
 *   { "hooks": { "PostCompact": [ { "hooks": [
 *       { "type": "command", "command": "node /path/to/codex-post-compact.mjs" } ] } ] } }
 */
import { auditEntries, importFile } from "compact-safe";

const MAX_MESSAGE_CHARS = 4000;

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks).toString("utf8");
}

try {
  const input = JSON.parse(await readStdin());
  if (input.hook_event_name !== "PostCompact" || typeof input.transcript_path !== "string") process.exit(0);
  const { entries } = await importFile(input.transcript_path, { format: "codex" });
  const last = auditEntries(entries).compactions.at(-1);
  if (last === undefined) process.exit(0);
  let message;
  if (last.kept) message = `compact-safe: this compaction kept the survival contract (${last.messages_before} -> ${last.messages_after} messages).`;
  else {
    const l = last.losses;
    message = `compact-safe: this compaction did not keep the survival contract (${last.reason}).`;
    if (l.user_texts.length > 0)
      message += `\nYour current instructions, as you wrote them (restate them if they still apply):\n${l.user_texts.map((t) => `- ${t}`).join("\n")}`;
    if (l.tool_calls.length > 0) message += `\nTool calls of the last round no longer in the context: ${l.tool_calls.join(", ")}.`;
  }
  process.stdout.write(JSON.stringify({ systemMessage: message.slice(0, MAX_MESSAGE_CHARS) }) + "\n");
} catch (e) {
  process.stderr.write(`compact-safe hook: ${e instanceof Error ? e.message : String(e)}\n`);
}
