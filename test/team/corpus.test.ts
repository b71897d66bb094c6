/**
 * `compact-safe audit` over a team's history, on the corpus: the sessions laid out as the agents lay
 * out their homes (Claude Code's `~/.claude/projects/<project>/<id>.jsonl`, Codex's
 * `~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl`, pi's `~/.pi/agent/sessions/<project>/<time>_<id>.jsonl`)
 * in a temporary HOME. `--home` finds them all and its aggregate is the sum of the one-file audits;
 * the shards merged give the same aggregate as one run; one worker and many write the same lines; a
 * session read only as far as its header (no compaction in it) has the record of the whole read.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { corpusDir, corpusFiles, corpusSuite } from "../support.js";
import { run, tempDir } from "../e2e/helpers.js";
import { auditSessionBytes, mayRecordCompaction } from "../../src/route/audit-record.js";

/** A HOME with the corpus's Claude Code, Codex and pi sessions where each agent keeps them. */
function agentsHome(home: string): { claude: number; codex: number; pi: number } {
  const n = { claude: 0, codex: 0, pi: 0 };
  for (const f of readdirSync(join(corpusDir, "claude-code")).filter((f) => f.endsWith(".jsonl"))) {
    const first = JSON.parse(readFileSync(join(corpusDir, "claude-code", f), "utf8").split("\n")[0]!) as {
      sessionId?: string;
      cwd?: string;
    };
    const project = (first.cwd ?? "/Users/someone/project").replace(/[/.]/g, "-");
    const dir = join(home, ".claude", "projects", project);
    mkdirSync(dir, { recursive: true });
    copyFileSync(
      join(corpusDir, "claude-code", f),
      join(dir, `${first.sessionId ?? basename(f, ".jsonl")}.jsonl`),
    );
    n.claude++;
  }
  for (const f of readdirSync(join(corpusDir, "codex"))) {
    const m = /rollout-(\d{4})-(\d{2})-(\d{2})T/.exec(f)!;
    const dir = join(home, ".codex", "sessions", m[1]!, m[2]!, m[3]!);
    mkdirSync(dir, { recursive: true });
    copyFileSync(join(corpusDir, "codex", f), join(dir, f.replace(/^.*?rollout-/, "rollout-")));
    n.codex++;
  }
  for (const sub of ["pi", "gjc"])
    for (const f of readdirSync(join(corpusDir, sub))) {
      const dir = join(home, ".pi", "agent", "sessions", `--home-user-${sub}--`);
      mkdirSync(dir, { recursive: true });
      copyFileSync(
        join(corpusDir, sub, f),
        join(dir, `2025-12-24T00-32-27-967Z_${basename(f, ".jsonl")}.jsonl`),
      );
      n.pi++;
    }
  // What else the agents keep beside their sessions: not sessions, ignored.
  writeFileSync(join(home, ".codex", "sessions", "index.json"), JSON.stringify({ note: "not a session" }));
  return n;
}

const ENV = {
  CLAUDE_CONFIG_DIR: "",
  CODEX_HOME: "",
  PI_CODING_AGENT_DIR: "",
  PI_CODING_AGENT_SESSION_DIR: "",
};

interface Summary {
  type: "summary";
  sessions: number;
  counts: { compactions: number; judged: number; kept: number; lost: number; not_judgeable: number };
  by_agent: { agent: string; version: string | null; sessions: number }[];
  not_sessions: number;
  run: unknown;
}

function lastLine(stdout: string): Summary {
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as Summary;
}

corpusSuite("audit over the agents' homes", () => {
  test("audit --home finds every session where the agents keep them; the aggregate is the sum of the one-file audits", async (t) => {
    const { dir, cleanup } = tempDir("cs-team-home-");
    t.after(cleanup);
    const n = agentsHome(dir);
    const env = { ...ENV, HOME: dir };
    const r = await run(["audit", "--home", "--jobs", "2"], { env });
    assert.equal(r.code, 1, r.stderr);
    const total = n.claude + n.codex + n.pi;
    assert.match(
      r.stdout,
      new RegExp(`^${total} sessions audited \\([\\d,]+ bytes\\); 1 other file not sessions, ignored$`, "m"),
    );
    assert.match(r.stdout, /^by agent and version:$/m);
    for (const row of [
      /^ {2}claude-code +2\.1\.7 +1 +3 +0 +3 +0 +0$/m,
      // Begun under 2.1.36, compacted under 2.1.37: the session is counted under one, its compaction the other.
      /^ {2}claude-code +2\.1\.37 +0 +1 +0 +1 +0 +0$/m,
      /^ {2}claude-code +2\.1\.36 +1 +0 +0 +0 +0 +0$/m,
      /^ {2}codex +0\.58\.0 +1 /m,
      /^ {2}pi +\(not recorded\) +5 +5 +5 +0 /m,
    ])
      assert.match(r.stdout, row);
    assert.match(
      r.stdout,
      /^sessions that lost the most:\n {2}-Users-[^\n]*\.jsonl \(claude-code 2\.1\.7\): 3 compactions of 3 lost /m,
    );
    assert.match(r.stdout, /compactions? lost what must survive and (was|were) not repaired$/m);

    const json = await run(["audit", "--home", "--json"], { env });
    const summary = lastLine(json.stdout);
    // The sum of the one-file audits (the guard's repairs are none here).
    let compactions = 0;
    let kept = 0;
    let notJudgeable = 0;
    for (const f of corpusFiles().filter((f) => !f.endsWith(".traj"))) {
      const one = await run(["audit", f, "--json"]);
      const a = JSON.parse(one.stdout) as { compactions: unknown[]; kept: number; not_judgeable: number };
      compactions += a.compactions.length;
      kept += a.kept;
      notJudgeable += a.not_judgeable;
    }
    assert.equal(summary.sessions, total);
    assert.equal(summary.counts.compactions, compactions);
    assert.equal(summary.counts.kept, kept);
    assert.equal(summary.counts.not_judgeable, notJudgeable);
    assert.equal(summary.counts.lost, compactions - kept - notJudgeable);
    assert.ok(summary.counts.lost > 0);
    assert.equal(summary.not_sessions, 1);
    assert.deepEqual([...new Set(summary.by_agent.map((a) => a.agent))], ["claude-code", "codex", "pi"]);
    // Paths relative to the agent folder they were found under; the folder written from ~.
    const first = JSON.parse(json.stdout.split("\n")[0]!) as { root: string; path: string };
    assert.equal(first.root, "~/.claude/projects");
    assert.match(first.path, /^-[^/]+\/[^/]+\.jsonl$/);

    // A folder given as a path finds the same sessions.
    const byPath = lastLine((await run(["audit", dir, "--json"], { env })).stdout);
    assert.equal(byPath.sessions, total);
    assert.deepEqual(byPath.counts, summary.counts);
  });

  test("--shard K/N and --merge give the aggregate of one run; one worker and two write the same lines", async (t) => {
    const { dir, cleanup } = tempDir("cs-team-shard-");
    t.after(cleanup);
    const home = join(dir, "home");
    agentsHome(home);
    const env = { ...ENV, HOME: home };
    const one = await run(["audit", "--home", "--json", "--jobs", "1"], { env });
    const two = await run(["audit", "--home", "--json", "--jobs", "2"], { env });
    assert.equal(one.stdout, two.stdout);
    const files: string[] = [];
    let sessions = 0;
    for (let k = 1; k <= 3; k++) {
      const s = await run(["audit", "--home", "--json", "--shard", `${k}/3`], { env });
      assert.ok(s.code === 0 || s.code === 1, s.stderr);
      const f = join(dir, `shard-${k}.jsonl`);
      writeFileSync(f, s.stdout);
      files.push(f);
      sessions += lastLine(s.stdout).sessions;
    }
    assert.equal(sessions, lastLine(one.stdout).sessions, "every session in exactly one shard");
    const merged = await run(["audit", "--merge", ...files, "--json"], { env });
    assert.equal(merged.code, 1, merged.stderr);
    const { run: runA, ...a } = lastLine(one.stdout);
    const { run: runB, ...b } = lastLine(merged.stdout);
    assert.deepEqual(b, a);
    assert.deepEqual(runA, { shard: null, merged: null });
    assert.deepEqual(runB, { shard: null, merged: ["1/3", "2/3", "3/3"] });
    // The session lines are the run's, in another order (shard by shard).
    const sorted = (s: string) => s.trim().split("\n").slice(0, -1).sort();
    assert.deepEqual(sorted(merged.stdout), sorted(one.stdout));
    // The printed aggregates are the same.
    const text = await run(["audit", "--home"], { env });
    const mergedText = await run(["audit", "--merge", ...files], { env });
    assert.equal(mergedText.stdout, text.stdout);
    // A shard left out is said.
    const partial = await run(["audit", "--merge", files[0]!, files[2]!], { env });
    assert.match(partial.stderr, /shard 2\/3 not given: the aggregate is partial/);
  });

  test("a session that cannot record a compaction is read to its header only, with the record of the whole read", async () => {
    let fast = 0;
    for (const f of corpusFiles()) {
      const bytes = readFileSync(f);
      if (!mayRecordCompaction(bytes)) fast++;
      const options = { root: "r", path: basename(f) };
      assert.deepEqual(
        await auditSessionBytes(bytes, options),
        await auditSessionBytes(bytes, options, true),
        f,
      );
    }
    assert.ok(fast > 0, "some corpus sessions take the short read");
  });
});
