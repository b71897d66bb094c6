/**
 * `oneLine`, the core's error messages as its notes carry them: redacted
 * before the cut at 200 characters, so that a secret the cut falls in is
 * not let through in part.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { oneLine } from "./context.js";
import { leakedFragments, SECRET_SAMPLES } from "../../test/secret-samples.js";

test("an error's message: on one line, no part of a secret the 200-character cut falls in", () => {
  for (const s of SECRET_SAMPLES)
    for (const k of [1, 6, 13, 40]) {
      const message = `cannot read the body:\n${"x".repeat(200 - k - 23)} ${s.text} and the rest`;
      const line = oneLine(new Error(message));
      assert.ok(!line.includes("\n"));
      assert.ok(line.length <= 201, `${line.length}`);
      assert.match(line, /^cannot read the body: x+/);
      assert.deepEqual(leakedFragments(line, s), [], `${s.kind}, cut ${k} into it`);
    }
  assert.equal(oneLine("short\n  message"), "short message");
});
