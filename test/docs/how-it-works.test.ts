/** docs/HOW_IT_WORKS.md's worked example is what the code does today. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { DOC, renderExample, withExample } from "./how-it-works.js";

test("docs/HOW_IT_WORKS.md: the worked example is regenerated from the code and unchanged", async () => {
  const doc = readFileSync(DOC, "utf8");
  const fresh = await withExample(doc, await renderExample());
  assert.equal(doc, fresh, "docs/HOW_IT_WORKS.md is out of date: run `npm run docs:example`");
});
