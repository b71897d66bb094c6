/** What every command prints: redacted, controls visible, colours its own; `--json` redacted string by string. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { shown, shownJson, style } from "./output.js";

const key = ["sk-proj-", "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z"].join("");

test("shown: a printed line is redacted and its controls are visible", () => {
  assert.equal(shown(`key ${key} \u001b[2J \u202eabc`), "key [REDACTED:openai-api-key] ␛[2J \\u202Eabc");
  assert.equal(shown("plain"), "plain");
});

test("shown: the command's own colours are written, a session's escape sequences are not", () => {
  const prev = { NO_COLOR: process.env.NO_COLOR, TERM: process.env.TERM };
  delete process.env.NO_COLOR;
  process.env.TERM = "xterm";
  try {
    const tty = { isTTY: true } as unknown as NodeJS.WriteStream;
    const line = shown(`${style.red("VIOLATION", tty)}: lost "\u001b[31mfake\u001b[0m"`);
    assert.equal(line, `\u001b[31mVIOLATION\u001b[39m: lost "␛[31mfake␛[0m"`);
  } finally {
    for (const [k, v] of Object.entries(prev))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
});

test("shownJson: every string redacted (keys too), valid JSON, bidi controls as escapes that read back", () => {
  const value = { text: `use ${key}`, nested: [{ [key]: "\u202eabc" }], n: 1, ok: true, none: null };
  const json = shownJson(value);
  assert.ok(!json.includes(key), json);
  // eslint-disable-next-line no-control-regex
  assert.ok(!/[\u202a-\u202e\u001b]/.test(json), json);
  assert.deepEqual(JSON.parse(json), {
    text: "use [REDACTED:openai-api-key]",
    nested: [{ "[REDACTED:openai-api-key]": "\u202eabc" }],
    n: 1,
    ok: true,
    none: null,
  });
});
