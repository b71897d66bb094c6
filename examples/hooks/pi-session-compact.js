/**
 * A pi extension (pi 0.73.1's `session_compact` event): after pi compacts a
 * session, by `/compact` or automatically, audit that compaction with
 * compact-safe and report the verdict. When the compaction lost part of the
 * protected last round, or anchors are pinned in the workspace, restate them
 * to the model: the user's instructions as they wrote them, the ids of the
 * lost calls, and the anchors verbatim, as one message sent with the next
 * prompt (a `custom_message` pi keeps in the session).
 *
 * The verdict is kept in the session as a `custom` entry
 * (`customType: "compact-safe-audit"`, not sent to the model), shown with
 * `ctx.ui.notify` in pi's interface, and written to stderr in print mode.
 *
 * It never holds pi up for long: the audit runs in child processes, and the
 * handler waits for it at most WAIT_MS (0.8 s); if the audit is not done by
 * then, its report arrives when it is (the restatement then goes with the
 * prompt after). Errors are reported, never thrown into pi.
 *
 * Load it with `pi -e /path/to/pi-session-compact.js`, or copy it into
 * `~/.pi/agent/extensions/`. It runs `compact-safe` from PATH, or the command
 * in COMPACT_SAFE_BIN (a path ending in .js is run with node).
 */
import { execFile } from "node:child_process";

const WAIT_MS = 800;
const TIMEOUT_MS = 60_000;
const MAX_RESTATEMENT_CHARS = 8000;

/** Runs compact-safe with `args`; resolves with its exit code and output (never rejects on a non-zero exit). */
function compactSafe(args, cwd) {
  const bin = process.env.COMPACT_SAFE_BIN || "compact-safe";
  const [cmd, pre] = /\.[cm]?js$/.test(bin) ? [process.execPath, [bin]] : [bin, []];
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      [...pre, ...args],
      { cwd, timeout: TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") reject(new Error(`${cmd}: ${error.message}`));
        else resolve({ code: error ? error.code : 0, stdout, stderr });
      },
    );
  });
}

/**
 * The audit of the compaction `compactionId` recorded in `sessionFile`, with
 * the anchors pinned in `cwd`: `{ line, kept, record, restatement }`
 * (`restatement` undefined when there is nothing to restate).
 */
export async function auditCompaction(sessionFile, compactionId, cwd) {
  const [audit, anchors] = await Promise.all([
    compactSafe(["audit", sessionFile, "--format", "pi", "--json"], cwd),
    compactSafe(["anchor", "show", "--json", "--workspace", cwd], cwd),
  ]);
  if (audit.code !== 0 && audit.code !== 1)
    throw new Error(audit.stderr.trim() || `compact-safe audit exited ${audit.code}`);
  const report = JSON.parse(audit.stdout);
  const c = report.compactions.find((x) => x.id === compactionId) ?? report.compactions.at(-1);
  if (!c) throw new Error(`${sessionFile}: compact-safe found no compaction to audit`);
  const anchorText = anchors.code === 0 ? JSON.parse(anchors.stdout).text : null;
  const l = c.losses;
  const line = c.kept
    ? `compact-safe: pi's compaction ${c.id} kept the survival contract (${c.messages_before} → ${c.messages_after} messages)`
    : `compact-safe: pi's compaction ${c.id} did not keep the survival contract: ${c.reason}`;
  const parts = [];
  if (!c.kept) {
    parts.push(`compact-safe: the compaction just made lost part of the last round (${c.reason}).`);
    if (l.user_texts.length > 0)
      parts.push(`The user's current instructions, as they wrote them:\n${l.user_texts.map((t) => `- ${t}`).join("\n")}`);
    if (l.tool_calls.length > 0)
      parts.push(`Tool calls of the last round no longer in the context: ${l.tool_calls.join(", ")}.`);
  }
  if (anchorText) parts.push(`Pinned anchors (restated verbatim):\n${anchorText}`);
  return {
    line,
    kept: c.kept,
    record: { compaction: c.id, kept: c.kept, reason: c.reason, losses: l },
    restatement: parts.length > 0 ? parts.join("\n\n").slice(0, MAX_RESTATEMENT_CHARS) : undefined,
  };
}

export default function compactSafeAudit(pi) {
  pi.on("session_compact", async (event, ctx) => {
    const file = ctx.sessionManager.getSessionFile();
    if (!file) return; // an in-memory session has no file to audit
    // pi may have moved on (print mode exits; a new session) by the time the audit is done: then its
    // context is stale and the report goes to stderr.
    const say = (text, level) => {
      try {
        if (ctx.hasUI) return ctx.ui.notify(text, level);
      } catch {
        // fall through to stderr
      }
      process.stderr.write(`${text}\n`);
    };
    const deliver = (r) => {
      say(r.line, r.kept ? "info" : "warning");
      try {
        pi.appendEntry("compact-safe-audit", r.record);
        if (r.restatement)
          pi.sendMessage(
            { customType: "compact-safe", content: r.restatement, display: true },
            { deliverAs: "nextTurn" },
          );
      } catch (e) {
        process.stderr.write(`compact-safe: the verdict was not recorded in the session (${e instanceof Error ? e.message : e})\n`);
      }
    };
    const audit = auditCompaction(file, event.compactionEntry?.id, ctx.cwd)
      .then(deliver)
      .catch((e) => say(`compact-safe: audit failed: ${e instanceof Error ? e.message : String(e)}`, "error"));
    // Wait a little, so that a quick audit's restatement goes with the prompt pi is about to send.
    let timer;
    await Promise.race([audit, new Promise((resolve) => (timer = setTimeout(resolve, WAIT_MS)))]);
    clearTimeout(timer);
  });
}
