/**
 * A pi session in the format pi 0.73.1 writes (session version 3: a header,
 * then entries chained by `id` / `parentId`), for the tests that need one
 * without the corpus: model and thinking-level entries, several rounds of
 * signed thinking, parallel tool calls with their results (one an error, one
 * with an image), a user-run `!` command, and pi's own compaction part way.
 */

export interface PiSessionOptions {
  cwd: string;
  /** Rounds of work (each: a user request, thinking, a parallel batch of two calls and their results, a reply). */
  rounds?: number;
  /** Bytes of filler in each tool result (to make the session large). */
  resultBytes?: number;
  /** Rounds after which pi's own compaction entry is written (none when undefined). */
  compactAfter?: number;
}

export const PI_TEST_SESSION_ID = "019ad000-0000-7000-8000-000000000001";

/** The session file's text. */
export function piSessionText(o: PiSessionOptions): string {
  const rounds = o.rounds ?? 6;
  const filler = "x".repeat(o.resultBytes ?? 400);
  const lines: Record<string, unknown>[] = [
    {
      type: "session",
      version: 3,
      id: PI_TEST_SESSION_ID,
      timestamp: "2026-11-30T10:00:00.000Z",
      cwd: o.cwd,
    },
  ];
  let n = 0;
  let parent: string | null = null;
  let clock = Date.parse("2026-11-30T10:00:01.000Z");
  const add = (e: Record<string, unknown>): string => {
    const id = (++n).toString(16).padStart(8, "0");
    clock += 1000;
    lines.push({ type: e.type, id, parentId: parent, timestamp: new Date(clock).toISOString(), ...e });
    parent = id;
    return id;
  };
  const usage = (input: number) => ({
    input,
    output: 120,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: input + 120,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  });
  const assistant = (content: unknown[], stopReason: string, input: number) => ({
    role: "assistant",
    content,
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-opus-4-5",
    usage: usage(input),
    stopReason,
    timestamp: clock,
  });
  add({ type: "model_change", provider: "anthropic", modelId: "claude-opus-4-5" });
  add({ type: "thinking_level_change", thinkingLevel: "high" });
  const firstOfRound: string[] = [];
  for (let r = 1; r <= rounds; r++) {
    firstOfRound.push(
      add({
        type: "message",
        message: {
          role: "user",
          content: [{ type: "text", text: `Round ${r}: update module ${r} and run its tests.` }],
          timestamp: clock,
        },
      }),
    );
    add({
      type: "message",
      message: assistant(
        [
          {
            type: "thinking",
            thinking: `Round ${r}: read the module and its test first.`,
            thinkingSignature: `EqQBCkYIBxgCKkB+sig/${r}==`,
          },
          { type: "text", text: `Reading module ${r}.` },
          { type: "toolCall", id: `toolu_r${r}a`, name: "read", arguments: { path: `src/m${r}.ts` } },
          { type: "toolCall", id: `toolu_r${r}b`, name: "bash", arguments: { command: `npm test -- m${r}` } },
        ],
        "toolUse",
        1000 * r,
      ),
    });
    add({
      type: "message",
      message: {
        role: "toolResult",
        toolCallId: `toolu_r${r}a`,
        toolName: "read",
        content: [
          { type: "text", text: `export const m${r} = ${r}; // ${filler}` },
          ...(r === 1 ? [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }] : []),
        ],
        isError: false,
        timestamp: clock,
      },
    });
    add({
      type: "message",
      message: {
        role: "toolResult",
        toolCallId: `toolu_r${r}b`,
        toolName: "bash",
        content: [{ type: "text", text: r % 2 === 0 ? `FAIL m${r}: expected 2` : `ok m${r} ${filler}` }],
        details: { exitCode: r % 2 === 0 ? 1 : 0 },
        isError: r % 2 === 0,
        timestamp: clock,
      },
    });
    add({
      type: "message",
      message: assistant([{ type: "text", text: `Module ${r} updated.` }], "stop", 1000 * r + 500),
    });
    if (r === 2) {
      add({
        type: "message",
        message: {
          role: "bashExecution",
          command: "git status --short",
          output: " M src/m2.ts",
          exitCode: 0,
          cancelled: false,
          truncated: false,
          timestamp: clock,
        },
      });
    }
    if (o.compactAfter === r) {
      add({
        type: "compaction",
        summary: `## Goal\nUpdate modules 1..${r}.\n\n## Progress\n- [x] modules 1..${r - 1}`,
        firstKeptEntryId: firstOfRound[r - 1],
        tokensBefore: 1000 * r,
        details: { readFiles: [`src/m${r}.ts`], modifiedFiles: [] },
        fromHook: false,
      });
    }
  }
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}
