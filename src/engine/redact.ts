/**
 * Secret redaction for the text that compaction itself writes (summaries,
 * checkpoints, stubs). Never applied to the protected round or to opaque
 * provider payloads.
 *
 * Patterns are anchored on plausible key shapes: a key must start where no
 * base64 / base64url character precedes it, and end where none follows. This
 * keeps an `sk-…` run inside an encrypted reasoning blob (a real case in the
 * Codex corpus) from being taken for an OpenAI key. Each redaction leaves a
 * marker that names the kind removed, e.g. `[REDACTED:openai-api-key]`, and the
 * markers themselves never match a pattern, so redaction is idempotent.
 */

export type SecretKind =
  | "private-key"
  | "anthropic-api-key"
  | "openai-api-key"
  | "github-token"
  | "slack-token"
  | "aws-access-key-id"
  | "aws-secret-access-key"
  | "google-api-key"
  | "stripe-key"
  | "bearer-token"
  | "url-password";

export function redactionMarker(kind: SecretKind): string {
  return `[REDACTED:${kind}]`;
}

/** Characters of base64 / base64url / key bodies: a key is never glued to one of these. */
const B = "A-Za-z0-9+/=_\\-";
/** `=` may precede a key (`KEY=sk-…`): base64 padding only ends a blob, it never sits inside one. */
const START = `(?<![A-Za-z0-9+/_\\-])`;
const END = `(?![${B}])`;

interface Rule {
  kind: SecretKind;
  re: RegExp;
  /** Build the replacement from the match (default: the marker alone). */
  replace?: (m: string, ...groups: string[]) => string;
}

const RULES: Rule[] = [
  // PEM private keys: a whole block (PGP's "PRIVATE KEY BLOCK" too).
  {
    kind: "private-key",
    re: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END \1PRIVATE KEY\2-----/g,
  },
  {
    kind: "private-key",
    // An unterminated block followed by its base64 lines (and maybe headers), up to the first line that is not base64.
    re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:\r?\n(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]+: [^\n]*|(?=\r?\n)))*/g,
  },
  { kind: "anthropic-api-key", re: new RegExp(`${START}sk-ant-[a-z0-9]+-[A-Za-z0-9_\\-]{20,}${END}`, "g") },
  {
    kind: "openai-api-key",
    // sk-..., sk-proj-..., sk-svcacct-..., sk-admin-...; at least 20 body characters with a digit and a letter.
    re: new RegExp(
      `${START}sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z0-9_\\-]*[0-9])(?=[A-Za-z0-9_\\-]*[A-Za-z])[A-Za-z0-9_\\-]{20,}${END}`,
      "g",
    ),
  },
  {
    kind: "github-token",
    re: new RegExp(`${START}(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})${END}`, "g"),
  },
  { kind: "slack-token", re: new RegExp(`${START}xox[abprs]-[A-Za-z0-9]+-[A-Za-z0-9\\-]{8,}${END}`, "g") },
  { kind: "aws-access-key-id", re: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g },
  {
    kind: "aws-secret-access-key",
    re: /\b(aws_?secret_?access_?key|AWS_SECRET_ACCESS_KEY|SecretAccessKey)(["']?\s*[:=]\s*["']?)([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
    replace: (_m, name, sep) => `${name}${sep}${redactionMarker("aws-secret-access-key")}`,
  },
  { kind: "google-api-key", re: new RegExp(`${START}AIza[0-9A-Za-z_\\-]{35}${END}`, "g") },
  { kind: "stripe-key", re: new RegExp(`${START}(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}${END}`, "g") },
  {
    kind: "bearer-token",
    // The Authorization header (any token of 8+ characters), keeping the header name.
    re: /\b(Authorization["']?\s*[:=]\s*["']?Bearer\s+)([A-Za-z0-9._~+/-]{8,}=*)/gi,
    replace: (_m, head) => `${head}${redactionMarker("bearer-token")}`,
  },
  {
    kind: "bearer-token",
    // A bare "Bearer <token>" only when the token looks like one: 20+ characters with a digit.
    re: /\b(Bearer\s+)(?=[A-Za-z0-9._~+/-]*[0-9])([A-Za-z0-9._~+/-]{20,}=*)/g,
    replace: (_m, head) => `${head}${redactionMarker("bearer-token")}`,
  },
  {
    kind: "url-password",
    // scheme://user:password@host, keeping scheme, user and host; placeholders ($VAR, ${VAR}, <pw>, ***) are left alone.
    re: /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:/?#@"'<>]+):([^\s/?#@"'<>]+)@(?=[^\s/?#@]+)/gi,
    replace: (m, scheme, user, pass) =>
      /^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^>]*>|\*+|x+|\[REDACTED:[a-z-]+\])$/i.test(pass)
        ? m
        : `${scheme}${user}:${redactionMarker("url-password")}@`,
  },
];

export interface RedactionReport {
  text: string;
  /** How many secrets of each kind were replaced. */
  counts: Partial<Record<SecretKind, number>>;
}

/**
 * One cheap scan that every rule above needs to match somewhere: text without
 * any of these substrings has nothing to redact (most stubs and summaries).
 */
const ANY_HINT =
  /PRIVATE KEY|sk-|gh[pousr]_|github_pat_|xox[abprs]-|AKIA|ASIA|secret|AIza|_live_|_test_|bearer|:\/\//i;

/** Replace secret-like strings with markers that name their kind, and count them. */
export function redactSecretsWithReport(text: string): RedactionReport {
  const counts: Partial<Record<SecretKind, number>> = {};
  if (!ANY_HINT.test(text)) return { text, counts };
  let out = text;
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    out = out.replace(rule.re, (...args: unknown[]) => {
      const m = args[0] as string;
      // args: match, ...groups, offset (a number), input, [named groups]
      const at = args.findIndex((a, i) => i > 0 && typeof a === "number");
      const groups = args.slice(1, at).map((g) => (typeof g === "string" ? g : ""));
      const replacement = rule.replace ? rule.replace(m, ...groups) : redactionMarker(rule.kind);
      if (replacement !== m) counts[rule.kind] = (counts[rule.kind] ?? 0) + 1;
      return replacement;
    });
  }
  return { text: out, counts };
}

/** Replace secret-like strings (API keys, tokens, private keys, passwords in URLs) with `[REDACTED:<kind>]` markers. */
export function redactSecrets(text: string): string {
  return redactSecretsWithReport(text).text;
}
