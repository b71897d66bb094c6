/**
 * The workspace is the agent's: the folder a request names as its working
 * directory (Claude Code's environment text, in its system prompt or a system
 * element inside `messages`; Codex's `<cwd>`; pi's system prompt) gives the
 * anchors and the live state the repair restates; the guard's own folder is
 * the fallback.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGuardCore } from "../core.js";
import { readWire } from "../reading/wires.js";
import { namedFolders, requestWorkspace } from "./workspace.js";
import { answerOn } from "./answer.js";
import type { WireRequest } from "../types.js";
import { gitRepo, hasGit } from "../../../test/git-repo.js";

test("the working directory each agent names", () => {
  assert.deepEqual(
    namedFolders("# Environment\n - Primary working directory: /home/u/proj\n - Is a git repository: true"),
    ["/home/u/proj"],
  );
  assert.deepEqual(namedFolders("<env>\nWorking directory: /srv/app\n</env>"), ["/srv/app"]);
  assert.deepEqual(namedFolders("<environment_context>\n  <cwd>/work/repo</cwd>\n</environment_context>"), [
    "/work/repo",
  ]);
  assert.deepEqual(namedFolders("Current date: 2026-12-04\nCurrent working directory: /p/q"), ["/p/q"]);
  assert.deepEqual(namedFolders("a prompt that mentions the working directory in passing"), []);
});

test("a named folder that does not exist here is not taken; the last existing one is", async () => {
  const real = realpathSync(mkdtempSync(join(tmpdir(), "guard-ws-named-")));
  try {
    const h = readWire("openai-responses", {
      instructions: "You are Codex.",
      input: [
        {
          type: "message",
          role: "user",
          content: [
            {
              type: "input_text",
              text: `<environment_context><cwd>${real}</cwd></environment_context>\n<environment_context><cwd>/no/such/folder</cwd></environment_context>`,
            },
          ],
        },
      ],
    });
    assert.equal(await requestWorkspace(h), real);
  } finally {
    rmSync(real, { recursive: true, force: true });
  }
});

const ANCHORS = join(".codewhale", "anchors.md");

test(
  "the repair restates the anchors and live state of the folder the agent works in, not the guard's own",
  { skip: !hasGit() },
  async () => {
    const guardDir = realpathSync(mkdtempSync(join(tmpdir(), "guard-own-")));
    const agentDir = realpathSync(mkdtempSync(join(tmpdir(), "guard-agent-")));
    try {
      for (const [dir, text] of [
        [guardDir, "anchors of the folder the guard was started in"],
        [agentDir, "never touch the migrations folder"],
      ] as const) {
        mkdirSync(join(dir, ".codewhale"), { recursive: true });
        writeFileSync(join(dir, ANCHORS), text);
      }
      gitRepo(agentDir);
      const core = createGuardCore({ workspace: guardDir, anchorsFromWorkspace: true });
      const env = { role: "system", content: `# Environment\n - Primary working directory: ${agentDir}` };
      const req = (messages: unknown[]): WireRequest => ({
        method: "POST",
        url: "/v1/messages",
        headers: { "x-claude-code-session-id": "ws-1" },
        body: Buffer.from(
          JSON.stringify({
            model: "claude-opus-5-5",
            system: "You are Claude Code.",
            tools: [{ name: "Bash", input_schema: { type: "object" } }],
            messages: [messages[0], env, ...messages.slice(1)],
          }),
        ),
      });
      const u = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
      const history = [
        u("fix it"),
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
      ];
      await core.handle(req(history));
      // The summarization request, and the upstream's answer relayed: what proves the compaction.
      const summ = await core.handle(req([...history, u("CRITICAL: Respond with TEXT ONLY. Summarize.")]));
      summ.relayed!(
        answerOn(
          "anthropic-messages",
          {},
          "<summary>Summary: the failing build was fixed in the parser.</summary>",
          0,
          0,
        ).body as Buffer,
      );
      const o = await core.handle(
        req([
          u(
            "This session is being continued from a previous conversation. Summary: the failing build was fixed in the parser.",
          ),
          u("next"),
        ]),
      );
      assert.equal(o.verdict?.repaired, true, o.verdict?.repair_refused ?? "");
      const body = o.body.toString("utf8");
      assert.ok(body.includes("never touch the migrations folder"), "the agent's anchors");
      assert.ok(!body.includes("anchors of the folder the guard was started in"));
      assert.ok(body.includes(`- git branch: feature/x\\n- worktree: ${agentDir}`), "the agent's live state");
      await core.close();
    } finally {
      rmSync(guardDir, { recursive: true, force: true });
      rmSync(agentDir, { recursive: true, force: true });
    }
  },
);
