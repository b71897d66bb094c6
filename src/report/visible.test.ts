/* eslint-disable no-control-regex -- the tests look for control characters */
/** Session text shown, never acted on: controls and bidi characters as visible stand-ins, in the page too. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../model/index.js";
import { linearJournal } from "../../test/support.js";
import { mapStrings, showControls } from "./visible.js";
import { renderReportHtml, reportEntries } from "./index.js";

test("showControls: ESC, BEL, CR, DEL, C1 and the bidi controls become visible; text, tab and line feed stay", () => {
  const table: [string, string][] = [
    ["plain text, tab\tand\nline feed", "plain text, tab\tand\nline feed"],
    ["\u001b[2J\u001b]0;title\u0007", "␛[2J␛]0;title␇"],
    ["a\r\nb\rc", "a\nb␍c"],
    ["\u0000\u007f\u009b", "␀␡\\u009B"],
    ["abc\u202edcba", "abc\\u202Edcba"],
    [
      "\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
      "\\u202A\\u202B\\u202C\\u202D\\u2066\\u2067\\u2068\\u2069\\u200E\\u200F\\u061C",
    ],
    ["émoji 🎉 and 中文", "émoji 🎉 and 中文"],
  ];
  for (const [input, shown] of table) assert.equal(showControls(input), shown, JSON.stringify(input));
  const same = { a: ["x", { b: "y" }] };
  assert.equal(mapStrings(same, showControls), same, "nothing to change: the same object");
  assert.deepEqual(mapStrings({ "k\u202e": ["\u001b"] }, showControls), { "k\\u202E": ["␛"] });
});

test("the report page shows the session's bidi overrides and ESC as visible stand-ins, never as they are", async () => {
  const hostile = "rm -rf \u202e/ emor\u202c \u001b]0;pwned\u0007\u001b[2J\u2066isolate\u2069";
  const messages: Message[] = [
    { role: "user", content: [{ type: "text", text: `first ${hostile}` }] },
    { role: "assistant", content: [{ type: "text", text: `done ${hostile} ${"word ".repeat(2000)}` }] },
    { role: "user", content: [{ type: "text", text: `next ${hostile}` }] },
    { role: "assistant", content: [{ type: "text", text: "ok" }] },
  ];
  const model = await reportEntries(linearJournal(messages), {
    source: { file: `s\u202eession.jsonl`, format: "journal", bytes: 1 },
    window: 1,
  });
  const html = renderReportHtml(model);
  assert.ok(
    !/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(html),
    "a control as is",
  );
  assert.ok(html.includes("\\\\u202E/ emor"), "the override shown as an escape");
  assert.ok(html.includes("␛]0;pwned␇␛[2J"), "ESC and BEL shown as pictures");
  assert.ok(html.includes("<title>compact-safe report: s\\u202Eession.jsonl</title>"));
});
