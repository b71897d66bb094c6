/**
 * `compact-safe audit PATH…` over many sessions, on sessions made here (the corpus suites, in
 * corpus.test.ts, run it over the agents' homes): the JSON Lines hold no planted instruction or
 * secret (positions and hashes only), `--show-text` adds the text redacted, a FIFO or a broken file is
 * one skipped line and never the end of the run, the exit code, and `--merge`'s input errors.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exampleSession } from "../support.js";
import { run, tempDir } from "../e2e/helpers.js";
import { SECRET_SAMPLES, leakedFragments } from "../secret-samples.js";
import { gunzipSync } from "node:zlib";
import { shortHash, textlessReason, violationOf } from "../../src/route/audit-record.js";
import { homeFolders, shardOf, parseShard } from "../../src/cli/audit-walk.js";

const INSTRUCTION =
  "Planted instruction: never deploy on Fridays, and ask before touching the billing module";

interface Line {
  type: string;
  path: string;
  why?: string;
  reason?: string;
  counts?: { compactions: number; lost: number; unrepaired: number };
  compactions?: {
    kept: boolean | null;
    violation: string | null;
    kinds: string[];
    losses: { user_texts: { at: number; hash: string; text?: string }[] };
    reason?: string;
  }[];
}

/** A journal of the example session with a last user message (the instruction and a secret) that a compaction loses. */
async function lossyJournal(dir: string, name: string, secret: string): Promise<string> {
  const j = join(dir, name);
  const r = await run(["import", exampleSession, "--out", j]);
  assert.equal(r.code, 0, r.stderr);
  const lines = readFileSync(j, "utf8").trim().split("\n");
  const leaf = (JSON.parse(lines.at(-1)!) as { id: string }).id;
  const planted = {
    id: "planted",
    parent_id: leaf,
    kind: "user",
    created_at: "2026-12-01T00:00:00Z",
    payload: { role: "user", content: [{ type: "text", text: `${INSTRUCTION}\n${secret}` }] },
  };
  const lossy = {
    id: "lossy",
    parent_id: "planted",
    kind: "compaction",
    created_at: "2026-12-01T00:00:01Z",
    payload: {
      summary: "s",
      tokens_before: 1000,
      tokens_after: 10,
      model: "m",
      path: "summary",
      coverage: null,
      trigger: "auto",
      replacement: [{ role: "user", content: [{ type: "text", text: "Summary of the session so far." }] }],
    },
  };
  writeFileSync(j, `${lines.join("\n")}\n${JSON.stringify(planted)}\n${JSON.stringify(lossy)}\n`);
  return j;
}

function parseLines(stdout: string): Line[] {
  return stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);
}

test("audit DIR --json: no planted instruction or secret in the JSON Lines; the lost text is named by place and hash", async (t) => {
  const { dir, cleanup } = tempDir("cs-team-");
  t.after(cleanup);
  const sessions = join(dir, "sessions");
  mkdirSync(join(sessions, "a"), { recursive: true });
  const samples = SECRET_SAMPLES.slice(0, 6);
  for (const [i, s] of samples.entries())
    await lossyJournal(join(sessions, i % 2 ? "a" : ""), `s${i}.jsonl`, s.text);
  const r = await run(["audit", sessions, "--json", "--jobs", "2"]);
  assert.equal(r.code, 1, r.stderr);
  assert.ok(!r.stdout.includes("Planted instruction"), "the instruction's text is not in the JSON Lines");
  assert.ok(!r.stdout.includes("billing module"));
  for (const s of samples) assert.deepEqual(leakedFragments(r.stdout, s), [], `${s.kind} leaked`);
  const lines = parseLines(r.stdout);
  assert.deepEqual(
    lines.map((l) => l.type),
    [...samples.map(() => "session"), "summary"],
  );
  // Records in path order, relative to the argument.
  assert.deepEqual(
    lines.slice(0, -1).map((l) => l.path),
    ["a/s1.jsonl", "a/s3.jsonl", "a/s5.jsonl", "s0.jsonl", "s2.jsonl", "s4.jsonl"],
  );
  for (const [i, l] of lines.slice(0, -1).entries()) {
    const c = l.compactions!.find((x) => x.kept === false)!;
    assert.equal(c.violation, "last_round.user_text");
    assert.ok(c.kinds.includes("instructions"));
    assert.equal(c.reason, undefined, "no reason text without --show-text");
    for (const lost of c.losses.user_texts) assert.equal(lost.text, undefined);
    const sample =
      samples[
        ["s0.jsonl", "a/s1.jsonl", "s2.jsonl", "a/s3.jsonl", "s4.jsonl", "a/s5.jsonl"].indexOf(l.path)
      ]!;
    const hash = shortHash(`${INSTRUCTION}\n${sample.text}`);
    assert.ok(
      c.losses.user_texts.some((x) => x.hash === hash),
      `the planted text of ${l.path} (${i}) is named by its hash`,
    );
  }
  const summary = lines.at(-1)! as unknown as {
    counts: { lost: number; unrepaired: number };
    sessions: number;
  };
  assert.equal(summary.sessions, 6);
  assert.equal(summary.counts.unrepaired, 6);

  // --show-text: the instruction is there, the secrets still redacted.
  const shown = await run(["audit", sessions, "--json", "--show-text"]);
  assert.equal(shown.code, 1, shown.stderr);
  assert.ok(shown.stdout.includes("Planted instruction: never deploy on Fridays"));
  for (const s of samples)
    assert.deepEqual(leakedFragments(shown.stdout, s), [], `${s.kind} leaked with --show-text`);
  const withText = parseLines(shown.stdout)[0]!.compactions!.find((x) => x.kept === false)!;
  assert.match(withText.reason ?? "", /^last round: user text /);
  assert.ok(withText.losses.user_texts.some((x) => (x.text ?? "").startsWith("Planted instruction")));
});

test("audit DIR: a FIFO and a broken file are one skipped line each, the run goes on; an unknown file is ignored", async (t) => {
  const { dir, cleanup } = tempDir("cs-team-");
  t.after(cleanup);
  const sessions = join(dir, "s");
  mkdirSync(sessions);
  await lossyJournal(sessions, "lossy.jsonl", "nothing secret");
  writeFileSync(join(sessions, "deep.json"), `${"[".repeat(600)}${"]".repeat(600)}`);
  writeFileSync(join(sessions, "notes.json"), JSON.stringify({ hello: "world" }));
  writeFileSync(join(sessions, "readme.txt"), "not looked at");
  execFileSync("mkfifo", [join(sessions, "pipe.jsonl")]);
  const r = await run(["audit", sessions, "--jobs", "2"], { timeoutMs: 60_000 });
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stdout,
    /^1 session audited \([\d,]+ bytes\), 2 files skipped; 1 other file not sessions, ignored$/m,
  );
  assert.match(
    r.stdout,
    /^2 files skipped: deep\.json:1: JSON nested deeper than 512 levels[^;]*; pipe\.jsonl: .*FIFO/m,
  );
  assert.match(r.stdout, /^1 compaction lost what must survive and was not repaired$/m);
  const json = parseLines((await run(["audit", sessions, "--json"], { timeoutMs: 60_000 })).stdout);
  assert.deepEqual(
    json.filter((l) => l.type === "skipped").map((l) => [l.path, l.why]),
    [
      ["deep.json", "unreadable"],
      ["notes.json", "not_a_session"],
      ["pipe.jsonl", "unreadable"],
    ],
  );
});

test("audit: one file keeps today's output; --batch gives the aggregate for it; - with others is refused", async (t) => {
  const { dir, cleanup } = tempDir("cs-team-");
  t.after(cleanup);
  const j = await lossyJournal(dir, "one.jsonl", "x");
  const one = await run(["audit", j, "--json"]);
  assert.equal(one.code, 1);
  assert.ok(Array.isArray((JSON.parse(one.stdout) as { compactions: unknown[] }).compactions));
  const batch = await run(["audit", j, "--batch"]);
  assert.equal(batch.code, 1);
  assert.match(batch.stdout, /^1 session audited/);
  const mixed = await run(["audit", "-", j]);
  assert.equal(mixed.code, 2);
  assert.match(mixed.stderr, /standard input\) is one session/);
  const none = await run(["audit"]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /give the files or folders to audit, or --home/);
  const missing = await run(["audit", j, join(dir, "nope")]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /nope: no such file or folder/);
});

test("audit --merge: input that is not audit JSON Lines is a one-line error naming the file and line", async (t) => {
  const { dir, cleanup } = tempDir("cs-team-");
  t.after(cleanup);
  const bad = join(dir, "bad.jsonl");
  writeFileSync(bad, `{"schema":1,"type":"summary","run":{"shard":null}}\n{"schema":7,"type":"session"}\n`);
  const r = await run(["audit", "--merge", bad]);
  assert.equal(r.code, 2);
  assert.equal(r.stderr.trim().split("\n").length, 1);
  assert.match(r.stderr, /bad\.jsonl:2: not an audit record of schema 1/);
  const cut = join(dir, "cut.jsonl");
  writeFileSync(cut, "");
  const c = await run(["audit", "--merge", cut]);
  assert.equal(c.code, 2);
  assert.match(c.stderr, /cut\.jsonl: no summary record/);
});

test("--shard: K/N parsed strictly; a path's shard is stable and the shards split every path once", () => {
  assert.deepEqual(parseShard("2/8"), { k: 2, n: 8 });
  for (const bad of ["0/2", "3/2", "1/0", "a/b", "1"]) assert.throws(() => parseShard(bad), /expected K\/N/);
  const paths = Array.from({ length: 400 }, (_, i) => `p${i}/rollout-${i}.jsonl`);
  const counts = [0, 0, 0, 0];
  for (const p of paths) {
    const k = shardOf(p, 4);
    assert.equal(shardOf(p, 4), k);
    counts[k - 1]!++;
  }
  assert.equal(
    counts.reduce((a, b) => a + b),
    400,
  );
  for (const n of counts) assert.ok(n > 50, `every shard gets a share (${counts.join(", ")})`);
});

test("violation codes carry no text; a skipped file's reason loses its quoted parts", () => {
  assert.deepEqual(violationOf('last round: user text "deploy on Friday" missing (message 12)'), {
    code: "last_round.user_text",
    at: 12,
  });
  assert.equal(
    violationOf('last round: tool result "toolu_1" missing (message 3)').code,
    "last_round.tool_result_missing",
  );
  assert.equal(
    violationOf('last round: tool result "toolu_1" is_error dropped (message 3)').code,
    "last_round.tool_result_altered",
  );
  assert.equal(violationOf('placeholder-only checkpoint (empty): ""').code, "checkpoint.placeholder");
  assert.equal(
    violationOf("missing checkpoint (the summary path writes exactly one)").code,
    "checkpoint.missing",
  );
  assert.equal(violationOf("anchors not restated in the checkpoint").code, "anchors.not_restated");
  assert.equal(
    violationOf('tool_use "x" has no tool_result after it (message 4)').code,
    "pairing.unanswered_call",
  );
  assert.equal(violationOf("something new").code, "other");
  assert.deepEqual(violationOf(null), { code: null, at: null });
  assert.equal(
    textlessReason('a.jsonl:3: unexpected token "my secret words" here'),
    'a.jsonl:3: unexpected token "…" here',
  );
});

test("report DIR: one team page, its sessions ranked, each one's own report gzipped in it; an existing page is refused", async (t) => {
  const { dir, cleanup } = tempDir("cs-team-");
  t.after(cleanup);
  const sessions = join(dir, "s");
  mkdirSync(sessions);
  await lossyJournal(sessions, "a.jsonl", "x");
  await lossyJournal(sessions, "b.jsonl", "y");
  const page = join(dir, "team.html");
  const r = await run(["report", sessions, "--out", page, "--details", "1"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^team page written to .*team\.html \(2 sessions, 2 with a compaction; 1 session reports? in the page\)$/m,
  );
  const html = readFileSync(page, "utf8");
  assert.match(
    html,
    /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/,
  );
  const data = JSON.parse(
    /<script type="application\/json" id="team-data">(.*?)<\/script>/s.exec(html)![1]!,
  ) as {
    sessions: { path: string; detail: number | null }[];
    details: number;
    summary: { sessions: number };
  };
  assert.equal(data.summary.sessions, 2);
  assert.deepEqual(
    data.sessions.map((s) => [s.path, s.detail]),
    [
      ["a.jsonl", 0],
      ["b.jsonl", null],
    ],
  );
  const block = /<script type="application\/octet-stream" id="detail-0">([A-Za-z0-9+/=]+)<\/script>/.exec(
    html,
  );
  assert.ok(block, "the first session's report is in the page");
  assert.equal(/id="detail-1"/.test(html), false);
  const detail = gunzipSync(Buffer.from(block[1]!, "base64")).toString("utf8");
  assert.match(detail, /<title>compact-safe report: a\.jsonl<\/title>/);
  assert.match(detail, /id="report-data"/);
  const again = await run(["report", sessions, "--out", page]);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /team\.html: exists \(give --force to replace it\)/);
  const json = await run(["report", sessions, "--json"]);
  assert.equal(json.code, 2);
  assert.match(json.stderr, /for many sessions use audit PATH… --json/);
});

test("--home: the agents' folders, where their variables and pi's settings put them", (t) => {
  const { dir, cleanup } = tempDir("cs-team-");
  t.after(cleanup);
  const dirs = (env: NodeJS.ProcessEnv) => homeFolders(env, dir).map((h) => `${h.agent}=${h.dir}`);
  assert.deepEqual(dirs({}), [
    `claude-code=${join(dir, ".claude", "projects")}`,
    `codex=${join(dir, ".codex", "sessions")}`,
    `pi=${join(dir, ".pi", "agent", "sessions")}`,
  ]);
  assert.deepEqual(dirs({ CLAUDE_CONFIG_DIR: "/c", CODEX_HOME: "/x", PI_CODING_AGENT_DIR: "/p" }), [
    "claude-code=/c/projects",
    "codex=/x/sessions",
    "pi=/p/sessions",
  ]);
  // pi's sessionDir setting, and the variable that overrides it.
  mkdirSync(join(dir, "pi"));
  writeFileSync(join(dir, "pi", "settings.json"), JSON.stringify({ sessionDir: "~/pi-sessions" }));
  assert.equal(dirs({ PI_CODING_AGENT_DIR: join(dir, "pi") })[2], `pi=${join(dir, "pi-sessions")}`);
  assert.equal(dirs({ PI_CODING_AGENT_DIR: join(dir, "pi"), PI_CODING_AGENT_SESSION_DIR: "/s" })[2], "pi=/s");
});
