/**
 * Nesting limits for JSON input, checked before anything recursive sees a value.
 *
 * JSON text (a file, a JSONL line, a tool call's `arguments` string) is
 * scanned for its nesting depth before `JSON.parse`: the scan is linear,
 * iterative and string-aware, so a hostile `[[[[…` is refused with its line
 * and column instead of reaching a recursive walk (`JSON.stringify`, the
 * token estimate, the validators) and overflowing the stack.
 *
 * Depth counts containers: `1` is 0 levels, `[]` and `{}` 1, `{"a":[1]}` 2.
 * The real sessions of the corpus nest at most 9 levels.
 */
import { CompactSafeError } from "./errors.js";
import { CONSTANTS } from "./constants.js";

/** The deepest nesting accepted in any JSON text read (a file, a line): 512 levels. */
export const MAX_JSON_DEPTH = CONSTANTS.maxJsonDepth;

/**
 * The deepest nesting accepted in one message, counted from the message
 * object itself: 256 levels. A message that passes fits, with its wrapping
 * (journal entry, compaction replacement, session-format line), well within
 * `MAX_JSON_DEPTH`, so whatever is written can be read back.
 */
export const MAX_MESSAGE_DEPTH = CONSTANTS.maxMessageDepth;

/**
 * Index in `text` of the bracket that opens nesting level `limit + 1`, or -1
 * when the text nests at most `limit` levels. Brackets inside strings are not
 * counted. Works on any text (on invalid JSON it is an upper bound of what
 * `JSON.parse` could build, which is all that matters: such text fails to
 * parse anyway).
 */
export function tooDeepAt(text: string, limit: number = MAX_JSON_DEPTH): number {
  // Reaching level limit + 1 takes at least limit + 1 characters.
  if (text.length <= limit) return -1;
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Skip the string: the next quote not escaped by an odd run of backslashes.
      let j = i;
      for (;;) {
        j = text.indexOf('"', j + 1);
        if (j < 0) return -1; // unterminated string: nothing more is nested
        let k = j - 1;
        while (text.charCodeAt(k) === 0x5c /* \ */) k--;
        if ((j - 1 - k) % 2 === 0) break;
      }
      i = j;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > limit) return i;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return -1;
}

/** JSON text nested deeper than the limit; `line` and `column` (1-based) locate the bracket that crosses it. */
export class JsonDepthError extends CompactSafeError {
  readonly line: number;
  readonly column: number;
  readonly limit: number;
  constructor(line: number, column: number, limit: number) {
    super(
      "json_too_deep",
      `JSON nested deeper than ${limit} levels (the limit), at line ${line}, column ${column}`,
    );
    this.name = "JsonDepthError";
    this.line = line;
    this.column = column;
    this.limit = limit;
  }
}

/** The depth error of a text, or undefined when it nests at most `limit` levels. */
export function jsonDepthError(text: string, limit: number = MAX_JSON_DEPTH): JsonDepthError | undefined {
  const at = tooDeepAt(text, limit);
  if (at < 0) return undefined;
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i >= 0 && i < at; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return new JsonDepthError(line, at - lineStart + 1, limit);
}

/**
 * `JSON.parse` with the nesting limit checked first: throws a
 * `JsonDepthError` for text nested deeper than `limit`, and JSON.parse's own
 * `SyntaxError` for invalid JSON.
 */
export function parseJsonLimited(text: string, limit: number = MAX_JSON_DEPTH): unknown {
  const deep = jsonDepthError(text, limit);
  if (deep) throw deep;
  return JSON.parse(text) as unknown;
}
