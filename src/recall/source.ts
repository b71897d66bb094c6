/**
 * The session the recall server answers from, read again whenever its file
 * changed (an agent appends to it while the server runs) and indexed once per
 * version. A session that is missing or cannot be read is a message for the
 * tool's error answer, never a throw out of the server.
 */
import { stat } from "node:fs/promises";
import { readSession } from "../route/session.js";
import { redactQuotedLine } from "../redact/quoted.js";
import { safeHead } from "../redact/redact.js";
import { findSessionFile, type HistorySource } from "./find.js";
import { indexHistory, type HistoryIndex } from "./history.js";

export type Loaded =
  { ok: true; file: string; format: string; index: HistoryIndex } | { ok: false; error: string };

interface Cached {
  file: string;
  size: number;
  mtimeMs: number;
  format: string;
  index: HistoryIndex;
}

export class RecallSource {
  private cached: Cached | undefined;
  /** Reads run one at a time: two questions at once share one read. */
  private pending: Promise<Loaded> | undefined;

  constructor(readonly source: HistorySource) {}

  /** The session's index as its file is now. */
  load(): Promise<Loaded> {
    this.pending ??= this.read().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async read(): Promise<Loaded> {
    const found = await findSessionFile(this.source);
    if ("missing" in found) return { ok: false, error: found.missing };
    const file = found.file;
    try {
      const st = await stat(file);
      const c = this.cached;
      if (c !== undefined && c.file === file && c.size === st.size && c.mtimeMs === st.mtimeMs)
        return { ok: true, file, format: c.format, index: c.index };
      const session = await readSession(file);
      const index = indexHistory(session.entries);
      this.cached = { file, size: st.size, mtimeMs: st.mtimeMs, format: session.format, index };
      return { ok: true, file, format: session.format, index };
    } catch (e) {
      // Redacted before the cut (a parse error may quote the file's content).
      const why = redactQuotedLine((e instanceof Error ? e.message : String(e)).replace(/\s+/g, " "));
      return {
        ok: false,
        error: `${file}: cannot be read as a session (${why.length > 400 ? `${safeHead(why, 400)}…` : why})`,
      };
    }
  }
}
