/**
 * A worker thread of the batch (`audit PATH…`, `report PATH…`): reads one session at a time and
 * answers with its audit record (small, no conversation text unless asked) or, for the team page, the
 * session's own report page gzipped. It holds one session at a time; the main thread holds none.
 */
import { parentPort } from "node:worker_threads";
import { gzipSync } from "node:zlib";
import { auditSessionBytes, textlessReason, type SkippedRecord } from "../route/audit-record.js";
import { readSessionFileSync } from "../formats/read-file.js";
import { AUDIT_SCHEMA } from "../route/audit-record.js";
import { redactSecrets } from "../redact/redact.js";
import type { FormatName } from "../formats/registry.js";

export interface AuditTask {
  kind: "audit" | "page";
  /** The caller's number for the task (answers may come back in any order). */
  n: number;
  file: string;
  root: string;
  path: string;
  named: boolean;
  format?: FormatName;
  showText?: boolean;
  /** `page`: the context window the report's bars are drawn against. */
  window?: number;
}

export type AuditAnswer =
  | { n: number; ok: true; record: import("../route/audit-record.js").SessionRecord }
  | { n: number; ok: true; page: Uint8Array; compactions: number }
  | { n: number; ok: false; skipped: SkippedRecord };

/** Why a file was not read, as a record: a file found in a folder that no format recognises is ignored, not skipped. */
function skippedOf(task: AuditTask, e: unknown): SkippedRecord {
  const message = (e instanceof Error ? e.message : String(e)).split(task.file).join(task.path);
  const notSession =
    !task.named &&
    /: not a known session format \(tried:|: empty file|nothing could be imported/.test(message);
  return {
    schema: AUDIT_SCHEMA,
    type: "skipped",
    root: task.root,
    path: task.path,
    why: notSession ? "not_a_session" : "unreadable",
    reason: task.showText === true ? redactSecrets(message) : textlessReason(message),
  };
}

async function page(task: AuditTask): Promise<{ page: Uint8Array; compactions: number }> {
  const [{ readSession }, { reportEntries, renderReportHtml }] = await Promise.all([
    import("../route/session.js"),
    import("../report/index.js"),
  ]);
  const bytes = readSessionFileSync(task.file);
  const session = await readSession(task.path, { content: bytes, format: task.format });
  const model = await reportEntries(session.entries, {
    source: { file: task.path, format: session.format, bytes: bytes.length },
    window: task.window ?? 200_000,
    preview: false,
  });
  const html = renderReportHtml(model);
  // A copy of its own (not a slice of a shared pool), so that it can be moved to the main thread.
  return { page: new Uint8Array(gzipSync(html, { level: 6 })), compactions: model.views.length };
}

async function answer(task: AuditTask): Promise<AuditAnswer> {
  try {
    if (task.kind === "page") return { n: task.n, ok: true, ...(await page(task)) };
    // Read on this thread (it reads nothing else meanwhile): no trip to the thread pool per 512 KiB.
    const record = await auditSessionBytes(readSessionFileSync(task.file), {
      root: task.root,
      path: task.path,
      format: task.format,
      showText: task.showText,
    });
    return { n: task.n, ok: true, record };
  } catch (e) {
    return { n: task.n, ok: false, skipped: skippedOf(task, e) };
  }
}

// One task at a time, in the order they came: the pool sends the next before this one is answered.
let queue: Promise<void> = Promise.resolve();
parentPort?.on("message", (task: AuditTask) => {
  queue = queue.then(() =>
    answer(task).then((a) => {
      if ("page" in a) parentPort!.postMessage(a, [a.page.buffer as ArrayBuffer]);
      else parentPort!.postMessage(a);
    }),
  );
});
