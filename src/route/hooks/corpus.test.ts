/**
 * The hooks' tail read answers what the whole import answers. For every
 * corpus session of Claude Code, Codex and pi (and GJC, a pi-derived tree),
 * and for versions of each cut at several lines (a Codex rollout cut and
 * ended by a `compacted` line in three forms; a pi tree cut and ended by a
 * compaction that keeps its last entries), each hook's answer read from the
 * tail, starting from a small window so that it must grow, is the answer read
 * from the whole file at once; and so on the 5 MB sessions the benchmarks
 * time, from the default first window.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { corpusFiles, corpusSuite } from "../../../test/support.js";
import { piSessionText } from "../../../test/pi-session.js";
import { claudeCodeSession, codexSession, piSession } from "../../../bench/hook-sessions.js";
import { claudeCodeHook, codexHook, piHook, type HookRead } from "../hooks.js";

type Hook = (input: Record<string, unknown>, read: HookRead) => Promise<unknown>;

const WHOLE: HookRead = { firstWindow: Infinity };
/** Small enough that every corpus session needs its window to grow (and some, the whole file). */
const SMALL: HookRead = { firstWindow: 2048 };

/** A hook's answer, or the one-line error it stops with. */
async function answer(hook: Hook, input: Record<string, unknown>, read: HookRead): Promise<unknown> {
  try {
    return await hook(input, read);
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

const hooks: Record<string, (file: string) => { hook: Hook; inputs: Record<string, unknown>[] }> = {
  "claude-code": (file) => ({
    hook: (i, r) => claudeCodeHook(i, "/", r),
    inputs: [{ hook_event_name: "SessionStart", source: "compact", transcript_path: file }],
  }),
  codex: (file) => ({
    hook: (i, r) => codexHook(i, "/", r),
    inputs: [{ hook_event_name: "PostCompact", transcript_path: file }],
  }),
  pi: (file) => {
    const ids = [...readFileSync(file, "utf8").matchAll(/"type":"compaction","id":"([^"]+)"/g)].map(
      (m) => m[1],
    );
    return {
      hook: (i, r) => piHook(i, "/", r),
      inputs: [
        { session_file: file },
        { session_file: file, compaction_id: "no-such-id" },
        ...ids.slice(-2).map((id) => ({ session_file: file, compaction_id: id })),
      ],
    };
  },
};

/** How many answers were read from a part of the file, and how many from the whole. */
const fromPart = new Map<string, { part: number; whole: number }>();

/** The hook answers the same from its tail (first window `read`) as from the whole file. */
async function sameAnswer(agent: string, file: string, read: HookRead, what: string): Promise<number[]> {
  const { hook, inputs } = hooks[agent]!(file);
  const count = fromPart.get(agent) ?? { part: 0, whole: 0 };
  fromPart.set(agent, count);
  const starts: number[] = [];
  for (const input of inputs) {
    const whole = await answer(hook, input, WHOLE);
    let start = 0;
    const tail = await answer(hook, input, { ...read, answeredFrom: (at) => (start = at) });
    assert.deepEqual(tail, whole, `${what} ${JSON.stringify(input.compaction_id ?? "")}`);
    if (start > 0) count.part++;
    else count.whole++;
    starts.push(start);
  }
  return starts;
}

/** Line counts at which to cut a session of `n` lines: spread over it, and just after each line `after` picks. */
function cutPoints(lines: readonly string[], after: (line: string) => boolean): number[] {
  const n = lines.length;
  const at = new Set([0.3, 0.5, 0.7, 0.85, 0.95].map((f) => Math.max(1, Math.round(n * f))));
  lines.forEach((l, i) => {
    if (after(l)) {
      at.add(i + 1);
      if (i + 3 <= n) at.add(i + 3);
    }
  });
  return [...at].filter((k) => k <= n).sort((a, b) => a - b);
}

/** Codex's `compacted` line: no history kept, the last items kept, or none recorded (rebuilt on resume). */
function codexCompacted(kept: readonly string[], form: number): string {
  const items = kept
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as { type?: string; payload?: unknown }];
      } catch {
        return []; // a broken line of the corpus
      }
    })
    .filter((o) => o.type === "response_item")
    .map((o) => o.payload);
  const payload =
    form === 0
      ? { message: "summary", replacement_history: [] }
      : form === 1
        ? { message: "summary", replacement_history: items }
        : { message: "summary" };
  return JSON.stringify({ timestamp: "2026-12-01T00:00:00.000Z", type: "compacted", payload });
}

/** A pi compaction after the last entry of a tree session, keeping its last entries from `firstKept`. */
function piCompaction(lines: readonly string[]): string | undefined {
  const ids = lines.flatMap((l) => {
    let o: { id?: unknown; type?: string };
    try {
      o = JSON.parse(l) as typeof o;
    } catch {
      return []; // a broken line of the corpus
    }
    return typeof o.id === "string" && o.type !== "session" ? [o.id] : [];
  });
  if (ids.length < 4) return undefined;
  return JSON.stringify({
    type: "compaction",
    id: "ffffffff",
    parentId: ids.at(-1),
    timestamp: "2026-12-01T00:00:00.000Z",
    summary: "summary",
    firstKeptEntryId: ids[ids.length - 3],
    tokensBefore: 1000,
  });
}

function withDir(body: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-hook-tail-"));
    try {
      await body(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** The cut versions of one session (each ends as the agent's hook could find it), written in `dir`. */
function cuts(agent: string, file: string, dir: string): string[] {
  const lines = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const marker =
    agent === "claude-code"
      ? /"isCompactSummary":true/
      : agent === "codex"
        ? /"type":"compacted"/
        : /"type":"compaction"/;
  const out: string[] = [];
  for (const k of cutPoints(lines, (l) => marker.test(l))) {
    const head = lines.slice(0, k);
    const tails: string[] =
      agent === "codex"
        ? [0, 1, 2].map((form) => codexCompacted(head.slice(-6), form))
        : agent === "pi"
          ? [piCompaction(head) ?? ""]
          : [""];
    tails.forEach((tail, t) => {
      const cut = join(dir, `${basename(file)}.${k}.${t}.jsonl`);
      writeFileSync(cut, [...head, ...(tail ? [tail] : [])].join("\n") + "\n");
      out.push(cut);
    });
  }
  return out;
}

corpusSuite("hooks read from the tail answer as from the whole file", () => {
  const agents: [string, string][] = [];
  for (const f of corpusFiles()) {
    const dir = basename(join(f, ".."));
    if (dir === "claude-code" || dir === "codex") agents.push([dir, f]);
    else if ((dir === "pi" || dir === "gjc") && f.endsWith(".jsonl")) agents.push(["pi", f]);
  }
  for (const [agent, file] of agents) {
    test(
      `${agent} ${basename(file)}: whole and cut at several lines`,
      withDir(async (dir) => {
        await sameAnswer(agent, file, SMALL, basename(file));
        for (const cut of cuts(agent, file, dir)) await sameAnswer(agent, cut, SMALL, basename(cut));
      }),
    );
  }

  test(
    "pi tree sessions (pi 0.73.1's format) cut at several entries",
    withDir(async (dir) => {
      const file = join(dir, "pi-tree.jsonl");
      writeFileSync(file, piSessionText({ cwd: dir, rounds: 40, resultBytes: 300, compactAfter: 30 }));
      await sameAnswer("pi", file, SMALL, "pi-tree");
      for (const cut of cuts("pi", file, dir)) await sameAnswer("pi", cut, SMALL, basename(cut));
    }),
  );

  test(
    "the 5 MB sessions of the hook benchmarks, from the default first window (a part of each)",
    withDir(async (dir) => {
      for (const [agent, file] of [
        ["claude-code", claudeCodeSession(dir)],
        ["codex", codexSession(dir)],
        ["pi", piSession(dir).file],
      ] as const) {
        const starts = await sameAnswer(agent, file, {}, `bench ${agent}`);
        // (pi's second input names no compaction of the file: that one may be before any window.)
        const read = starts.filter((_, i) => !(agent === "pi" && i === 1));
        assert.ok(
          read.length > 0 && read.every((s) => s > 0),
          `bench ${agent}: answered from a part of the file (${starts.join(", ")})`,
        );
      }
    }),
  );

  test("the answers compared were read from a part of the file for every agent, not always the whole", () => {
    for (const agent of ["claude-code", "codex", "pi"]) {
      const c = fromPart.get(agent);
      assert.ok(c && c.part > 0, `${agent}: ${JSON.stringify(c)}`);
    }
    console.log(`from a part of the file / the whole: ${JSON.stringify(Object.fromEntries(fromPart))}`);
  });
});
