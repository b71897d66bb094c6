/**
 * Redacting a line that quotes texts cut short. The survival contract's
 * reasons quote a lost text flattened onto one line and cut (`quote` in
 * contract/validate.ts: `"the first 60 characters…"`), and an error message
 * may quote a piece of what it could not read. A secret that such a cut
 * splits no longer matches its rule, so redacting the line afterwards lets
 * the half before the cut through. `redactQuotedLine` redacts before the cut:
 *
 * - a quoted text (a JSON string) that one of `sources` gives (the source
 *   flattened as `quote` flattens it, equal to the quoted text or, for a cut
 *   one, starting with it) is quoted again from the source redacted whole,
 *   then flattened and cut to the same length;
 * - any other text cut short loses the word the cut fell in (the run of
 *   non-space characters touching the `…` or `...`): a secret holds no
 *   space, so the part of one a cut split lies in that word. A quoted text
 *   is then redacted as a whole (decoded, so that a JSON `"password": "…"`
 *   inside it is seen as written);
 * - last, the whole line is redacted.
 */
import { redactSecrets, safeHead } from "./redact.js";

/** A JSON string literal on one line. */
const LITERAL = /"(?:[^"\\\n]|\\.)*"/g;
/** A word that a cut (`…` or `...`) touches, on either side. */
const CUT_WORD = /\S*(?:…|\.\.\.)\S*/g;

const flatten = (s: string) => s.replace(/\s+/g, " ").trim();

/** `text` without the words a cut touches (each becomes `…`). */
export function dropCutWords(text: string): string {
  return text.replace(CUT_WORD, "…");
}

/** A quoted text again, from the source it was taken from when one of `flats` gives it (see the module comment). */
function requoted(s: string, sources: readonly string[], flats: readonly string[]): string | undefined {
  const cut = s.endsWith("…");
  const head = cut ? s.slice(0, -1) : s;
  for (let i = 0; i < sources.length; i++) {
    const flat = flats[i]!;
    if (cut ? flat.length > head.length && flat.startsWith(head) : flat === head) {
      const redacted = flatten(redactSecrets(sources[i]!));
      return JSON.stringify(
        cut && redacted.length > head.length ? `${safeHead(redacted, head.length)}…` : redacted,
      );
    }
  }
  return undefined;
}

/**
 * `line` redacted so that no part of a secret survives a cut in it (see the
 * module comment); `sources`: the whole texts its quotations may be taken from.
 */
export function redactQuotedLine(line: string, sources: readonly string[] = []): string {
  const flats = sources.map(flatten);
  let out = "";
  let last = 0;
  for (const m of line.matchAll(LITERAL)) {
    let decoded: string;
    try {
      decoded = JSON.parse(m[0]) as string;
    } catch {
      continue; // not a JSON string: handled with the text around it
    }
    out += dropCutWords(line.slice(last, m.index));
    out +=
      requoted(decoded, sources, flats) ??
      JSON.stringify(
        redactSecrets(decoded.includes("…") || decoded.includes("...") ? dropCutWords(decoded) : decoded),
      );
    last = m.index + m[0].length;
  }
  out += dropCutWords(line.slice(last));
  return redactSecrets(out);
}

/**
 * A deep copy of a JSON-like value for a log line: every string through
 * `redactQuotedLine` with `sources`. For the short strings a log line is
 * made of (reasons, notes, messages); whole texts are for `redactValue`.
 */
export function redactQuotedValue<T>(value: T, sources: readonly string[] = []): T {
  if (typeof value === "string") return redactQuotedLine(value, sources) as T;
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v: unknown) => redactQuotedValue(v, sources)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>))
    out[k] = redactQuotedValue(v, sources);
  return out as T;
}
