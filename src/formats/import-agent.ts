/**
 * Importing a session file of a known agent format (Claude Code, Codex, pi)
 * with that format's importer alone: what an agent's hook does on every
 * compaction, without loading the modules of every other format (the format
 * detector imports them all). A file the importer does not read plainly (it
 * throws, or imports none of the lines it has) is imported again by
 * `importBytes`, which then fails or answers word for word as `importFile`
 * with that format does (it names the format the file looks like).
 */
import { readSessionFile } from "./read-file.js";
import type { ToolIdOptions } from "../model/tool-ids.js";
import { FIRST_WINDOW_BYTES, TailWindow, windowStarts } from "./tail-read.js";
import type { ImportResult } from "./common/types.js";

export type AgentFormat = "claude-code" | "codex" | "pi";

type Importer = (text: string, fileName: string, options: ToolIdOptions) => ImportResult;

async function importerOf(format: AgentFormat): Promise<Importer> {
  switch (format) {
    case "claude-code":
      return (await import("./import/claude-code.js")).importClaudeCode;
    case "codex":
      return (await import("./import/codex.js")).importCodex;
    case "pi":
      return (await import("./import/pi.js")).importPi;
  }
}

/** `importFile(path, { format })` for an agent's own format, loading that format's importer alone. */
export async function importAgentFile(path: string, format: AgentFormat): Promise<ImportResult> {
  const [bytes, importer] = await Promise.all([readSessionFile(path), importerOf(format)]);
  return importWholeBytes(bytes, path, format, importer);
}

async function importWholeBytes(
  bytes: Buffer,
  path: string,
  format: AgentFormat,
  importer: Importer,
): Promise<ImportResult> {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  try {
    const result = importer(text, path, {});
    // What `importText` with a forced format accepts as it is.
    if (result.report.imported > 0 || result.report.total === 0) return result;
  } catch {
    // `importBytes` says it, with what the file looks like.
  }
  const { importBytes } = await import("./detect.js");
  return importBytes(bytes, path, { format });
}

/**
 * An agent hook's read of a session file: `attempt` is given the import of
 * a tail window of the file (see `TailWindow`) and answers, or returns
 * undefined when the window does not hold all its answer depends on; the
 * window then doubles, up to the whole file, whose import (`importAgentFile`'s
 * own) `attempt` must answer. A window the importer refuses (it throws, or
 * imports none of its lines) is not an answer either.
 */
export async function importAgentTail<T>(
  path: string,
  format: AgentFormat,
  attempt: (result: ImportResult, window: TailWindow) => T | undefined,
  firstWindow = FIRST_WINDOW_BYTES,
): Promise<T> {
  const [bytes, importer] = await Promise.all([readSessionFile(path), importerOf(format)]);
  for (const at of windowStarts(bytes.length, firstWindow)) {
    const window = new TailWindow(bytes, at);
    if (window.whole) break;
    let result: ImportResult;
    try {
      const options: ToolIdOptions = {};
      if (format === "codex")
        options.prior = (await import("./import/codex.js")).codexPriorCalls(
          bytes,
          window.start,
          window.callLinesBefore(),
        );
      result = importer(window.text(), path, options);
    } catch {
      continue;
    }
    if (result.report.imported === 0) continue;
    const answer = attempt(result, window);
    if (answer !== undefined) return answer;
  }
  const answer = attempt(await importWholeBytes(bytes, path, format, importer), new TailWindow(bytes, 0));
  if (answer === undefined) throw new Error(`${path}: no answer from the whole file`);
  return answer;
}
