import { test } from "node:test";
import assert from "node:assert/strict";
import { bars, totals, type Row, type Side } from "./fidelity-bars.js";
import type { Kept } from "./fidelity-facts.js";

/** A Kept with `kept` of `total` for every fact kind. */
function kept(k: number, total: number, last: boolean | null = true): Kept {
  const c = { kept: k, total };
  return {
    files_basename: c,
    files_relative: c,
    files_absolute: c,
    directions: c,
    errors: c,
    commands: c,
    last_instruction: last,
    missed: { files: [], directions: [], errors: [], commands: [] },
  };
}

function side(k: Kept, tokens: number, hit: boolean): Side {
  return {
    kept: k,
    note: kept(0, k.directions.total, false),
    summary_chars: tokens * 3,
    summary_tokens: tokens,
    next_step: "",
    next_step_hit: hit ? "word x" : null,
  };
}

function row(cs: Side | null, agent: Side, calls = 5): Row {
  return {
    session: "s",
    compaction: "c",
    agent: "claude-code",
    messages_before: 10,
    after_cut: { calls, paths: [], commands: [], words: [] },
    summary_max_tokens: agent.summary_tokens,
    target: agent.summary_tokens + 100,
    compact_safe: cs && { ...cs, path: "summary", tokens_after: 1, target_reached: true },
    error: cs ? null : "summarizer_failed: x",
    agent_side: agent,
    size_ratio: cs ? cs.summary_tokens / agent.summary_tokens : null,
  };
}

const met = (rows: Row[]) => Object.fromEntries(bars(rows, totals(rows, "kept")).map((b) => [b.name, b.met]));

test("bars: all met when compact-safe keeps everything, at the agent's size, with as many next-step hits", () => {
  const rows = [row(side(kept(10, 10), 100, true), side(kept(5, 10), 100, true))];
  assert.ok(Object.values(met(rows)).every((v) => v));
});

test("bars: each one fails on its own", () => {
  const agent = side(kept(5, 10), 100, true);
  const names = (rows: Row[]) =>
    Object.entries(met(rows))
      .filter(([, v]) => !v)
      .map(([k]) => k.split(" ")[0] + " " + k.split(" ")[1]);
  // 97 of 100 files, directions and errors: files (< 98 %), directions (< 100 %) and errors (>= 95 %, met).
  assert.deepEqual(names([row(side(kept(97, 100), 100, true), agent)]), [
    "modified files",
    "user directions",
  ]);
  // 94 of 100: errors too.
  assert.deepEqual(names([row(side(kept(94, 100), 100, true), agent)]), [
    "modified files",
    "user directions",
    "error first",
  ]);
  assert.deepEqual(names([row(side(kept(10, 10, false), 100, true), agent)]), ["the last"]);
  // Size: every case counts, not only the total (1.3x here, 0.8x there: overall 1.05x).
  assert.deepEqual(
    names([
      row(side(kept(10, 10), 130, true), agent),
      row(side(kept(10, 10), 80, true), side(kept(5, 10), 100, true)),
    ]),
    ["summary size"],
  );
  assert.deepEqual(names([row(side(kept(10, 10), 100, false), agent)]), ["next step"]);
  assert.deepEqual(names([row(null, agent), row(side(kept(10, 10), 100, true), agent)]), [
    "compact-safe returns",
  ]);
  assert.deepEqual(names([]).sort(), ["compact-safe returns", "summary size"]);
});

test("totals: summed over the rows compact-safe measured, in the scope asked; next steps judged where calls followed", () => {
  const rows = [
    row(side(kept(3, 4), 100, true), side(kept(1, 4, false), 120, false)),
    row(side(kept(2, 2, null), 50, false), side(kept(2, 2, null), 40, false), 0),
    row(null, side(kept(9, 9), 10, true)),
  ];
  const t = totals(rows, "kept");
  assert.deepEqual(t.compact_safe.files_relative, { kept: 5, total: 6 });
  assert.deepEqual(t.agent.directions, { kept: 3, total: 6 });
  assert.deepEqual(t.compact_safe.last_instruction, { kept: 1, total: 1 });
  assert.deepEqual(t.agent.last_instruction, { kept: 0, total: 1 });
  assert.equal(t.compact_safe.next_step_hits, 1);
  assert.equal(t.next_step_cases, 1);
  assert.deepEqual(t.summary_tokens, { compact_safe: 150, agent: 160 });
  const note = totals(rows, "note");
  assert.deepEqual(note.compact_safe.directions, { kept: 0, total: 6 });
});
