/**
 * compact-safe's pi extension (pi 0.73.1's `session_compact` event): after pi
 * compacts a session, by `/compact` or automatically, it runs
 * `compact-safe hook pi` on the session file and delivers the verdict: kept
 * in the session as a `custom` entry (`customType: "compact-safe-audit"`, not
 * sent to the model), shown with `ctx.ui.notify` (stderr in print mode), and,
 * when the compaction lost part of the protected last round or anchors are
 * pinned, restated to the model with the next prompt (a `custom_message`).
 *
 * The audit runs in a child process; the handler waits for it at most WAIT_MS
 * (0.8 s), then lets pi go on (the report follows when the audit ends).
 * Errors are reported, never thrown into pi. The session path goes to the
 * hook on its stdin, as JSON, never on its command line.
 *
 * It runs the command in COMPACT_SAFE_BIN when set (a path ending in .js is
 * run with node), else the compact-safe of the package it ships in
 * (`../dist/src/cli/main.js`), else `compact-safe` from PATH. Load it with
 * `pi -e node_modules/compact-safe/extensions/compact-safe.js`, list it in
 * the `extensions` of pi's settings.json, or copy it into `~/.pi/agent/extensions/`
 * (then it runs `compact-safe` from PATH).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const WAIT_MS = 800;
const TIMEOUT_MS = 60_000;
const OWN_CLI = fileURLToPath(new URL("../dist/src/cli/main.js", import.meta.url));

/** The command that runs compact-safe: [executable, leading arguments]. */
function compactSafeCommand() {
  const bin = process.env.COMPACT_SAFE_BIN || (existsSync(OWN_CLI) ? OWN_CLI : "compact-safe");
  return /\.[cm]?js$/.test(bin) ? [process.execPath, [bin]] : [bin, []];
}

/**
 * Runs `compact-safe hook pi` on the compaction `compactionId` of `sessionFile`
 * with the anchors of `cwd`; resolves with its answer `{ line, kept, record,
 * restatement? }`, rejects with the hook's one-line reason.
 */
export function auditCompaction(sessionFile, compactionId, cwd) {
  const [cmd, pre] = compactSafeCommand();
  const input = JSON.stringify({ session_file: resolve(sessionFile), compaction_id: compactionId, cwd });
  return new Promise((done, fail) => {
    const child = execFile(
      cmd,
      [...pre, "hook", "pi"],
      { cwd, timeout: TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) => {
        if (error) return fail(new Error(`${cmd}: ${stderr.trim() || error.message}`));
        const answer = stdout.trim();
        if (answer === "")
          return fail(new Error(stderr.trim().replace(/^compact-safe hook pi: /, "") || "no answer"));
        try {
          done(JSON.parse(answer));
        } catch {
          fail(new Error(`compact-safe hook pi answered something else than JSON: ${answer.slice(0, 200)}`));
        }
      },
    );
    child.stdin?.on("error", () => {}); // a child that exits early closes its stdin: the error above says why
    child.stdin?.end(input);
  });
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
        process.stderr.write(
          `compact-safe: the verdict was not recorded in the session (${e instanceof Error ? e.message : e})\n`,
        );
      }
    };
    const audit = auditCompaction(file, event.compactionEntry?.id, ctx.cwd)
      .then(deliver)
      .catch((e) =>
        say(`compact-safe: audit failed: ${e instanceof Error ? e.message : String(e)}`, "error"),
      );
    // Wait a little, so that a quick audit's restatement goes with the prompt pi is about to send.
    let timer;
    await Promise.race([audit, new Promise((r) => (timer = setTimeout(r, WAIT_MS)))]);
    clearTimeout(timer);
  });
}
