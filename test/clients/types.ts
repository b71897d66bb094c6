/**
 * What every real-client module (claude-code.ts, codex.ts, pi.ts) gives the
 * runner: one verdict per corpus session tried, printed as one line.
 */
export interface ClientContext {
  /** The folder of the installed clients' node_modules/.bin (claude, codex, pi). */
  bin: string;
  /** The corpus folder (../shared/corpus). */
  corpus: string;
  /** The built CLI (dist/src/cli/main.js), run with `process.execPath`. */
  cli: string;
  /** Prints a progress line (stderr). */
  log(line: string): void;
  /** The guard's groups of checks to run (`--guard-only`, see guard.ts `GUARD_PARTS`); undefined: all. */
  guardParts?: readonly string[];
}

export interface SessionVerdict {
  client: "claude-code" | "codex" | "pi" | `pi-${string}` | "guard" | "openai";
  /** Corpus file, relative to the corpus folder. */
  session: string;
  /** What was checked, e.g. "fork A->B", "own /compact + audit". */
  check: string;
  ok: boolean;
  /** Not run, for a reason outside the project (e.g. the registry cannot be reached): neither pass nor failure. */
  skipped?: boolean;
  /** One line: what was seen (e.g. "validate ok; B = replacement + 1 system reminder + prompt"). */
  detail: string;
}

export type ClientModule = (ctx: ClientContext) => Promise<SessionVerdict[]>;
