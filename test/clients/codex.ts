/**
 * Codex CLI 0.169.0 against a fake Responses server, for corpus rollouts:
 *
 * 1. **fork A->B** (twice: the default compaction, and `--target 2000`, the
 *    summary path). compact-safe writes the rollout back as a fork
 *    (`compact --fork`); Codex resumes the original (request A) and the fork
 *    (request B) with the same prompt (`codex exec resume ID continue`).
 *    B's `input` must be exactly the fork's `replacement_history`, item for
 *    item (less the `internal_chat_message_metadata_passthrough` Codex tags
 *    messages with on the built-in provider), between what Codex adds on
 *    its own, which is named: its base instructions (a developer message)
 *    before, and after it the developer and `<environment_context>` messages
 *    of the new turn and the prompt.
 *    A and B, less those additions and converted to messages through
 *    compact-safe's Codex conversion, must pass `compact-safe validate`.
 * 2. **Codex compacts the fork again.** The summary fork is resumed with a
 *    small `model_auto_compact_token_limit`: Codex compacts it (its
 *    compaction request must carry the fork's items), and `compact-safe
 *    audit` reads both compactions of the fork.
 * 3. **fork listed.** In a fresh CODEX_HOME, `codex exec resume --last --all`
 *    takes the fork (Codex lists only sessions with a user_message event).
 * 4. **own compaction + audit.** The original is resumed with a small
 *    `model_auto_compact_token_limit`, so Codex compacts it headless before
 *    the turn (the fake answers the compaction: a canned summary for Codex's
 *    local compaction, an opaque `compaction` item for the built-in
 *    provider's remote one), and `compact-safe audit` gives the verdict on
 *    Codex's compaction. The verdict is reported as seen (kept or not); the
 *    check fails only when Codex does not compact, or the audit cannot read
 *    the rollout or finds no Codex compaction.
 *
 * The provider: a rollout records the provider it ran with, and Codex 0.169
 * refuses to resume it under another ("Cannot change this thread's model
 * provider from `openai` to `fake` on resume"). A rollout recorded with
 * `openai` runs on the built-in provider pointed at the fake
 * (`openai_base_url`, key in `CODEX_API_KEY`; it tries a WebSocket first, gets
 * a 404 and falls back to HTTPS); one without a recorded provider runs on a
 * custom provider `fake` (`-c model_provider="fake"`). Every run has its own
 * CODEX_HOME (= HOME) under the temporary folder; the fake listens on
 * 127.0.0.1 and is closed at the end.
 */
import { isDeepStrictEqual } from "node:util";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { responseItemsToMessages } from "../../src/wire/responses.js";
import { startFakeServer, type FakeServer } from "./fake-server.js";
import { answerResponses, inputItems, itemText, requestKind, type ResponsesKind } from "./fake-responses.js";
import { runProcess } from "./run-process.js";
import { teeHook, type TeeHook } from "./tee-hook.js";
import type { ClientContext, SessionVerdict } from "./types.js";

/**
 * Rollouts whose resume sends the history as it is. The fifth corpus rollout
 * (openprintkit, about 340,000 tokens) is over the window Codex assumes for an
 * unknown model: Codex compacts it before it sends anything, so it has no
 * request A; it serves the own-compaction check only.
 */
export const CODEX_FORK_SESSIONS = [
  "codex/neurodata-rollout-2025-09-26T17-01-04.jsonl",
  "codex/acidicsoil-rollout-2025-11-17T15-30-28.jsonl",
  "codex/coda-rollout-2025-10-04T22-31-15.jsonl",
  "codex/moonmind-rollout-2025-11-12T17-48-11.jsonl",
];
export const CODEX_OWN_COMPACTION_SESSIONS = [
  ...CODEX_FORK_SESSIONS,
  "codex/openprintkit-rollout-2025-10-31T19-02-58.jsonl",
];

const PROMPT = "continue";

type Item = Record<string, unknown>;

export interface Home {
  dir: string;
  server: FakeServer;
  bin: string;
}

export interface Rollout {
  id: string;
  path: string;
  /** The provider the rollout records ("openai", or undefined for none). */
  provider: string | undefined;
}

/**
 * The metadata Codex attaches to the messages it sends on the built-in
 * provider (`{"content_item_kinds":["unknown"]}` on a history message; a
 * turn id and a time on the messages of the new turn). It is request
 * metadata for OpenAI's server, not text of the message: items are compared
 * without it, and the verdict counts where Codex added it.
 */
const PASSTHROUGH = "internal_chat_message_metadata_passthrough";

function withoutPassthrough(it: Item | undefined): Item | undefined {
  if (it === undefined || !(PASSTHROUGH in it)) return it;
  const { [PASSTHROUGH]: _ignored, ...rest } = it;
  return rest;
}

/** Keys sorted: two items are the same item when their canonical JSON is (Codex's passthrough metadata aside). */
function canon(v: Item | undefined): string {
  return canonJson(withoutPassthrough(v));
}

function canonJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : x,
  );
}

export function newHome(server: FakeServer, bin: string): Home {
  const dir = mkdtempSync(join(tmpdir(), "cs-codex-home-"));
  writeFileSync(
    join(dir, "config.toml"),
    `model = "gpt-5"\nopenai_base_url = "${server.url}/v1"\n\n` +
      `[model_providers.fake]\nname = "fake"\nbase_url = "${server.url}/v1"\nwire_api = "responses"\nenv_key = "KEYVAR"\n`,
  );
  return { dir, server, bin };
}

/** Copies a corpus rollout into the home's sessions folder, named and placed as Codex does. */
export function placeRollout(home: Home, corpusFile: string): Rollout {
  const text = readFileSync(corpusFile, "utf8");
  const meta = (JSON.parse(text.slice(0, text.indexOf("\n"))) as { payload: Record<string, unknown> })
    .payload;
  const id = String(meta.id);
  const at = new Date(String(meta.timestamp));
  const p = (n: number) => String(n).padStart(2, "0");
  const day = [String(at.getUTCFullYear()), p(at.getUTCMonth() + 1), p(at.getUTCDate())];
  const stamp = `${day.join("-")}T${p(at.getUTCHours())}-${p(at.getUTCMinutes())}-${p(at.getUTCSeconds())}`;
  const dir = join(home.dir, "sessions", ...day);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `rollout-${stamp}-${id}.jsonl`);
  writeFileSync(path, text);
  return { id, path, provider: typeof meta.model_provider === "string" ? meta.model_provider : undefined };
}

/**
 * `codex exec resume ID PROMPT` (ID `--last`: `resume --last --all`, the
 * newest session Codex lists); the Responses requests it made, in order, and
 * the session id Codex says it resumed.
 */
export async function resumeRun(
  home: Home,
  r: Rollout,
  id: string,
  config: string[] = [],
  execFlags: string[] = [],
): Promise<{ requests: Item[]; resumed: string | undefined; stdout: string }> {
  const from = home.server.requests.length;
  const flags = [...(r.provider === "openai" ? [] : ['model_provider="fake"']), ...config].flatMap((c) => [
    "-c",
    c,
  ]);
  const which = id === "--last" ? ["--last", "--all"] : [id];
  const run = await runProcess(
    join(home.bin, "codex"),
    ["exec", "--skip-git-repo-check", ...execFlags, ...flags, "resume", ...which, PROMPT],
    {
      cwd: home.dir,
      env: { HOME: home.dir, CODEX_HOME: home.dir, KEYVAR: "fake-key", CODEX_API_KEY: "fake-key" },
      timeoutMs: 180_000,
    },
  );
  if (run.code !== 0)
    throw new Error(`codex exec resume ${id}: exit ${run.code}: ${lastLines(run.stderr || run.stdout)}`);
  const requests = home.server.requests
    .slice(from)
    .filter((q) => q.method === "POST" && q.path.startsWith("/v1/responses"))
    .map((q) => q.body as Item);
  return { requests, resumed: /^session id: (\S+)$/m.exec(run.stderr + run.stdout)?.[1], stdout: run.stdout };
}

async function resume(
  home: Home,
  r: Rollout,
  id: string,
  config: string[] = [],
  execFlags: string[] = [],
): Promise<Item[]> {
  return (await resumeRun(home, r, id, config, execFlags)).requests;
}

/** Registers the PostCompact hook (`compact-safe hook codex`) in the home's hooks.json. */
function installPostCompactHook(home: Home): TeeHook {
  const hook = teeHook(home.dir, "post-compact", "codex");
  writeFileSync(
    join(home.dir, "hooks.json"),
    JSON.stringify({ hooks: { PostCompact: [{ hooks: [{ type: "command", command: hook.command }] }] } }),
  );
  return hook;
}

function lastLines(s: string): string {
  return s.trim().split("\n").slice(-3).join(" | ").slice(0, 400);
}

/** The one turn request of a resume (an error when Codex compacted first or sent none). */
function turnRequest(requests: Item[]): Item[] {
  const kinds = requests.map((b) => requestKind(b));
  if (kinds.length !== 1 || kinds[0] !== "turn")
    throw new Error(`expected one turn request, the fake got: ${kinds.join(", ") || "none"}`);
  return inputItems(requests[0]);
}

async function cli(ctx: ClientContext, args: string[]) {
  return runProcess(process.execPath, [ctx.cli, ...args], { env: { NO_COLOR: "1" }, timeoutMs: 180_000 });
}

/** Where `items` stand, contiguous, in `input` (-1 when they do not). */
export function locate(input: readonly Item[], items: readonly Item[]): number {
  const a = input.map(canon);
  const b = items.map(canon);
  for (let k = 0; k + b.length <= a.length; k++) if (b.every((x, i) => a[k + i] === x)) return k;
  return -1;
}

/** One item Codex added, named for the verdict line (a message by its role and its parts' opening tags). */
export function describeAddition(it: Item): string {
  const text = itemText(it).trimStart();
  if (it.type !== "message") return `${String(it.type)} item`;
  if (it.role === "user" && text === PROMPT) return `the prompt "${PROMPT}"`;
  const parts = (Array.isArray(it.content) ? (it.content as Item[]) : []).map((c) => {
    const t = typeof c.text === "string" ? c.text.trimStart() : "";
    const tag = /^<([a-z_ ]+)>/.exec(t)?.[1];
    return tag
      ? `<${tag}>`
      : t.startsWith("You are a coding agent")
        ? "base instructions"
        : `"${t.slice(0, 30)}"`;
  });
  return `${String(it.role)} ${parts.join(" + ")}`;
}

/** An addition Codex makes of its own: a developer message, its session-prefix user messages, the prompt. */
function isCodexAddition(it: Item): boolean {
  if (it.type !== "message") return false;
  if (it.role === "developer") return true;
  const t = itemText(it).trimStart();
  return (
    it.role === "user" &&
    (t === PROMPT || /^(<environment_context>|<user_instructions>|# AGENTS\.md)/.test(t))
  );
}

/**
 * B split around the fork's items: what Codex put before and after them.
 * Throws with the first difference when B does not hold them item for item.
 */
export function splitB(b: readonly Item[], written: readonly Item[]): { before: Item[]; after: Item[] } {
  const at = locate(b, written);
  if (at < 0) {
    const start = b.findIndex((it) => !(it.type === "message" && it.role === "developer"));
    const i = written.findIndex((w, j) => canon(w) !== canon(b[start + j]));
    throw new Error(
      `B does not hold the fork's ${written.length} items in order: item ${i} differs ` +
        `(written ${canon(written[i]).slice(0, 120)}, sent ${canon(b[start + i]).slice(0, 120)})`,
    );
  }
  const before = b.slice(0, at);
  const after = b.slice(at + written.length);
  const odd = [...before, ...after].filter((it) => !isCodexAddition(it));
  if (odd.length > 0)
    throw new Error(`B holds items the fork does not: ${odd.map(describeAddition).join(", ")}`);
  if (itemText(after.at(-1)) !== PROMPT) throw new Error("B does not end with the prompt");
  return { before, after };
}

/** A less what Codex added around the history (leading developer messages; the new turn's additions). */
function historyOfA(a: readonly Item[]): { history: Item[]; before: Item[]; after: Item[] } {
  let start = 0;
  while (start < a.length && a[start]!.type === "message" && a[start]!.role === "developer") start++;
  let end = a.length;
  while (end > start && isCodexAddition(a[end - 1]!)) end--;
  return { history: a.slice(start, end), before: a.slice(0, start), after: a.slice(end) };
}

function forkItems(forkPath: string): Item[] {
  const second = readFileSync(forkPath, "utf8").split("\n")[1]!;
  const line = JSON.parse(second) as { type: string; payload: { replacement_history?: Item[] } };
  if (line.type !== "compacted" || !Array.isArray(line.payload.replacement_history))
    throw new Error("the fork's second line is not a compacted item with a replacement_history");
  return line.payload.replacement_history;
}

interface ForkReceipt {
  path: "summary" | "prune-only";
  fork: { path: string; session_id: string; resume: string };
}

async function writeFork(ctx: ClientContext, home: Home, r: Rollout, extra: string[]): Promise<ForkReceipt> {
  const out = await cli(ctx, ["compact", r.path, "--fork", "--json", "--workspace", home.dir, ...extra]);
  if (out.code !== 0) throw new Error(`compact --fork: exit ${out.code}: ${out.stderr.trim()}`);
  const receipt = JSON.parse(out.stdout) as ForkReceipt;
  if (receipt.fork.resume !== `codex resume ${receipt.fork.session_id}`)
    throw new Error(`compact --fork printed ${JSON.stringify(receipt.fork.resume)}`);
  return receipt;
}

async function forkCheck(
  ctx: ClientContext,
  home: Home,
  r: Rollout,
  a: Item[],
  receipt: ForkReceipt,
): Promise<string> {
  const written = forkItems(receipt.fork.path);
  const b = turnRequest(await resume(home, r, receipt.fork.session_id));
  const { before, after } = splitB(b, written);
  const fromA = historyOfA(a);
  const history = fromA.history;
  // Codex gives the messages it adds a fresh id in every request: the same additions, but for their ids.
  const withoutId = (it: Item) => canon({ ...it, id: undefined });
  const tagged =
    b.filter((it) => PASSTHROUGH in it).length -
    [...before, ...after].filter((it) => PASSTHROUGH in it).length;
  const same = isDeepStrictEqual(
    [...fromA.before, ...fromA.after].map(withoutId),
    [...before, ...after].map(withoutId),
  );
  const aFile = join(home.dir, "A.messages.json");
  const bFile = join(home.dir, "B.messages.json");
  writeFileSync(aFile, JSON.stringify(responseItemsToMessages(history)));
  writeFileSync(bFile, JSON.stringify(responseItemsToMessages(written)));
  const v = await cli(ctx, ["validate", aFile, bFile, "--path", receipt.path]);
  if (v.code !== 0) throw new Error(`validate A->B: exit ${v.code}: ${(v.stdout + v.stderr).trim()}`);
  return (
    `validate ok (${receipt.path}; A ${history.length} history items -> B ${written.length}); ` +
    `B = [${before.map(describeAddition).join(", ")}] + the fork's ${written.length} items exactly` +
    `${tagged > 0 ? ` (${tagged} of them with Codex's ${PASSTHROUGH})` : ""} + ` +
    `[${after.map(describeAddition).join(", ")}]; ${same ? "A has the same additions" : `A's: [${[...fromA.before.map(describeAddition), "...", ...fromA.after.map(describeAddition)].join(", ")}]`}`
  );
}

interface AuditResult {
  compactions: Array<{
    source: string;
    kept: boolean;
    reason: string | null;
    messages_before: number;
    messages_after: number;
    losses: Record<string, unknown[]>;
  }>;
}

async function audit(ctx: ClientContext, file: string): Promise<AuditResult> {
  const r = await cli(ctx, ["audit", file, "--json"]);
  if (r.code !== 0 && r.code !== 1) throw new Error(`audit: exit ${r.code}: ${r.stderr.trim()}`);
  return JSON.parse(r.stdout) as AuditResult;
}

function verdictLine(c: AuditResult["compactions"][number]): string {
  const n = (k: string) => (c.losses[k] ?? []).length;
  return (
    `${c.source} ${c.kept ? "KEPT" : "BROKE"} the contract (${c.messages_before} -> ${c.messages_after} messages` +
    `${c.kept ? "" : `; lost ${n("user_texts")} user texts, ${n("tool_calls")} calls, ${n("tool_results")} results, ${n("assistant_texts")} assistant texts`})` +
    `${c.reason ? `: ${c.reason.slice(0, 160)}` : ""}`
  );
}

function compactionKind(requests: readonly Item[]): ResponsesKind | undefined {
  return requests.map((b) => requestKind(b)).find((k) => k !== "turn");
}

async function compactsAgain(
  ctx: ClientContext,
  home: Home,
  r: Rollout,
  receipt: ForkReceipt,
): Promise<string> {
  const written = forkItems(receipt.fork.path);
  const requests = await resume(home, r, receipt.fork.session_id, ["model_auto_compact_token_limit=100"]);
  const kind = compactionKind(requests);
  if (kind === undefined) throw new Error("Codex did not compact the fork (no compaction request)");
  const compaction = requests.find((b) => requestKind(b) === kind)!;
  if (locate(inputItems(compaction), written) < 0)
    throw new Error("Codex's compaction request does not carry the fork's items");
  const result = await audit(ctx, receipt.fork.path);
  if (result.compactions.length < 2)
    throw new Error(`audit of the fork found ${result.compactions.length} compaction(s)`);
  return (
    `Codex compacted the fork again (${kind}; its request carried the fork's ${written.length} items); ` +
    `audit of the fork: ${result.compactions.map(verdictLine).join("; ")}`
  );
}

/**
 * Codex lists a session (`resume --last`, the picker) from its state
 * database, which it fills from the rollout files once, when it first
 * starts in a CODEX_HOME; a rollout written later is found by id
 * (`codex resume ID`, as the checks above do) and listed from then on. So the
 * listing is checked where it can work: a fresh CODEX_HOME with the original
 * and a fork written beside it, where `resume --last` must take the fork (it
 * lists only sessions with a user_message event, which the fork carries).
 */
async function listed(ctx: ClientContext, server: FakeServer, file: string): Promise<string> {
  const home = newHome(server, ctx.bin);
  try {
    const r = placeRollout(home, file);
    const receipt = await writeFork(ctx, home, r, []);
    const { resumed } = await resumeRun(home, r, "--last");
    if (resumed !== receipt.fork.session_id)
      throw new Error(
        `codex exec resume --last --all resumed ${resumed ?? "nothing"}, not the fork ${receipt.fork.session_id}`,
      );
    return `codex exec resume --last --all (fresh CODEX_HOME) resumed the fork ${resumed}`;
  } finally {
    rmSync(home.dir, { recursive: true, force: true });
  }
}

async function ownCompaction(ctx: ClientContext, home: Home, r: Rollout): Promise<string> {
  const hook = installPostCompactHook(home);
  // A hook nobody has trusted in Codex's interface runs only with this flag (the test's own hooks.json).
  const requests = await resume(
    home,
    r,
    r.id,
    ["model_auto_compact_token_limit=2000"],
    ["--dangerously-bypass-hook-trust"],
  );
  const kind = compactionKind(requests);
  if (kind === undefined) throw new Error("Codex did not compact (no compaction request)");
  const turns = requests.filter((b) => requestKind(b) === "turn").length;
  const text = readFileSync(r.path, "utf8");
  if (!text.includes('"type":"compacted"')) throw new Error("Codex wrote no compacted item");
  const result = await audit(ctx, r.path);
  const own = result.compactions.filter((c) => c.source === "codex");
  if (own.length === 0) throw new Error("audit found no Codex compaction");
  // The hook ran on Codex's PostCompact, on this rollout, and told the user the audit's verdict.
  if (!existsSync(hook.output)) throw new Error("Codex did not run the PostCompact hook");
  const given = JSON.parse(readFileSync(hook.input, "utf8")) as {
    transcript_path?: string;
    hook_event_name?: string;
  };
  const said =
    (JSON.parse(readFileSync(hook.output, "utf8")) as { systemMessage?: string }).systemMessage ?? "";
  const last = own.at(-1)!;
  if (given.hook_event_name !== "PostCompact" || given.transcript_path !== r.path)
    throw new Error(`the hook got ${JSON.stringify(given).slice(0, 200)}`);
  if (/did not keep/.test(said) === last.kept)
    throw new Error(`the hook said ${JSON.stringify(said.slice(0, 120))}; audit: kept=${last.kept}`);
  return (
    `Codex's own ${kind} (then ${turns} turn request): ${own.map(verdictLine).join("; ")}; ` +
    `the PostCompact hook ran and told the user the same verdict`
  );
}

export async function codexClient(ctx: ClientContext): Promise<SessionVerdict[]> {
  const verdicts: SessionVerdict[] = [];
  const server = await startFakeServer((req, res) => answerResponses(req, res));
  const verdict = async (session: string, check: string, body: () => Promise<string>) => {
    ctx.log(`codex ${session}: ${check}`);
    try {
      verdicts.push({ client: "codex", session, check, ok: true, detail: await body() });
    } catch (e) {
      verdicts.push({ client: "codex", session, check, ok: false, detail: (e as Error).message });
    }
  };
  try {
    for (const session of CODEX_OWN_COMPACTION_SESSIONS) {
      const file = join(ctx.corpus, session);
      if (CODEX_FORK_SESSIONS.includes(session)) {
        const home = newHome(server, ctx.bin);
        try {
          const r = placeRollout(home, file);
          // The forks are written from the corpus copy before Codex appends to it.
          let forks: Array<[string, ForkReceipt]> = [];
          let a: Item[] = [];
          await verdict(session, "resume original (A)", async () => {
            forks = [
              ["fork A->B (default)", await writeFork(ctx, home, r, [])],
              ["fork A->B (--target 2000)", await writeFork(ctx, home, r, ["--target", "2000"])],
            ];
            a = turnRequest(await resume(home, r, r.id));
            return `A = ${a.length} input items (${r.provider ?? "no"} provider recorded)`;
          });
          if (a.length === 0) continue; // the failed resume is the verdict
          for (const [check, receipt] of forks)
            await verdict(session, check, () => forkCheck(ctx, home, r, a, receipt));
          const summary = forks.find(([, f]) => f.path === "summary")?.[1];
          if (summary !== undefined)
            await verdict(session, "Codex compacts the fork again + audit", () =>
              compactsAgain(ctx, home, r, summary),
            );
        } finally {
          rmSync(home.dir, { recursive: true, force: true });
        }
      }
      if (CODEX_FORK_SESSIONS.includes(session))
        await verdict(session, "fork listed (resume --last)", () => listed(ctx, server, file));
      const home = newHome(server, ctx.bin);
      try {
        await verdict(session, "own compaction + audit", () =>
          ownCompaction(ctx, home, placeRollout(home, file)),
        );
      } finally {
        rmSync(home.dir, { recursive: true, force: true });
      }
    }
  } finally {
    await server.close();
  }
  return verdicts;
}
