/**
 * Small sessions as the agents write them, for the hook tests (`hook
 * claude-code`, `hook codex`): a Claude Code transcript whose last round holds
 * one instruction, with or without Claude Code's own compaction recorded
 * after it, and a Codex rollout ending with a `compacted` item.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export const INSTRUCTION = "Rename the config loader and keep the old name as an alias.";

/**
 * A Claude Code transcript in `dir` (`s-1.jsonl`, or `name`): one round (the
 * instruction, a Read call and its result, a reply), then, when `compacted`,
 * Claude Code's compaction that kept only its summary.
 */
export function claudeCodeTranscript(
  dir: string,
  o: { compacted: boolean; instruction?: string; name?: string },
): string {
  const base = { isSidechain: false, userType: "external", cwd: dir, sessionId: "s-1", version: "2.1.328" };
  let n = 0;
  const line = (parent: string | null, x: Record<string, unknown>) => ({
    ...base,
    parentUuid: parent,
    uuid: `u${++n}`,
    timestamp: `2026-12-01T00:00:0${n}Z`,
    ...x,
  });
  const lines: Record<string, unknown>[] = [
    line(null, { type: "user", message: { role: "user", content: o.instruction ?? INSTRUCTION } }),
    line("u1", {
      type: "assistant",
      message: {
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "src/config.ts" } }],
      },
    }),
    line("u2", {
      type: "user",
      message: {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "export function loadConfig() {}" },
        ],
      },
    }),
    line("u3", {
      type: "assistant",
      message: { role: "assistant", content: [{ type: "text", text: "Renaming now." }] },
    }),
  ];
  if (o.compacted)
    lines.push(
      {
        ...base,
        parentUuid: null,
        logicalParentUuid: "u4",
        type: "system",
        subtype: "compact_boundary",
        content: "Conversation compacted",
        isMeta: false,
        timestamp: "2026-12-01T00:01:00Z",
        uuid: "b1",
        level: "info",
        compactMetadata: { trigger: "manual", preTokens: 5000 },
      },
      {
        ...base,
        parentUuid: "b1",
        type: "user",
        isCompactSummary: true,
        uuid: "s1",
        timestamp: "2026-12-01T00:01:01Z",
        message: {
          role: "user",
          content: "This session is being continued from a previous conversation. Summary: a rename.",
        },
      },
    );
  const file = join(dir, o.name ?? "s-1.jsonl");
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return file;
}

export const CODEX_INSTRUCTION = "Now list them again and keep the hidden ones.";

/**
 * A Codex rollout in `dir` whose compaction (a `compacted` item, as Codex
 * writes one) kept the last round (`keepLast`) or only its summary and the
 * first request (the last instruction and the call that answered it gone).
 */
export function codexRollout(dir: string, keepLast: boolean, instruction = CODEX_INSTRUCTION): string {
  const at = "2026-12-01T00:00:00.000Z";
  const item = (type: string, payload: Record<string, unknown>) => ({ timestamp: at, type, payload });
  const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
  const call = { type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: "call_1" };
  const output = { type: "function_call_output", call_id: "call_1", output: "src\ntest" };
  const summary = user(
    "Another language model started to solve this problem and produced a summary: a listing.",
  );
  const lines = [
    item("session_meta", {
      id: "0199b26c-0000-7000-8000-000000000001",
      timestamp: at,
      cwd: dir,
      originator: "codex_cli_rs",
      cli_version: "0.169.0",
    }),
    item("response_item", user("List the files.")),
    item("response_item", {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "Listing." }],
    }),
    item("response_item", user(instruction)),
    item("response_item", call),
    item("response_item", output),
    item("compacted", {
      message: "a listing",
      replacement_history: keepLast
        ? [user("List the files."), summary, user(instruction), call, output]
        : [user("List the files."), summary],
    }),
  ];
  const file = join(dir, "rollout-2026-12-01T00-00-00-0199b26c-0000-7000-8000-000000000001.jsonl");
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return file;
}
