/**
 * Codex's remote compaction with the real Codex (issue 44, items 5 and 7),
 * `--guard-only remote` of the guard's checks (guard.ts):
 *
 * Codex on its built-in `openai` provider (pointed at the fake with
 * `openai_base_url`, the key in `CODEX_API_KEY`), in a temporary HOME whose
 * `work` folder holds two small files. The fake answers the first prompt
 * with a text and an `exec_command` call, the call's output with a second
 * call, and that one's output with a text billed at 500,000 tokens; Codex
 * runs the two commands itself (`cat` of the two files). The session is then
 * resumed with a second prompt and `model_auto_compact_token_limit=2000`:
 * Codex compacts before the turn, remotely (Codex 0.169 and 0.171 send an
 * ordinary `POST /v1/responses` whose last input item is
 * `{"type":"compaction_trigger"}`; the fake answers with one opaque
 * `compaction` item), then sends the turn with its user messages, the item
 * and the prompt.
 *
 * - without the guard, the request after the compaction loses the protected
 *   round (both calls, their outputs, the model's texts): the run that
 *   records the fixture (`COMPACT_SAFE_SAVE_CODEX_REMOTE=DIR`: the rollout and
 *   the requests, see `saveFixture`);
 * - through `compact-safe guard` (its `--state` folder, `--anchors FILE`):
 *   the guard judges the compaction and repairs it, never "not judged"; the
 *   request the fake receives after the compaction holds Codex's item where
 *   Codex put it, the guard's restatement (anchors and live state) as the
 *   message right after it, the protected round, then the prompt; it keeps
 *   the contract against the history of Codex's compaction request; the
 *   rollout Codex wrote is Codex's own (the guard changes only the wire).
 *
 * Run for the pinned Codex and the newest the registry serves (skipped when
 * the registry cannot be reached; installed as guard-today.ts does).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sendEvents, startFakeServer, type FakeServer, type RecordedRequest } from "./fake-server.js";
import { answerResponses, inputItems, itemText, requestKind } from "./fake-responses.js";
import { runProcess, type ProcessResult } from "./run-process.js";
import { GUARD_TEXT_PREFIX } from "../../src/contract/markers.js";
import { itemsToMessages } from "../../src/wire/responses.js";
import { validateSurvivalContract } from "../../src/contract/index.js";
import { protectedLosses } from "../../src/route/audit.js";
import { freePort, logTail, startGuardProcess, type GuardProcess } from "./guard.js";
import { installNewestCodex } from "./guard-today.js";
import { PINNED_CLIENTS } from "./install.js";
import type { ClientContext, SessionVerdict } from "./types.js";

type Item = Record<string, unknown>;
type Body = Record<string, unknown>;

export const REMOTE_PROMPT_1 = "Fix the failing login test in src/auth.ts";
export const REMOTE_PROMPT_2 = "Also run the whole suite afterwards.";
export const REMOTE_ANCHORS = "- Never push to main without review (pinned anchor ANCHOR-c0d3).";
/** The fake's answers, in order, and the calls Codex runs (in the `work` folder). */
const SAID_1 = "Reading the test first.";
const SAID_2 = "The test expects login to accept a/b; src/auth.ts accepts only admin.";
const CALLS = [
  { id: "call_read", cmd: "cat test/auth.test.ts" },
  { id: "call_src", cmd: "cat src/auth.ts" },
];
const AGENT_LIMIT_MS = 180_000;

/** One Responses answer of `items`, streamed as the API does (usage `total` tokens). */
function answerItems(res: ServerResponse, items: Item[], total = 110): void {
  const id = `resp_${Math.random().toString(36).slice(2, 10)}`;
  const events: [string, unknown][] = [["response.created", { type: "response.created", response: { id } }]];
  items.forEach((item, i) => {
    const added = item.type === "message" ? { ...item, content: [] } : item;
    events.push([
      "response.output_item.added",
      { type: "response.output_item.added", output_index: i, item: added },
    ]);
    events.push(["response.output_item.done", { type: "response.output_item.done", output_index: i, item }]);
  });
  const usage = {
    input_tokens: total - 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 10,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: total,
  };
  events.push(["response.completed", { type: "response.completed", response: { id, usage } }]);
  sendEvents(res, events);
}

const said = (text: string, n: number): Item => ({
  type: "message",
  id: `msg_fake_${n}`,
  role: "assistant",
  content: [{ type: "output_text", text, annotations: [] }],
});
const called = (k: number): Item => ({
  type: "function_call",
  id: `fc_fake_${k}`,
  call_id: CALLS[k]!.id,
  name: "exec_command",
  arguments: JSON.stringify({ cmd: CALLS[k]!.cmd }),
});

/**
 * The fake model of this scenario: a remote compaction request gets the
 * opaque item (`answerResponses`); a turn is answered by what ends its input
 * (the first prompt: a text and the first call; each call's output: the next
 * call, then the last text, billed high so that the next turn compacts).
 */
export function answerRemote(req: RecordedRequest, res: ServerResponse): void {
  if (req.method !== "POST" || requestKind(req.body) !== "turn") return answerResponses(req, res);
  const last = inputItems(req.body).at(-1);
  if (last?.type === "function_call_output" && last.call_id === CALLS[0]!.id)
    return answerItems(res, [called(1)]);
  if (last?.type === "function_call_output" && last.call_id === CALLS[1]!.id)
    return answerItems(res, [said(SAID_2, 2)], 500_000);
  if (itemText(last) === REMOTE_PROMPT_1) return answerItems(res, [said(SAID_1, 1), called(0)]);
  return answerResponses(req, res);
}

/** A temporary HOME: Codex's config (the built-in provider at `baseUrl`), and the work folder with its two files. */
function remoteHome(baseUrl: string): { home: string; work: string } {
  const home = mkdtempSync(join(tmpdir(), "cs-codex-remote-"));
  const work = join(home, "work");
  mkdirSync(join(work, "test"), { recursive: true });
  mkdirSync(join(work, "src"));
  writeFileSync(join(work, "test", "auth.test.ts"), 'expect(login("a", "b")).toBe(true);\n');
  writeFileSync(
    join(work, "src", "auth.ts"),
    'export const login = (u: string, _p: string) => u === "admin";\n',
  );
  writeFileSync(join(home, "config.toml"), `model = "gpt-5"\nopenai_base_url = "${baseUrl}/v1"\n`);
  return { home, work };
}

function mustPass(what: string, r: ProcessResult): ProcessResult {
  if (r.code !== 0)
    throw new Error(
      `${what}: exit ${r.code}: ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" | ").slice(0, 300)}`,
    );
  return r;
}

/** The two runs: the first prompt (a new session), then the second, resumed, which Codex compacts before. */
async function runCodex(bin: string, home: string, work: string): Promise<string> {
  const env = { HOME: home, CODEX_HOME: home, CODEX_API_KEY: "fake-key" };
  const codex = (args: string[]) =>
    runProcess(join(bin, "codex"), args, { cwd: work, env, timeoutMs: AGENT_LIMIT_MS });
  const first = mustPass(
    "codex exec (first prompt)",
    await codex(["exec", "--skip-git-repo-check", REMOTE_PROMPT_1]),
  );
  const id = /^session id: (\S+)$/m.exec(first.stderr + first.stdout)?.[1];
  if (id === undefined) throw new Error("codex exec printed no session id");
  mustPass(
    "codex exec resume (the remote compaction, then the second prompt)",
    await codex([
      "exec",
      "--skip-git-repo-check",
      "-c",
      "model_auto_compact_token_limit=2000",
      "resume",
      id,
      REMOTE_PROMPT_2,
    ]),
  );
  return id;
}

/** The model requests the fake received (POST /v1/responses with a body), in order. */
function modelRequests(fake: FakeServer): RecordedRequest[] {
  return fake.requests.filter(
    (r) => r.method === "POST" && r.path.startsWith("/v1/responses") && r.body !== undefined,
  );
}

/** What the scenario sent: the compaction request, and the turn after it. */
interface RemoteTrace {
  requests: RecordedRequest[];
  compaction: Body;
  after: Body;
  rollout: string;
  home: string;
}

function traceOf(fake: FakeServer, home: string): RemoteTrace {
  const requests = modelRequests(fake);
  const at = requests.findIndex((r) => requestKind(r.body) === "remote-compaction");
  if (at < 0)
    throw new Error(
      `Codex sent no remote compaction request (compaction_trigger); the fake got: ${requests.map((r) => requestKind(r.body)).join(", ")}`,
    );
  const after = requests.slice(at + 1).find((r) => itemText(inputItems(r.body).at(-1)) === REMOTE_PROMPT_2);
  if (after === undefined)
    throw new Error("the fake got no request of the second prompt after the compaction");
  const sessions = join(home, "sessions");
  const files = readdirSync(sessions, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".jsonl"))
    .map((e) => join(e.parentPath, e.name));
  if (files.length !== 1) throw new Error(`expected one rollout, found ${files.length}`);
  return {
    requests,
    compaction: requests[at]!.body as Body,
    after: after.body as Body,
    rollout: readFileSync(files[0]!, "utf8"),
    home,
  };
}

/** A message of Codex's own context, not the conversation: developer text, environment, instructions. */
function isCodexContext(it: Item): boolean {
  if (it.type !== "message") return false;
  if (it.role === "developer" || it.role === "system") return true;
  return (
    it.role === "user" &&
    /^(<environment_context>|<user_instructions>|# AGENTS\.md)/.test(itemText(it).trimStart())
  );
}

/**
 * The contract's verdict on `after` (less its last item, the prompt) against
 * `before`, both read item by item as the project's Responses reader groups
 * them (`itemsToMessages`), Codex's own context set aside on both sides.
 */
function judgeItems(before: Body, after: Body): { kept: boolean; line: string } {
  const read = (b: Body, cut: number) =>
    itemsToMessages(
      inputItems(b)
        .filter((i) => !isCodexContext(i))
        .slice(0, cut === 0 ? undefined : -cut),
    );
  const a = read(before, 0);
  const b = read(after, 1);
  const v = validateSurvivalContract(a, b);
  const l = protectedLosses(a, b);
  return {
    kept: v.valid,
    line:
      `${a.length} -> ${b.length} messages; ` +
      (v.valid
        ? "the contract holds"
        : `validator: ${v.reason}; lost ${l.user_texts.length} user texts, ${l.tool_calls.length} calls, ` +
          `${l.tool_results.length} results, ${l.assistant_texts.length} assistant texts`),
  };
}

/** The call ids and the model's texts of the protected round that `input` carries after `from`. */
function roundAfter(
  input: readonly Item[],
  from: number,
): { calls: string[]; outputs: string[]; texts: string[] } {
  const rest = input.slice(from);
  return {
    calls: rest.filter((i) => i.type === "function_call").map((i) => String(i.call_id)),
    outputs: rest.filter((i) => i.type === "function_call_output").map((i) => String(i.call_id)),
    texts: rest.filter((i) => i.type === "message" && i.role === "assistant").map((i) => itemText(i)),
  };
}

/** A string cut to its first `keep` characters with a note of its length, when it is over `over`. */
const cut = (v: string, over: number, keep: number): string =>
  v.length > over ? `${v.slice(0, keep)} [… cut for the fixture: ${v.length} characters]` : v;

/**
 * A copy of a recorded JSON text for the fixture: the temporary HOME as
 * `/home/user`, and every string over 2,000 characters (Codex's base
 * instructions, its skills message) cut to its first 200, the same string
 * the same way wherever it stands; with `tools`, the texts of the request's
 * tool definitions over 200 characters too.
 */
function forFixture(text: string, home: string): unknown {
  const doc = JSON.parse(text.split(home).join("/home/user"), (_k, v: unknown) =>
    typeof v === "string" ? cut(v, 2000, 200) : v,
  ) as Record<string, unknown>;
  if (Array.isArray(doc.tools))
    doc.tools = JSON.parse(JSON.stringify(doc.tools), (_k, v: unknown) =>
      typeof v === "string" ? cut(v, 200, 200) : v,
    ) as unknown;
  return doc;
}

/**
 * Writes the fixture (`COMPACT_SAFE_SAVE_CODEX_REMOTE=DIR`): the rollout
 * Codex wrote (`codex-VERSION-remote-compaction.jsonl`) and the model
 * requests it sent, in order, one a line, each with the headers that name
 * its session (`…-remote-compaction.requests.jsonl`), both through
 * `forFixture`.
 */
function saveFixture(dir: string, version: string, t: RemoteTrace): string {
  mkdirSync(dir, { recursive: true });
  const base = join(dir, `codex-${version}-remote-compaction`);
  const lines = t.rollout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.stringify(forFixture(l, t.home)));
  writeFileSync(`${base}.jsonl`, `${lines.join("\n")}\n`);
  const keep = ["session-id", "thread-id", "session_id", "originator", "user-agent", "x-codex-beta-features"];
  const requests = t.requests.map((r) =>
    JSON.stringify({
      method: r.method,
      path: r.path,
      headers: Object.fromEntries(
        keep.filter((k) => r.headers[k] !== undefined).map((k) => [k, String(r.headers[k])]),
      ),
      body: forFixture(JSON.stringify(r.body), t.home),
    }),
  );
  writeFileSync(`${base}.requests.jsonl`, `${requests.join("\n")}\n`);
  return base;
}

/** Codex straight to the fake: its remote compaction loses the protected round (and, asked to, the fixture is written). */
async function directCheck(ctx: ClientContext, bin: string, version: string): Promise<SessionVerdict> {
  const check = `codex ${version} remote compaction without the guard loses the protected round`;
  const v = (ok: boolean, detail: string): SessionVerdict => ({
    client: "guard",
    session: "codex remote",
    check,
    ok,
    detail,
  });
  const fake = await startFakeServer(answerRemote);
  const { home, work } = remoteHome(fake.url);
  try {
    await runCodex(bin, home, work);
    const t = traceOf(fake, home);
    const input = inputItems(t.after);
    const item = input.findIndex((i) => i.type === "compaction");
    const r = roundAfter(input, item);
    const lost = r.calls.length === 0 && r.outputs.length === 0;
    const j = judgeItems({ ...t.compaction, input: inputItems(t.compaction).slice(0, -1) }, t.after);
    const replaced = t.rollout.includes('"type":"compacted"') && t.rollout.includes('"type":"compaction"');
    const dir = process.env.COMPACT_SAFE_SAVE_CODEX_REMOTE;
    const saved = dir ? `; fixture written: ${saveFixture(dir, version, t)}.*` : "";
    return v(
      lost && !j.kept && replaced && item >= 0,
      `${t.requests.length} model requests; after the compaction: ${input.length} items, the compaction item at ${item}, ` +
        `${r.calls.length} calls after it${lost ? " (the round's 2 calls, their outputs and the model's texts lost)" : ""}; ` +
        `${j.line}; the rollout ${replaced ? "holds a compacted line and the item" : "holds NO compacted line with the item"}${saved}`,
    );
  } catch (e) {
    return v(false, (e as Error).message);
  } finally {
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** Codex through `compact-safe guard`: the remote compaction judged and repaired in the request after it. */
async function guardedCheck(ctx: ClientContext, bin: string, version: string): Promise<SessionVerdict> {
  const check = `codex ${version} remote compaction through the guard: judged and repaired after the item, nothing "not judged"`;
  const v = (ok: boolean, detail: string): SessionVerdict => ({
    client: "guard",
    session: "codex remote",
    check,
    ok,
    detail,
  });
  const fake = await startFakeServer(answerRemote);
  const scratch = mkdtempSync(join(tmpdir(), "cs-codex-remote-guard-"));
  const state = join(scratch, "state");
  const anchors = join(scratch, "anchors.md");
  mkdirSync(state);
  writeFileSync(anchors, `${REMOTE_ANCHORS}\n`);
  let g: GuardProcess | undefined;
  let home = "";
  try {
    g = await startGuardProcess(ctx, fake.url, await freePort(), state, ["--anchors", anchors]);
    const h = remoteHome(g.url);
    home = h.home;
    await runCodex(bin, h.home, h.work);
    const t = traceOf(fake, h.home);
    const log = g.stderr();
    const unjudged = log.split("\n").filter((l) => l.includes("not judged"));
    const verdicts = log.split("\n").filter((l) => l.startsWith("guard: compaction in "));
    const input = inputItems(t.after);
    const item = input.findIndex((i) => i.type === "compaction");
    const restatement = input[item + 1];
    const restated = itemText(restatement);
    const r = roundAfter(input, item + 1);
    // The history of Codex's compaction request (the trigger aside) is the history before the compaction.
    const before = { ...t.compaction, input: inputItems(t.compaction).slice(0, -1) };
    const j = judgeItems(before, t.after);
    const encrypted = input[item]?.encrypted_content;
    const problems = [
      unjudged.length > 0 ? `"not judged" in the guard's log: ${unjudged.join(" | ").slice(0, 300)}` : "",
      verdicts.length !== 1 ? `${verdicts.length} verdict lines: ${verdicts.join(" | ").slice(0, 300)}` : "",
      verdicts.some((l) => /; repaired: /.test(l))
        ? ""
        : `the verdict says no repair: ${verdicts.join(" | ").slice(0, 300)}`,
      item < 0 ? "no compaction item in the request after" : "",
      restatement?.role === "user" &&
      restated.startsWith(GUARD_TEXT_PREFIX) &&
      restated.includes("ANCHOR-c0d3")
        ? ""
        : `the item is not followed by the guard's restatement with the anchors (${JSON.stringify(restatement).slice(0, 160)})`,
      r.calls.join(",") === CALLS.map((c) => c.id).join(",") && r.outputs.join(",") === r.calls.join(",")
        ? ""
        : `the round after the item: calls [${r.calls.join(", ")}], outputs [${r.outputs.join(", ")}]`,
      r.texts.includes(SAID_1) && r.texts.includes(SAID_2)
        ? ""
        : `the model's texts after the item: ${JSON.stringify(r.texts)}`,
      itemText(input.at(-1)) === REMOTE_PROMPT_2 ? "" : "the request does not end with the prompt",
      j.kept ? "" : `the contract: ${j.line}`,
      typeof encrypted === "string" && t.rollout.includes(JSON.stringify(encrypted))
        ? ""
        : "the item sent is not the one Codex recorded",
      t.rollout.includes(GUARD_TEXT_PREFIX) ? "the guard's text reached Codex's rollout" : "",
    ].filter((p) => p !== "");
    return v(
      problems.length === 0,
      problems.length > 0
        ? `${problems.join("; ")}; ${logTail(log)}`
        : `${verdicts[0]!.replace(/^guard: compaction in \S+ /, "").slice(0, 260)}; after the compaction: ${input.length} items, ` +
            `the item at ${item}, the restatement right after it, then calls ${r.calls.join(", ")} with their outputs ` +
            `and the model's 2 texts, then the prompt; ${j.line}`,
    );
  } catch (e) {
    return v(false, `${(e as Error).message}${g ? `; ${logTail(g.stderr())}` : ""}`);
  } finally {
    await g?.stop();
    await fake.close();
    rmSync(scratch, { recursive: true, force: true });
    if (home !== "") rmSync(home, { recursive: true, force: true });
  }
}

/** The checks of one Codex binary: straight to the fake, then through the guard. */
async function remoteChecksOf(ctx: ClientContext, bin: string, version: string): Promise<SessionVerdict[]> {
  ctx.log(`guard remote: codex ${version} remote compaction, without the guard`);
  const direct = await directCheck(ctx, bin, version);
  ctx.log(`guard remote: codex ${version} remote compaction, through the guard`);
  return [direct, await guardedCheck(ctx, bin, version)];
}

/** The checks with the pinned Codex, then with the newest the registry serves (when it is another). */
export async function remoteChecks(ctx: ClientContext): Promise<SessionVerdict[]> {
  const pinned = PINNED_CLIENTS["@openai/codex"];
  const out = await remoteChecksOf(ctx, ctx.bin, pinned);
  const newest = await installNewestCodex(ctx);
  if ("skipped" in newest)
    out.push({
      client: "guard",
      session: "codex remote",
      check: "the newest Codex's remote compaction through the guard",
      ok: true,
      skipped: true,
      detail: newest.skipped,
    });
  else if (newest.version !== pinned) out.push(...(await remoteChecksOf(ctx, newest.bin, newest.version)));
  return out;
}
