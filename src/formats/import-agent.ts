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
