/**
 * Every format's `--format` name, in the format table's order (`FORMATS` in ../registry.ts). The
 * names live here, under the importers, so that the importers' result type can name them without
 * importing the table that imports the importers (no circle, types included). The table is checked
 * against this list by the compiler (an entry's name must be one of them, and every name needs an
 * entry) and its order by a test.
 */
export const FORMAT_NAME_LIST = [
  "journal",
  "claude-code",
  "codex",
  "pi",
  "openai",
  "anthropic",
  "gemini-cli",
  "opencode",
  "openhands",
  "langchain",
  "responses",
  "ai-sdk",
  "pi-messages",
] as const;

/** A format's `--format` name. */
export type FormatName = (typeof FORMAT_NAME_LIST)[number];
