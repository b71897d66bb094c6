/**
 * A line that quotes a text cut short (the contract's reasons, `quote` in
 * contract/validate.ts) is redacted before the cut: a secret of each kind,
 * cut at every place in it, never reaches the line, whole or in part (no run
 * of FRAGMENT characters of it), whether the line's source text is known or
 * not.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { quote } from "../contract/validate.js";
import { redactSecrets } from "./redact.js";
import { dropCutWords, redactQuotedLine, redactQuotedValue } from "./quoted.js";
import { leakedFragments, SECRET_SAMPLES } from "../../test/secret-samples.js";

/** The sample's text after `lead` characters, so that `quote(text, max)` cuts `k` characters into the sample. */
function cutInto(sampleText: string, k: number, max: number): string {
  return `${"a".repeat(max - k - 1)} ${sampleText} and more words after it`;
}

const reasonOf = (source: string, max: number) =>
  `last round: user text ${quote(source, max)} missing (message 3 from the end)`;

test("a secret the quotation cuts, at every place, is not in the redacted line (source known or not)", () => {
  let leakedBefore = 0;
  for (const s of SECRET_SAMPLES)
    for (const max of [60, 40])
      for (let k = 1; k <= max - 2; k++) {
        const source = cutInto(s.text, k, max);
        const line = reasonOf(source, max);
        if (leakedFragments(redactSecrets(line), s).length > 0) leakedBefore++;
        const known = redactQuotedLine(line, ["unrelated text", source]);
        const unknown = redactQuotedLine(line);
        assert.deepEqual(leakedFragments(known, s), [], `${s.kind}, cut ${k} into it (source known)`);
        assert.deepEqual(leakedFragments(unknown, s), [], `${s.kind}, cut ${k} into it (source unknown)`);
        // Known: quoted again from the source redacted whole, cut to the same length (then the line redacted).
        const again = redactSecrets(source).replace(/\s+/g, " ").trim();
        const wasCut = source.replace(/\s+/g, " ").trim().length > max;
        const requoted = wasCut && again.length > max ? `${again.slice(0, max)}…` : again;
        assert.equal(
          known,
          redactSecrets(`last round: user text ${JSON.stringify(requoted)} missing (message 3 from the end)`),
        );
        assert.match(unknown, /^last round: user text ".*" missing \(message 3 from the end\)$/);
      }
  // The defect this guards against: redacting the line after the cut let parts of secrets through.
  assert.ok(leakedBefore > 0, "redaction after the cut leaks for some kind and cut");
});

test("whole quotations and the text around them are redacted; a line without quotations is redactSecrets", () => {
  for (const s of SECRET_SAMPLES) {
    const line = `guard: note ${s.text} and ${JSON.stringify(s.text)}`;
    assert.deepEqual(leakedFragments(redactQuotedLine(line), s), [], s.kind);
  }
  const plain = "guard: compaction in s-1 (pi, openai-chat, 12 → 3 messages): kept the contract";
  assert.equal(redactQuotedLine(plain), plain);
  assert.equal(redactQuotedLine(plain), redactSecrets(plain));
  // An error quoting a cut piece of a body (not JSON-escaped): the word the cut falls in is left out.
  const key = SECRET_SAMPLES.find((s) => s.kind === "anthropic-api-key")!;
  const err = `Unexpected token 'x', "{"k": "${key.text.slice(0, 30)}"... is not valid JSON`;
  assert.deepEqual(leakedFragments(redactQuotedLine(err), key), []);
  assert.equal(dropCutWords("keep these words sk-ant-api03-aB3dE5…"), "keep these words …");
  assert.equal(dropCutWords("…5gH7jK9mN1 the rest"), "… the rest");
});

test("redactQuotedValue: every string of a log object, keys and other values as they are", () => {
  const key = SECRET_SAMPLES.find((s) => s.kind === "github-token")!;
  const source = cutInto(key.text, 10, 60);
  const v = {
    event: "verdict",
    kept: false,
    n: 3,
    reason: reasonOf(source, 60),
    nested: [null, `see ${key.text}`],
  };
  const out = redactQuotedValue(v, [source]);
  assert.deepEqual(leakedFragments(JSON.stringify(out), key), []);
  assert.equal(out.event, "verdict");
  assert.equal(out.kept, false);
  assert.equal(out.n, 3);
  assert.equal(out.nested[0], null);
  assert.match(out.nested[1]!, /^see \[REDACTED:/);
});
