/**
 * Printing: human text or `--json`, colour (never when NO_COLOR is set or the
 * stream is not a TTY), and a progress bar on stderr for long work.
 *
 * Everything a command prints for a reader goes through `out`, `err` or
 * `printJson`, and they are where it is made safe to show, whatever the
 * command: session text in it is redacted (`redactSecrets`, the rules that
 * compaction applies to what it writes) and its control characters are
 * shown, not acted on (`showControls`: an ESC or a bidi override in a
 * session never reaches the terminal as such). `--json` output is redacted
 * string by string (the JSON stays valid; its C0 controls are JSON escapes
 * already, and the bidi controls are written as `\uXXXX` escapes too).
 *
 * What a command writes as data is not display and is written as it is:
 * the request body of `export`, the pinned anchors (`anchor show`, its
 * `--json` too: checkpoints restate them verbatim), and
 * the sessions and journals that `import`, `compact --out` and `--fork`
 * write to files. They are the user's own data, byte for byte (`writeData`).
 */
import type { WriteStream } from "node:tty";
import { redactSecrets } from "../redact/redact.js";
import { mapStrings, showControls } from "../report/visible.js";

type Stream = NodeJS.WriteStream | WriteStream;

/**
 * A reader that stops early (`compact-safe export F | head`) closes the pipe:
 * the rest of the output is not wanted, which is not an error. Without a
 * listener Node would crash with a stack trace on the next write; with this
 * one the command finishes its work and exits with its own code.
 */
export function ignoreClosedPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EPIPE" || e.code === "ERR_STREAM_DESTROYED") return;
      throw e;
    });
  }
}

/** Colour is used only on a TTY, when NO_COLOR is unset (or empty) and TERM is not `dumb`. */
export function colorEnabled(stream: Stream = process.stdout): boolean {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "") return false;
  if (process.env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

/**
 * Colour is written as a stand-in (a noncharacter, the code, another) that
 * `shown` turns into the escape sequence after the line's own controls are
 * made visible: a colour is the one escape sequence a printed line holds.
 */
const SGR_OPEN = "\ufdd0";
const SGR_CLOSE = "\ufdd1";
const SGR = /\ufdd0([0-9]{1,2})\ufdd1/g;

function sgr(open: number, close: number) {
  return (text: string, stream: Stream = process.stdout): string =>
    colorEnabled(stream) ? `${SGR_OPEN}${open}${SGR_CLOSE}${text}${SGR_OPEN}${close}${SGR_CLOSE}` : text;
}

/** A line as printed: redacted, its controls made visible, then its colours written. */
export function shown(line: string): string {
  const safe = showControls(redactSecrets(line));
  return safe.includes(SGR_OPEN) ? safe.replace(SGR, "\u001b[$1m") : safe;
}

/** The bidi controls, which JSON.stringify writes as they are. */
const JSON_BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A value as `--json` prints it: every string redacted (`redact` false: data, as it is), the bidi controls written as escapes. */
export function shownJson(value: unknown, redact = true): string {
  return (JSON.stringify(redact ? mapStrings(value, redactSecrets) : value, null, 2) ?? "null").replace(
    JSON_BIDI,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

export const style = {
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  cyan: sgr(36, 39),
};

/** Writes a line to stdout, as shown (`shown`: redacted, controls visible). */
export function out(line = ""): void {
  process.stdout.write(`${shown(line)}\n`);
}

/** Writes a line to stderr, as shown (`shown`). */
export function err(line: string): void {
  process.stderr.write(`${shown(line)}\n`);
}

/** Prints a value as pretty JSON on stdout (the `--json` output of every command), as shown (`shownJson`). */
export function printJson(value: unknown): void {
  process.stdout.write(`${shownJson(value)}\n`);
}

/** Prints data as pretty JSON (the pinned anchors, which checkpoints restate verbatim): not redacted, bidi escaped. */
export function printJsonData(value: unknown): void {
  process.stdout.write(`${shownJson(value, false)}\n`);
}

/** Writes data on stdout as it is (a request body, an anchor file): the user's own bytes, not display. */
export function writeData(text: string): void {
  process.stdout.write(text);
}

/** `label: value` lines with the labels padded to one width. */
export function table(rows: readonly (readonly [string, string])[], indent = "  "): string[] {
  const width = Math.max(0, ...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${indent}${k.padEnd(width)}  ${v}`);
}

/** A number with thousands separators (`12,345`). */
export function num(n: number): string {
  return n.toLocaleString("en-US");
}

export interface Progress {
  /** Moves to step `done` of `total`, with a label for the current step. */
  step(label: string): void;
  /** Clears the bar. */
  done(): void;
}

const NO_PROGRESS: Progress = { step: () => undefined, done: () => undefined };

/**
 * A progress bar over the phases of a long command (reading, importing,
 * compacting, validating, writing), drawn on stderr. It is drawn only when
 * stderr is a TTY, `--json` is off and `show` is true (large inputs), so
 * pipes, logs and tests never see it.
 */
export function progress(total: number, options: { json: boolean; show: boolean }): Progress {
  const stream = process.stderr;
  if (options.json || !options.show || stream.isTTY !== true) return NO_PROGRESS;
  let n = 0;
  const width = 24;
  const draw = (label: string) => {
    const filled = Math.round((Math.min(n, total) / total) * width);
    const bar = `${"#".repeat(filled)}${"-".repeat(width - filled)}`;
    stream.write(`\r\u001b[2K[${bar}] ${Math.min(n, total)}/${total} ${label}`);
  };
  return {
    step(label: string) {
      n++;
      draw(label);
    },
    done() {
      stream.write("\r\u001b[2K");
    },
  };
}

/** Files at least this large get a progress bar (when stderr is a TTY). */
export const PROGRESS_MIN_BYTES = 1 << 20;
