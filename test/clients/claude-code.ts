/**
 * Claude Code 2.1.328 against a fake Anthropic server, for each chosen corpus
 * session:
 *
 * 1. **fork A->B.** compact-safe writes the session back as a fork
 *    (`compact --fork`); Claude Code resumes the original (request A) and the
 *    fork (request B) with the same prompt. A->B must pass `compact-safe
 *    validate`, and B's messages must be exactly the fork's lines (what
 *    compact-safe wrote: the checkpoint as the compact summary, then the kept
 *    messages) followed by what Claude Code adds itself: one user message of
 *    `<system-reminder>` blocks and the prompt.
 * 2. **own /compact + audit.** Claude Code compacts the session itself
 *    (`claude -p /compact`, the fake answering a canned summary), resumes
 *    it, and `compact-safe audit` gives the verdict on Claude Code's
 *    compaction. The verdict is reported as seen (kept or not); the check
 *    fails only when the audit cannot read the session or finds no
 *    compaction Claude Code just wrote.
 */
import { isDeepStrictEqual } from "node:util";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeServer, type FakeServer } from "./fake-server.js";
import { answerAnthropic, CANNED_SUMMARY } from "./fake-anthropic.js";
import { runProcess } from "./run-process.js";
import { teeHook, type TeeHook } from "./tee-hook.js";
import type { ClientContext, SessionVerdict } from "./types.js";

/** Corpus sessions tried (each resumes in a few seconds). */
export const CLAUDE_CODE_SESSIONS = [
  "claude-code/entire-0e-3fdc072c53-0.jsonl",
  "claude-code/entire-1a-8a83a35a9b-0.jsonl",
  "claude-code/entire-7d-66f047ac98-0.jsonl",
  "claude-code/entire-98-78b713483d-0.jsonl",
  "claude-code/entire-ad-a8171575ce-0.jsonl",
  "claude-code/entire-cd-95adddad32-0.jsonl",
  "claude-code/entire-d3-7d736cbc10-0.jsonl",
  "claude-code/entire-fc-99c919b212-0.jsonl",
  "claude-code/ccviewer-mock-fe5e1c67.jsonl",
];

const PROMPT = "continue";

/** Sessions also tried cut after their last tool call (in flight). */
const IN_FLIGHT_SESSIONS = CLAUDE_CODE_SESSIONS.slice(0, 3);

/** The session's lines up to its last assistant line with a tool call (that call then has no result). */
export function cutAfterLastCall(text: string): string {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  const last = lines.findLastIndex((l) => {
    try {
      const o = JSON.parse(l) as { type?: string; isSidechain?: boolean; message?: { content?: unknown } };
      return (
        o.type === "assistant" &&
        o.isSidechain !== true &&
        Array.isArray(o.message?.content) &&
        (o.message.content as Block[]).some((b) => b.type === "tool_use")
      );
    } catch {
      return false;
    }
  });
  if (last < 0) throw new Error("the session has no tool call");
  return lines.slice(0, last + 1).join("\n") + "\n";
}

interface Block {
  type?: string;
  text?: string;
  [k: string]: unknown;
}

interface WireMessage {
  role: string;
  content: string | Block[];
}

/** Blocks with Claude Code's per-request cache markers removed. */
function blocks(m: WireMessage): Block[] {
  const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
  return content.map((b) => {
    const { cache_control: _ignored, ...rest } = b;
    return rest;
  });
}

export function sessionId(text: string): string {
  for (const line of text.split("\n")) {
    const m = /"sessionId":"([^"]+)"/.exec(line);
    if (m) return m[1]!;
  }
  throw new Error("no sessionId in the session file");
}

/**
 * What Claude Code sends for the fork's lines: consecutive user lines become
 * one user message (the API would combine them anyway), and when it joins
 * them it ends the earlier line's last text block with a newline; a call of
 * the legacy tool name `Task` goes out under its current name `Agent` (it
 * does the same to the original's).
 */
export function asClaudeCodeSendsThem(written: readonly WireMessage[]): WireMessage[] {
  const sent: WireMessage[] = [];
  for (const line of written) {
    const m: WireMessage = {
      role: line.role,
      content: blocks(line).map((b) =>
        b.type === "tool_use" && b.name === "Task" ? { ...b, name: "Agent" } : b,
      ),
    };
    const prev = sent.at(-1);
    if (prev !== undefined && prev.role === "user" && m.role === "user") {
      const joined = blocks(prev);
      const last = joined.at(-1);
      if (last?.type === "text") joined[joined.length - 1] = { ...last, text: `${last.text}\n` };
      sent[sent.length - 1] = { role: "user", content: [...joined, ...blocks(m)] };
    } else sent.push({ role: m.role, content: blocks(m) });
  }
  return sent;
}

/**
 * Checks B against the fork's lines: the messages Claude Code sends are the
 * fork's messages in order (consecutive user lines joined, as Claude Code
 * joins them), then one user message of additions. Returns what it added,
 * or throws with the first difference.
 */
export function compareWithFork(forkText: string, request: { messages: WireMessage[] }): string {
  const lines: WireMessage[] = forkText
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { message?: WireMessage })
    .filter((l) => l.message !== undefined)
    .map((l) => l.message!);
  const written = asClaudeCodeSendsThem(lines);
  const joined = lines.length - written.length;
  // Claude Code adds messages of role "system" of its own for some models (an `output_config`, the
  // environment): both A and B carry them; they are not part of the history.
  const sent = request.messages.filter((m) => m.role !== "system");
  const systemAdded = request.messages.length - sent.length;
  const renamed = lines.flatMap(blocks).filter((b) => b.type === "tool_use" && b.name === "Task").length;
  // A call the fork leaves in flight (its last line): Claude Code closes it itself on resume, with an
  // interrupted tool result and an assistant "No response requested.", before the prompt.
  const finalLine = written.at(-1);
  const dangling =
    finalLine?.role === "assistant"
      ? blocks(finalLine)
          .filter((b) => b.type === "tool_use")
          .map((b) => b.id)
      : [];
  const closing = dangling.length > 0 ? 2 : 0;
  if (sent.length !== written.length + closing + 1)
    throw new Error(
      `B has ${sent.length} messages; the fork's ${lines.length} lines make ${written.length} (+${closing + 1} expected)`,
    );
  if (closing > 0) {
    const results = blocks(sent[written.length]!);
    if (
      sent[written.length]!.role !== "user" ||
      !isDeepStrictEqual(
        results.map((b) => (b.type === "tool_result" ? b.tool_use_id : b.type)),
        dangling,
      ) ||
      sent[written.length + 1]!.role !== "assistant"
    )
      throw new Error("the call left in flight is not closed by Claude Code's own result before the prompt");
  }
  for (let i = 0; i < written.length; i++) {
    if (sent[i]!.role !== written[i]!.role)
      throw new Error(`message ${i}: role ${sent[i]!.role}, fork ${written[i]!.role}`);
    if (!isDeepStrictEqual(blocks(sent[i]!), blocks(written[i]!)))
      throw new Error(`message ${i} (${written[i]!.role}): content differs from the fork's line`);
  }
  const last = blocks(sent.at(-1)!);
  const reminders = last.filter((b) => b.type === "text" && b.text!.startsWith("<system-reminder>"));
  const extras = [
    joined > 0 ? `${joined} consecutive user lines joined` : "",
    renamed > 0 ? `${renamed} Task calls named Agent` : "",
    systemAdded > 0 ? `${systemAdded} role-system messages of its own` : "",
    closing > 0 ? `the in-flight call closed by its own interrupted result and "No response requested."` : "",
  ].filter((x) => x !== "");
  const prompt = last.at(-1);
  if (prompt?.type !== "text" || prompt.text !== PROMPT || reminders.length !== last.length - 1)
    throw new Error("the last message is not system reminders then the prompt");
  return (
    `B = the fork's ${lines.length} lines${extras.length > 0 ? ` (as Claude Code sends them: ${extras.join(", ")})` : ""}` +
    ` + 1 user message (${reminders.length} <system-reminder> blocks, the prompt)`
  );
}

/** The request without Claude Code's `<system-reminder>` text blocks (a message left empty is dropped). */
export function withoutReminders(request: { messages: WireMessage[] }): {
  request: { messages: WireMessage[] };
  removed: number;
} {
  let removed = 0;
  const messages: WireMessage[] = [];
  for (const m of request.messages) {
    if (m.role !== "user" || typeof m.content === "string") {
      messages.push(m);
      continue;
    }
    const kept = m.content.filter((b) => !(b.type === "text" && b.text!.startsWith("<system-reminder>")));
    removed += m.content.length - kept.length;
    if (kept.length > 0) messages.push({ ...m, content: kept });
  }
  return { request: { ...request, messages }, removed };
}

interface Client {
  home: string;
  workspace: string;
  projectDir: string;
  server: FakeServer;
  bin: string;
}

async function claude(c: Client, args: string[]): Promise<void> {
  const r = await runProcess(join(c.bin, "claude"), [...args, "--output-format", "json"], {
    cwd: c.workspace,
    env: {
      HOME: c.home,
      ANTHROPIC_BASE_URL: c.server.url,
      ANTHROPIC_API_KEY: "fake-key",
      DISABLE_TELEMETRY: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
    },
    timeoutMs: 120_000,
  });
  if (r.code !== 0)
    throw new Error(
      `claude ${args.join(" ")}: exit ${r.code}: ${(r.stderr || r.stdout).trim().slice(0, 300)}`,
    );
}

/** The last /v1/messages request since `from` (Claude Code may also ask other things). */
function lastMessagesRequest(server: FakeServer, from: number): { messages: WireMessage[] } {
  const found = server.requests
    .slice(from)
    .filter((r) => r.path.startsWith("/v1/messages") && !r.path.includes("count_tokens"))
    .at(-1);
  if (found === undefined) throw new Error("the fake server got no /v1/messages request");
  return found.body as { messages: WireMessage[] };
}

async function cli(
  ctx: ClientContext,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runProcess(process.execPath, [ctx.cli, ...args], { env: { NO_COLOR: "1" }, timeoutMs: 120_000 });
}

/** What one check found: passed or not, and one line saying what was seen. */
interface Outcome {
  ok: boolean;
  detail: string;
}

function failed(detail: string): Outcome {
  return { ok: false, detail };
}

async function forkCheck(ctx: ClientContext, c: Client, original: string): Promise<Outcome> {
  const originalPath = join(c.projectDir, `${sessionId(original)}.jsonl`);
  // A small target takes the summary path, so the fork starts with a compact boundary and summary line.
  const compacted = await cli(ctx, [
    "compact",
    originalPath,
    "--fork",
    "--json",
    "--target",
    "2000",
    "--workspace",
    c.workspace,
  ]);
  if (compacted.code !== 0)
    return failed(`compact --fork: exit ${compacted.code}: ${compacted.stderr.trim()}`);
  const receipt = JSON.parse(compacted.stdout) as {
    path: string;
    fork: { path: string; session_id: string };
  };
  const forkText = readFileSync(receipt.fork.path, "utf8");
  let from = c.server.requests.length;
  await claude(c, ["-p", PROMPT, "--resume", sessionId(original)]);
  const a = lastMessagesRequest(c.server, from);
  from = c.server.requests.length;
  await claude(c, ["-p", PROMPT, "--resume", receipt.fork.session_id]);
  const b = lastMessagesRequest(c.server, from);
  // The <system-reminder> blocks are Claude Code's own, not the user's words, and it writes different ones
  // into A and B (e.g. "The task tools haven't been used recently" only where the history is long): both
  // requests are validated without them.
  const aFile = join(c.home, "A.json");
  const bFile = join(c.home, "B.json");
  const strippedA = withoutReminders(a);
  const strippedB = withoutReminders(b);
  writeFileSync(aFile, JSON.stringify(strippedA.request));
  writeFileSync(bFile, JSON.stringify(strippedB.request));
  const v = await cli(ctx, ["validate", aFile, bFile, "--path", receipt.path]);
  if (v.code !== 0) return failed(`validate A->B: exit ${v.code}: ${(v.stdout + v.stderr).trim()}`);
  try {
    const added = compareWithFork(forkText, b);
    return {
      ok: true,
      detail:
        `validate ok (${a.messages.length} -> ${b.messages.length} messages, ` +
        `${strippedA.removed}/${strippedB.removed} <system-reminder> blocks set aside); ${added}`,
    };
  } catch (e) {
    return failed((e as Error).message);
  }
}

/** Registers the SessionStart hook (`compact-safe hook claude-code`, matcher `compact`) in the home's settings.json. */
function installSessionStartHook(c: Client): TeeHook {
  const hook = teeHook(c.home, "session-start", "claude-code");
  writeFileSync(
    join(c.home, ".claude", "settings.json"),
    JSON.stringify({
      hooks: { SessionStart: [{ matcher: "compact", hooks: [{ type: "command", command: hook.command }] }] },
    }),
  );
  return hook;
}

async function ownCompactCheck(ctx: ClientContext, c: Client, original: string): Promise<Outcome> {
  const id = sessionId(original);
  const file = join(c.projectDir, `${id}.jsonl`);
  const before = readFileSync(file, "utf8").split("\n").length;
  const audited = await cli(ctx, ["audit", file, "--json"]);
  const recorded = (JSON.parse(audited.stdout) as { compactions: unknown[] }).compactions.length;
  const hook = installSessionStartHook(c);
  try {
    await claude(c, ["-p", "/compact", "--resume", id]);
    const after = readFileSync(file, "utf8");
    const added = after.split("\n").slice(before - 1);
    if (!added.some((l) => l.includes('"compact_boundary"')) || !after.includes(CANNED_SUMMARY.slice(0, 40)))
      return failed("claude /compact wrote no compact boundary with the fake's summary");
    // The hook ran on SessionStart (source compact), on this transcript.
    if (!existsSync(hook.input)) return failed("Claude Code did not run the SessionStart hook");
    const given = JSON.parse(readFileSync(hook.input, "utf8")) as {
      source?: string;
      transcript_path?: string;
    };
    if (given.source !== "compact" || given.transcript_path !== file)
      return failed(`the hook got ${JSON.stringify(given).slice(0, 200)}`);
    const answer = readFileSync(hook.output, "utf8").trim();
    const restated =
      answer === ""
        ? undefined
        : (JSON.parse(answer) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput
            .additionalContext;
    // It loads again after its own compaction; what the hook restated reaches the model.
    const from = c.server.requests.length;
    await claude(c, ["-p", PROMPT, "--resume", id]);
    const b = JSON.stringify(lastMessagesRequest(c.server, from));
    const instructions = restated?.split("\n").filter((l) => l.startsWith("- ")) ?? [];
    if (instructions.some((l) => !b.includes(JSON.stringify(l).slice(1, -1))))
      return failed("the hook's restated instructions are not in the request after the compaction");
    const audit = await cli(ctx, ["audit", file, "--json"]);
    if (audit.code !== 0 && audit.code !== 1)
      return failed(`audit: exit ${audit.code}: ${audit.stderr.trim()}`);
    const result = JSON.parse(audit.stdout) as {
      compactions: Array<{ source: string; kept: boolean; reason: string | null; messages_before: number }>;
    };
    const last = result.compactions.at(-1);
    if (last === undefined || last.source !== "claude-code" || result.compactions.length !== recorded + 1)
      return failed(
        `audit found ${result.compactions.length} compactions (${recorded} before /compact); expected one more, Claude Code's`,
      );
    return {
      ok: true,
      detail:
        `Claude Code's /compact ${last.kept ? "KEPT" : "BROKE"} the contract` +
        `${last.reason ? ` (${last.reason})` : ""}; ${recorded} earlier compaction(s) in the session; ` +
        (instructions.length > 0
          ? `the SessionStart hook restated ${instructions.length} instruction(s) of the last round, and the next request carried them`
          : "the SessionStart hook ran and had no instruction of the last round to restate"),
    };
  } finally {
    rmSync(join(c.home, ".claude", "settings.json"), { force: true });
  }
}

export async function claudeCodeClient(ctx: ClientContext): Promise<SessionVerdict[]> {
  const verdicts: SessionVerdict[] = [];
  const server = await startFakeServer((req, res) => answerAnthropic(req, res));
  try {
    for (const session of CLAUDE_CODE_SESSIONS) {
      const home = mkdtempSync(join(tmpdir(), "cs-claude-home-"));
      try {
        const workspace = join(home, "work");
        mkdirSync(workspace);
        // Claude Code looks a session up in the project folder of its working directory.
        const projectDir = join(home, ".claude", "projects", workspace.replace(/[/.]/g, "-"));
        mkdirSync(projectDir, { recursive: true });
        const original = readFileSync(join(ctx.corpus, session), "utf8");
        const c: Client = { home, workspace, projectDir, server, bin: ctx.bin };
        const checks: Array<[string, string | undefined, typeof forkCheck]> = [
          ["fork A->B", original, forkCheck],
          ["own /compact + audit", original, ownCompactCheck],
          // The same session cut after its last tool call, as if that call were still running.
          [
            "fork, last call in flight",
            IN_FLIGHT_SESSIONS.includes(session) ? cutAfterLastCall(original) : undefined,
            forkCheck,
          ],
        ];
        for (const [check, text, run] of checks) {
          if (text === undefined) continue;
          // Each check starts from its own copy (the corpus is never written).
          writeFileSync(join(projectDir, `${sessionId(original)}.jsonl`), text);
          ctx.log(`claude-code ${session}: ${check}`);
          try {
            verdicts.push({ client: "claude-code", session, check, ...(await run(ctx, c, text)) });
          } catch (e) {
            verdicts.push({ client: "claude-code", session, check, ok: false, detail: (e as Error).message });
          }
        }
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    }
  } finally {
    await server.close();
  }
  return verdicts;
}
