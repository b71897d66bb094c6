/**
 * Secrets planted in old turns (user text, tool results, error results, tool
 * inputs) never reach what compaction writes (the replacement, its checkpoint
 * and summary: the journal entry's payload) nor the request sent to an LLM
 * summarizer; the protected last round keeps its own secret verbatim.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import type { Block, Message } from "../model/types.js";
import { isToolResult, isToolUse } from "../model/blocks.js";
import { protectedRound } from "../contract/rounds.js";
import { compactMessagesSafe, type CompactResult } from "./compact.js";
import { redactSecretsWithReport } from "../redact/redact.js";
import { extractiveSummarizer } from "../summarizers/extractive/index.js";
import { openaiCompatibleSummarizer } from "../summarizers/openai.js";
import { anthropicSummarizer } from "../summarizers/anthropic.js";
import {
  anthropicReply,
  openaiReply,
  startFakeProvider,
  type FakeProvider,
} from "../../test/fake-provider.js";
import { deepFreeze } from "../../test/support.js";

// Every value is built at run time from pieces, so this file holds no literal a secret scanner flags.
const j = (...p: string[]) => p.join("");
const rep = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
const ALNUM = "q7Zr2XbN9kLw4TfP0sJd8HcV6mYg3RtE1aUo5iKe";
const HEX = "9f3a7c1e5b2d8064af17c39e2b5d0f48";
const B64 = "Yk9xR2pWbU1sNkt4UTN6Rjh3VWJ0SGNQZDVnTDJu";

interface Planted {
  kind: string;
  /** The line planted in the history. */
  line: string;
  /** What must not survive (the secret itself). */
  value: string;
}

const pemBody = j("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n", rep(B64, 64));
const secret = (kind: string, value: string, line = value): Planted => ({ kind, line, value });

export const PLANTED: Planted[] = [
  secret(
    "aws-access-key-id",
    j("AKIA", "QW3ERT5YUI7OPL2Z"),
    `aws_access_key_id=${j("AKIA", "QW3ERT5YUI7OPL2Z")}`,
  ),
  secret(
    "aws-secret-key",
    j(rep(B64, 30), "/Kx+Q9w7e5r"),
    `AWS_SECRET_KEY=${j(rep(B64, 30), "/Kx+Q9w7e5r")}`,
  ),
  secret(
    "slack-webhook",
    j("https://hooks.", "slack.com/services/", "T01AB2CD3/", "B04EF5GH6/", rep(ALNUM, 24)),
    `posting to ${j("https://hooks.", "slack.com/services/", "T01AB2CD3/", "B04EF5GH6/", rep(ALNUM, 24))}`,
  ),
  secret(
    "jwt",
    j(
      "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
      ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ",
      ".",
      rep(ALNUM, 43),
    ),
    `cookie session=${j("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ", ".", rep(ALNUM, 43))}`,
  ),
  secret("database-password", j("Pg", "W7x!kq29Lm#r"), `DATABASE_PASSWORD=${j("Pg", "W7x!kq29Lm#r")}`),
  secret(
    "azure-account-key",
    j(rep(B64, 86), "=="),
    `DefaultEndpointsProtocol=https;AccountName=acme;${j("AccountKey=", rep(B64, 86), "==")};EndpointSuffix=core.windows.net`,
  ),
  secret(
    "npm-token",
    j("npm_", rep(ALNUM, 36)),
    `//registry.npmjs.org/:_authToken=${j("npm_", rep(ALNUM, 36))}`,
  ),
  secret("gitlab-pat", j("glpat-", rep(ALNUM, 20)), `GITLAB=${j("glpat-", rep(ALNUM, 20))} git push`),
  secret(
    "huggingface",
    j("hf_", "qWeRtYuIoPaSdFgHjKlZxCvBnMqWeRtYuI"),
    `login with ${j("hf_", "qWeRtYuIoPaSdFgHjKlZxCvBnMqWeRtYuI")}`,
  ),
  secret(
    "sendgrid",
    j("SG.", rep(ALNUM, 22), ".", rep(ALNUM.slice(3), 43)),
    `mail key ${j("SG.", rep(ALNUM, 22), ".", rep(ALNUM.slice(3), 43))}`,
  ),
  secret("twilio", j("SK", HEX), `twilio api key ${j("SK", HEX)} for sms`),
  secret(
    "basic-auth",
    j("YWRtaW46", "c3VwZXJzZWNyZXQxMjM="),
    `curl -H "Authorization: Basic ${j("YWRtaW46", "c3VwZXJzZWNyZXQxMjM=")}" https://ci.internal/api`,
  ),
  secret(
    "google-oauth-secret",
    j("GOCSPX-", rep(ALNUM, 28)),
    `client_secret: ${j("GOCSPX-", rep(ALNUM, 28))}`,
  ),
  secret(
    "pypi",
    j("pypi-", "AgEIcHlwaS5vcmc", rep(ALNUM, 70)),
    `password = ${j("pypi-", "AgEIcHlwaS5vcmc", rep(ALNUM, 70))}`,
  ),
  secret("datadog", rep(HEX, 32), `DD_API_KEY=${rep(HEX, 32)} datadog-agent start`),
  secret(
    "json-password",
    j("Tr0ub4dor", "&3xyzzy"),
    `{"user":"svc","password":"${j("Tr0ub4dor", "&3xyzzy")}"}`,
  ),
  secret(
    "pem-private-key",
    pemBody.split("\n")[0]!,
    j("-----BEGIN RSA ", "PRIVATE KEY-----\n", pemBody, "\n-----END RSA ", "PRIVATE KEY-----"),
  ),
  secret("openai", j("sk-proj-", rep(ALNUM, 48)), `OPENAI_API_KEY=${j("sk-proj-", rep(ALNUM, 48))}`),
  secret(
    "anthropic",
    j("sk-ant-api03-", rep(ALNUM, 40), "-", rep(ALNUM, 20), "AA"),
    `key ${j("sk-ant-api03-", rep(ALNUM, 40), "-", rep(ALNUM, 20), "AA")}`,
  ),
  secret(
    "github-pat",
    j("ghp_", rep(ALNUM, 36)),
    `git remote set-url origin https://x:${j("ghp_", rep(ALNUM, 36))}@github.com/o/r`,
  ),
  secret(
    "github-fine-grained",
    j("github_pat_", "11ABCDE0", rep(ALNUM, 74)),
    `token ${j("github_pat_", "11ABCDE0", rep(ALNUM, 74))}`,
  ),
  secret("stripe", j("sk_live_", rep(ALNUM, 24)), `stripe.api_key = "${j("sk_live_", rep(ALNUM, 24))}"`),
  secret("google-api-key", j("AIza", "Sy", rep(ALNUM, 33)), `maps key=${j("AIza", "Sy", rep(ALNUM, 33))}`),
  secret(
    "slack-bot-token",
    j("xoxb-", "123456789012-", "1234567890123-", rep(ALNUM, 24)),
    `SLACK=${j("xoxb-", "123456789012-", "1234567890123-", rep(ALNUM, 24))}`,
  ),
  secret(
    "url-password",
    j("hunter2", "Hunter2x"),
    `psql postgres://app:${j("hunter2", "Hunter2x")}@db.internal:5432/prod`,
  ),
  secret("bearer", j("tok_", rep(HEX, 28)), `Authorization: Bearer ${j("tok_", rep(HEX, 28))}`),
  secret("shopify", j("shpat_", HEX), `shop token ${j("shpat_", HEX)}`),
  secret("digitalocean", j("dop_v1_", rep(HEX, 64)), `doctl auth init -t ${j("dop_v1_", rep(HEX, 64))}`),
  secret("linear", j("lin_api_", rep(ALNUM, 40)), `LINEAR ${j("lin_api_", rep(ALNUM, 40))}`),
  secret(
    "postman",
    j("PMAK-", rep(HEX, 24), "-", rep(HEX, 34)),
    `postman ${j("PMAK-", rep(HEX, 24), "-", rep(HEX, 34))}`,
  ),
  secret(
    "age-secret-key",
    j("AGE-SECRET-KEY-1", rep("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
    j("AGE-SECRET-KEY-1", rep("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
  ),
  secret("generic-client-secret", j("x9F", rep(ALNUM, 29)), `client_secret = "${j("x9F", rep(ALNUM, 29))}"`),
];

/** The protected round's own secret: it must stay, byte for byte. */
const PROTECTED = j("ghp_", rep("Zz9Yy8Xx7Ww6Vv5Uu4", 36));

const u = (t: string): Message => ({ role: "user", content: [{ type: "text", text: t }] });
const a = (...content: Block[]): Message => ({ role: "assistant", content });

/** A history that plants every secret in old turns: user text, tool inputs, results, error first lines. */
function plantedHistory(filler: number): Message[] {
  const out: Message[] = [u("Set up the deployment pipeline.")];
  // Small results are kept by prune-only: one more of each kind, short.
  out.push(a({ type: "tool_use", id: "small", name: "Bash", input: { command: "env | grep KEY" } }));
  out.push({
    role: "user",
    content: [
      {
        type: "tool_result",
        tool_use_id: "small",
        content: PLANTED.slice(0, 3)
          .map((p) => p.line)
          .join("\n"),
      },
    ],
  });
  // Each secret twice: as user text and as an error's first line, or as a tool input and in a result.
  const place = (p: Planted, i: number, slot: number): void => {
    const id = `t${i}-${slot}`;
    const pad = "x".repeat(filler);
    switch (slot) {
      case 0:
        out.push(u(`Here is what I have:\n${p.line}\nuse it`));
        out.push(
          a(
            { type: "text", text: `Noted (${i}).` },
            { type: "tool_use", id, name: "Read", input: { file_path: `cfg${i}.env` } },
          ),
        );
        out.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: `ok ${pad}` }] });
        break;
      case 1:
        out.push(a({ type: "tool_use", id, name: "Bash", input: { command: `deploy --verbose ${p.line}` } }));
        out.push({
          role: "user",
          content: [{ type: "tool_result", tool_use_id: id, content: `done ${pad}` }],
        });
        break;
      case 2:
        out.push(a({ type: "tool_use", id, name: "Bash", input: { command: `cat cfg${i}` } }));
        out.push({
          role: "user",
          content: [{ type: "tool_result", tool_use_id: id, content: `${p.line}\n${pad}` }],
        });
        break;
      default:
        // An error result whose first line is the secret (the PEM case joins a header with the next line).
        out.push(a({ type: "tool_use", id, name: "Bash", input: { command: `load cfg${i}` } }));
        out.push({
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: id, content: `${p.line}\nfailed ${pad}`, is_error: true },
          ],
        });
    }
  };
  PLANTED.forEach((p, i) => {
    place(p, i, i % 4);
    place(p, i, 3 - (i % 4));
  });
  out.push(a({ type: "text", text: "All configured." }));
  // The protected round: the current instruction (with its own secret) and the two latest exchanges.
  out.push(u(`Now push with ${PROTECTED} and report.`));
  out.push(a({ type: "tool_use", id: "p1", name: "Bash", input: { command: "git push" } }));
  out.push({ role: "user", content: [{ type: "tool_result", tool_use_id: "p1", content: "pushed" }] });
  out.push(a({ type: "tool_use", id: "p2", name: "Bash", input: { command: "git status" } }));
  out.push({ role: "user", content: [{ type: "tool_result", tool_use_id: "p2", content: "clean" }] });
  out.push(a({ type: "text", text: "Pushed." }));
  return out;
}

/** Every string in a value (the payload), joined. */
function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v !== null && typeof v === "object") for (const x of Object.values(v)) strings(x, out);
  return out;
}

function payloadOf(r: CompactResult): string {
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  // What the CLI writes as the journal entry's payload.
  return strings({ summary: r.summary, replacement: r.replacement, checkpoint: r.checkpoint }).join("\n");
}

function assertNoneLeaked(where: string, text: string): void {
  const leaked = PLANTED.filter((p) => text.includes(p.value)).map((p) => p.kind);
  assert.deepEqual(leaked, [], `${where}: leaked ${leaked.join(", ")}`);
}

test("every planted kind is redacted on its own", () => {
  assert.ok(PLANTED.length >= 30, `${PLANTED.length} kinds`);
  const missed = PLANTED.filter((p) => redactSecretsWithReport(p.line).text.includes(p.value)).map(
    (p) => p.kind,
  );
  assert.deepEqual(missed, []);
});

test("summary path (extractive): no planted secret in the payload; the protected round keeps its own", async () => {
  const history = deepFreeze(plantedHistory(400));
  const r = await compactMessagesSafe(history, { summarizer: extractiveSummarizer(), target: 10 });
  assert.equal(r.ok && r.path, "summary");
  const payload = payloadOf(r);
  assertNoneLeaked("summary path", payload);
  assert.ok(payload.includes(PROTECTED), "protected secret kept verbatim");
  assert.ok(payload.includes("[REDACTED:"), "markers name what was removed");
});

test("the extractive note is already redacted (the pass trusts it and does not scan it again)", async () => {
  const history = plantedHistory(400);
  const bg = [{ id: "bg1", kind: "shell", command: `serve ${PLANTED[1]!.line}` }];
  // A call still running, with a secret in its input.
  history.splice(
    history.length - 6,
    0,
    a({ type: "tool_use", id: "run", name: "Bash", input: { cmd: PLANTED[5]!.line } }),
  );
  const r = await extractiveSummarizer().summarize({
    messages: history,
    background: bg,
    focus: PLANTED[7]!.line,
  });
  assert.equal(r.redacted, true);
  assertNoneLeaked("extractive note", r.text);
  assert.equal(redactSecretsWithReport(r.text).text, r.text, "a fixed point of redaction");
});

test("summary path keeps older user messages, redacted", async () => {
  const history = deepFreeze(plantedHistory(400));
  const r = await compactMessagesSafe(history, { summarizer: extractiveSummarizer(), target: 10 });
  assert.ok(r.ok);
  const users = r.replacement.filter(
    (m) =>
      m.role === "user" &&
      m.content.some(
        (b) => b.type === "text" && (b as { text: string }).text.startsWith("Here is what I have"),
      ),
  );
  assert.ok(users.length > 0, "older users retained");
  assertNoneLeaked("retained users", strings(users).join("\n"));
});

test("prune-only path: no planted secret in the kept turns, stubs or inputs; the protected round keeps its own", async () => {
  const history = deepFreeze(plantedHistory(400));
  const r = await compactMessagesSafe(history, { pruneOnly: true });
  assert.equal(r.ok && r.path, "prune-only");
  const payload = payloadOf(r);
  assertNoneLeaked("prune-only", payload);
  assert.ok(payload.includes(PROTECTED));
  // The call inputs outside the round are still there (redacted), paired with their results.
  assert.ok(
    r.ok && r.replacement.some((m) => m.content.some((b) => b.type === "tool_use" && b.id === "t1-1")),
  );
});

/**
 * A history whose every planted secret sits near its end, in the recent tail that the summary path keeps
 * verbatim before the protected round: in assistant text, a call's input and its result (an error too), and
 * in a user's words beside a result; a current instruction in the tail carries a secret of its own.
 */
function tailPlantedHistory(): Message[] {
  const out: Message[] = [u("Set up the deployment pipeline.")];
  for (let i = 0; i < 40; i++) {
    out.push(
      a(
        { type: "text", text: `Reading part ${i}.` },
        { type: "tool_use", id: `o${i}`, name: "Read", input: { file_path: `f${i}.ts` } },
      ),
    );
    out.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `o${i}`, content: `part ${i} ${"y".repeat(2000)}` }],
    });
  }
  PLANTED.forEach((p, i) => {
    out.push(
      a(
        { type: "text", text: `Found:\n${p.line}` },
        { type: "tool_use", id: `tail${i}`, name: "Bash", input: { command: `deploy '${p.line}'` } },
      ),
    );
    out.push({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: `tail${i}`,
          content: `loaded\n${p.line}\nok`,
          is_error: i % 3 === 0,
        },
        ...(i % 5 === 0 ? [{ type: "text" as const, text: `note: ${p.line}` }] : []),
      ],
    });
  });
  // The current instruction, then more than two exchanges after it: the older ones are the recent tail.
  out.push(u(`Now push with ${PROTECTED} and report.`));
  for (let i = 0; i < 6; i++) {
    out.push(
      a({ type: "tool_use", id: `r${i}`, name: "Bash", input: { command: `step ${i} ${PLANTED[i]!.line}` } }),
    );
    out.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `r${i}`, content: `done ${i}` }],
    });
  }
  out.push(a({ type: "text", text: "Pushed." }));
  return out;
}

test("summary path: the recent tail kept verbatim is redacted (every planted kind), calls still paired, the instruction verbatim", async () => {
  const history = deepFreeze(tailPlantedHistory());
  const r = await compactMessagesSafe(history, {
    summarizer: extractiveSummarizer(),
    target: 12_000,
    keepRecentTokens: 40_000,
  });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(r.path, "summary");
  const ids = new Set<string>();
  for (const m of r.replacement) for (const b of m.content) if (isToolUse(b)) ids.add(b.id);
  // The tail is kept (its calls are there), and with the round's two latest exchanges it holds planted secrets.
  const tailKept = PLANTED.filter((_, i) => ids.has(`tail${i}`)).length;
  assert.ok(tailKept >= 10, `${tailKept} tail exchanges kept`);
  const regionStart = protectedRound(history).regionStart;
  // What the round protects is its own (kept as it is); everything before it is checked.
  const payload = strings({
    summary: r.summary,
    checkpoint: r.checkpoint,
    replacement: r.replacement.filter((m) => !history.slice(regionStart).includes(m)),
  }).join("\n");
  assertNoneLeaked("recent tail", payload);
  // Every call kept has its result.
  const results = new Set<string>();
  for (const m of r.replacement) for (const b of m.content) if (isToolResult(b)) results.add(b.tool_use_id);
  assert.deepEqual(
    [...ids].filter((id) => !results.has(id)),
    [],
  );
  assert.ok(strings(r.replacement).join("\n").includes(PROTECTED), "the current instruction is verbatim");
});

const servers: FakeProvider[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

for (const provider of ["openai", "anthropic"] as const) {
  test(`LLM summarizer (${provider}, fake provider): the request carries no planted secret`, async () => {
    const summary = "## Objective\nSet up the deployment pipeline.\n## Work done\nConfigured it.";
    const f = await startFakeProvider([
      provider === "openai" ? openaiReply.text(summary) : anthropicReply.text(summary),
    ]);
    servers.push(f);
    const summarizer =
      provider === "openai"
        ? openaiCompatibleSummarizer({ baseURL: f.openaiBaseURL, model: "gpt-test", apiKey: "test-key" })
        : anthropicSummarizer({ baseURL: f.anthropicBaseURL, model: "claude-test", apiKey: "test-key" });
    const history = deepFreeze(plantedHistory(400));
    const r = await compactMessagesSafe(history, {
      summarizer,
      target: 10,
      focus: `keep ${PLANTED[0]!.line}`,
      liveState: { background: [{ id: "bg1", kind: "shell", command: `serve ${PLANTED[1]!.line}` }] },
    });
    assert.equal(f.requestCount, 1);
    const sent = f.requests[0]!;
    // Both as sent (JSON-escaped) and decoded.
    assertNoneLeaked("request body", sent.rawBody);
    assertNoneLeaked("request strings", strings(sent.body).join("\n"));
    assert.ok(sent.rawBody.includes("[REDACTED:"), "the transcript was sent, redacted");
    const payload = payloadOf(r);
    assertNoneLeaked("LLM summary path", payload);
    assert.ok(payload.includes(PROTECTED));
  });
}
