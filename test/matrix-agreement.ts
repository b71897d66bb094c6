/**
 * The survival-contract matrix checks that run on every matrix: the project's own
 * (src/contract/contract.test.ts) and the peer matrix in ../shared (src/contract/corpus.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  loadMatrix,
  runMatrix,
  validateLastRoundCoverage,
  validateSurvivalContract,
} from "../src/contract/index.js";
import { repoRoot } from "./support.js";

/** Registers the two agreement tests of the matrix `file`, which must hold at least `minCases` cases. */
export function matrixAgreementTests(name: string, file: string, minCases: number): void {
  test(`TypeScript validators agree with every case of the ${name}`, () => {
    const outcomes = runMatrix(loadMatrix(file));
    const bad = outcomes
      .filter((o) => !o.agrees)
      .map(
        (o) =>
          `${o.id}: expected ${o.expect}, got ${o.got} (${o.reason}) ${JSON.stringify(o.roundStartMismatch ?? "")}`,
      );
    assert.deepEqual(bad, []);
    assert.ok(outcomes.length >= minCases, `only ${outcomes.length} cases`);
  });

  test(`the independent .mjs validator agrees case by case with the TypeScript one on the ${name}`, async () => {
    const mjs = await import(
      pathToFileURL(join(repoRoot, "contract", "validate_survival_contract.mjs")).href
    );
    const m = loadMatrix(file);
    for (const c of m.cases) {
      const ts = validateSurvivalContract(c.original, c.replacement, { anchors: c.anchors, path: c.path });
      const js = mjs.validateSurvivalContract(c.original, c.replacement, {
        anchors: c.anchors,
        path: c.path,
      });
      assert.equal(ts.valid, js.valid, `${c.id}: ts=${ts.reason} mjs=${js.reason}`);
      const tsCov = validateLastRoundCoverage(c.original, c.replacement);
      const jsCov = mjs.validateLastRoundCoverage(c.original, c.replacement);
      assert.equal(tsCov.valid, jsCov.valid, `${c.id} (coverage): ts=${tsCov.reason} mjs=${jsCov.reason}`);
    }
  });
}
