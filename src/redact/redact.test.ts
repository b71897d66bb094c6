import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import gitleaks from "./secret-rules/gitleaks.json" with { type: "json" };
import type { Message } from "../model/index.js";
import { compactMessagesSafe } from "../engine/compact.js";
import {
  GITLEAKS_RULES_INFO,
  headWindow,
  keywordAnchoredRules,
  openRedactionScope,
  redactionMemoSize,
  redactLines,
  redactRepeatedWithReport,
  redactSecrets,
  redactSearchedInFull,
  redactSecretsWithReport,
  redactValue,
  shannonEntropy,
  tailWindow,
  urlPasswordPossible,
} from "./redact.js";

// Fake secrets built at run time, so that this file itself holds nothing that a secret scanner flags.
const j = (...p: string[]) => p.join("");
const alnum = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zA1bC2dE3fG4";

const cases: { name: string; input: string; kind: string; gone: string; kept?: string[] }[] = [
  {
    name: "OpenAI legacy key",
    input: `export OPENAI_API_KEY=${j("sk-", alnum.slice(0, 48))}`,
    kind: "openai-api-key",
    gone: alnum.slice(0, 20),
    kept: ["export OPENAI_API_KEY="],
  },
  {
    name: "OpenAI project key",
    input: `key: ${j("sk-proj-", alnum, "_", alnum)} end`,
    kind: "openai-api-key",
    gone: "sk-proj-",
    kept: ["key: ", " end"],
  },
  {
    name: "Anthropic key",
    input: `use ${j("sk-ant-api03-", alnum, "-", alnum.slice(0, 20), "AA")}.`,
    kind: "anthropic-api-key",
    gone: "sk-ant-api03",
    kept: ["use ", "."],
  },
  {
    name: "GitHub classic token",
    input: `token=${j("ghp_", alnum.slice(0, 36))}`,
    kind: "github-token",
    gone: "ghp_",
    kept: ["token="],
  },
  {
    name: "GitHub fine-grained token",
    input: j("github_pat_", "11ABCDEFG0", alnum.slice(0, 30)),
    kind: "github-token",
    gone: "github_pat_",
  },
  {
    name: "Slack bot token",
    input: `SLACK=${j("xoxb-", "123456789012-", "1234567890123-", alnum.slice(0, 24))}`,
    kind: "slack-token",
    gone: "xoxb-",
  },
  {
    name: "Slack user token",
    input: j("xoxp-", "1234567890-", "0987654321-", alnum.slice(0, 10)),
    kind: "slack-token",
    gone: "xoxp-",
  },
  {
    name: "AWS access key id",
    input: `aws_access_key_id = ${j("AKIA", "Z7QW3ERT5YUI9OPL")}`,
    kind: "aws-access-key-id",
    gone: "AKIAZ7",
    kept: ["aws_access_key_id = "],
  },
  {
    name: "AWS secret access key",
    input: `aws_secret_access_key = ${j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYz9x8y7w6v5")}`,
    kind: "aws-secret-access-key",
    gone: "wJalrXUtnFEMI",
    kept: ["aws_secret_access_key = "],
  },
  {
    name: "Authorization header",
    input: `curl -H "Authorization: Bearer ${j("abc", "DEF123xyz")}" https://api`,
    kind: "bearer-token",
    gone: "abcDEF123xyz",
    kept: ['curl -H "Authorization: Bearer ', '" https://api'],
  },
  {
    name: "JSON authorization header",
    input: `{"Authorization": "Bearer ${j("eyJhbGciOi", "JIUzI1NiJ9.eyJzdWIiOiIx.sig")}"}`,
    kind: "bearer-token",
    gone: "eyJhbGciOi",
  },
  {
    name: "bare bearer token",
    input: `sent Bearer ${j("tok_", "9f8e7d6c5b4a39281706")} to the API`,
    kind: "bearer-token",
    gone: "9f8e7d6c5b4a",
    kept: ["sent Bearer ", " to the API"],
  },
  {
    name: "PEM private key",
    input: `before\n${j("-----BEGIN RSA ", "PRIVATE KEY-----")}\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n${j("-----END RSA ", "PRIVATE KEY-----")}\nafter`,
    kind: "private-key",
    gone: "MIIEowIBAAKCAQEA",
    kept: ["before\n", "\nafter"],
  },
  {
    name: "OpenSSH private key",
    input: `${j("-----BEGIN OPENSSH ", "PRIVATE KEY-----")}\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n${j("-----END OPENSSH ", "PRIVATE KEY-----")}`,
    kind: "private-key",
    gone: "b3BlbnNzaC1rZXk",
  },
  {
    name: "PEM private key cut before its END line",
    input: `${j("-----BEGIN ", "PRIVATE KEY-----")}\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n\nThe rest of the note.`,
    kind: "private-key",
    gone: "MIIEvQIBADANBgkq",
    kept: ["The rest of the note."],
  },
  {
    name: "password in a URL",
    input: `git clone https://alice:${j("s3cr3t", "-pa55")}@github.com/org/repo.git`,
    kind: "url-password",
    gone: "s3cr3t",
    kept: ["https://alice:", "@github.com/org/repo.git"],
  },
  {
    name: "password in a database URL",
    input: `DATABASE_URL=postgres://app:${j("hunter2", "hunter2")}@db.internal:5432/prod`,
    kind: "url-password",
    gone: "hunter2",
    kept: ["postgres://app:", "@db.internal:5432/prod"],
  },
  {
    name: "Google API key",
    input: `key=${j("AIza", "SyD3x4mpl3K3yV4lu3F0rT3st1ngOnly123")}`,
    kind: "google-api-key",
    gone: "AIzaSy",
  },
  {
    name: "Stripe live key",
    input: `STRIPE=${j("sk_live_", "51H8e7d6c5b4a3928170")}`,
    kind: "stripe-key",
    gone: "sk_live_51H",
  },
];

for (const c of cases) {
  test(`redacts: ${c.name}`, () => {
    const { text, counts } = redactSecretsWithReport(c.input);
    assert.ok(!text.includes(c.gone), text);
    assert.ok(text.includes(`[REDACTED:${c.kind}]`), text);
    assert.ok((counts as Record<string, number>)[c.kind]! >= 1);
    for (const k of c.kept ?? []) assert.ok(text.includes(k), `kept ${JSON.stringify(k)} in ${text}`);
    // Idempotent: redacting again changes nothing.
    assert.equal(redactSecrets(text), text);
  });
}

test("leaves non-secrets alone", () => {
  const fine = [
    "Run `npm install` and then `npm test`; see docs/task-list.md.",
    "the sk-learn package and risk-based scoring, desk-top, ask-for-help",
    "sk-short",
    "task-management-system-overview-2024-final-version",
    "Bearer tokens are sent in the Authorization header.",
    'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
    'curl -H "Authorization: Bearer ${GITHUB_TOKEN}" https://api.github.com',
    "postgres://app:${DB_PASSWORD}@db:5432/prod and mysql://root:<password>@localhost/db",
    "https://user@example.com/path and https://example.com:8443/x?a=b and git@github.com:org/repo.git",
    "commit 3f9a2b7c1d0e and sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "AKIA is the prefix of an AWS key id; AKIASHORT is not one.",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "xoxb is a Slack prefix; ghp_ is a GitHub prefix.",
    "ssh://git@github.com/org/repo.git",
  ];
  for (const s of fine) assert.equal(redactSecrets(s), s, s);
});

test("an sk-… run inside an encrypted base64 blob is not a key (the Codex corpus case)", () => {
  // Shape of the real blob: base64url characters on both sides of "sk-".
  const blob =
    "gAAAAABo4ZyHxUHL_94xDwUPqt61IdzSyBrRPsk-kspGBZk4yfNO8m_DPwQ_UdYi3UZoqZBNgcjQGqsn" +
    "EeXek1DIijTWXtOBfAi55MCP8zEJP4sk-JBNbzYG111HnIiRfH6VFvNeZSiIp5hOHaWLdQIey==";
  assert.equal(redactSecrets(blob), blob);
  assert.equal(redactSecrets(`"encrypted_content":"${blob}"`), `"encrypted_content":"${blob}"`);
});

test("several secrets in one text are all replaced and counted", () => {
  const text = `a ${j("ghp_", alnum.slice(0, 36))} b ${j("ghp_", alnum.slice(1, 37))} c https://u:${j("pw", "12345678")}@h.example`;
  const r = redactSecretsWithReport(text);
  assert.equal(r.counts["github-token"], 2);
  assert.equal(r.counts["url-password"], 1);
  assert.equal(
    r.text,
    "a [REDACTED:github-token] b [REDACTED:github-token] c https://u:[REDACTED:url-password]@h.example",
  );
});

test("linear on large input", () => {
  const big = "word sk- ghp_ Bearer https://x:y@ ".repeat(50_000);
  assert.equal(redactSecrets(big).length > 0, true);
});

test("the gitleaks rule set is loaded as data; the rules left out are few and named", () => {
  assert.match(GITLEAKS_RULES_INFO.source, /^gitleaks v8\.\d+\.\d+ config\/gitleaks\.toml/);
  assert.ok(GITLEAKS_RULES_INFO.rules >= 200, `${GITLEAKS_RULES_INFO.rules} rules`);
  // Only rules that cannot apply to text (file-path matchers) or that JavaScript cannot compile are left out.
  assert.deepEqual(
    GITLEAKS_RULES_INFO.dropped.map((d) => d.id),
    ["pkcs12-file"],
  );
  // The rules are compiled on first use (when a text holds a keyword): every one must compile here.
  for (const r of gitleaks.rules as {
    id: string;
    regex: string;
    flags?: string;
    allowlists?: { regexes?: { source: string; flags: string }[] }[];
  }[]) {
    assert.doesNotThrow(() => new RegExp(r.regex, `${r.flags ?? ""}dg`), r.id);
    for (const a of r.allowlists ?? [])
      for (const x of a.regexes ?? []) assert.doesNotThrow(() => new RegExp(x.source, x.flags), r.id);
  }
});

test("gitleaks rules: provider tokens the hand rules do not know", () => {
  const found = [
    [j("glpat-", alnum.slice(0, 20)), "gitlab-pat"],
    [j("npm_", alnum.slice(0, 36).toLowerCase()), "npm-access-token"],
    [j("dop_v1_", "0123456789abcdef".repeat(4)), "digitalocean-pat"],
    [j("shpat_", "0123456789abcdef".repeat(2)), "shopify-access-token"],
    [j("SG.", alnum.slice(0, 22), ".", alnum.slice(0, 42), "Q"), "sendgrid-api-token"],
  ];
  for (const [secret, kind] of found) {
    const r = redactSecretsWithReport(`value: ${secret} end`);
    assert.ok(!r.text.includes(secret), `${kind}: ${r.text}`);
    assert.equal(r.counts[kind], 1, `${kind}: ${JSON.stringify(r.counts)}`);
    assert.equal(redactSecrets(r.text), r.text, "idempotent");
  }
});

test("gitleaks rules: the entropy bound and the allowlists keep ordinary code", () => {
  const fine = [
    'const token = "aaaaaaaaaaaaaaaa";',
    "password = ${DB_PASSWORD}",
    "api_version = 2024-01-01-preview",
    "the key: value pairs are sorted by insertion order",
    "access_token = getAccessToken(request)",
  ];
  for (const s of fine) assert.equal(redactSecrets(s), s, s);
  assert.ok(shannonEntropy("aaaa") === 0 && shannonEntropy("abcd") === 2);
  // A high-entropy value after a secret-like name is found by the generic rule.
  const v = j("x9F", alnum.slice(0, 29));
  assert.ok(!redactSecrets(`client_secret = "${v}"`).includes(v));
});

test("a PEM key whose lines were collapsed to one is still redacted", () => {
  const body = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun";
  const text = `failed: ${j("-----BEGIN RSA ", "PRIVATE KEY-----")} ${body} VTLw7onLRnrq0/IzW7yWR7Qk`;
  assert.ok(!redactSecrets(text).includes(body.slice(0, 16)), redactSecrets(text));
});

test("redactValue redacts every string of a tool input and keeps unchanged values as they are", () => {
  const input = {
    command: `curl -u x:y https://a:${j("pw", "1234567890")}@h.example`,
    n: 3,
    nested: [{ k: "plain" }],
  };
  const out = redactValue(input);
  assert.notEqual(out, input);
  assert.ok(!JSON.stringify(out).includes("pw1234567890"));
  assert.equal(out.nested, input.nested, "unchanged parts are shared");
  const clean = { a: "plain", b: [1, 2] };
  assert.equal(redactValue(clean), clean);
});

test("within a redaction scope a long text given as repeated is redacted once; nothing is kept once the last scope closes", async () => {
  const token = j("ghp_", alnum.slice(0, 36));
  const text = `deploy with ${token} ${"and more words ".repeat(30)}`;
  assert.equal(redactionMemoSize(), 0);
  redactRepeatedWithReport(text);
  assert.equal(redactionMemoSize(), 0, "no scope: no memo");
  const close = openRedactionScope();
  const closeInner = openRedactionScope();
  const a = redactRepeatedWithReport(text);
  const b = redactRepeatedWithReport(text);
  assert.equal(redactionMemoSize(), 1);
  redactSecretsWithReport(`${text} `);
  assert.equal(redactionMemoSize(), 1, "a text not given as repeated is not looked up nor kept");
  assert.equal(a.text, b.text);
  assert.ok(!b.text.includes(token));
  a.counts["github-token"] = 99;
  assert.equal(redactRepeatedWithReport(text).counts["github-token"], 1, "each caller gets its own counts");
  closeInner();
  closeInner();
  assert.equal(redactionMemoSize(), 1, "an outer scope is still open");
  close();
  assert.equal(redactionMemoSize(), 0);
  // A compaction opens and closes its own scope.
  const history: Message[] = [
    { role: "user", content: [{ type: "text", text }] },
    { role: "assistant", content: [{ type: "text", text: "ok ".repeat(400) }] },
    { role: "user", content: [{ type: "text", text: "next" }] },
    { role: "assistant", content: [{ type: "text", text: "done" }] },
  ];
  const r = await compactMessagesSafe(history, { target: 50 });
  assert.ok(r.ok);
  assert.equal(redactionMemoSize(), 0);
});

test("the windows read for redaction around a cut: to the line's end past a head cut, from the line before a tail cut", () => {
  const text = "alpha beta\ngamma delta\nepsilon zeta\neta theta";
  assert.equal(headWindow(text, 3, 100), "alpha beta\n");
  assert.equal(headWindow(text, 14, 100), "alpha beta\ngamma delta\n");
  assert.equal(headWindow(text, 14, 4), "alpha beta\ngamma d");
  assert.equal(headWindow("one two three", 5, 100, " "), "one two ");
  assert.equal(headWindow(text, 500, 10), text);
  assert.equal(tailWindow(text, 5, 100), "epsilon zeta\neta theta");
  assert.equal(tailWindow(text, 5, 7), text.slice(-12));
  assert.equal(tailWindow(text, 500, 10), text);
  // The end of a PEM block in the tail: from its opening line, however far back.
  const pem = `-----BEGIN PRIVATE KEY-----\n${"QUJD\n".repeat(500)}-----END PRIVATE KEY-----\nok`;
  assert.equal(tailWindow(`intro\n${pem}`, 40, 100), pem);
  // Line breaks are looked for within the margin only; the windows are those of the definitions.
  const head = (t: string, cut: number, margin: number, stop = "\n"): string => {
    if (t.length <= cut) return t;
    const at = t.indexOf(stop, cut);
    return t.slice(0, at === -1 ? cut + margin : Math.min(at + 1, cut + margin));
  };
  const tail = (t: string, cut: number, margin: number): string => {
    if (t.length <= cut) return t;
    const from = t.length - cut;
    const line = t.lastIndexOf("\n", from - 1);
    const prev = line <= 0 ? -1 : t.lastIndexOf("\n", line - 1);
    return t.slice(Math.max(prev + 1, from - margin));
  };
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom("a", "bc", " ", "\n", "\n\n", "defgh"), { maxLength: 40 }),
      fc.integer({ min: 0, max: 50 }),
      fc.integer({ min: 0, max: 20 }),
      (parts, cut, margin) => {
        const t = parts.join("");
        assert.equal(headWindow(t, cut, margin), head(t, cut, margin));
        assert.equal(headWindow(t, cut, margin, " "), head(t, cut, margin, " "));
        assert.equal(tailWindow(t, cut, margin), tail(t, cut, margin));
      },
    ),
    { seed: 20261201, numRuns: 3000 },
  );
});

test("redactLines: several one-line texts, each redacted as if alone", () => {
  const lines = cases.map((c) => c.input.replace(/\s+/g, " ")).concat(["", "plain words", "key=value"]);
  assert.deepEqual(
    redactLines(lines),
    lines.map((l) => redactSecrets(l)),
  );
  // A text that holds a line break, or a match that takes a break in (a PEM block's opening line and
  // the next text's base64), makes each be redacted alone.
  const pem = [j("-----BEGIN RSA PRIVATE", " KEY-----"), j(alnum, alnum)];
  assert.deepEqual(
    redactLines(pem),
    pem.map((l) => redactSecrets(l)),
  );
  assert.deepEqual(redactLines(["a\nb", "c"]), ["a\nb", "c"]);
  assert.deepEqual(redactLines([]), []);
});

test("redactLines equals redacting each text alone, where a match could run across the texts joined", () => {
  // Each of these, joined by a line break, is one match of a rule (the name on one line, the value on the next).
  const across = [
    ["MY_TOKEN", j("=", alnum.slice(0, 12))],
    ["api_key", j("= ", "9f8e7d6c5b4a39281706f5e4d3c2b1a0")],
    ["Authorization:", "Bearer abcdefgh"],
  ];
  for (const lines of across)
    assert.deepEqual(redactLines(lines), lines.map(redactSecrets), lines.join(" / "));
  // Texts that hold nothing a rule needs come back as they are; a copy, never the array given.
  const plain = ["ls -la", "cd src", ""];
  const out = redactLines(plain);
  assert.deepEqual(out, plain);
  assert.notEqual(out, plain);
  // Any texts made of names, separators, keywords and key-like runs: the same as each redacted alone.
  const piece = fc.constantFrom(
    "MY_TOKEN",
    "DB_PASSWORD",
    "api_key",
    "password",
    '"secret"',
    "Authorization",
    "Bearer ",
    "=",
    ": ",
    " ",
    '"',
    "\\n",
    "\n",
    j("sk-", alnum.slice(0, 30)),
    j("ghp_", alnum.slice(0, 36)),
    alnum.slice(3, 35),
    "-----BEGIN RSA PRIVATE KEY-----",
    "https://",
    "user:pw@host",
    "plain",
  );
  const text = fc.array(piece, { maxLength: 8 }).map((p) => p.join(""));
  fc.assert(
    fc.property(fc.array(text, { maxLength: 6 }), (lines) => {
      assert.deepEqual(redactLines(lines), lines.map(redactSecrets));
    }),
    { seed: 20261202, numRuns: 2000 },
  );
});

test("the url-password rule is skipped only where its pattern cannot match", () => {
  const pattern = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:/?#@"'<>]+):([^\s/?#@"'<>]+)@(?=[^\s/?#@]+)/i;
  const noise = fc.constantFrom("", "", "/", " ", "\n", "x+y", "<", "#", "P", "://", ":", "@", "_");
  // A URL with a password, each part kept or replaced by noise (and noise around it).
  const part = (p: string) => fc.oneof(fc.constant(p), fc.constant(p), noise);
  const url = fc.tuple(
    noise,
    part("https"),
    part("://"),
    part("user"),
    part(":"),
    part("pa55"),
    part("@"),
    part("host"),
    noise,
  );
  let matched = 0;
  fc.assert(
    fc.property(fc.array(url, { maxLength: 3 }), (urls) => {
      const t = urls.map((u) => u.join("")).join(" ");
      if (!pattern.test(t)) return;
      matched++;
      assert.ok(urlPasswordPossible(t), t);
    }),
    { seed: 20261201, numRuns: 5000 },
  );
  assert.ok(matched > 500, `only ${matched} texts the pattern matches`);
  assert.equal(urlPasswordPossible("see https://example.com/a@b for the docs"), false);
  assert.equal(
    redactSecrets("postgres://app:s3cretpw@db.internal:5432/x"),
    "postgres://app:[REDACTED:url-password]@db.internal:5432/x",
  );
});

test("a PEM block without its END line: the body is redacted, its lines written with line breaks, escapes or spaces", () => {
  const body = [
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7Qk",
  ];
  const begin = j("-----BEGIN RSA ", "PRIVATE KEY-----");
  for (const sep of ["\n", "\r\n", "\\n", "\\\\n", "\\r\\n", " "]) {
    // Cut in the middle of the body (a window that ends there): the last short run goes too.
    const text = `printf '${begin}${sep}${body[0]}${sep}${body[1]!.slice(0, 6)}`;
    const out = redactSecrets(text);
    assert.equal(out, "printf '[REDACTED:private-key]", JSON.stringify(sep));
    // Followed by words: the block ends at the first line that is not base64.
    const more = redactSecrets(`${begin}${sep}${body.join(sep)}${sep}' > key.pem && ls`);
    assert.ok(!more.includes("MIIE") && !more.includes("VTLw"), more);
    assert.ok(more.endsWith("' > key.pem && ls"), more);
  }
});

test("tailWindow reads from the BEGIN line of a PEM block whose body runs into the window (no END line)", () => {
  const line = "M" + alnum.slice(0, 40) + "x".repeat(23);
  const body = Array.from({ length: 30 }, () => line).join("\n");
  const text = `${"word ".repeat(400)}${j("-----BEGIN RSA ", "PRIVATE KEY-----")}\n${body}\nand then words`;
  const w = tailWindow(text, 200, 256);
  assert.ok(w.startsWith("-----BEGIN"), w.slice(0, 40));
  assert.ok(!redactSecrets(w).includes(alnum.slice(0, 20)));
  // A block closed before the window is not read again.
  const closed = `${j("-----BEGIN RSA ", "PRIVATE KEY-----")}\n${line}\n${j("-----END RSA ", "PRIVATE KEY-----")}\n${"word ".repeat(400)}`;
  assert.equal(tailWindow(closed, 200, 256).length < 600, true);
});

test("tailWindow: a BEGIN line before the window is found with another BEGIN later in the text, none when the only one is later (the forward search before lastIndexOf)", () => {
  const begin = j("-----BEGIN RSA ", "PRIVATE KEY-----");
  const end = j("-----END RSA ", "PRIVATE KEY-----");
  const line = "M" + alnum.slice(0, 40) + "x".repeat(23);
  const body = Array.from({ length: 30 }, () => line).join("\n");
  // A block open before the window, its header quoted again after it: read from the first block's opening line.
  const open = `${"word ".repeat(400)}${begin}\n${body}\nand then ${begin} quoted`;
  const w = tailWindow(open, 200, 256);
  assert.ok(w.startsWith(begin), w.slice(0, 40));
  assert.ok(!redactSecrets(w).includes(alnum.slice(0, 20)));
  // The only BEGIN lies in the window: the window, not the text from its start.
  const later = `${"word ".repeat(400)}\n${begin}\n${line}\n${end}`;
  assert.ok(tailWindow(later, 200, 256).length <= 200 + 256);
  // Against the definition: the last BEGIN at or before the window's start (lastIndexOf from there).
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(begin, end, line, "\n", "word ", "-----BEGIN", " "), { maxLength: 30 }),
      fc.integer({ min: 0, max: 300 }),
      fc.integer({ min: 0, max: 200 }),
      (parts, cut, margin) => {
        const t = parts.join("");
        const got = tailWindow(t, cut, margin);
        if (t.length <= cut) return assert.equal(got, t);
        const from = t.length - cut;
        const low = Math.max(0, from - margin);
        const lineStart = t.lastIndexOf("\n", from - 1);
        const ls = lineStart < low ? -1 : lineStart;
        const prev = ls - 1 < low ? -1 : t.lastIndexOf("\n", ls - 1);
        const start = Math.max((prev < low ? -1 : prev) + 1, low);
        const window = t.slice(start);
        const b = t.lastIndexOf("-----BEGIN", start);
        if (b === -1 || b === start) assert.equal(got, window);
        else if (window.includes("-----END")) assert.equal(got, t.slice(b));
        else assert.ok(got === window || got === t.slice(b));
      },
    ),
    { seed: 20261202, numRuns: 2000 },
  );
});

test("a text is skipped only when it holds none of the rules' literals: a secret whose literal is written in another case is still redacted", () => {
  const token = j("Ab3", alnum.slice(0, 30));
  const inputs: { input: string; gone: string }[] = [
    // lowerHint "authorization", matched in any case; the rules' patterns are case-insensitive.
    { input: `AUTHORIZATION: BEARER ${token}`, gone: token },
    { input: `authorization: basic ${j("dXNlcjpw", "YXNzd29yZA==")}`, gone: "YXNzd29yZA" },
    // lowerHint "pass" / "secret" in a JSON key written in upper case.
    { input: `{"DB_PASSWORD": "${j("hunter", "2-", alnum.slice(0, 10))}"}`, gone: alnum.slice(0, 10) },
    { input: `{"Client_SECRET": "${j(alnum.slice(5, 25))}"}`, gone: alnum.slice(5, 25) },
    // url-password: the scheme in upper case.
    { input: `HTTPS://admin:${j("s3cr", "etPW99")}@example.com/x`, gone: "s3cretPW99" },
  ];
  for (const { input, gone } of inputs) {
    const out = redactSecrets(input);
    assert.ok(!out.includes(gone), `${input} -> ${out}`);
    assert.ok(out.includes("[REDACTED:"), out);
  }
  // And a text that holds no literal at all comes back as it is (the same string).
  const plain = "the build went green after the fix to the parser; 12 files changed";
  assert.equal(redactSecrets(plain), plain);
});

test("a rule tried only at its keywords' starts finds what a search of the whole text finds", () => {
  // The shipped generic-api-key rule opens with its keywords: a gitleaks release that changes that is seen here.
  assert.deepEqual(keywordAnchoredRules(), ["generic-api-key"]);
  const value = fc
    .string({ unit: fc.constantFrom(..."aZ3k9Qx_-./+=ü"), minLength: 8, maxLength: 40 })
    .map((v) => `${alnum.slice(0, 6)}${v}`);
  const fragment = fc.oneof(
    fc.constantFrom("key", "KEY", "Key", "api", "API", "aPi", "auth", "token", "TOKEN", "secret", "passwd"),
    fc.constantFrom("password", "PassWord", "credential", "creds", "access", "ACCESS", "apikey", "keykey"),
    fc.constantFrom("=", ": ", ":=", " => ", '"', "'", " ", "\n", "_", ".", "-", "\\n", "é", "😀", "monkey"),
    value,
  );
  fc.assert(
    fc.property(fc.array(fragment, { maxLength: 40 }), (parts) => {
      const text = parts.join("");
      assert.deepEqual(redactSecretsWithReport(text), redactSearchedInFull(text));
    }),
    { seed: 20261204, numRuns: 600 },
  );
  // Two secrets under one keyword, and a keyword the first match overlaps: each found as the full search finds it.
  const one = j("api_key=", alnum.slice(0, 30));
  const two = `${one} and then token: ${j(alnum.slice(5, 35), "x")} and key=${alnum.slice(3, 33)}`;
  const r = redactSecretsWithReport(two);
  assert.deepEqual(r, redactSearchedInFull(two));
  assert.ok(r.counts["generic-api-key"]! >= 2, JSON.stringify(r.counts));
});

test("a private key without its END line whose body lines carry a prefix (cat -n, grep, quoting, a list) is redacted whole, before any joiner", async () => {
  const { errorLine } = await import("../summarizers/extractive/results.js");
  const { oneLine } = await import("../summarizers/transcript.js");
  const head = j("-----BEGIN ", "PRIVATE KEY-----");
  const b1 = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj";
  const b2 = "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu";
  const shapes: Record<string, string> = {
    "cat -n": `     1\t${head}\n     2\t${b1}\n     3\t${b2}\n`,
    grep: `key.pem:${head}\nkey.pem-${b1}\nkey.pem-${b2}\n`,
    quoted: `> ${head}\n> ${b1}\n> ${b2}\n`,
    comment: `# ${head}\n# ${b1}\n# ${b2}\nZm9vYmFy==\n`,
    "list items": `[\n  "${head}",\n  "${b1}",\n  "${b2}",\n]`,
    "non-breaking space": `${head}\n\u00a0${b1}\n\u00a0${b2}\n`,
    "CR CR LF": `${head}\r\r\n${b1}\r\r\n${b2}\r\r\n`,
  };
  for (const [name, text] of Object.entries(shapes)) {
    for (const [joiner, out] of [
      ["redacted", redactSecrets(text)],
      ["error line (joined with —)", errorLine(text)],
      ["one line of the redacted text", oneLine(redactSecrets(text))],
    ] as const) {
      assert.ok(
        !out.includes(b1.slice(0, 12)) && !out.includes(b2.slice(0, 12)),
        `${name}, ${joiner}: ${out}`,
      );
    }
    assert.match(redactSecrets(text), /\[REDACTED:private-key\]/);
  }
  // The text after a key with no body is left as it is.
  assert.equal(
    redactSecrets(`# ${head}\n# the rest of the note`),
    "# [REDACTED:private-key]\n# the rest of the note",
  );
});
