/**
 * `compact-safe guard` with the real agents (issue 25), in `npm run test:clients`.
 *
 * For Claude Code, Codex and pi (the pinned versions, and Claude Code also
 * at the newest version the registry serves), on one corpus session each,
 * the same scenario runs twice, once straight against the fake model and
 * once through the guard (`node dist/src/cli/main.js guard --upstream
 * FAKE --listen 127.0.0.1:PORT --state DIR`, the built CLI):
 *
 * 1. the agent resumes the session with one prompt (request BEFORE, the last
 *    main request before the compaction);
 * 2. the agent compacts with its own mechanism: Claude Code `claude -p
 *    /compact`; Codex's local compaction before the next turn (a small
 *    `model_auto_compact_token_limit`, after the fake billed the turn before
 *    at 500,000 tokens); pi's compaction before the next prompt (a model with
 *    a 20,000-token window, after the fake billed the turn before at 50,000),
 *    twice: with pi's default settings (they keep the corpus sessions' last
 *    rounds whole: the run without the guard is reported as seen), and with
 *    `keepRecentTokens` 300, where pi cuts into the last round;
 * 3. one more prompt (request AFTER, the first main request after the
 *    compaction).
 *
 * AFTER less its new prompt is the replacement of BEFORE's history, judged
 * with the project's validator (`validateSurvivalContract`) after both went
 * through the project's importers (Anthropic, Responses, OpenAI). What each
 * agent adds to every request of its own and that is not the conversation is
 * set aside on both sides alike: Claude Code's `<system-reminder>` blocks and
 * per-request `cache_control` markers, Codex's developer messages and its
 * `<environment_context>` / `<user_instructions>` / AGENTS.md user messages.
 *
 * - through the guard, AFTER must keep the contract, and still carry the
 *   agent's own summary;
 * - straight to the fake, AFTER must not (the known breakage: the agents
 *   lose the protected last round). A run where it does keep it fails its
 *   check and says so;
 * - the guard restarted mid-session: after the compaction the guard is
 *   killed (SIGKILL) and started again on the same port and `--state`
 *   folder; the next prompt's request (less that prompt) must still keep
 *   the contract against BEFORE;
 * - an upstream that fails: through the guard, Claude Code meets a 500 and
 *   then a closed connection (it must fail its run, the guard must stay up)
 *   and then a working upstream (its run must pass through);
 * - streams byte for byte: for each wire (Anthropic Messages, Responses,
 *   Chat Completions) a direct client sends a request through the guard; the
 *   fake streams its answer in chunks (a UTF-8 character split across two)
 *   and sends the rest only once the client has received the first chunk
 *   (a guard that held the stream back would stall: the check's timeout
 *   fails it); the bytes the client received must be the bytes the fake
 *   sent, and the request bytes the fake received the client's; then the
 *   fake answers 500, closes the connection before answering and in the
 *   middle of a stream: the client sees each error, the guard stays up and
 *   the next request goes through;
 * - `--summarizer extractive`: Claude Code's `/compact` through the guard
 *   completes, the fake receives no summarization request (the guard answers
 *   it), and the session's compact summary, and the next prompt's request,
 *   carry compact-safe's extractive note;
 * - a fresh Claude Code session (pinned and newest; no `--resume`, no
 *   `--model`: the client's default model, claude-opus-5-5, with which it
 *   puts `role: "system"` elements inside `messages`) through `compact-safe
 *   guard -- claude`, then `/compact` and one more prompt: every model
 *   request names the default model, the guard judges the compaction and
 *   logs nothing "not judged" (see `freshSessionCheck`).
 *
 * A guard log line saying "not judged" fails the check whose run wrote it.
 *
 * Every server listens on 127.0.0.1, every run has its own temporary HOME,
 * every process has a time limit (a hung client is killed and reported as
 * a failure), and every process and server started here is ended here.
 */
import { spawn, type ChildProcess } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, request as httpRequest, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validateSurvivalContract } from "../../src/contract/index.js";
import { importText } from "../../src/formats/detect.js";
import { liveContext } from "../../src/journal/index.js";
import { protectedLosses } from "../../src/route/audit.js";
import type { Message } from "../../src/model/index.js";
import { startFakeServer, type FakeServer, type RecordedRequest } from "./fake-server.js";
import { answerAnthropic, CANNED_SUMMARY, isCompactionRequest } from "./fake-anthropic.js";
import {
  answerResponses,
  CODEX_CANNED_SUMMARY,
  inputItems,
  itemText,
  requestKind,
} from "./fake-responses.js";
import { answer as answerChat, isSummaryRequest, textOf, withCwd } from "./pi.js";
import { installNewestClaude, PINNED_CLIENTS, type NewestClaude } from "./install.js";
import { runProcess, type ProcessResult } from "./run-process.js";
import type { ClientContext, SessionVerdict } from "./types.js";
import { todayChecks } from "./guard-today.js";
import { remoteChecks } from "./codex-remote.js";

const CLAUDE_SESSION = "claude-code/entire-1a-8a83a35a9b-0.jsonl";
/** A rollout without a recorded provider: it runs on a custom provider, where Codex compacts locally. */
const CODEX_SESSION = "codex/neurodata-rollout-2025-09-26T17-01-04.jsonl";
/** pi's default settings: a session where pi summarises most of the history (887 messages -> 181). */
const PI_SESSION = "pi/pi-mono-large-session.jsonl";
/** pi with a small keepRecentTokens: a session whose last round pi then cuts into. */
const PI_SHORT_KEEP_SESSION = "pi/pi-mono-root-session.jsonl";

const PROMPT_1 = "continue";
const PROMPT_2 = "go on with the next step";
const PROMPT_3 = "and the step after that";

const PI_SUMMARY =
  "## Goal\nContinue the work of the session.\n\n## Progress\n### Done\n- [x] earlier steps\n\n## Next Steps\n1. Go on.";

type Wire = "anthropic" | "responses" | "openai";
type Item = Record<string, unknown>;
type Body = Record<string, unknown>;

/** What the fake does with the next requests (set by the scenario between runs). */
interface FakeMode {
  /** Usage the fake bills a turn at (Codex, pi): a large one makes the agent compact before its next turn. */
  usage?: number;
  /** Fail every model request: a 500, or the connection closed before any answer. */
  fail?: "500" | "close";
}

// ---------------------------------------------------------------------------------------------------------
// The guard as a process.

interface GuardProcess {
  url: string;
  port: number;
  /** Whether the process is still running. */
  alive(): boolean;
  /** What it wrote on standard error so far. */
  stderr(): string;
  /** Ends it (SIGTERM, then SIGKILL after 5 s; `kill`: SIGKILL at once) and waits for its exit. */
  stop(kill?: boolean): Promise<number | null>;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve, reject) => {
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Every guard started, so that the module ends each one whatever happens. */
const started = new Set<ChildProcess>();

async function startGuardProcess(
  ctx: ClientContext,
  upstream: string,
  port: number,
  stateDir: string,
  extra: readonly string[] = [],
): Promise<GuardProcess> {
  const child = spawn(
    process.execPath,
    [
      ctx.cli,
      "guard",
      "--upstream",
      upstream,
      "--listen",
      `127.0.0.1:${port}`,
      "--state",
      stateDir,
      ...extra,
    ],
    {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: stateDir, NO_COLOR: "1" },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  started.add(child);
  let err = "";
  let exited: number | null | undefined;
  const exit = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      exited = code;
      started.delete(child);
      resolve(code);
    }),
  );
  child.stderr!.on("data", (d: Buffer) => (err += d.toString("utf8")));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the guard printed no URL within 20 s: ${JSON.stringify(err.slice(0, 300))}`));
    }, 20_000);
    const look = () => {
      const nl = err.indexOf("\n");
      if (nl < 0) return;
      clearTimeout(timer);
      const m = /http:\/\/127\.0\.0\.1:(\d+)/.exec(err.slice(0, nl));
      if (m && Number(m[1]) === port) resolve(m[0]);
      else reject(new Error(`the guard's first stderr line is ${JSON.stringify(err.slice(0, nl))}`));
    };
    child.stderr!.on("data", look);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the guard exited (${code}) before it listened: ${err.trim().slice(0, 300)}`));
    });
  });
  return {
    url,
    port,
    alive: () => exited === undefined,
    stderr: () => err,
    stop: async (kill = false) => {
      if (exited !== undefined) return exited;
      child.kill(kill ? "SIGKILL" : "SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      const code = await exit;
      clearTimeout(timer);
      return code;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// From wire requests to the validator.

const REMINDER = "<system-reminder>";

/**
 * Claude Code's messages less its per-request additions (reminder blocks, cache markers, and the
 * `role: "system"` elements it puts inside `messages` on claude-opus-5-5: environment, deferred tools).
 */
function anthropicHistory(body: Body): Item[] {
  const out: Item[] = [];
  for (const m of (body.messages as Item[] | undefined) ?? []) {
    if (m.role === "system") continue;
    const content =
      typeof m.content === "string" ? [{ type: "text", text: m.content }] : ((m.content as Item[]) ?? []);
    const blocks = content
      .filter((b) => !(m.role === "user" && b.type === "text" && String(b.text).startsWith(REMINDER)))
      .map((b) => {
        const { cache_control: _marker, ...rest } = b;
        return rest;
      });
    if (blocks.length > 0) out.push({ role: m.role, content: blocks });
  }
  return out;
}

/** A message of Codex's own context (not the conversation): developer text, environment, instructions. */
function isCodexContext(it: Item): boolean {
  if (it.type !== "message") return false;
  if (it.role === "developer" || it.role === "system") return true;
  const t = itemText(it).trimStart();
  return it.role === "user" && /^(<environment_context>|<user_instructions>|# AGENTS\.md)/.test(t);
}

/** The last message's own text: its last text block (Anthropic), its text (Responses, Chat). */
function promptOf(wire: Wire, m: Item | undefined): string | undefined {
  if (m === undefined || m.role !== "user") return undefined;
  if (wire === "anthropic") {
    const last = (m.content as Item[]).at(-1);
    return last?.type === "text" ? String(last.text) : undefined;
  }
  return wire === "responses" ? itemText(m) : textOf(m as never);
}

/**
 * The request's history as canonical messages, through the project's
 * importer for its wire; with `prompt`, the request must end with it and it
 * is taken off (what is left is the history the agent sent the prompt on).
 */
export function historyOf(wire: Wire, body: Body, prompt?: string): Message[] {
  let list: Item[] =
    wire === "anthropic"
      ? anthropicHistory(body)
      : wire === "responses"
        ? inputItems(body).filter((it) => !isCodexContext(it))
        : [...((body.messages as Item[] | undefined) ?? [])];
  if (prompt !== undefined) {
    const last = list.at(-1);
    if (promptOf(wire, last) !== prompt)
      throw new Error(`the request does not end with the prompt ${JSON.stringify(prompt)}`);
    if (wire === "anthropic" && (last!.content as Item[]).length > 1)
      list = [...list.slice(0, -1), { ...last!, content: (last!.content as Item[]).slice(0, -1) }];
    else list = list.slice(0, -1);
  }
  const doc = wire === "responses" ? { input: list } : { messages: list };
  const { entries } = importText(JSON.stringify(doc), `request.${wire}.json`, {
    format: wire,
    toolIds: "keep",
  });
  return liveContext(entries);
}

interface Judgement {
  kept: boolean;
  reason: string | null;
  line: string;
}

export function judge(wire: Wire, before: Body, after: Body, prompt: string): Judgement {
  const a = historyOf(wire, before);
  const b = historyOf(wire, after, prompt);
  const v = validateSurvivalContract(a, b);
  const l = protectedLosses(a, b);
  const lost = `lost ${l.user_texts.length} user texts, ${l.tool_calls.length} calls, ${l.tool_results.length} results, ${l.assistant_texts.length} assistant texts`;
  return {
    kept: v.valid,
    reason: v.reason,
    line: `${a.length} -> ${b.length} messages; ${v.valid ? "the contract holds" : `validator: ${v.reason}; ${lost}`}`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// The agents.

interface Trace {
  before: Body;
  compaction: Body;
  after: Body;
  /** The request of the prompt after the restart (runs through the guard only). */
  later?: Body;
}

interface Agent {
  /** e.g. "claude-code 2.1.328". */
  name: string;
  /** How it compacts, for the check's name. */
  mechanism: string;
  wire: Wire;
  session: string;
  /** The agent's own summary as the fake wrote it (the guard keeps it). */
  summary: string;
  answer(req: RecordedRequest, res: ServerResponse, mode: FakeMode): void;
  /** Places the session and the config in `home`, the agent pointed at `baseUrl`. */
  setup(ctx: ClientContext, home: string, baseUrl: string): void;
  /** The three steps: the prompt before, the compaction (with the prompt after, where it is one run), the later prompt. */
  steps: {
    before(ctx: ClientContext, home: string, mode: FakeMode): Promise<ProcessResult>;
    compact(ctx: ClientContext, home: string, mode: FakeMode): Promise<ProcessResult[]>;
    later(ctx: ClientContext, home: string, mode: FakeMode): Promise<ProcessResult>;
  };
  isCompaction(body: Body): boolean;
  /** The summaries the agent wrote into its session or rollout in `home`, in order (its compactions' texts). */
  summaries(home: string): string[];
  /**
   * Whether the run without the guard must lose the protected last round (false: the verdict is
   * reported as seen, for pi's default settings, which keep the corpus sessions' last rounds whole).
   */
  expectBreak: boolean;
}

const AGENT_LIMIT_MS = 180_000;

/** The JSON lines of `files`, in order (a line that does not parse is left out). */
function jsonlLines(files: readonly string[]): Item[] {
  const out: Item[] = [];
  for (const f of files)
    for (const line of readFileSync(f, "utf8").split("\n")) {
      if (line.trim() === "") continue;
      try {
        out.push(JSON.parse(line) as Item);
      } catch {
        // a partial last line
      }
    }
  return out;
}

/** Every file under `dir`, recursively, sorted. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

function mustPass(what: string, r: ProcessResult): ProcessResult {
  if (r.code !== 0)
    throw new Error(
      `${what}: exit ${r.code}: ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" | ").slice(0, 300)}`,
    );
  return r;
}

function sessionIdOf(text: string): string {
  const m = /"sessionId":"([^"]+)"/.exec(text);
  if (!m) throw new Error("no sessionId in the session file");
  return m[1]!;
}

/** A Claude Code binary: its folder (default: the pinned clients' `ctx.bin`) and its version. */
export interface ClaudeBinary {
  bin?: string;
  version: string;
}

const PINNED_CLAUDE: ClaudeBinary = { version: PINNED_CLIENTS["@anthropic-ai/claude-code"] };

export function claudeCode(binary: ClaudeBinary = PINNED_CLAUDE): Agent {
  let id = "";
  let env: Record<string, string> = {};
  const claude = (ctx: ClientContext, home: string, prompt: string) =>
    runProcess(
      join(binary.bin ?? ctx.bin, "claude"),
      ["-p", prompt, "--resume", id, "--output-format", "json"],
      {
        cwd: join(home, "work"),
        env,
        timeoutMs: AGENT_LIMIT_MS,
      },
    );
  return {
    name: `claude-code ${binary.version}`,
    mechanism: "/compact",
    wire: "anthropic",
    session: CLAUDE_SESSION,
    summary: CANNED_SUMMARY,
    answer: (req, res) => answerAnthropic(req, res),
    setup(ctx, home, baseUrl) {
      const work = join(home, "work");
      const project = join(home, ".claude", "projects", work.replace(/[/.]/g, "-"));
      mkdirSync(project, { recursive: true });
      mkdirSync(work, { recursive: true });
      const text = readFileSync(join(ctx.corpus, CLAUDE_SESSION), "utf8");
      id = sessionIdOf(text);
      writeFileSync(join(project, `${id}.jsonl`), text);
      env = {
        HOME: home,
        ANTHROPIC_BASE_URL: baseUrl,
        ANTHROPIC_API_KEY: "fake-key",
        DISABLE_TELEMETRY: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        // An upstream error reaches the run at once (no retries with backoff).
        CLAUDE_CODE_MAX_RETRIES: "0",
      };
    },
    steps: {
      before: (ctx, home) => claude(ctx, home, PROMPT_1),
      compact: async (ctx, home) => [
        mustPass("claude -p /compact", await claude(ctx, home, "/compact")),
        await claude(ctx, home, PROMPT_2),
      ],
      later: (ctx, home) => claude(ctx, home, PROMPT_3),
    },
    isCompaction: (body) => isCompactionRequest(body),
    summaries(home) {
      const project = join(home, ".claude", "projects", join(home, "work").replace(/[/.]/g, "-"));
      return jsonlLines(
        readdirSync(project)
          .filter((f) => f.endsWith(".jsonl"))
          .map((f) => join(project, f)),
      )
        .filter((l) => l.isCompactSummary === true)
        .map((l) => JSON.stringify((l.message as Item | undefined)?.content ?? ""));
    },
    expectBreak: true,
  };
}

export function codex(): Agent {
  let id = "";
  const run = (ctx: ClientContext, home: string, prompt: string, config: string[] = []) =>
    runProcess(
      join(ctx.bin, "codex"),
      [
        "exec",
        "--skip-git-repo-check",
        ...['model_provider="fake"', ...config].flatMap((c) => ["-c", c]),
        "resume",
        id,
        prompt,
      ],
      {
        cwd: home,
        env: { HOME: home, CODEX_HOME: home, KEYVAR: "fake-key" },
        timeoutMs: AGENT_LIMIT_MS,
      },
    );
  return {
    name: `codex ${PINNED_CLIENTS["@openai/codex"]}`,
    mechanism: "local compaction",
    wire: "responses",
    session: CODEX_SESSION,
    summary: CODEX_CANNED_SUMMARY,
    answer: (req, res, mode) => answerResponses(req, res, { totalTokens: mode.usage }),
    setup(ctx, home, baseUrl) {
      writeFileSync(
        join(home, "config.toml"),
        `model = "gpt-5"\n\n[model_providers.fake]\nname = "fake"\nbase_url = "${baseUrl}/v1"\n` +
          `wire_api = "responses"\nenv_key = "KEYVAR"\nrequest_max_retries = 0\nstream_max_retries = 0\n`,
      );
      const text = readFileSync(join(ctx.corpus, CODEX_SESSION), "utf8");
      const meta = (JSON.parse(text.slice(0, text.indexOf("\n"))) as { payload: Record<string, unknown> })
        .payload;
      id = String(meta.id);
      const at = new Date(String(meta.timestamp));
      const p = (n: number) => String(n).padStart(2, "0");
      const day = [String(at.getUTCFullYear()), p(at.getUTCMonth() + 1), p(at.getUTCDate())];
      const stamp = `${day.join("-")}T${p(at.getUTCHours())}-${p(at.getUTCMinutes())}-${p(at.getUTCSeconds())}`;
      const dir = join(home, "sessions", ...day);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `rollout-${stamp}-${id}.jsonl`), text);
    },
    steps: {
      before: async (ctx, home, mode) => {
        // Billed high, so that the next turn crosses the small compaction limit.
        mode.usage = 500_000;
        try {
          return await run(ctx, home, PROMPT_1);
        } finally {
          mode.usage = undefined;
        }
      },
      compact: async (ctx, home) => [await run(ctx, home, PROMPT_2, ["model_auto_compact_token_limit=2000"])],
      later: (ctx, home) => run(ctx, home, PROMPT_3),
    },
    isCompaction: (body) => requestKind(body) !== "turn",
    summaries: (home) =>
      jsonlLines(filesUnder(join(home, "sessions")).filter((f) => f.endsWith(".jsonl")))
        .filter((l) => l.type === "compacted")
        .map((l) => String((l.payload as Item | undefined)?.message ?? "")),
    expectBreak: true,
  };
}

/**
 * pi, on `session`; `keepRecentTokens`: pi's compaction setting (its default 20,000 keeps the corpus
 * sessions' last rounds whole; a small one makes pi cut into the last round, as a long last round does).
 */
export function pi(session = PI_SESSION, keepRecentTokens?: number): Agent {
  let file = "";
  let models = "";
  const run = (ctx: ClientContext, home: string, prompt: string, model: string) =>
    runProcess(
      join(ctx.bin, "pi"),
      ["--provider", "fake", "--model", model, "-p", "--session", file, prompt],
      {
        cwd: join(home, "work"),
        env: {
          HOME: home,
          CS_FAKE_KEY: "x",
          PI_OFFLINE: "1",
          PI_SKIP_VERSION_CHECK: "1",
          PI_TELEMETRY: "0",
          NO_COLOR: "1",
        },
        timeoutMs: AGENT_LIMIT_MS,
      },
    );
  return {
    name: `pi ${PINNED_CLIENTS["@mariozechner/pi-coding-agent"]}`,
    mechanism:
      keepRecentTokens === undefined
        ? "compaction (default settings)"
        : `compaction (keepRecentTokens ${keepRecentTokens.toLocaleString("en-US")})`,
    wire: "openai",
    session,
    summary: PI_SUMMARY,
    answer(req, res, mode) {
      const body = req.body as { messages?: unknown[] } | undefined;
      if (req.method !== "POST" || !req.path.endsWith("/chat/completions") || !body?.messages) {
        res.writeHead(404).end();
        return;
      }
      if (isSummaryRequest(body as never)) answerChat(res, PI_SUMMARY);
      else answerChat(res, "ok", mode.usage ?? 100);
    },
    setup(ctx, home, baseUrl) {
      const work = join(home, "work");
      mkdirSync(work, { recursive: true });
      mkdirSync(join(home, ".pi", "agent"), { recursive: true });
      const model = (mid: string, contextWindow: number) => ({
        id: mid,
        name: mid,
        reasoning: false,
        input: ["text", "image"],
        contextWindow,
        maxTokens: 4096,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      });
      models = JSON.stringify({
        providers: {
          fake: {
            baseUrl: `${baseUrl}/v1`,
            api: "openai-completions",
            apiKey: "CS_FAKE_KEY",
            // fake-small: a window so small that pi compacts before it sends the next prompt.
            models: [model("fake-model", 10_000_000), model("fake-small", 20_000)],
          },
        },
      });
      writeFileSync(join(home, ".pi", "agent", "models.json"), models);
      if (keepRecentTokens !== undefined)
        writeFileSync(
          join(home, ".pi", "agent", "settings.json"),
          JSON.stringify({ compaction: { keepRecentTokens } }),
        );
      file = join(home, "session.jsonl");
      writeFileSync(file, withCwd(readFileSync(join(ctx.corpus, session), "utf8"), work));
    },
    steps: {
      before: async (ctx, home, mode) => {
        mode.usage = 50_000;
        try {
          return await run(ctx, home, PROMPT_1, "fake-model");
        } finally {
          mode.usage = undefined;
        }
      },
      compact: async (ctx, home) => [await run(ctx, home, PROMPT_2, "fake-small")],
      later: (ctx, home) => run(ctx, home, PROMPT_3, "fake-model"),
    },
    isCompaction: (body) => isSummaryRequest(body as never),
    summaries: () =>
      jsonlLines([file])
        .filter((l) => l.type === "compaction")
        .map((l) => String(l.summary ?? "")),
    expectBreak: keepRecentTokens !== undefined,
  };
}

/** The model requests since `from` (not count_tokens, not the 404s of other paths). */
function modelRequests(server: FakeServer, wire: Wire, from: number): RecordedRequest[] {
  const path =
    wire === "anthropic" ? "/v1/messages" : wire === "responses" ? "/v1/responses" : "/chat/completions";
  return server.requests
    .slice(from)
    .filter(
      (r) =>
        r.method === "POST" &&
        r.path.includes(path) &&
        !r.path.includes("count_tokens") &&
        r.body !== undefined,
    );
}

/** The text of a request's last message, when it is a user message (see `promptOf`). */
function lastPrompt(wire: Wire, b: Body): string | undefined {
  const list =
    wire === "anthropic"
      ? anthropicHistory(b)
      : wire === "responses"
        ? inputItems(b)
        : ((b.messages as Item[]) ?? []);
  return promptOf(wire, list.at(-1));
}

/** The request of `prompt`: the last model request since `from` whose last message is the prompt. */
function promptRequest(agent: Agent, server: FakeServer, from: number, prompt: string): Body {
  const found = modelRequests(server, agent.wire, from)
    .map((r) => r.body as Body)
    .filter((b) => !agent.isCompaction(b))
    .filter((b) => lastPrompt(agent.wire, b) === prompt)
    .at(-1);
  if (found === undefined) throw new Error(`the fake got no request of the prompt ${JSON.stringify(prompt)}`);
  return found;
}

interface ScenarioResult {
  trace: Trace;
  guardLog: string;
  restarted?: string;
}

/**
 * One run of the scenario: straight to the fake (`guarded` false) or through
 * the guard, which is killed after the compaction and started again on the
 * same port and state folder before the later prompt.
 */
export async function scenario(ctx: ClientContext, agent: Agent, guarded: boolean): Promise<ScenarioResult> {
  const mode: FakeMode = {};
  const fake = await startFakeServer((req, res) => agent.answer(req, res, mode));
  const home = mkdtempSync(join(tmpdir(), `cs-guard-${agent.wire}-`));
  const state = join(home, "guard-state");
  mkdirSync(state);
  let guard: GuardProcess | undefined;
  let log = "";
  try {
    const port = await freePort();
    if (guarded) guard = await startGuardProcess(ctx, fake.url, port, state);
    agent.setup(ctx, home, guard?.url ?? fake.url);
    let from = fake.requests.length;
    mustPass(`${agent.name} ${PROMPT_1}`, await agent.steps.before(ctx, home, mode));
    const before = promptRequest(agent, fake, from, PROMPT_1);
    from = fake.requests.length;
    const runs = await agent.steps.compact(ctx, home, mode);
    mustPass(`${agent.name} after its compaction`, runs.at(-1)!);
    const compaction = modelRequests(fake, agent.wire, from)
      .map((r) => r.body as Body)
      .find((b) => agent.isCompaction(b));
    if (compaction === undefined)
      throw new Error(`${agent.name} did not compact (the fake got no compaction request)`);
    const after = promptRequest(agent, fake, from, PROMPT_2);
    const trace: Trace = { before, compaction, after };
    if (guard === undefined) return { trace, guardLog: "" };
    // The restart: killed, not asked to stop; then the same port and state folder.
    log += guard.stderr();
    await guard.stop(true);
    guard = await startGuardProcess(ctx, fake.url, port, state);
    from = fake.requests.length;
    mustPass(`${agent.name} ${PROMPT_3} (guard restarted)`, await agent.steps.later(ctx, home, mode));
    trace.later = promptRequest(agent, fake, from, PROMPT_3);
    return { trace, guardLog: log + guard.stderr(), restarted: `restarted on port ${port}` };
  } finally {
    if (guard !== undefined) {
      log += guard.stderr();
      await guard.stop();
    }
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** The guard's log lines that are not its URL line (its verdicts, notes), for a failure's detail. */
function logTail(log: string): string {
  const lines = log
    .split("\n")
    .filter((l) => l.trim() !== "" && !/^\s*http:\/\/127\.0\.0\.1:\d+\s*$/.test(l));
  return lines.length === 0
    ? "the guard logged nothing but its URL"
    : `guard log: ${lines.slice(-2).join(" | ").slice(0, 300)}`;
}

/** The guard's log lines that say a request was "not judged": any one fails the check whose run it is. */
function notJudged(log: string): string[] {
  return log.split("\n").filter((l) => l.includes("not judged"));
}

/** The failure's detail for `lines` (see `notJudged`). */
function notJudgedText(lines: readonly string[]): string {
  return `the guard's log says "not judged" ${lines.length} time(s): ${lines.slice(0, 2).join(" | ").slice(0, 300)}`;
}

function containsText(body: Body, text: string): boolean {
  return JSON.stringify(body).includes(JSON.stringify(text).slice(1, -1));
}

async function agentChecks(ctx: ClientContext, agent: Agent): Promise<SessionVerdict[]> {
  const out: SessionVerdict[] = [];
  const push = (check: string, ok: boolean, detail: string) =>
    out.push({ client: "guard", session: agent.session, check, ok, detail });
  const kept = `${agent.name} ${agent.mechanism} keeps the contract`;
  const broken = agent.expectBreak
    ? `${agent.name} ${agent.mechanism} without the guard loses the protected last round`
    : `${agent.name} ${agent.mechanism} without the guard (verdict as seen)`;
  const restart = `${agent.name} guard restarted mid-session, the next prompt still carries the repair`;

  ctx.log(`guard: ${agent.name} ${agent.session}: without the guard`);
  try {
    const { trace } = await scenario(ctx, agent, false);
    const j = judge(agent.wire, trace.before, trace.after, PROMPT_2);
    if (!agent.expectBreak)
      push(broken, true, `the agent's own compaction ${j.kept ? "KEPT" : "BROKE"} the contract: ${j.line}`);
    else
      push(
        broken,
        !j.kept,
        j.kept ? `the agent's own compaction KEPT the contract without the guard (${j.line})` : j.line,
      );
  } catch (e) {
    push(broken, false, (e as Error).message);
  }

  ctx.log(`guard: ${agent.name} ${agent.session}: through the guard`);
  try {
    const { trace, guardLog, restarted } = await scenario(ctx, agent, true);
    const j = judge(agent.wire, trace.before, trace.after, PROMPT_2);
    const summaryKept = containsText(trace.after, agent.summary);
    const unjudged = notJudged(guardLog);
    const unjudgedText = unjudged.length === 0 ? "" : `; ${notJudgedText(unjudged)}`;
    push(
      kept,
      j.kept && summaryKept && unjudged.length === 0,
      `${j.line}${summaryKept ? "; the agent's own summary kept" : "; the agent's own summary is NOT in the request after"}` +
        `${j.kept ? "" : `; ${logTail(guardLog)}`}${unjudgedText}`,
    );
    const l = judge(agent.wire, trace.before, trace.later!, PROMPT_3);
    push(
      restart,
      l.kept && unjudged.length === 0,
      `${restarted}; ${l.line}${l.kept ? "" : `; ${logTail(guardLog)}`}${unjudgedText}`,
    );
  } catch (e) {
    push(kept, false, (e as Error).message);
    push(restart, false, "not run (the guarded run failed)");
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Claude Code against an upstream that fails, through the guard.

async function failingUpstreamCheck(ctx: ClientContext): Promise<SessionVerdict> {
  const check = `${claudeCode().name} an upstream that fails (500, closed connection): the agent sees it, the guard stays up`;
  const agent = claudeCode();
  const mode: FakeMode = {};
  const fake = await startFakeServer((req, res) => {
    if (
      mode.fail !== undefined &&
      req.path.startsWith("/v1/messages") &&
      !req.path.includes("count_tokens")
    ) {
      if (mode.fail === "close") res.socket?.destroy();
      else {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ type: "error", error: { type: "api_error", message: "fake upstream failure" } }),
        );
      }
      return;
    }
    agent.answer(req, res, mode);
  });
  const home = mkdtempSync(join(tmpdir(), "cs-guard-fail-"));
  const state = join(home, "guard-state");
  mkdirSync(state);
  let guard: GuardProcess | undefined;
  try {
    guard = await startGuardProcess(ctx, fake.url, await freePort(), state);
    agent.setup(ctx, home, guard.url);
    const seen: string[] = [];
    for (const fail of ["500", "close"] as const) {
      mode.fail = fail;
      const from = fake.requests.length;
      const r = await agent.steps.before(ctx, home, mode);
      mode.fail = undefined;
      const reached = modelRequests(fake, "anthropic", from).length;
      const said = `${r.stdout}${r.stderr}`;
      const isError = r.code !== 0 || /"is_error":\s*true/.test(said);
      if (reached === 0)
        throw new Error(`with the upstream failing (${fail}), no request reached it through the guard`);
      if (!isError)
        throw new Error(
          `with the upstream failing (${fail}), Claude Code reported no error: ${said.trim().slice(0, 200)}`,
        );
      if (!guard.alive())
        throw new Error(
          `the guard exited after the upstream's ${fail}: ${guard.stderr().trim().slice(-300)}`,
        );
      seen.push(`${fail}: Claude Code exit ${r.code}${r.code === 0 ? " with is_error" : ""}`);
    }
    const from = fake.requests.length;
    mustPass("claude -p after the failures", await agent.steps.before(ctx, home, mode));
    promptRequest(agent, fake, from, PROMPT_1);
    const unjudged = notJudged(guard.stderr());
    if (unjudged.length > 0) throw new Error(notJudgedText(unjudged));
    return {
      client: "guard",
      session: agent.session,
      check,
      ok: guard.alive(),
      detail: `${seen.join("; ")}; the guard still up, and the next run went through it to the upstream`,
    };
  } catch (e) {
    return { client: "guard", session: agent.session, check, ok: false, detail: (e as Error).message };
  } finally {
    if (guard !== undefined) await guard.stop();
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------
// The agents' own summarization requests answered by the guard itself (--summarizer extractive).

/** Headings every extractive note has (src/summarizers/extractive/sections.ts). */
const NOTE_HEADINGS = ["## Objective", "## Files changed", "## Commands run"];

/**
 * The agent compacts through `guard --summarizer extractive`: the guard
 * answers every summarization request itself (the fake receives none, the
 * guard logs one line each), the agent takes the answer as its summary (the
 * last summary in its session or rollout is compact-safe's note, not the
 * fake's canned one), and the next prompt's request, which goes upstream,
 * carries the note and keeps the contract against the request before the
 * compaction (the same judgement as the other checks).
 */
async function extractiveSummarizerCheck(ctx: ClientContext, agent: Agent): Promise<SessionVerdict> {
  const key = agent.name.split(" ")[0]!;
  const check = `${agent.name} ${agent.mechanism} through guard --summarizer extractive: answered by the guard, the upstream not asked, the agent keeps compact-safe's checkpoint, the next prompt keeps the contract`;
  const mode: FakeMode = {};
  const fake = await startFakeServer((req, res) => agent.answer(req, res, mode));
  const home = mkdtempSync(join(tmpdir(), "cs-guard-summ-"));
  const state = join(home, "guard-state");
  mkdirSync(state);
  let guard: GuardProcess | undefined;
  const fail = (detail: string): SessionVerdict => ({
    client: "guard",
    session: agent.session,
    check,
    ok: false,
    detail,
  });
  try {
    guard = await startGuardProcess(ctx, fake.url, await freePort(), state, ["--summarizer", "extractive"]);
    agent.setup(ctx, home, guard.url);
    let from = fake.requests.length;
    mustPass(`${agent.name} ${PROMPT_1}`, await agent.steps.before(ctx, home, mode));
    const before = promptRequest(agent, fake, from, PROMPT_1);
    from = fake.requests.length;
    const runs = await agent.steps.compact(ctx, home, mode);
    mustPass(`${agent.name} after its compaction`, runs.at(-1)!);
    const asked = modelRequests(fake, agent.wire, from).filter((r) => agent.isCompaction(r.body as Body));
    if (asked.length > 0)
      return fail(
        `the upstream received ${asked.length} summarization request(s) through the guard, ending ${asked
          .map((r) => JSON.stringify((lastPrompt(agent.wire, r.body as Body) ?? "").slice(-100)))
          .join(", ")}; ${logTail(guard.stderr())}`,
      );
    const pattern = new RegExp(
      `^guard: answered ${key}'s summarization request itself \\(extractive, \\d+ chars\\)$`,
    );
    const answered = guard
      .stderr()
      .split("\n")
      .filter((l) => pattern.test(l));
    if (answered.length === 0) return fail(`the guard did not say it answered; ${logTail(guard.stderr())}`);
    const summary = agent.summaries(home).at(-1);
    if (summary === undefined)
      return fail(`${agent.name} wrote no summary into its session after compacting`);
    const missing = NOTE_HEADINGS.filter((h) => !summary.includes(h));
    if (missing.length > 0 || summary.includes(agent.summary.slice(0, 40)))
      return fail(
        `the agent's summary is not compact-safe's checkpoint (missing ${missing.join(", ") || "nothing"}${summary.includes(agent.summary.slice(0, 40)) ? "; it holds the fake's canned summary" : ""})`,
      );
    const after = promptRequest(agent, fake, from, PROMPT_2);
    if (!NOTE_HEADINGS.every((h) => containsText(after, h)))
      return fail("the request after the compaction does not carry compact-safe's checkpoint");
    const j = judge(agent.wire, before, after, PROMPT_2);
    if (!j.kept) return fail(`the request after the compaction: ${j.line}; ${logTail(guard.stderr())}`);
    const unjudged = notJudged(guard.stderr());
    if (unjudged.length > 0) return fail(notJudgedText(unjudged));
    const said = answered.map((l) => l.slice("guard: ".length));
    return {
      client: "guard",
      session: agent.session,
      check,
      ok: true,
      detail: `${said.length === 1 ? said[0] : `${said.length} times: ${said.join("; ")}`}; no summarization request reached the upstream; the agent's summary and the next request carry the note (${NOTE_HEADINGS.join(", ")}); ${j.line}`,
    };
  } catch (e) {
    return fail((e as Error).message);
  } finally {
    if (guard !== undefined) await guard.stop();
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Streams byte for byte, and failures, with a direct client.

interface WireSample {
  wire: Wire;
  path: string;
  body: Body;
  /** The stream the fake sends, in chunks. */
  chunks: Buffer[];
}

function sse(event: string | null, data: unknown): string {
  return `${event === null ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

/** Splits a text so that the chunk boundary falls inside a multi-byte UTF-8 character. */
function splitInsideCharacter(text: string): Buffer[] {
  const bytes = Buffer.from(text, "utf8");
  const at = bytes.indexOf(Buffer.from("é", "utf8")) + 1;
  return [bytes.subarray(0, at), bytes.subarray(at)];
}

function samples(): WireSample[] {
  const session = `stream-check-${process.pid}`;
  const text = "Streamed through, byte for byte: café, naïve, 日本語.";
  const anthropic = [
    sse("message_start", {
      type: "message_start",
      message: {
        id: "msg_s",
        type: "message",
        role: "assistant",
        model: "fake",
        content: [],
        stop_reason: null,
        usage: { input_tokens: 5, output_tokens: 1 },
      },
    }),
    sse("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
    sse("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text },
    }),
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn" },
      usage: { output_tokens: 9 },
    }),
    sse("message_stop", { type: "message_stop" }),
  ];
  const responses = [
    sse("response.created", { type: "response.created", response: { id: "resp_s" } }),
    sse("response.output_text.delta", {
      type: "response.output_text.delta",
      output_index: 0,
      content_index: 0,
      item_id: "m",
      delta: text,
    }),
    sse("response.completed", {
      type: "response.completed",
      response: { id: "resp_s", usage: { input_tokens: 5, output_tokens: 9, total_tokens: 14 } },
    }),
  ];
  const base = { id: "chatcmpl-s", object: "chat.completion.chunk", created: 1, model: "fake" };
  const chat = [
    sse(null, {
      ...base,
      choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }],
    }),
    sse(null, { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
    sse(null, "[DONE]"),
  ];
  const chunked = (events: string[]) => {
    const [head, tail] = splitInsideCharacter(events.join(""));
    // Three chunks: up to inside "é", the rest of the text event, the remaining events.
    const cut = tail!.indexOf("\n\n") + 2;
    return [head!, tail!.subarray(0, cut), tail!.subarray(cut)];
  };
  return [
    {
      wire: "anthropic",
      path: "/v1/messages?beta=true",
      body: {
        model: "fake",
        max_tokens: 100,
        stream: true,
        metadata: { user_id: JSON.stringify({ session_id: session }) },
        messages: [{ role: "user", content: [{ type: "text", text: "hello, café" }] }],
      },
      chunks: chunked(anthropic),
    },
    {
      wire: "responses",
      path: "/v1/responses",
      body: {
        model: "fake",
        stream: true,
        input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hello, café" }] }],
      },
      chunks: chunked(responses),
    },
    {
      wire: "openai",
      path: "/v1/chat/completions",
      body: { model: "fake", stream: true, messages: [{ role: "user", content: "hello, café" }] },
      chunks: chunked(chat),
    },
  ];
}

interface Exchange {
  status: number;
  bytes: Buffer;
  error?: string;
}

/** One request with a time limit; `onFirstChunk` is told when the first response bytes arrive. */
function send(url: string, path: string, body: Buffer, onFirstChunk?: () => void): Promise<Exchange> {
  return new Promise((resolve) => {
    const req = httpRequest(
      `${url}${path}`,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": body.length,
          authorization: "Bearer fake-key",
          "x-api-key": "fake-key",
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => {
          if (chunks.length === 0) onFirstChunk?.();
          chunks.push(c);
        });
        res.on("end", () => done({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks) }));
        res.on("error", (e) =>
          done({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks), error: e.message }),
        );
        res.on("aborted", () =>
          done({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks), error: "aborted" }),
        );
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error("no complete answer within 20 s"));
    }, 20_000);
    let settled = false;
    const done = (x: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(x);
    };
    req.on("error", (e) => done({ status: 0, bytes: Buffer.alloc(0), error: e.message }));
    req.end(body);
  });
}

async function streamChecks(ctx: ClientContext): Promise<SessionVerdict[]> {
  const out: SessionVerdict[] = [];
  for (const s of samples()) {
    const check = `${s.wire} stream passes through byte for byte; upstream 500 / closed connection / cut stream: the client sees each, the guard stays up`;
    let mode: "stream" | "500" | "close" | "cut" = "stream";
    let received: Buffer = Buffer.alloc(0);
    let sent: Buffer[] = [];
    let clientGotFirst: () => void = () => {};
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received = Buffer.concat(chunks);
        clientGotFirst = () => {};
        if (mode === "close") {
          req.socket.destroy();
          return;
        }
        if (mode === "500") {
          res.writeHead(500, { "content-type": "application/json" });
          res.end('{"error":{"type":"server_error","message":"fake upstream failure"}}');
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        sent = [];
        const first = s.chunks[0]!;
        sent.push(first);
        res.write(first);
        if (mode === "cut") {
          setTimeout(() => res.socket?.destroy(), 20);
          return;
        }
        // The rest only once the client holds the first chunk: a guard that buffers the stream stalls here.
        clientGotFirst = () => {
          for (const c of s.chunks.slice(1)) {
            sent.push(c);
            res.write(c);
          }
          res.end();
        };
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const state = mkdtempSync(join(tmpdir(), "cs-guard-stream-"));
    let guard: GuardProcess | undefined;
    try {
      guard = await startGuardProcess(ctx, upstream, await freePort(), state);
      const body = Buffer.from(JSON.stringify(s.body), "utf8");
      const streamed = await send(guard.url, s.path, body, () => clientGotFirst());
      const want = Buffer.concat(sent);
      if (streamed.error !== undefined || streamed.status !== 200)
        throw new Error(
          `the stream through the guard: status ${streamed.status} ${streamed.error ?? ""} (held back?)`,
        );
      if (!received.equals(body))
        throw new Error("the request bytes the upstream received differ from the client's");
      if (!streamed.bytes.equals(want))
        throw new Error(
          `the client received ${streamed.bytes.length} bytes, the upstream sent ${want.length}; they differ`,
        );
      const failures: string[] = [];
      for (const m of ["500", "close", "cut"] as const) {
        mode = m;
        const r = await send(guard.url, s.path, body, () => clientGotFirst());
        const seenError = m === "500" ? r.status === 500 : r.error !== undefined || r.status >= 500;
        if (!seenError) throw new Error(`upstream ${m}: the client got status ${r.status} and no error`);
        if (!guard.alive()) throw new Error(`the guard exited after the upstream's ${m}`);
        failures.push(
          `${m}: ${r.status === 0 ? r.error : `status ${r.status}${r.error ? ` (${r.error})` : ""}`}`,
        );
      }
      mode = "stream";
      const again = await send(guard.url, s.path, body, () => clientGotFirst());
      if (again.status !== 200 || !again.bytes.equals(Buffer.concat(sent)))
        throw new Error(
          `after the failures, the next request got status ${again.status} ${again.error ?? ""}`,
        );
      const unjudged = notJudged(guard.stderr());
      if (unjudged.length > 0) throw new Error(notJudgedText(unjudged));
      out.push({
        client: "guard",
        session: "(direct client)",
        check,
        ok: true,
        detail: `${want.length} bytes in ${s.chunks.length} chunks (one split inside a UTF-8 character), the rest sent after the client held the first: identical; request bytes identical; ${failures.join(", ")}; the next request went through`,
      });
    } catch (e) {
      out.push({
        client: "guard",
        session: "(direct client)",
        check,
        ok: false,
        detail: (e as Error).message,
      });
    } finally {
      if (guard !== undefined) await guard.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(state, { recursive: true, force: true });
    }
  }
  return out;
}

/** The newest Claude Code, asked for and installed once per run (the `newest` and `fresh` groups share it). */
let newestOnce: Promise<NewestClaude> | undefined;
function newestClaude(ctx: ClientContext): Promise<NewestClaude> {
  newestOnce ??= installNewestClaude(ctx.log);
  return newestOnce;
}

/**
 * The Claude Code scenarios again with the newest version the registry
 * serves (installed beside the pinned one). A registry that cannot be
 * reached is one skipped line; the newest being the pinned one is one
 * skipped line too (its checks are the pinned ones above).
 */
async function newestClaudeChecks(ctx: ClientContext): Promise<SessionVerdict[]> {
  const check = "claude-code newest the registry serves: the guard scenarios";
  const verdict = (ok: boolean, detail: string, skipped = false): SessionVerdict[] => [
    { client: "guard", session: CLAUDE_SESSION, check, ok, detail, ...(skipped ? { skipped } : {}) },
  ];
  let newest: NewestClaude;
  try {
    newest = await newestClaude(ctx);
  } catch (e) {
    return verdict(false, (e as Error).message);
  }
  if ("skipped" in newest) return verdict(false, `not checked: ${newest.skipped}`, true);
  if (newest.pinned)
    return verdict(
      false,
      `not run again: the newest is the pinned ${newest.version}, whose checks are above`,
      true,
    );
  return agentChecks(ctx, claudeCode({ bin: newest.bin, version: newest.version }));
}

// ---------------------------------------------------------------------------------------------------------
// A fresh Claude Code session on its default model, through `compact-safe guard -- claude`.

const FRESH_SESSION = "(fresh session)";
const FRESH_PROMPT = "list the files in this folder";
/** The session id written into the saved request (see `savedRequest`). */
const FIXTURE_SESSION_ID = "00000000-0000-4000-8000-000000000001";

/**
 * A recorded request body made fit for test/fixtures: the temporary HOME
 * becomes /home/user, the session id a fixed one, the device id zeros; tool
 * descriptions and the top-level system prompt's texts are cut to their first
 * 200 characters (the fixture is for the guard's reader: `messages` is kept
 * whole, as Claude Code sent it).
 */
export function savedRequest(body: Body, home: string, sessionId: string): Body {
  const text = JSON.stringify(body).split(home).join("/home/user").split(sessionId).join(FIXTURE_SESSION_ID);
  const doc = JSON.parse(text) as Body;
  const meta = doc.metadata as { user_id?: unknown } | undefined;
  if (meta !== undefined && typeof meta.user_id === "string") {
    const user = JSON.parse(meta.user_id) as Record<string, unknown>;
    if (typeof user.device_id === "string") user.device_id = "0".repeat(user.device_id.length);
    if (typeof user.account_uuid === "string" && user.account_uuid !== "") user.account_uuid = "";
    meta.user_id = JSON.stringify(user);
  }
  const cut = (t: unknown) =>
    typeof t === "string" && t.length > 200 ? `${t.slice(0, 200)} [cut for the fixture]` : t;
  if (Array.isArray(doc.tools))
    doc.tools = (doc.tools as Item[]).map((t) => ({ ...t, description: cut(t.description) }));
  if (Array.isArray(doc.system))
    doc.system = (doc.system as Item[]).map((b) => ({ ...b, text: cut(b.text) }));
  return doc;
}

/**
 * Claude Code (`binary`) in a new session, with no `--model` and no model
 * in its settings or environment (the client's default model, which is
 * claude-opus-5-5 for 2.1.328 and later: it puts `role: "system"` elements
 * inside `messages`), run through `compact-safe guard --state DIR --log FILE
 * -- claude -p PROMPT` with ANTHROPIC_BASE_URL the fake (the guard takes it
 * as its upstream and points Claude Code at itself); then `/compact` and one
 * more prompt in that session (`--resume ID`), each through the guard again
 * on the same state folder. The check: every model request the fake got
 * names one model, the first one's (the default, printed); the guard logged
 * a verdict for the compaction and no line saying "not judged"; the request
 * after the compaction, less its prompt, keeps the contract against the
 * compaction request's history. `COMPACT_SAFE_SAVE_FRESH_REQUEST=DIR`
 * writes the session's first request, made fit for a fixture
 * (`savedRequest`), to DIR/claude-code-VERSION-fresh-request.json.
 */
async function freshSessionCheck(ctx: ClientContext, binary: ClaudeBinary): Promise<SessionVerdict> {
  const check = `claude-code ${binary.version} fresh session on its default model through guard -- claude, /compact, next prompt: one model, the compaction judged, nothing "not judged"`;
  const fake = await startFakeServer((req, res) => answerAnthropic(req, res));
  const home = mkdtempSync(join(tmpdir(), "cs-guard-fresh-"));
  const work = join(home, "work");
  const state = join(home, "guard-state");
  const logFile = join(home, "guard.log");
  mkdirSync(work);
  mkdirSync(state);
  const env = {
    HOME: home,
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: "x",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    NO_COLOR: "1",
  };
  const claude = (what: string, args: readonly string[]) =>
    runProcess(
      process.execPath,
      [
        ctx.cli,
        "guard",
        "--state",
        state,
        "--log",
        logFile,
        "--",
        join(binary.bin ?? ctx.bin, "claude"),
        "-p",
        ...args,
        "--output-format",
        "json",
      ],
      { cwd: work, env, timeoutMs: AGENT_LIMIT_MS },
    ).then((r) => mustPass(what, r));
  const verdict = (ok: boolean, detail: string): SessionVerdict => ({
    client: "guard",
    session: FRESH_SESSION,
    check,
    ok,
    detail,
  });
  try {
    const first = await claude(`claude -p ${JSON.stringify(FRESH_PROMPT)}`, [FRESH_PROMPT]);
    const json = first.stdout
      .split("\n")
      .reverse()
      .find((l) => l.trimStart().startsWith("{"));
    const id = json === undefined ? undefined : (JSON.parse(json) as { session_id?: unknown }).session_id;
    if (typeof id !== "string")
      throw new Error(`claude -p printed no session_id: ${first.stdout.trim().slice(0, 200)}`);
    const opening = promptRequestOf(fake, 0, FRESH_PROMPT);
    let from = fake.requests.length;
    await claude("claude -p /compact --resume ID", ["/compact", "--resume", id]);
    const compaction = modelRequests(fake, "anthropic", from)
      .map((r) => r.body as Body)
      .find((b) => isCompactionRequest(b));
    if (compaction === undefined) throw new Error("the fake got no compaction request from /compact");
    from = fake.requests.length;
    await claude(`claude -p ${JSON.stringify(PROMPT_2)} --resume ID`, [PROMPT_2, "--resume", id]);
    const after = promptRequestOf(fake, from, PROMPT_2);

    const saveDir = process.env.COMPACT_SAFE_SAVE_FRESH_REQUEST;
    if (saveDir !== undefined && saveDir !== "") {
      const file = join(saveDir, `claude-code-${binary.version}-fresh-request.json`);
      writeFileSync(file, `${JSON.stringify(savedRequest(opening, home, id), null, 2)}\n`);
      ctx.log(`guard: the fresh session's first request written to ${file}`);
    }

    const problems: string[] = [];
    const model = String(opening.model);
    const all = modelRequests(fake, "anthropic", 0);
    const others = all.filter((r) => (r.body as Body).model !== model);
    if (others.length > 0)
      problems.push(
        `${others.length} of ${all.length} model requests name another model (${[...new Set(others.map((r) => String((r.body as Body).model)))].join(", ")})`,
      );
    const systemAt = ((opening.messages as Item[] | undefined) ?? []).flatMap((m, i) =>
      m.role === "system" ? [i] : [],
    );
    const log = existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
    const verdicts = log.split("\n").filter((l) => l.startsWith(`guard: compaction in claude-code:${id} `));
    if (verdicts.length === 0)
      problems.push(`the guard logged no verdict for the compaction; ${logTail(log)}`);
    const unjudged = notJudged(log);
    if (unjudged.length > 0) problems.push(notJudgedText(unjudged));
    const a = historyOf("anthropic", compaction, lastPrompt("anthropic", compaction));
    const b = historyOf("anthropic", after, PROMPT_2);
    const v = validateSurvivalContract(a, b);
    if (!v.valid) problems.push(`the request after the compaction: validator: ${v.reason}`);
    const seen =
      `default model ${model} (no --model given; ${all.length} model requests, ${all.length - others.length} on it)` +
      `; the first request holds ${systemAt.length} system element(s) inside messages${systemAt.length > 0 ? ` (at ${systemAt.join(", ")})` : ""}` +
      `; ${verdicts.length} verdict(s): ${verdicts.map((l) => l.replace(/^guard: compaction in \S+ /, "")).join(" | ")}` +
      `; ${a.length} -> ${b.length} messages, ${v.valid ? "the contract holds" : "the contract is NOT kept"}`;
    return verdict(problems.length === 0, problems.length === 0 ? seen : `${problems.join("; ")}; ${seen}`);
  } catch (e) {
    return verdict(false, (e as Error).message);
  } finally {
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** The request of `prompt` since `from` on the Anthropic wire (not a compaction request). */
function promptRequestOf(server: FakeServer, from: number, prompt: string): Body {
  const found = modelRequests(server, "anthropic", from)
    .map((r) => r.body as Body)
    .filter((b) => !isCompactionRequest(b) && lastPrompt("anthropic", b) === prompt)
    .at(-1);
  if (found === undefined) throw new Error(`the fake got no request of the prompt ${JSON.stringify(prompt)}`);
  return found;
}

/** The fresh-session check with the pinned Claude Code and with the newest the registry serves. */
async function freshSessionChecks(ctx: ClientContext): Promise<SessionVerdict[]> {
  const out = [await freshSessionCheck(ctx, PINNED_CLAUDE)];
  const check =
    "claude-code newest the registry serves: fresh session on its default model through the guard";
  let newest: NewestClaude;
  try {
    newest = await newestClaude(ctx);
  } catch (e) {
    return [
      ...out,
      { client: "guard", session: FRESH_SESSION, check, ok: false, detail: (e as Error).message },
    ];
  }
  if ("skipped" in newest || newest.pinned)
    return [
      ...out,
      {
        client: "guard",
        session: FRESH_SESSION,
        check,
        ok: false,
        skipped: true,
        detail:
          "skipped" in newest
            ? `not checked: ${newest.skipped}`
            : `not run again: the newest is the pinned ${newest.version}, whose check is above`,
      },
    ];
  return [...out, await freshSessionCheck(ctx, { bin: newest.bin, version: newest.version })];
}

/** The guard's groups of checks, for `--guard-only` (run.ts). */
export const GUARD_PARTS: readonly string[] = [
  "streams",
  "scenarios",
  "newest",
  "fresh",
  "upstream",
  "extractive",
  "today",
  "remote",
];

export async function guardChecks(ctx: ClientContext): Promise<SessionVerdict[]> {
  const verdicts: SessionVerdict[] = [];
  const run = (part: string) => ctx.guardParts === undefined || ctx.guardParts.includes(part);
  try {
    if (run("streams")) verdicts.push(...(await streamChecks(ctx)));
    // pi with its default settings keeps the corpus sessions' last rounds whole; with keepRecentTokens
    // 300 it cuts into the last round (as a last round longer than the setting makes it do).
    if (run("scenarios"))
      for (const agent of [claudeCode(), codex(), pi(), pi(PI_SHORT_KEEP_SESSION, 300)])
        verdicts.push(...(await agentChecks(ctx, agent)));
    if (run("newest")) verdicts.push(...(await newestClaudeChecks(ctx)));
    if (run("fresh")) {
      ctx.log("guard: fresh Claude Code sessions on the default model, through guard -- claude");
      verdicts.push(...(await freshSessionChecks(ctx)));
    }
    if (run("upstream")) {
      ctx.log("guard: an upstream that fails, with Claude Code");
      verdicts.push(await failingUpstreamCheck(ctx));
    }
    if (run("extractive"))
      for (const agent of [claudeCode(), codex(), pi(PI_SHORT_KEEP_SESSION, 300)]) {
        ctx.log(`guard: ${agent.name} ${agent.mechanism} answered by the guard (--summarizer extractive)`);
        verdicts.push(await extractiveSummarizerCheck(ctx, agent));
      }
    if (run("today")) verdicts.push(...(await todayChecks(ctx)));
    if (run("remote")) verdicts.push(...(await remoteChecks(ctx)));
  } finally {
    for (const child of started) child.kill("SIGKILL");
  }
  return verdicts;
}

// For the checks of the agents as they are today (guard-today.ts).
export { containsText, freePort, logTail, mustPass, promptRequest, startGuardProcess };
export { PI_SHORT_KEEP_SESSION, PI_SUMMARY, PROMPT_1, PROMPT_2, PROMPT_3 };
export type { Agent, Body, FakeMode, GuardProcess, Item };
