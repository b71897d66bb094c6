/**
 * Printing: human text or `--json`, colour (never when NO_COLOR is set or the
 * stream is not a TTY), and a progress bar on stderr for long work.
 */
import type { WriteStream } from "node:tty";

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

function sgr(open: number, close: number) {
  return (text: string, stream: Stream = process.stdout): string =>
    colorEnabled(stream) ? `\u001b[${open}m${text}\u001b[${close}m` : text;
}

export const style = {
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  cyan: sgr(36, 39),
};

/** Writes a line to stdout. */
export function out(line = ""): void {
  process.stdout.write(`${line}\n`);
}

/** Writes a line to stderr. */
export function err(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Prints a value as pretty JSON on stdout (the `--json` output of every command). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
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
