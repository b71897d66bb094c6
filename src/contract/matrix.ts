/** Loading and running a survival-contract fixture matrix (schema version 2). */
import { readFileSync } from "node:fs";
import type { CompactionPath, Message } from "../model/types.js";
import { ModelError, parseMessages } from "../model/schema.js";
import { JsonDepthError, parseJsonLimited } from "../model/depth.js";
import { validateLastRoundCoverage, validateSurvivalContract } from "./validate.js";
import { currentRoundStart } from "./rounds.js";
import { CompactSafeError } from "../model/errors.js";
import { CONSTANTS } from "../model/constants.js";

export interface MatrixCase {
  id: string;
  expect: "pass" | "fail";
  anchors?: string;
  last_round_start?: number;
  path?: CompactionPath;
  original: Message[];
  replacement: Message[];
}

/**
 * The contract's numbers a matrix may carry in its header, for validators that do not share the
 * library's code (`contract/validate_survival_contract.mjs` reads them from there).
 */
export interface MatrixConstants {
  protected_exchanges?: number;
  result_bound_bytes?: number;
}

/** The header this build writes and enforces: its own `CONSTANTS`. */
export const MATRIX_CONSTANTS: Readonly<Required<MatrixConstants>> = Object.freeze({
  protected_exchanges: CONSTANTS.protectedExchanges,
  result_bound_bytes: CONSTANTS.resultBoundBytes,
});

export interface Matrix {
  schema_version: number;
  constants?: MatrixConstants;
  cases: MatrixCase[];
}

/** A header's numbers must be the ones this build enforces: a matrix for other rules is refused, not misjudged. */
function checkConstants(c: unknown, file: string): void {
  if (c === null || typeof c !== "object" || Array.isArray(c))
    throw new MatrixError(`${file}: constants: expected an object`);
  for (const [k, v] of Object.entries(c)) {
    if (!(k in MATRIX_CONSTANTS))
      throw new MatrixError(
        `${file}: constants.${k}: unknown (known: ${Object.keys(MATRIX_CONSTANTS).join(", ")})`,
      );
    const own = MATRIX_CONSTANTS[k as keyof MatrixConstants];
    if (v !== own)
      throw new MatrixError(
        `${file}: constants.${k}: ${JSON.stringify(v)}, but this compact-safe enforces ${own}; use the validator of those rules`,
      );
  }
}

export class MatrixError extends CompactSafeError {
  constructor(message: string) {
    super("invalid_matrix", message);
    this.name = "MatrixError";
  }
}

/** Parses a matrix; throws MatrixError naming the file and the JSON path. */
export function parseMatrix(text: string, file: string): Matrix {
  let data: unknown;
  try {
    data = parseJsonLimited(text);
  } catch (e) {
    if (e instanceof JsonDepthError)
      throw new MatrixError(`${file}:${e.line}: JSON nested deeper than ${e.limit} levels (the limit)`);
    throw new MatrixError(`${file}: not JSON (${(e as Error).message})`);
  }
  const d = data as Partial<Matrix>;
  if (d === null || typeof d !== "object" || Array.isArray(d))
    throw new MatrixError(`${file}: expected an object { schema_version, cases }`);
  if (d.schema_version !== CONSTANTS.schemaVersion)
    throw new MatrixError(
      `${file}: schema_version: expected ${CONSTANTS.schemaVersion}, got ${JSON.stringify(d.schema_version)}`,
    );
  if (d.constants !== undefined) checkConstants(d.constants, file);
  if (!Array.isArray(d.cases)) throw new MatrixError(`${file}: cases: expected an array`);
  const ids = new Set<string>();
  d.cases.forEach((c, i) => {
    const at = `cases[${i}]`;
    if (c === null || typeof c !== "object") throw new MatrixError(`${file}: ${at}: expected an object`);
    if (typeof c.id !== "string") throw new MatrixError(`${file}: ${at}: missing "id"`);
    if (ids.has(c.id)) throw new MatrixError(`${file}: ${at}: duplicate id ${JSON.stringify(c.id)}`);
    ids.add(c.id);
    if (c.expect !== "pass" && c.expect !== "fail")
      throw new MatrixError(`${file}: ${at}.expect: expected "pass" or "fail"`);
    if (c.anchors !== undefined && typeof c.anchors !== "string")
      throw new MatrixError(`${file}: ${at}.anchors: expected a string`);
    if (c.path !== undefined && c.path !== "summary" && c.path !== "prune-only") {
      throw new MatrixError(`${file}: ${at}.path: expected "summary" or "prune-only"`);
    }
    if (c.last_round_start !== undefined && !Number.isInteger(c.last_round_start)) {
      throw new MatrixError(`${file}: ${at}.last_round_start: expected an integer`);
    }
    try {
      parseMessages(c.original, `${at}.original`);
      parseMessages(c.replacement, `${at}.replacement`);
    } catch (e) {
      if (e instanceof ModelError) throw new MatrixError(`${file}: ${e.message}`);
      throw e;
    }
  });
  return d as Matrix;
}

export function loadMatrix(file: string): Matrix {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new MatrixError(
      `${file}: cannot read matrix (${code === "ENOENT" ? "no such file" : (e as Error).message})`,
    );
  }
  return parseMatrix(text, file);
}

export interface CaseOutcome {
  id: string;
  expect: "pass" | "fail";
  got: "pass" | "fail";
  reason: string | null;
  /** Set when the computed current-round start differs from the case's `last_round_start`. */
  roundStartMismatch?: { expected: number; computed: number };
  agrees: boolean;
  /** Why the case disagrees (one line), when it does. */
  problem?: string;
}

/**
 * The verdict on one case, as the independent `.mjs` validator gives it: the
 * contract's verdict against `expect` (the coverage check must not pass a
 * case the whole contract lets through), and the computed round start
 * against `last_round_start` when the case gives one. The one runner: the
 * CLI's `validate --matrix` prints what this returns.
 */
export function runMatrixCase(c: MatrixCase): CaseOutcome {
  const r = validateSurvivalContract(c.original, c.replacement, {
    anchors: c.anchors,
    path: c.path ?? "summary",
  });
  const got = r.valid ? "pass" : "fail";
  const outcome: CaseOutcome = {
    id: c.id,
    expect: c.expect,
    got,
    reason: r.reason,
    agrees: got === c.expect,
  };
  const coverage = validateLastRoundCoverage(c.original, c.replacement);
  if (!coverage.valid && r.valid) {
    outcome.agrees = false;
    outcome.problem = `coverage failed (${coverage.reason}) but the contract passed`;
    return outcome;
  }
  if (!outcome.agrees)
    outcome.problem = `expected ${c.expect}, got ${got} (${r.reason ?? "no violation found"})`;
  else if (c.last_round_start !== undefined) {
    const computed = currentRoundStart(c.original);
    if (computed !== c.last_round_start) {
      outcome.roundStartMismatch = { expected: c.last_round_start, computed };
      outcome.agrees = false;
      outcome.problem = `expected last_round_start ${c.last_round_start}, got ${computed}`;
    }
  }
  return outcome;
}

export function runMatrix(m: Matrix): CaseOutcome[] {
  return m.cases.map(runMatrixCase);
}
