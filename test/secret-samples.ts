/**
 * One planted secret of each kind the redactor knows, for the tests that
 * check that no secret reaches what compaction shows (the LLM prompt, the
 * extractive note, the report). Built at run time from pieces, so that this
 * file itself holds nothing a secret scanner flags.
 */

const j = (...p: string[]) => p.join("");

/** Letters and digits in an order that no filler word holds (a secret's fragments are looked for in the output). */
const A = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zA1bC2dE3fG4";
const B = "Zq8Wx7Ec6Rv5Tb4Yn3Um2Ik1Ol0Pa9Sd8Df7Gh6Jk5";

export interface SecretSample {
  /** The kind named by the marker (a hand rule's kind or a gitleaks rule id). */
  kind: string;
  /** The text planted (the secret with the name or header it needs). */
  text: string;
  /** What must not be seen: no run of FRAGMENT characters of any of these reaches the output. */
  values: string[];
}

/** A leak is a run of this many characters of a secret's value. */
export const FRAGMENT = 12;

function pemBody(seed: string, lines: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const s = (seed + A + B).repeat(3);
    out.push(
      `${String.fromCharCode(77 + (i % 10))}${s.slice(i % 17, (i % 17) + 63)}`.replace(/[^A-Za-z0-9]/g, "Q"),
    );
  }
  out.push("Zm9vYmFyYmF6==");
  return out;
}

const rsaBody = pemBody("MIIEowIBAAKCAQEA", 26);
const sshBody = pemBody("b3BlbnNzaC1rZXktdjE", 6);
const rsa = (sep: string) =>
  [j("-----BEGIN RSA ", "PRIVATE KEY-----"), ...rsaBody, j("-----END RSA ", "PRIVATE KEY-----")].join(sep);

export const SECRET_SAMPLES: readonly SecretSample[] = [
  { kind: "private-key", text: rsa("\n"), values: rsaBody },
  // Line breaks written as escapes, as in `printf '-----BEGIN …\n…' > key.pem`.
  { kind: "private-key", text: rsa("\\n"), values: rsaBody },
  // A block whose END line was never written (a key cut off).
  {
    kind: "private-key",
    text: [j("-----BEGIN RSA ", "PRIVATE KEY-----"), ...rsaBody].join("\n"),
    values: rsaBody,
  },
  {
    kind: "private-key",
    text: [
      j("-----BEGIN OPENSSH ", "PRIVATE KEY-----"),
      ...sshBody,
      j("-----END OPENSSH ", "PRIVATE KEY-----"),
    ].join("\n"),
    values: sshBody,
  },
  {
    kind: "anthropic-api-key",
    text: j("sk-ant-api03-", A, "-", B.slice(0, 20), "AA"),
    values: [A, B.slice(0, 20)],
  },
  { kind: "openai-api-key", text: j("sk-proj-", A, "_", B), values: [A, B] },
  { kind: "github-token", text: j("ghp_", A.slice(0, 36)), values: [A.slice(0, 36)] },
  {
    kind: "slack-token",
    text: j("xoxb-", "123456789012-", "1234567890123-", B.slice(0, 24)),
    values: [B.slice(0, 24)],
  },
  { kind: "aws-access-key-id", text: j("AKIA", "Z7QW3ERT5YUI9OPL"), values: ["AKIAZ7QW3ERT5YUI9OPL"] },
  {
    kind: "aws-secret-access-key",
    text: `aws_secret_access_key = ${j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYz9x8y7w6v5")}`,
    values: ["wJalrXUtnFEMI/K7MDENG/bPxRfiCYz9x8y7w6v5"],
  },
  {
    kind: "google-api-key",
    text: j("AIza", "SyD3x4mpl3K3yV4lu3F0rT3st1ngOnly123"),
    values: ["SyD3x4mpl3K3yV4lu3F0rT3st1ngOnly123"],
  },
  { kind: "stripe-key", text: j("sk_live_", B.slice(0, 24)), values: [B.slice(0, 24)] },
  {
    kind: "bearer-token",
    text: `Authorization: Bearer ${j("tok", A.slice(4, 30))}`,
    values: [A.slice(4, 30)],
  },
  {
    kind: "url-password",
    text: `https://alice:${j("s3cr3t", "Pa55w0rdXq9z")}@db.example.com/x`,
    values: ["s3cr3tPa55w0rdXq9z"],
  },
  {
    kind: "basic-auth",
    text: `Authorization: Basic ${j("YWxpY2U6", "c2VjcmV0UGFzc3dvcmQxMjM=")}`,
    values: ["YWxpY2U6c2VjcmV0UGFzc3dvcmQxMjM="],
  },
  { kind: "env-secret", text: `DB_PASSWORD=${j("hunter2", "Qx7Zp9Lm4Rt")}`, values: ["hunter2Qx7Zp9Lm4Rt"] },
  {
    kind: "json-secret",
    text: `{"password": "${j("correct", "Horse9Battery")}"}`,
    values: ["correctHorse9Battery"],
  },
  {
    kind: "azure-account-key",
    text: `AccountName=acct;AccountKey=${j(B.slice(0, 30), A.slice(0, 30))}==`,
    values: [j(B.slice(0, 30), A.slice(0, 30))],
  },
  { kind: "google-oauth-client-secret", text: j("GOCSPX-", A.slice(2, 30)), values: [A.slice(2, 30)] },
  { kind: "gitlab-pat", text: j("glpat-", B.slice(3, 23)), values: [B.slice(3, 23)] },
];

/** The runs of FRAGMENT characters of the sample's values that `output` holds (none: nothing leaked). */
export function leakedFragments(output: string, sample: SecretSample): string[] {
  const out: string[] = [];
  for (const v of sample.values) {
    if (v.length < FRAGMENT) {
      if (output.includes(v)) out.push(v);
      continue;
    }
    for (let i = 0; i + FRAGMENT <= v.length; i++) {
      const f = v.slice(i, i + FRAGMENT);
      if (output.includes(f)) {
        out.push(f);
        break;
      }
    }
  }
  return out;
}

/**
 * A text of about `size` characters with the sample planted at `at` (clamped
 * to the text), between filler words; `lines`: filler broken into lines.
 */
export function plant(sample: SecretSample, at: number, size: number, lines: boolean): string {
  const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ";
  const filler = (n: number) => {
    let s = words.repeat(Math.ceil(n / words.length) + 1).slice(0, n);
    if (lines) s = s.replace(/(?:\S+ ){7}/g, (m) => `${m.slice(0, -1)}\n`);
    return s;
  };
  const start = Math.max(0, Math.min(at, size));
  const head = start === 0 ? "" : `${filler(start - 1)} `;
  const rest = Math.max(1, size - start - sample.text.length);
  return `${head}${sample.text} ${filler(rest)}`;
}
