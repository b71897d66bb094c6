/**
 * `compact-safe guard` with the agents as they are today (issue 43, item 8),
 * `--guard-only today` of the guard's checks (guard.ts), each printed by name
 * and each failing on any guard log line that says "not judged":
 *
 * 1. Codex, the pinned 0.169.0 and the newest `@openai/codex` the registry
 *    serves (installed into its own clients-cache folder, `codex-VERSION`,
 *    as the newest Claude Code is): the guard scenario of guard.ts (a local
 *    compaction through the guard, the next prompt, the guard restarted, the
 *    prompt after); then a second compaction in one session (compact, prompt,
 *    compact again, prompt) through a guard given `--anchors FILE`: a verdict
 *    for each compaction, never "more than one checkpoint", and the request
 *    after the second compaction holds exactly one checkpoint (the second
 *    summary, not the first), with the guard's restatement (a text part
 *    opening `[compact-safe guard] `, the anchors in it) on that summary's own
 *    message and in no message of its own.
 * 2. pi 0.73.1 and pi 1.x (on the pinned Node 22) through the guard: pi's
 *    compaction with `keepRecentTokens` 300 (its cut falls into the last
 *    round) and the next prompt, with the guard's verdict; pi 1.x again with
 *    `keepRecentTokens` 2,000, where its cut falls inside a turn. When pi sends a
 *    turn-prefix summarization request (pi 1.6: `# Conversation … # Instructions
 *    The messages above are earlier context from an ongoing conversation…`),
 *    the guard must have said it recognised it ("the agent's own
 *    summarization request (pi)") once per summarization request.
 * 3. Two pi sessions in one folder through one guard at once: two pi
 *    processes, started together on two session files in the same cwd (the
 *    same system prompt; pi sends no session id), each with its own marker in
 *    its first prompt and every prompt after, and its own `--api-key` (the
 *    fake tells whose request it is by it; the guard does not read it); each
 *    compacts; no request of one session the fake upstream received may carry
 *    the other's marker.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import { isCheckpoint } from "../../src/contract/classify.js";
import { GUARD_TEXT_PREFIX } from "../../src/contract/markers.js";
import { sendEvents, startFakeServer } from "./fake-server.js";
import {
  answerResponses,
  CODEX_CANNED_SUMMARY,
  inputItems,
  itemText,
  requestKind,
} from "./fake-responses.js";
import { answer as answerChat, isSummaryRequest, textOf, withCwd } from "./pi.js";
import {
  codex,
  containsText,
  freePort,
  historyOf,
  judge,
  logTail,
  mustPass,
  pi,
  PI_SHORT_KEEP_SESSION,
  PI_SUMMARY,
  promptRequest,
  PROMPT_1,
  PROMPT_2,
  PROMPT_3,
  scenario,
  startGuardProcess,
  type Agent,
  type GuardProcess,
  type Item,
} from "./guard.js";
import { clientsDir, clientsRoot, installInto, installPi1, PINNED_CLIENTS } from "./install.js";
import { runProcess } from "./run-process.js";
import type { ClientContext, SessionVerdict } from "./types.js";

const CODEX_PACKAGE = "@openai/codex";
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** The guard's log lines that say a request was not judged. */
function notJudged(log: string): string[] {
  return log.split("\n").filter((l) => l.includes("not judged"));
}

/** The guard's verdict lines (one per compaction it judged). */
function verdictLines(log: string): string[] {
  return log.split("\n").filter((l) => l.startsWith("guard: compaction in "));
}

const short = (s: string, n = 220) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** The verdicts, shortened to what they say after the session. */
function saidOf(lines: readonly string[]): string {
  return lines.map((l) => short(l.replace(/^guard: compaction in \S+ /, ""), 200)).join(" / ");
}

// ---------------------------------------------------------------------------------------------------------
// Codex: the newest the registry serves beside the pinned one.

type CodexBinary = { bin: string; version: string } | { skipped: string };

/** Asks the registry for the newest Codex and installs it into `codex-VERSION` (the pinned one is reused). */
export async function installNewestCodex(ctx: ClientContext): Promise<CodexBinary> {
  let r;
  try {
    r = await runProcess(npm, ["view", CODEX_PACKAGE, "version", "--fetch-retries=0"], {
      env: { HOME: homedir() },
      timeoutMs: 30_000,
    });
  } catch (e) {
    return { skipped: `npm view ${CODEX_PACKAGE} could not run: ${(e as Error).message}` };
  }
  const version = r.stdout.trim();
  if (r.code !== 0 || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version))
    return {
      skipped: `npm view ${CODEX_PACKAGE} version: ${short(`${r.stderr}${r.stdout}`.trim() || `exit ${r.code}`, 200)}`,
    };
  if (version === PINNED_CLIENTS[CODEX_PACKAGE]) {
    ctx.log(`clients: the newest ${CODEX_PACKAGE} the registry serves is the pinned ${version}`);
    return { bin: join(clientsDir(), "node_modules", ".bin"), version };
  }
  ctx.log(`clients: the newest ${CODEX_PACKAGE} the registry serves is ${version}`);
  const bin = await installInto(
    join(clientsRoot(), `codex-${version}`),
    { [CODEX_PACKAGE]: version },
    ctx.log,
  );
  const v = await runProcess(join(bin, "codex"), ["--version"], {
    env: { HOME: homedir() },
    timeoutMs: 60_000,
  });
  const line = (v.stdout.trim() || v.stderr.trim()).split("\n")[0] ?? "";
  if (v.code !== 0 || !line.startsWith(`codex-cli ${version}`))
    throw new Error(
      `the newest codex --version printed ${JSON.stringify(line)}; expected codex-cli ${version}`,
    );
  ctx.log(`clients: ${line}`);
  return { bin, version };
}

/** The guard scenario of guard.ts, through the guard, with its verdict and its log judged. */
async function scenarioCheck(
  ctx: ClientContext,
  agent: Agent,
  extra: (log: string) => { ok: boolean; detail: string } = () => ({ ok: true, detail: "" }),
): Promise<SessionVerdict> {
  const check = `${agent.name} ${agent.mechanism} through the guard, then the next prompt: the guard's verdict, the contract kept, nothing "not judged"`;
  const v = (ok: boolean, detail: string): SessionVerdict => ({
    client: "guard",
    session: agent.session,
    check,
    ok,
    detail,
  });
  ctx.log(`guard today: ${agent.name} ${agent.mechanism}`);
  try {
    const { trace, guardLog, restarted } = await scenario(ctx, agent, true);
    const j = judge(agent.wire, trace.before, trace.after, PROMPT_2);
    const l = judge(agent.wire, trace.before, trace.later!, PROMPT_3);
    const verdicts = verdictLines(guardLog);
    const unjudged = notJudged(guardLog);
    const summaryKept = containsText(trace.after, agent.summary);
    const more = extra(guardLog);
    const problems = [
      verdicts.length === 0 ? `the guard gave no verdict; ${logTail(guardLog)}` : "",
      unjudged.length > 0 ? `"not judged" in the guard's log: ${short(unjudged.join(" | "), 300)}` : "",
      j.kept ? "" : `after the compaction: ${j.line}`,
      l.kept ? "" : `after the restart: ${l.line}`,
      summaryKept ? "" : "the agent's own summary is NOT in the request after",
      more.ok ? "" : more.detail,
    ].filter((p) => p !== "");
    return v(
      problems.length === 0,
      problems.length > 0
        ? `${problems.join("; ")}; ${logTail(guardLog)}`
        : `verdict: ${saidOf(verdicts)}; next prompt: ${j.line}; ${restarted}, the prompt after: ${l.line}` +
            `${more.detail ? `; ${more.detail}` : ""}`,
    );
  } catch (e) {
    return v(false, (e as Error).message);
  }
}

const SUMMARY_1 = `${CODEX_CANNED_SUMMARY}\nFirst compaction: FIRST-SUMMARY-7f3a.`;
const SUMMARY_2 = `${CODEX_CANNED_SUMMARY}\nSecond compaction: SECOND-SUMMARY-91c2.`;
const PROMPT_4 = "then wrap up";
const ANCHORS = "- Never push to main without review (pinned anchor ANCHOR-5d1e).";

/** A Responses answer for Codex's local compaction with `summary` as its text. */
function answerSummary(res: ServerResponse, summary: string): void {
  const id = `resp_fake_${randomBytes(4).toString("hex")}`;
  const item = {
    type: "message",
    id: `msg_${id}`,
    role: "assistant",
    content: [{ type: "output_text", text: summary, annotations: [] }],
  };
  sendEvents(res, [
    ["response.created", { type: "response.created", response: { id } }],
    [
      "response.output_item.added",
      { type: "response.output_item.added", output_index: 0, item: { ...item, content: [] } },
    ],
    [
      "response.output_text.delta",
      {
        type: "response.output_text.delta",
        output_index: 0,
        content_index: 0,
        item_id: item.id,
        delta: summary,
      },
    ],
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    [
      "response.completed",
      {
        type: "response.completed",
        response: {
          id,
          usage: {
            input_tokens: 100,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: 10,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 110,
          },
        },
      },
    ],
  ]);
}

/** The text parts of a Responses input item. */
function partsOf(it: Item): string[] {
  return Array.isArray(it.content)
    ? (it.content as Item[]).map((c) => (typeof c.text === "string" ? c.text : ""))
    : typeof it.content === "string"
      ? [it.content]
      : [];
}

/**
 * Codex compacts twice in one session through one guard (`--anchors FILE`):
 * PROMPT_1 billed high; PROMPT_2 compacts before its turn (summary 1) and is
 * billed high again; PROMPT_3 compacts again before its turn (summary 2);
 * PROMPT_4 after it.
 */
async function codexSecondCompactionCheck(ctx: ClientContext, agent: Agent): Promise<SessionVerdict> {
  const check = `${agent.name} a second local compaction in the same session through the guard (--anchors): a verdict for each, the second repaired or kept, never "more than one checkpoint"; the request after it holds one checkpoint with the guard's restatement on the summary's own message; nothing "not judged"`;
  const v = (ok: boolean, detail: string): SessionVerdict => ({
    client: "guard",
    session: agent.session,
    check,
    ok,
    detail,
  });
  ctx.log(`guard today: ${agent.name} a second compaction`);
  const mode: { usage?: number; summary: string } = { summary: SUMMARY_1 };
  let compactions = 0;
  const fake = await startFakeServer((req, res) => {
    if (
      req.method === "POST" &&
      req.path.startsWith("/v1/responses") &&
      requestKind(req.body) === "local-compaction"
    ) {
      compactions++;
      answerSummary(res, mode.summary);
      return;
    }
    answerResponses(req, res, { totalTokens: mode.usage });
  });
  const home = mkdtempSync(join(tmpdir(), "cs-guard-today-codex-"));
  const state = join(home, "guard-state");
  mkdirSync(state);
  const anchors = join(home, "anchors.md");
  writeFileSync(anchors, `${ANCHORS}\n`);
  let guard: GuardProcess | undefined;
  try {
    guard = await startGuardProcess(ctx, fake.url, await freePort(), state, [
      "--anchors",
      anchors,
      "--workspace",
      home,
    ]);
    agent.setup(ctx, home, guard.url);
    const run = async (prompt: string, usage: number | undefined, compact: boolean) => {
      mode.usage = usage;
      const from = fake.requests.length;
      const limit = compact ? ["model_auto_compact_token_limit=2000"] : [];
      try {
        mustPass(`${agent.name} ${prompt}`, await runCodex(ctx, agent, home, prompt, limit));
      } finally {
        mode.usage = undefined;
      }
      return promptRequest(agent, fake, from, prompt);
    };
    const before1 = await run(PROMPT_1, 500_000, false);
    const c0 = compactions;
    const after1 = await run(PROMPT_2, 500_000, true);
    const c1 = compactions - c0;
    mode.summary = SUMMARY_2;
    const after2 = await run(PROMPT_3, undefined, true);
    const c2 = compactions - c0 - c1;
    const later = await run(PROMPT_4, undefined, false);
    await new Promise((r) => setTimeout(r, 300));
    const log = guard.stderr();
    const verdicts = verdictLines(log);
    const unjudged = notJudged(log);
    const problems: string[] = [];
    if (c1 === 0) problems.push(`no compaction before ${JSON.stringify(PROMPT_2)}`);
    if (c2 === 0) problems.push(`no second compaction before ${JSON.stringify(PROMPT_3)}`);
    if (verdicts.length < 2)
      problems.push(`${verdicts.length} verdict line(s) for 2 compactions; ${logTail(log)}`);
    const second = verdicts.at(-1) ?? "";
    if (verdicts.some((l) => l.includes("more than one checkpoint")))
      problems.push(`a verdict says "more than one checkpoint": ${short(saidOf(verdicts), 400)}`);
    if (second !== "" && !/kept the contract|; repaired: /.test(second))
      problems.push(`the second verdict is neither kept nor repaired: ${short(second, 300)}`);
    if (unjudged.length > 0)
      problems.push(`"not judged" in the guard's log: ${short(unjudged.join(" | "), 300)}`);
    // The request after the second compaction: its items, Codex's own context left out.
    const items = inputItems(after2).filter((it) => it.type === "message");
    const withS1 = items.filter((it) => itemText(it).includes(SUMMARY_1));
    const withS2 = items.filter((it) => itemText(it).includes(SUMMARY_2));
    const checkpoints = historyOf("responses", after2, PROMPT_3).filter(isCheckpoint).length;
    const guardItems = items.filter((it) => partsOf(it).some((t) => t.startsWith(GUARD_TEXT_PREFIX)));
    const summaryItem = withS2[0];
    const restated =
      summaryItem === undefined
        ? undefined
        : partsOf(summaryItem).find((t) => t.startsWith(GUARD_TEXT_PREFIX));
    if (withS2.length !== 1) problems.push(`${withS2.length} messages carry the second summary (want 1)`);
    if (withS1.length !== 0) problems.push(`${withS1.length} message(s) still carry the FIRST summary`);
    if (checkpoints !== 1) problems.push(`the project's reader finds ${checkpoints} checkpoints (want 1)`);
    const repaired2 = /; repaired: /.test(second);
    if (repaired2 || restated !== undefined) {
      if (restated === undefined)
        problems.push("the second compaction was repaired but the summary's message carries no restatement");
      else if (!restated.includes("ANCHOR-5d1e"))
        problems.push(`the restatement lacks the anchors: ${short(restated, 200)}`);
      const own = guardItems.filter((it) => it !== summaryItem);
      if (own.length > 0) problems.push(`${own.length} message(s) of the guard's own beside the summary's`);
    }
    const j1 = judge("responses", before1, after1, PROMPT_2);
    const j2 = judge("responses", after1, after2, PROMPT_3);
    const j3 = judge("responses", after1, later, PROMPT_4);
    if (!j2.kept) problems.push(`the request after the second compaction: ${j2.line}`);
    const figures =
      `compactions: ${c1} then ${c2}; verdicts: ${saidOf(verdicts)}; after the second: ${withS2.length} summary message (the first summary in ${withS1.length}), ` +
      `${checkpoints} checkpoint by the project's reader, restatement ${restated === undefined ? "none" : `on the summary's message (${restated.length} chars, anchors ${restated.includes("ANCHOR-5d1e") ? "in it" : "MISSING"})`}, ` +
      `${guardItems.filter((it) => it !== summaryItem).length} guard message(s) of its own; first: ${j1.line}; second: ${j2.line}; the prompt after: ${j3.line}`;
    return v(problems.length === 0, problems.length === 0 ? figures : `${problems.join("; ")} (${figures})`);
  } catch (e) {
    return v(false, `${(e as Error).message}${guard ? `; ${logTail(guard.stderr())}` : ""}`);
  } finally {
    if (guard !== undefined) await guard.stop();
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** `codex exec resume ID PROMPT` as the agent of guard.ts runs it (its session id read from the rollout). */
function runCodex(ctx: ClientContext, agent: Agent, home: string, prompt: string, config: string[]) {
  const text = readFileSync(join(ctx.corpus, agent.session), "utf8");
  const id = String((JSON.parse(text.slice(0, text.indexOf("\n"))) as { payload: Item }).payload.id);
  return runProcess(
    join(ctx.bin, "codex"),
    [
      "exec",
      "--skip-git-repo-check",
      ...['model_provider="fake"', ...config].flatMap((c) => ["-c", c]),
      "resume",
      id,
      prompt,
    ],
    { cwd: home, env: { HOME: home, CODEX_HOME: home, KEYVAR: "fake-key" }, timeoutMs: 180_000 },
  );
}

/**
 * The one-liner `compact-safe guard -- codex exec …` for a user whose
 * config.toml sets `openai_base_url` (which Codex prefers to
 * `OPENAI_BASE_URL`): Codex's requests must go through the guard (its stop
 * line counts the session) and on to the URL the user configured.
 */
async function codexOneLinerCheck(ctx: ClientContext, name: string): Promise<SessionVerdict> {
  const check = `${name} one-liner (guard -- codex exec) with openai_base_url in config.toml: through the guard, on to the configured URL`;
  ctx.log(`guard today: ${check}`);
  const server = await startFakeServer((req, res) => answerResponses(req, res));
  const home = mkdtempSync(join(tmpdir(), "cs-guard-today-codex1-"));
  try {
    writeFileSync(join(home, "config.toml"), `model = "gpt-5"\nopenai_base_url = "${server.url}/v1"\n`);
    const run = await runProcess(
      process.execPath,
      [
        ctx.cli,
        "guard",
        "--state",
        join(home, "state"),
        "--",
        join(ctx.bin, "codex"),
        "exec",
        "--skip-git-repo-check",
        PROMPT_1,
      ],
      { cwd: home, env: { HOME: home, CODEX_HOME: home, CODEX_API_KEY: "fake-key" }, timeoutMs: 180_000 },
    );
    const posts = server.requests.filter((q) => q.method === "POST" && q.path.startsWith("/v1/responses"));
    const seen = /guard: stopped: (\d+) sessions? seen/.exec(run.stderr)?.[1];
    const bad = notJudged(run.stderr);
    const ok =
      run.code === 0 && posts.length > 0 && seen !== undefined && Number(seen) >= 1 && bad.length === 0;
    return {
      client: "guard",
      session: "-",
      check,
      ok,
      detail: `exit ${run.code}; ${posts.length} Responses requests reached the configured URL; the guard saw ${seen ?? "?"} session(s)${bad.length ? `; ${bad[0]}` : ""}${ok ? "" : `: ${logTail(run.stderr)}`}`,
    };
  } finally {
    await server.close();
    rmSync(home, { recursive: true, force: true });
  }
}

async function codexChecks(ctx: ClientContext): Promise<SessionVerdict[]> {
  const out: SessionVerdict[] = [];
  const pinned = { ...codex() };
  out.push(await scenarioCheck(ctx, pinned));
  out.push(await codexSecondCompactionCheck(ctx, codex()));
  out.push(await codexOneLinerCheck(ctx, `codex ${PINNED_CLIENTS[CODEX_PACKAGE]}`));
  let newest: CodexBinary;
  try {
    newest = await installNewestCodex(ctx);
  } catch (e) {
    out.push({
      client: "guard",
      session: "-",
      check: "codex newest the registry serves: install",
      ok: false,
      detail: (e as Error).message,
    });
    return out;
  }
  if ("skipped" in newest) {
    out.push({
      client: "guard",
      session: "-",
      check: "codex newest the registry serves",
      ok: false,
      skipped: true,
      detail: `not checked: ${newest.skipped}`,
    });
    return out;
  }
  if (newest.version === PINNED_CLIENTS[CODEX_PACKAGE]) {
    out.push({
      client: "guard",
      session: "-",
      check: "codex newest the registry serves",
      ok: false,
      skipped: true,
      detail: `not run again: the newest is the pinned ${newest.version}`,
    });
    return out;
  }
  const nctx = { ...ctx, bin: newest.bin };
  const name = `codex ${newest.version} (newest)`;
  out.push(await scenarioCheck(nctx, { ...codex(), name }));
  out.push(await codexSecondCompactionCheck(nctx, { ...codex(), name }));
  out.push(await codexOneLinerCheck(nctx, name));
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// pi 0.73 and pi 1.x.

/** pi 1.6's turn-prefix summarization request (its cut inside a turn). */
function isTurnPrefixRequest(body: unknown): boolean {
  const messages = (body as { messages?: Item[] } | undefined)?.messages;
  const t = textOf(messages?.at(-1) as never);
  return (
    t.startsWith("# Conversation\n") &&
    t.includes("\n\n# Instructions\nThe messages above are earlier context from an ongoing conversation")
  );
}

const TURN_PREFIX_SUMMARY = "## Turn prefix\nThe earlier part of the split turn (fake).";

/** A pi command folder for pi 1.x: `pi` runs its cli on the pinned Node 22. */
function pi1Bin(node: string, cli: string): string {
  const dir = mkdtempSync(join(tmpdir(), "cs-guard-today-pi1-bin-"));
  const file = join(dir, "pi");
  writeFileSync(file, `#!/bin/sh\nexec ${JSON.stringify(node)} ${JSON.stringify(cli)} "$@"\n`);
  chmodSync(file, 0o755);
  return dir;
}

/** The pi agent of guard.ts whose fake answers a turn-prefix request as a summary. */
function piAgent(
  name: string,
  keepRecentTokens: number,
): { agent: Agent; seen: { summaries: number; turnPrefix: number } } {
  const base = pi(PI_SHORT_KEEP_SESSION, keepRecentTokens);
  const seen = { summaries: 0, turnPrefix: 0 };
  const agent: Agent = {
    ...base,
    name,
    answer(req, res, mode) {
      if (req.method === "POST" && req.path.endsWith("/chat/completions")) {
        if (isTurnPrefixRequest(req.body)) {
          seen.turnPrefix++;
          answerChat(res, TURN_PREFIX_SUMMARY);
          return;
        }
        if (isSummaryRequest(req.body as never)) seen.summaries++;
      }
      base.answer(req, res, mode);
    },
  };
  return { agent, seen };
}

async function piGuardChecks(
  ctx: ClientContext,
  pi1: { node: string; cli: string; version: string } | undefined,
) {
  const out: SessionVerdict[] = [];
  // keepRecentTokens 300: pi 0.73 cuts inside the last turn (its turn-prefix request is a second
  // <conversation> request), pi 1.6 at its start; 2000: pi 1.6 cuts inside a turn and sends its
  // turn-prefix request in the new form (# Conversation … # Instructions).
  const runs: [ClientContext, string, number, boolean][] = [
    [ctx, `pi ${PINNED_CLIENTS["@mariozechner/pi-coding-agent"]}`, 300, false],
  ];
  const pi1Ctx = pi1 === undefined ? undefined : { ...ctx, bin: pi1Bin(pi1.node, pi1.cli) };
  if (pi1 !== undefined && pi1Ctx !== undefined)
    runs.push([pi1Ctx, `pi ${pi1.version}`, 300, false], [pi1Ctx, `pi ${pi1.version}`, 2000, true]);
  for (const [c, name, keep, wantTurnPrefix] of runs) {
    const { agent, seen } = piAgent(name, keep);
    out.push(
      await scenarioCheck(c, agent, (log) => {
        const said = log
          .split("\n")
          .filter((l) => l.includes("the agent's own summarization request (pi)")).length;
        // The scenario runs one compaction through the guard (before the guard's restart).
        const asked = seen.summaries + seen.turnPrefix;
        const ok = (seen.turnPrefix > 0 || !wantTurnPrefix) && (seen.turnPrefix === 0 || said >= asked);
        return {
          ok,
          detail: `${wantTurnPrefix && seen.turnPrefix === 0 ? "pi sent NO turn-prefix request in the new form; " : ""}pi sent ${seen.summaries} <conversation> and ${seen.turnPrefix} turn-prefix (# Conversation … # Instructions) summarization request(s); the guard said "the agent's own summarization request (pi)" ${said} time(s)${ok ? "" : " (fewer than it was asked)"}`,
        };
      }),
    );
  }
  if (pi1Ctx !== undefined) rmSync(pi1Ctx.bin, { recursive: true, force: true });
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Two pi sessions in one folder through one guard at once.

/**
 * The corpus session both start from: one without a compaction of its own, so that the first user
 * message each sends is its own first prompt (with its marker), not the same earlier summary.
 */
const TWO_SESSIONS_BASE = "pi/pi-mono-large-session.jsonl";

/** The corpus session for a second, distinct session: a new id, `cwd`, and `marker` before its first prompt. */
function markedSession(text: string, cwd: string, marker: string): string {
  const lines = withCwd(text, cwd).split("\n");
  const header = JSON.parse(lines[0]!) as Item;
  header.id = randomUUID();
  lines[0] = JSON.stringify(header);
  const at = lines.findIndex((l) => l.includes('"type":"message"') && l.includes('"role":"user"'));
  const entry = JSON.parse(lines[at]!) as { message: { content: Item[] | string } };
  const content = entry.message.content;
  if (typeof content === "string") entry.message.content = `${marker} ${content}`;
  else {
    const first = content.find((b) => b.type === "text");
    if (first === undefined) throw new Error("the session's first user message has no text");
    first.text = `${marker} ${String(first.text)}`;
  }
  lines[at] = JSON.stringify(entry);
  return lines.join("\n");
}

async function twoSessionsCheck(ctx: ClientContext, name: string): Promise<SessionVerdict> {
  const check = `${name} two sessions in one folder through one guard at once (same cwd and system prompt, no session id), each compacting: no request of one carries the other's marker; nothing "not judged"`;
  const v = (ok: boolean, detail: string): SessionVerdict => ({
    client: "guard",
    session: TWO_SESSIONS_BASE,
    check,
    ok,
    detail,
  });
  ctx.log(`guard today: ${name} two sessions at once`);
  const markers = [
    `SESSION-A-${randomBytes(4).toString("hex")}`,
    `SESSION-B-${randomBytes(4).toString("hex")}`,
  ];
  const mode: { usage?: number } = {};
  // Which process sent each request: its API key (`--api-key`; pi sends it as a bearer token, the
  // guard forwards it and never reads it to tell sessions apart).
  const sent: { from: string; raw: string; summary: boolean }[] = [];
  const keys = ["Bearer key-session-a", "Bearer key-session-b"];
  const fake = await startFakeServer((req, res) => {
    const body = req.body as { messages?: unknown[] } | undefined;
    if (req.method !== "POST" || !req.path.endsWith("/chat/completions") || !body?.messages) {
      res.writeHead(404).end();
      return;
    }
    const raw = JSON.stringify(body);
    const seen = markers.filter((m) => raw.includes(m));
    sent.push({
      from: String(req.headers.authorization ?? ""),
      raw,
      summary: isSummaryRequest(body as never) || isTurnPrefixRequest(body),
    });
    if (isSummaryRequest(body as never) || isTurnPrefixRequest(body))
      answerChat(res, `${PI_SUMMARY}\n\nSession markers: ${seen.join(", ") || "none"}.`);
    else answerChat(res, `ok (${seen.join(", ") || "no marker"})`, mode.usage ?? 100);
  });
  const home = mkdtempSync(join(tmpdir(), "cs-guard-today-two-"));
  const work = join(home, "work");
  const state = join(home, "guard-state");
  mkdirSync(work, { recursive: true });
  mkdirSync(state);
  mkdirSync(join(home, ".pi", "agent"), { recursive: true });
  let guard: GuardProcess | undefined;
  try {
    guard = await startGuardProcess(ctx, fake.url, await freePort(), state);
    const model = (id: string, contextWindow: number) => ({
      id,
      name: id,
      reasoning: false,
      input: ["text", "image"],
      contextWindow,
      maxTokens: 4096,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    });
    writeFileSync(
      join(home, ".pi", "agent", "models.json"),
      JSON.stringify({
        providers: {
          fake: {
            baseUrl: `${guard.url}/v1`,
            api: "openai-completions",
            apiKey: "CS_FAKE_KEY",
            models: [model("fake-model", 10_000_000), model("fake-small", 20_000)],
          },
        },
      }),
    );
    writeFileSync(
      join(home, ".pi", "agent", "settings.json"),
      JSON.stringify({ compaction: { keepRecentTokens: 300 } }),
    );
    const text = readFileSync(join(ctx.corpus, TWO_SESSIONS_BASE), "utf8");
    const files = markers.map((m, i) => {
      const f = join(home, `session-${"ab"[i]}.jsonl`);
      writeFileSync(f, markedSession(text, work, m));
      return f;
    });
    const run = (i: number, prompt: string, modelId: string) =>
      runProcess(
        join(ctx.bin, "pi"),
        [
          "--provider",
          "fake",
          "--model",
          modelId,
          // Its own key (pi 0.73 and 1.6 both take --api-key), for the fake to tell whose request it is.
          "--api-key",
          keys[i]!.slice("Bearer ".length),
          "-p",
          "--session",
          files[i]!,
          `${prompt} (${markers[i]})`,
        ],
        {
          cwd: work,
          env: {
            HOME: home,
            CS_FAKE_KEY: "x",
            PI_OFFLINE: "1",
            PI_SKIP_VERSION_CHECK: "1",
            PI_TELEMETRY: "0",
            NO_COLOR: "1",
          },
          timeoutMs: 180_000,
        },
      );
    const both = async (prompt: string, modelId: string) => {
      const rs = await Promise.all([0, 1].map((i) => run(i, prompt, modelId)));
      rs.forEach((r, i) => mustPass(`pi session ${"AB"[i]} ${prompt}`, r));
    };
    mode.usage = 50_000;
    await both(PROMPT_1, "fake-model");
    mode.usage = undefined;
    await both(PROMPT_2, "fake-small");
    await both(PROMPT_3, "fake-model");
    await new Promise((r) => setTimeout(r, 300));
    const log = guard.stderr();
    const of = (i: number) => sent.filter((r) => r.from === keys[i]);
    const crossedOf = (i: number) => of(i).filter((r) => r.raw.includes(markers[1 - i]!));
    const crossed = [0, 1].map((i) => crossedOf(i).length);
    // Which of a session's requests carried the other's marker: a summarization request, or the prompt's
    // (the latest prompt a request carries; guard.ts's constants are read here, not at module load:
    // guard.ts imports this module).
    const kinds = (i: number) =>
      crossedOf(i)
        .map((r) =>
          r.summary
            ? "a summarization request"
            : ([PROMPT_3, PROMPT_2, PROMPT_1].find((p) => r.raw.includes(`${p} (${markers[i]})`)) ??
              "a turn"),
        )
        .map((k) => (k.startsWith("a ") ? k : JSON.stringify(k)))
        .join(", ");
    const own = [0, 1].map((i) => of(i).filter((r) => r.raw.includes(markers[i]!)).length);
    const compacted = [0, 1].map((i) => of(i).filter((r) => r.summary).length);
    const unknown = sent.length - of(0).length - of(1).length;
    const verdicts = verdictLines(log);
    const unjudged = notJudged(log);
    const problems = [
      crossed.some((n) => n > 0)
        ? `the sessions were mixed: ${crossed[0]} request(s) of A carry B's marker (${kinds(0) || "none"}), ${crossed[1]} of B carry A's (${kinds(1) || "none"})`
        : "",
      unknown > 0 ? `${unknown} request(s) upstream from neither session's key` : "",
      compacted.some((n) => n === 0)
        ? `a session did not compact (summarization requests: A ${compacted[0]}, B ${compacted[1]})`
        : "",
      verdicts.length < 2 ? `${verdicts.length} verdict line(s) for 2 compactions; ${logTail(log)}` : "",
      unjudged.length > 0 ? `"not judged" in the guard's log: ${short(unjudged.join(" | "), 300)}` : "",
    ].filter((p) => p !== "");
    const figures = `${sent.length} requests upstream: A ${of(0).length} (${own[0]} with A's marker, ${crossed[0]} with B's, ${compacted[0]} summarization), B ${of(1).length} (${own[1]} with B's marker, ${crossed[1]} with A's, ${compacted[1]} summarization); verdicts: ${saidOf(verdicts)}`;
    return v(problems.length === 0, problems.length === 0 ? figures : `${problems.join("; ")} (${figures})`);
  } catch (e) {
    return v(false, `${(e as Error).message}${guard ? `; ${logTail(guard.stderr())}` : ""}`);
  } finally {
    if (guard !== undefined) await guard.stop();
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------

export async function todayChecks(ctx: ClientContext): Promise<SessionVerdict[]> {
  const out: SessionVerdict[] = [];
  out.push(...(await codexChecks(ctx)));
  let pi1: { node: string; cli: string; version: string } | undefined;
  try {
    const install = await installPi1(ctx.log);
    pi1 = { node: install.node, cli: install.cli, version: install.versionLine.split(/\s/)[0]! };
  } catch (e) {
    out.push({
      client: "guard",
      session: "-",
      check: "pi 1.x install",
      ok: false,
      detail: (e as Error).message,
    });
  }
  out.push(...(await piGuardChecks(ctx, pi1)));
  out.push(await twoSessionsCheck(ctx, `pi ${PINNED_CLIENTS["@mariozechner/pi-coding-agent"]}`));
  if (pi1 !== undefined) {
    const bin = pi1Bin(pi1.node, pi1.cli);
    try {
      out.push(await twoSessionsCheck({ ...ctx, bin }, `pi ${pi1.version}`));
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  }
  return out;
}
