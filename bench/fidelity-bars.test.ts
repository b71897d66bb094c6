import { test } from "node:test";
import assert from "node:assert/strict";
import {
  bars,
  defaultBars,
  totals,
  type DefaultRun,
  type Row,
  type SecondRun,
  type Side,
} from "./fidelity-bars.js";
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

/** A default-target run from a side: a note (or prune-only), with the cut markers given. */
function run(s: Side, note = true, cut: string[] = []): DefaultRun {
  return {
    ...s,
    path: note ? "summary" : "prune-only",
    target: 100_000,
    tokens_after: 1,
    target_reached: true,
    target_missed: null,
    summary_budget: note ? 2_000 : null,
    has_note: note,
    cut_in: cut,
  };
}

function named(s: Side, hit: boolean): Side {
  return { ...s, next_step_named: hit ? "path a.ts" : null };
}

function second(shorter: string[], error: string | null = null): SecondRun {
  return {
    appended: 3,
    continuation: { calls: 1, directions: 0 },
    path: error ? null : "summary",
    error,
    sections: [{ title: "Work done", first: 10, second: shorter.length > 0 ? 5 : 10, still_true: true }],
    shorter,
  };
}

function defaultRow(d: DefaultRun | null, agent: Side, s: SecondRun | null = second([]), calls = 5): Row {
  return { ...row(d, agent, calls), default_target: d, default_error: d ? null : "x", second: s };
}

const metDefault = (rows: Row[]) =>
  Object.entries(
    Object.fromEntries(
      defaultBars(
        rows,
        totals(rows, "kept", (r) => r.default_target),
      ).map((b) => [b.name, b.met]),
    ),
  )
    .filter(([, v]) => !v)
    .map(([k]) => `${k.split(": ")[0]}: ${k.split(": ")[1]!.split(" ").slice(0, 3).join(" ")}`);

test("defaultBars: all met when the note keeps as much as the agent, names the next work as often, and no section shrinks", () => {
  const agent = named(side(kept(5, 10), 100, true), true);
  const rows = [defaultRow(run(named(side(kept(5, 10), 100, true), true)), agent)];
  assert.deepEqual(metDefault(rows), []);
});

test("defaultBars: each one fails on its own, against the agent's figures", () => {
  const agent = named(side(kept(5, 10), 100, true), true);
  const good = named(side(kept(10, 10), 100, true), true);
  // No run at all: no replacement, and no note to judge a next step on.
  assert.deepEqual(metDefault([defaultRow(null, agent)]), [
    "default target: compact-safe returns a",
    "default target: next step names",
  ]);
  assert.deepEqual(metDefault([defaultRow(run(good, true, ["Next step"]), agent)]), [
    "default target: no cut marker",
  ]);
  // Fewer files, errors (the same Kept here) than the agent's summary kept.
  assert.deepEqual(metDefault([defaultRow(run(named(side(kept(4, 10), 100, true), true)), agent)]), [
    "default target: files by relative",
    "default target: error first lines",
  ]);
  assert.deepEqual(metDefault([defaultRow(run(named(good, false)), agent)]), [
    "default target: next step names",
  ]);
  assert.deepEqual(metDefault([defaultRow(run(good), agent, second(["Work done 10 -> 5"]))]), [
    "second compaction: no section shorter",
  ]);
  assert.deepEqual(metDefault([defaultRow(run(good), agent, second([], "contract_violation: x"))]), [
    "second compaction: no section shorter",
  ]);
  // No second compaction at all is not a pass by construction.
  assert.deepEqual(metDefault([defaultRow(run(good), agent, null)]), [
    "second compaction: no section shorter",
  ]);
});

test("defaultBars: the next step is judged on the notes; a prune-only run has none and is left out, for both sides", () => {
  const agent = named(side(kept(5, 10), 100, true), true);
  const good = named(side(kept(10, 10), 100, true), true);
  const rows = [defaultRow(run(good), agent), defaultRow(run(named(good, false), false), agent, null)];
  const bar = defaultBars(
    rows,
    totals(rows, "kept", (r) => r.default_target),
  ).find((b) => b.name.startsWith("default target: next step"))!;
  assert.equal(bar.met, true);
  assert.match(bar.compact_safe, /^1\/1 notes \(1 more cases prune-only/);
  assert.equal(bar.agent, "1/1");
  // Cases with no call after the cut are not judged.
  const idle = [defaultRow(run(named(good, false)), agent, second([]), 0)];
  const b2 = defaultBars(
    idle,
    totals(idle, "kept", (r) => r.default_target),
  ).find((b) => b.name.startsWith("default target: next step"))!;
  assert.equal(b2.met, false, "no case judged: not met by construction");
});
