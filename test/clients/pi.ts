/**
 * pi (`@mariozechner/pi-coding-agent@0.73.1`) against the fake model server.
 *
 * pi takes a custom OpenAI-compatible provider from `<HOME>/.pi/agent/models.json`
 * (provider `fake`, `api: "openai-completions"`, the key read from the
 * environment variable the entry names) and speaks OpenAI Chat Completions
 * with `stream: true`: the fake answers with chunks, a usage chunk, then
 * `[DONE]`. pi refuses a session whose header `cwd` does not exist, so each
 * corpus session is copied into the run's folder with its header's `cwd`
 * set to a temporary folder (the corpus file itself is never touched).
 *
 * For every pi corpus session:
 * - fork: resume a copy of the original (request A), `compact --fork` the
 *   original with the built CLI, resume the fork (request B); A → B must pass
 *   `compact-safe validate`, and B must be pi's own additions (its system
 *   prompt, the checkpoint in its compaction framing, the new prompt) around
 *   messages pi sent in A, verbatim and in order (or compact-safe's bound
 *   or prune stub of a tool result); then pi compacts the fork itself, with
 *   the fork's checkpoint as its previous summary, and `audit` judges that;
 * - own compaction: resume a copy with a model whose context window is small,
 *   so that pi compacts before it sends the prompt (the fake answers the
 *   summary request with a canned summary), with compact-safe's extension
 *   loaded (`-e extensions/compact-safe.js`); then `compact-safe audit`
 *   on the session file gives the verdict on pi's compaction, which the hook
 *   must have recorded too.
 *
 * Each run has its own temporary HOME; the fake server listens on 127.0.0.1
 * and is closed at the end.
 */
import { spawn } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { ServerResponse } from "node:http";
import { repoRoot } from "../support.js";
import { sendEvents, startFakeServer, type RecordedRequest } from "./fake-server.js";
import type { ClientContext, ClientModule, SessionVerdict } from "./types.js";

const PI_COMPACTION_PREFIX =
  "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const PI_COMPACTION_SUFFIX = "\n</summary>";
const PROMPT = "continue";
const CANNED_SUMMARY =
  "## Goal\nContinue the work of the session.\n\n## Progress\n### Done\n- [x] earlier steps\n\n## Next Steps\n1. Go on.";
const HOOK = join(repoRoot, "extensions", "compact-safe.js");

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string }[];
  tool_call_id?: string;
}
interface ChatBody {
  messages: ChatMessage[];
}

interface Exec {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command with stdin closed (pi reads a piped stdin as input), killed after 3 minutes. */
function exec(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Exec> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    const timer = setTimeout(() => child.kill("SIGKILL"), 180_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: null, stdout: "", stderr: e.message });
    });
  });
}

export function textOf(m: ChatMessage | undefined): string {
  if (!m) return "";
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content))
    return m.content.map((p) => (typeof p?.text === "string" ? (p.text as string) : "")).join("");
  return "";
}

/** A summary request of pi's compaction (its conversation is sent as text inside `<conversation>`). */
export function isSummaryRequest(body: ChatBody): boolean {
  return textOf(body.messages.at(-1)).startsWith("<conversation>");
}

/** One streamed Chat Completions answer: a text delta, the stop, a usage chunk, `[DONE]`. */
export function answer(res: ServerResponse, text: string, promptTokens = 100): void {
  const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1, model: "fake-model" };
  sendEvents(res, [
    [
      null,
      { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] },
    ],
    [null, { ...base, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] }],
    [null, { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }],
    [
      null,
      {
        ...base,
        choices: [],
        usage: { prompt_tokens: promptTokens, completion_tokens: 5, total_tokens: promptTokens + 5 },
      },
    ],
    [null, "[DONE]"],
  ]);
}

/**
 * Whether pi would not compact `text` before the next prompt on the small window: its last assistant
 * message (or a compaction after it) does not bill a prompt over the window.
 */
function needsWarmUp(text: string): boolean {
  const lines = text.trimEnd().split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    let e: { type?: unknown; message?: { role?: unknown; usage?: Record<string, number> } };
    try {
      e = JSON.parse(lines[i]!) as typeof e;
    } catch {
      continue;
    }
    if (e.type === "compaction") return true;
    if (e.type === "message" && e.message?.role === "assistant") {
      const u = e.message.usage ?? {};
      const total =
        u.totalTokens || (u.input ?? 0) + (u.output ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
      return total < 20_000;
    }
  }
  return true;
}

/** The corpus session's text with its header's `cwd` replaced (every other line byte for byte). */
export function withCwd(text: string, cwd: string): string {
  const nl = text.indexOf("\n");
  const header = JSON.parse(text.slice(0, nl)) as Record<string, unknown>;
  header.cwd = cwd;
  return JSON.stringify(header) + text.slice(nl);
}

/** How B's tool message rewrites A's: compact-safe's 8 KiB bound (head and tail) or a prune stub. */
function rewriteOf(b: ChatMessage, a: ChatMessage): "bounded" | "pruned" | undefined {
  if (b.role !== "tool" || a.role !== "tool" || b.tool_call_id !== a.tool_call_id) return undefined;
  const bt = textOf(b);
  if (bt.startsWith("[compact-safe: pruned tool result;")) return "pruned";
  if (bt.includes("[compact-safe: tool result truncated; original ")) return "bounded";
  return undefined;
}

/**
 * Whether B is pi's additions around messages of A: the same system prompt
 * first, the checkpoint in pi's compaction framing, then messages that pi
 * sent in A, verbatim and in the same order (a tool result may be
 * compact-safe's bounded copy or prune stub of A's), then the same new
 * prompt. Returns the reason it is not, or the counts.
 */
export function compareAB(
  a: ChatBody,
  b: ChatBody,
  summary: string,
): { ok: true; verbatim: number; bounded: number; pruned: number } | { ok: false; reason: string } {
  const am = a.messages;
  const bm = b.messages;
  if (bm[0]?.role !== "system" || !isDeepStrictEqual(bm[0], am[0]))
    return { ok: false, reason: "B does not open with A's system prompt" };
  if (!isDeepStrictEqual(bm.at(-1), am.at(-1)) || textOf(bm.at(-1)) !== PROMPT)
    return { ok: false, reason: "B does not end with the prompt A ends with" };
  if (textOf(bm[1]) !== PI_COMPACTION_PREFIX + summary + PI_COMPACTION_SUFFIX)
    return { ok: false, reason: "B's first message is not the fork's checkpoint in pi's compaction framing" };
  let j = 1;
  const counts = { verbatim: 0, bounded: 0, pruned: 0 };
  for (let i = 2; i < bm.length - 1; i++) {
    const m = bm[i]!;
    let k = j;
    while (k < am.length - 1 && !isDeepStrictEqual(am[k], m) && rewriteOf(m, am[k]!) === undefined) k++;
    if (k >= am.length - 1)
      return {
        ok: false,
        reason: `B message ${i} (${m.role}: ${JSON.stringify(textOf(m).slice(0, 60))}) is not a message of A after the previous one`,
      };
    counts[isDeepStrictEqual(am[k], m) ? "verbatim" : rewriteOf(m, am[k]!)!]++;
    j = k + 1;
  }
  return { ok: true, ...counts };
}

interface Run {
  home: string;
  work: string;
  env: NodeJS.ProcessEnv;
}

/** Which pi the checks run: its name on the verdict lines and the command that runs it. */
export interface PiTarget {
  /** The verdicts' client name ("pi" for the pinned 0.73, "pi-1.6.0" for pi 1.x). */
  client: SessionVerdict["client"];
  /** The executable and its leading arguments (pi 1.x: the Node 22 binary and pi's cli.js). */
  command: [string, string[]];
  /**
   * pi's `~/.pi/agent/settings.json` in every run, when given. pi 1.x keeps the newest 20,000 tokens (its default
   * `compaction.keepRecentTokens`) and compacts nothing when the context since the last compaction is smaller: a
   * fork is, so its runs keep less, as a user of a small model would set it.
   */
  settings?: Record<string, unknown>;
}

export const piClient: ClientModule = (ctx: ClientContext) =>
  piChecks(ctx, { client: "pi", command: [join(ctx.bin, "pi"), []] });

/** The pi checks (see the module comment) with the pi `target` names. */
export async function piChecks(ctx: ClientContext, target: PiTarget): Promise<SessionVerdict[]> {
  const client = target.client;
  const [piCmd, piPre] = target.command;
  const root = mkdtempSync(join(tmpdir(), "cs-clients-pi-"));
  const verdicts: SessionVerdict[] = [];
  /**
   * In the own-compaction run: the session file whose hook entry the fake waits for before it answers
   * the prompt after a compaction.
   */
  let waitForHook: string | undefined;
  /** The warm-up turn of a session that ends with pi's own compaction (see below). */
  let warmUp = false;
  const server = await startFakeServer((req: RecordedRequest, res: ServerResponse) => {
    const body = req.body as ChatBody | undefined;
    if (req.method !== "POST" || !req.path.endsWith("/chat/completions") || !body?.messages) {
      res.writeHead(404).end();
      return;
    }
    if (isSummaryRequest(body)) {
      answer(res, CANNED_SUMMARY);
      return;
    }
    if (warmUp) {
      // A billed prompt over the small window, so that pi compacts before the next prompt.
      answer(res, "ok", 50_000);
      return;
    }
    // In print mode pi exits once the prompt is answered: give the hook's audit time to record its verdict first.
    const file = waitForHook;
    const started = Date.now();
    const poll = () => {
      const done =
        file === undefined || readFileSync(file, "utf8").includes('"customType":"compact-safe-audit"');
      if (done || Date.now() - started > 15_000) answer(res, "ok");
      else setTimeout(poll, 50);
    };
    poll();
  });
  const newRun = (name: string): Run => {
    const home = join(root, name, "home");
    const work = join(root, name, "work");
    mkdirSync(join(home, ".pi", "agent"), { recursive: true });
    mkdirSync(work, { recursive: true });
    if (target.settings !== undefined)
      writeFileSync(join(home, ".pi", "agent", "settings.json"), JSON.stringify(target.settings));
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
            baseUrl: `${server.url}/v1`,
            api: "openai-completions",
            apiKey: "CS_FAKE_KEY",
            // fake-small: a window so small that pi compacts before it sends the next prompt.
            models: [model("fake-model", 10_000_000), model("fake-small", 20_000)],
          },
        },
      }),
    );
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      CS_FAKE_KEY: "x",
      PI_OFFLINE: "1",
      PI_SKIP_VERSION_CHECK: "1",
      PI_TELEMETRY: "0",
      NO_COLOR: "1",
      COMPACT_SAFE_BIN: ctx.cli,
    };
    return { home, work, env };
  };
  /** Runs pi headless on `session`; returns the requests it sent and its result. */
  const runPi = async (run: Run, session: string, model: string, extra: string[] = []) => {
    const from = server.requests.length;
    const r = await exec(
      piCmd,
      [...piPre, "--provider", "fake", "--model", model, ...extra, "-p", "--session", session, PROMPT],
      { cwd: run.work, env: run.env },
    );
    return { ...r, requests: server.requests.slice(from) };
  };
  const cli = (args: string[], cwd: string) =>
    exec(process.execPath, [ctx.cli, ...args], { cwd, env: { ...process.env, NO_COLOR: "1" } });
  /**
   * Makes pi compact `file` itself, headless: pi compacts before a prompt when the last billed prompt
   * crosses the window, so the run uses the small window. A session without such a prompt since its
   * last compaction first gets one turn (on the large window) billed at 50,000 tokens. (A compaction
   * after a turn would race pi's exit in print mode.) Returns the run and its summary requests.
   */
  const piCompacts = async (run: Run, file: string, extra: string[]) => {
    const warmed = needsWarmUp(readFileSync(file, "utf8"));
    if (warmed) {
      warmUp = true;
      const w = await runPi(run, file, "fake-model");
      warmUp = false;
      if (w.code !== 0) return { warmed, ...w, summaries: [] as RecordedRequest[] };
    }
    waitForHook = extra.length > 0 ? file : undefined;
    const r = await runPi(run, file, "fake-small", extra);
    waitForHook = undefined;
    return { warmed, ...r, summaries: r.requests.filter((q) => isSummaryRequest(q.body as ChatBody)) };
  };

  try {
    const dir = join(ctx.corpus, "pi");
    const sessions = readdirSync(dir)
      .filter((f) => f.endsWith(".jsonl"))
      .sort();
    for (const name of sessions) {
      const session = `pi/${name}`;
      const text = readFileSync(join(dir, name), "utf8");

      // 1. The fork: A (the original resumed), the write-back, B (the fork resumed).
      const fork = newRun(`${basename(name, ".jsonl")}-fork`);
      const original = join(fork.work, "..", "original.jsonl");
      writeFileSync(original, withCwd(text, fork.work));
      const resumedOriginal = join(fork.work, "..", "resumed-original.jsonl");
      copyFileSync(original, resumedOriginal);
      const check = "fork A->B";
      const fail = (detail: string) => verdicts.push({ client, session, check, ok: false, detail });
      ctx.log(`${client} ${session}: resuming the original`);
      const a = await runPi(fork, resumedOriginal, "fake-model");
      const aChats = a.requests.filter((q) => !isSummaryRequest(q.body as ChatBody));
      if (a.code !== 0 || aChats.length !== 1) {
        fail(
          `resuming the original: exit ${a.code}, ${aChats.length} requests; ${a.stderr.trim().slice(0, 200)}`,
        );
      } else {
        ctx.log(`${client} ${session}: compact --fork`);
        const c = await cli(["compact", original, "--fork", "--json", "--workspace", fork.work], fork.work);
        if (c.code !== 0) fail(`compact --fork: exit ${c.code}: ${c.stderr.trim()}`);
        else {
          const receipt = JSON.parse(c.stdout) as { path: string; fork: { path: string; resume: string } };
          const forkLines = readFileSync(receipt.fork.path, "utf8").trimEnd().split("\n");
          const compaction = JSON.parse(forkLines.at(-1)!) as { type: string; summary: string };
          ctx.log(`${client} ${session}: resuming the fork (${receipt.fork.resume})`);
          const b = await runPi(fork, receipt.fork.path, "fake-model");
          const bChats = b.requests.filter((q) => !isSummaryRequest(q.body as ChatBody));
          if (b.code !== 0 || bChats.length !== 1) {
            fail(
              `resuming the fork: exit ${b.code}, ${bChats.length} requests; ${b.stderr.trim().slice(0, 200)}`,
            );
          } else {
            const aFile = join(fork.work, "..", "request-A.json");
            const bFile = join(fork.work, "..", "request-B.json");
            writeFileSync(aFile, JSON.stringify(aChats[0]!.body));
            writeFileSync(bFile, JSON.stringify(bChats[0]!.body));
            const v = await cli(["validate", aFile, bFile, "--path", receipt.path, "--json"], fork.work);
            const verdict =
              v.code === 0 || v.code === 1
                ? (JSON.parse(v.stdout) as { valid: boolean; reason: string | null })
                : undefined;
            const cmp = compareAB(
              aChats[0]!.body as ChatBody,
              bChats[0]!.body as ChatBody,
              compaction.summary,
            );
            const aCount = (aChats[0]!.body as ChatBody).messages.length;
            const bCount = (bChats[0]!.body as ChatBody).messages.length;
            if (!verdict) fail(`validate: exit ${v.code}: ${v.stderr.trim()}`);
            else if (!verdict.valid) fail(`validate A->B: ${verdict.reason}`);
            else if (compaction.type !== "compaction") fail("the fork does not end with a compaction entry");
            else if (!cmp.ok) fail(`validate ok, but ${cmp.reason}`);
            else
              verdicts.push({
                client,
                session,
                check,
                ok: true,
                detail:
                  `validate ok (path ${receipt.path}); A ${aCount} messages, B ${bCount} = pi's system prompt + ` +
                  `the checkpoint in pi's compaction framing + ${cmp.verbatim} messages of A verbatim` +
                  `${cmp.bounded > 0 ? ` + ${cmp.bounded} tool results bounded` : ""}` +
                  `${cmp.pruned > 0 ? ` + ${cmp.pruned} tool results pruned to stubs` : ""} + the prompt "${PROMPT}"`,
              });
            // pi takes the fork's compaction for its own: it compacts the fork again, updating our checkpoint.
            ctx.log(`${client} ${session}: pi compacts the fork again`);
            const again = await piCompacts(fork, receipt.fork.path, []);
            // The fork's checkpoint (on the prune-only path, the earlier checkpoint it kept) is pi's previous summary.
            const previous = again.summaries.some((q) =>
              textOf((q.body as ChatBody).messages.at(-1)).includes(
                `<previous-summary>\n${compaction.summary}\n</previous-summary>`,
              ),
            );
            const audit = await cli(["audit", receipt.fork.path, "--format", "pi", "--json"], fork.work);
            const report =
              audit.code === 0 || audit.code === 1
                ? (JSON.parse(audit.stdout) as { compactions: { kept: boolean; reason: string | null }[] })
                : undefined;
            const last = report?.compactions.at(-1);
            const compactions = report?.compactions.length ?? 0;
            verdicts.push({
              client,
              session,
              check: "fork compacted again by pi",
              ok: again.code === 0 && previous && compactions === 2 && last !== undefined,
              detail:
                `${again.warmed ? "after a warm-up turn, " : ""}${again.summaries.length} summary request(s), ` +
                `${previous ? "the fork's checkpoint sent as pi's <previous-summary>" : "the fork's checkpoint NOT sent as pi's previous summary"}; ` +
                `audit: ${compactions} compactions, pi's: ${last === undefined ? "none" : last.kept ? "kept the contract" : `lost: ${last.reason}`}`,
            });
          }
        }
      }

      // 2. pi's own compaction (headless: a small context window makes pi compact before the prompt), the hook, audit.
      const own = newRun(`${basename(name, ".jsonl")}-own`);
      const file = join(own.work, "..", "session.jsonl");
      writeFileSync(file, withCwd(text, own.work));
      const ownCheck = "own compaction + audit";
      const ownFail = (detail: string) =>
        verdicts.push({ client, session, check: ownCheck, ok: false, detail });
      ctx.log(`${client} ${session}: pi's own compaction (context window 20,000) with the hook loaded`);
      const r = await piCompacts(own, file, ["-e", HOOK]);
      const endsCompacted = r.warmed;
      const summaries = r.summaries.length;
      const after = readFileSync(file, "utf8")
        .trimEnd()
        .split("\n")
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as Record<string, unknown>];
          } catch {
            return [];
          }
        });
      const compactions = after.filter((e) => e.type === "compaction");
      const newest = compactions.at(-1);
      const hookEntry = after.find((e) => e.type === "custom" && e.customType === "compact-safe-audit") as
        { data: { compaction: string; kept: boolean } } | undefined;
      if (r.code !== 0 || summaries === 0 || !newest || typeof newest.id !== "string") {
        ownFail(
          `pi did not compact: exit ${r.code}, ${summaries} summary requests; ${r.stderr.trim().slice(0, 200)}`,
        );
        continue;
      }
      const audit = await cli(["audit", file, "--format", "pi", "--json"], own.work);
      const report =
        audit.code === 0 || audit.code === 1
          ? (JSON.parse(audit.stdout) as {
              compactions: {
                id: string;
                kept: boolean;
                reason: string | null;
                messages_before: number;
                messages_after: number;
              }[];
            })
          : undefined;
      const mine = report?.compactions.find((c) => c.id === newest.id);
      if (!mine) {
        ownFail(
          `audit gave no verdict on pi's compaction ${newest.id}: exit ${audit.code} ${audit.stderr.trim()}`,
        );
        continue;
      }
      const verdictText = mine.kept ? "kept the contract" : `lost: ${mine.reason}`;
      if (!hookEntry || hookEntry.data.compaction !== mine.id || hookEntry.data.kept !== mine.kept) {
        ownFail(
          `audit: pi's compaction ${verdictText}; but the hook recorded ${JSON.stringify(hookEntry?.data ?? null)}`,
        );
        continue;
      }
      // A lost round is restated to the model with the prompt when the audit ends within the hook's wait.
      const prompt = r.requests.filter((q) => !isSummaryRequest(q.body as ChatBody)).at(-1);
      const restated = (prompt?.body as ChatBody | undefined)?.messages.some((m) =>
        textOf(m).startsWith("compact-safe: the compaction just made lost part of the last round"),
      );
      const restatement = mine.kept
        ? ""
        : restated
          ? "; the hook's restatement went with the prompt"
          : "; the hook's restatement was not in the prompt (the audit took longer than the hook waits)";
      verdicts.push({
        client,
        session,
        check: ownCheck,
        ok: true,
        detail:
          `${endsCompacted ? "after a warm-up turn, " : ""}pi compacted before the prompt ` +
          `(${summaries} summary request${summaries > 1 ? "s" : ""}, ` +
          `${mine.messages_before} -> ${mine.messages_after} messages); audit: ${verdictText}; the hook recorded the same verdict${restatement}`,
      });
    }
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
  return verdicts;
}
