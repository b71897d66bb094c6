/** Cline / Roo Code histories: text tool results paired with their calls, nothing invented. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { liveContext } from "../../journal/tree.js";
import type { Message, ToolResultBlock } from "../../model/index.js";
import { compactEntries } from "../../route/compact-journal.js";
import { validateSurvivalContract } from "../../contract/validate.js";
import { detectFormat, importText } from "../detect.js";

const text = (t: string) => ({ type: "text", text: t });
const env = text("<environment_details>\n# VSCode Visible Files\napp.js\n</environment_details>");
const FILE = Array.from({ length: 120 }, (_, i) => `${i + 1} | const v${i} = ${i};`).join("\n");

/** Native tool calling: tool_use blocks, results written as user text. */
const native = [
  { role: "user", content: [text("<task>\nFix the bug in app.js\n</task>"), env] },
  {
    role: "assistant",
    content: [
      text("I will read it."),
      { type: "tool_use", id: "toolu_01", name: "read_file", input: { path: "app.js" } },
    ],
  },
  { role: "user", content: [text("[read_file for 'app.js'] Result:"), text(FILE), env] },
  {
    role: "assistant",
    content: [{ type: "tool_use", id: "toolu_02", name: "execute_command", input: { command: "npm test" } }],
  },
  {
    role: "user",
    content: [
      text("[execute_command for 'npm test'] Result:"),
      text("The tool execution failed with the following error:\n<error>\nexit 1\n</error>"),
      env,
    ],
  },
  {
    role: "assistant",
    content: [{ type: "tool_use", id: "toolu_03", name: "attempt_completion", input: { result: "Fixed." } }],
  },
  { role: "user", content: [text("[attempt_completion] Result:"), text("<feedback>\nthanks\n</feedback>")] },
];

/** The classic protocol: calls as XML in the assistant's text, results as user text. */
const xml = [
  { role: "user", content: [text("<task>\nFix the bug\n</task>"), env] },
  { role: "assistant", content: [text("<read_file>\n<path>app.js</path>\n</read_file>")] },
  { role: "user", content: [text("[read_file for 'app.js'] Result:"), text(FILE), env] },
  {
    role: "assistant",
    content: [text("<attempt_completion>\n<result>Fixed.</result>\n</attempt_completion>")],
  },
  { role: "user", content: [text("[attempt_completion] Result:"), text("<feedback>\nthanks\n</feedback>")] },
];

const results = (ms: Message[]) =>
  ms.flatMap((m) => m.content.filter((b): b is ToolResultBlock => b.type === "tool_result"));

test("Cline native tool calls: each text result becomes its call's tool_result, none is invented", () => {
  const doc = JSON.stringify(native);
  assert.equal(detectFormat(doc, "api_conversation_history.json"), "anthropic");
  const { entries, report } = importText(doc, "api_conversation_history.json");
  assert.equal(report.imported + report.skipped.length, report.total);
  assert.equal(report.total, 7);
  assert.equal(report.synthetic_results, 0, "no invented abandoned result");
  assert.equal(report.in_flight_calls, 0);
  const live = liveContext(entries);
  const rs = results(live);
  assert.deepEqual(
    rs.map((r) => [r.tool_use_id, r.is_error ?? false, r.synthetic ?? false]),
    [
      ["toolu_01", false, false],
      ["toolu_02", true, false],
      ["toolu_03", false, false],
    ],
  );
  // Verbatim: the header and the result's text, joined by a newline.
  assert.equal(rs[0]!.content, `[read_file for 'app.js'] Result:\n${FILE}`);
  // The environment details stay user text after the result.
  const m3 = live.find((m) => m.content.some((b) => b.type === "tool_result"))!;
  assert.deepEqual(m3.content[1], env);
  assert.match(report.notes.join("\n"), /3 tool result\(s\) written as text/);
});

test("Cline XML tool calls: calls and results stay text, detected as anthropic, nothing abandoned", () => {
  const doc = JSON.stringify(xml);
  assert.equal(detectFormat(doc, "api_conversation_history.json"), "anthropic");
  const { entries, report } = importText(doc, "api_conversation_history.json");
  assert.equal(report.imported + report.skipped.length, report.total);
  assert.equal(report.synthetic_results, 0);
  const live = liveContext(entries);
  assert.equal(results(live).length, 0);
  assert.equal(live.filter((m) => m.content.some((b) => b.type === "tool_use")).length, 0);
  assert.equal((live[2]!.content[0] as { text: string }).text, "[read_file for 'app.js'] Result:");
});

/** `n` rounds of an instruction, one read (native tool_use or XML text) and its text result, and an answer. */
function rounds(n: number, native: boolean): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const file = `f${i}.js`;
    out.push({ role: "user", content: [text(`Round ${i}: look at ${file}`), env] });
    out.push({
      role: "assistant",
      content: native
        ? [{ type: "tool_use", id: `toolu_${i}`, name: "read_file", input: { path: file } }]
        : [text(`<read_file>\n<path>${file}</path>\n</read_file>`)],
    });
    out.push({
      role: "user",
      content: [text(`[read_file for '${file}'] Result:`), text(`${i}\n${FILE}`), env],
    });
    out.push({ role: "assistant", content: [text(`${file} is fine.`)] });
  }
  return out;
}

test("a compaction of a Cline history (native calls) validates; XML-call results are user text, kept verbatim", async () => {
  const { entries, report } = importText(JSON.stringify(rounds(6, true)), "api_conversation_history.json");
  assert.equal(report.synthetic_results, 0);
  const original = liveContext(entries);
  const outcome = await compactEntries(entries, { target: 300 });
  assert.equal(outcome.kind, "compacted", outcome.kind === "nothing" ? outcome.reason : outcome.kind);
  if (outcome.kind !== "compacted") return;
  const verdict = validateSurvivalContract(original, outcome.result.replacement, {
    path: outcome.result.path,
  });
  assert.ok(verdict.valid, verdict.reason ?? "");
  // The XML protocol's results are user text, which the contract keeps verbatim: nothing to compact, nothing invented.
  const xmlImport = importText(JSON.stringify(rounds(6, false)), "api_conversation_history.json");
  assert.equal(xmlImport.report.synthetic_results, 0);
  const xmlOutcome = await compactEntries(xmlImport.entries, { target: 300 });
  assert.equal(xmlOutcome.kind, "nothing");
});

test("Cline: a second call of one message answered 'Tool [x] was not executed' gets that text as its error result", () => {
  const doc = JSON.stringify([
    { role: "user", content: [text("<task>\nWrite two files\n</task>")] },
    {
      role: "assistant",
      content: [
        { type: "tool_use", id: "toolu_1", name: "write_to_file", input: { path: "a", content: "1" } },
        { type: "tool_use", id: "toolu_2", name: "write_to_file", input: { path: "b", content: "2" } },
      ],
    },
    {
      role: "user",
      content: [
        text("[write_to_file for 'a'] Result:"),
        text("The content was successfully saved to a."),
        text(
          "Tool [write_to_file] was not executed because a tool has already been used in this message. Only one tool may be used per message.",
        ),
        env,
      ],
    },
    { role: "assistant", content: [text("Now b.")] },
  ]);
  const { entries, report } = importText(doc, "api_conversation_history.json");
  assert.equal(report.synthetic_results, 0);
  assert.deepEqual(
    results(liveContext(entries)).map((r) => [r.tool_use_id, r.is_error ?? false]),
    [
      ["toolu_1", false],
      ["toolu_2", true],
    ],
  );
});
