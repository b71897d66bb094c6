/**
 * Session text made visible and inert for display (the report page, the
 * terminal): the characters that a terminal or a browser acts on rather than
 * shows are replaced by a visible stand-in. C0 controls (ESC, BEL, a lone
 * carriage return, …) and DEL become their Control Pictures (`␛`, `␇`, `␍`,
 * `␡`); C1 controls (U+0080–U+009F, where U+009B opens a terminal sequence
 * as ESC [ does) and the bidirectional controls that reorder what is shown
 * (U+202A–U+202E embeddings and overrides, U+2066–U+2069 isolates, and the
 * marks U+200E, U+200F, U+061C) become `\uXXXX`. Tab and line feed are kept
 * (a CR LF pair reads as a line feed). Pure; linear in the text.
 */

// eslint-disable-next-line no-control-regex
const ACTIVE = /\r\n|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Whether `s` holds a character that `showControls` replaces (a quick test, no copy). */
export function hasActiveControls(s: string): boolean {
  ACTIVE.lastIndex = 0;
  return ACTIVE.test(s);
}

/** `s` with its controls shown, not acted on (see the module's comment). */
export function showControls(s: string): string {
  ACTIVE.lastIndex = 0;
  if (!ACTIVE.test(s)) return s;
  return s.replace(ACTIVE, (c) => {
    if (c === "\r\n") return "\n";
    const n = c.charCodeAt(0);
    if (n < 0x20) return String.fromCharCode(0x2400 + n);
    if (n === 0x7f) return "\u2421";
    return `\\u${n.toString(16).toUpperCase().padStart(4, "0")}`;
  });
}

/** A deep copy of a JSON-like value with `f` applied to every string (keys too); the same value when none changes. */
export function mapStrings<T>(value: T, f: (s: string) => string): T {
  if (typeof value === "string") return f(value) as T;
  if (value === null || typeof value !== "object") return value;
  // A value that says how it is written as JSON (a Date) is mapped as written.
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") return mapStrings(toJSON.call(value) as unknown, f) as T;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v: unknown) => {
      const r = mapStrings(v, f);
      if (r !== v) changed = true;
      return r;
    });
    return (changed ? out : value) as T;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const key = f(k);
    const r = mapStrings(v, f);
    if (r !== v || key !== k) changed = true;
    out[key] = r;
  }
  return (changed ? out : value) as T;
}
