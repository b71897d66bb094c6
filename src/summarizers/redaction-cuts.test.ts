/**
 * Redaction before any cut: a secret of each kind the redactor knows, planted
 * at every offset around every bound where the LLM prompt, the extractive
 * note or the report cuts a text, never reaches them, whole or in part (no
 * run of FRAGMENT characters of it). A cut is taken from the redacted text,
 * never redacted after it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { Message } from "../model/index.js";
import { redactSecrets } from "../redact/redact.js";
import { buildUserPrompt } from "./prompt.js";
import {
  FOLLOWING_CHARS,
  OLD_INPUT_CHARS,
  OLD_RESULT_CHARS,
  OLD_TEXT_CHARS,
  OLD_THINKING_CHARS,
  THINKING_CHARS,
  TOOL_INPUT_CHARS,
  TOOL_RESULT_CHARS,
} from "./prompt.js";
import { extractiveSummary } from "./extractive/index.js";
import { COMMAND_CHARS, NOTE_CHARS } from "./extractive/collect.js";
import { ERROR_LINE_CHARS } from "./extractive/results.js";
import { boundText, TEXT_HEAD, TEXT_TAIL } from "../report/model.js";
import { leakedFragments, plant, SECRET_SAMPLES, type SecretSample } from "../../test/secret-samples.js";

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const assistant = (content: Message["content"]): Message => ({ role: "assistant", content });
const call = (id: string, input: unknown, name = "Bash"): Message =>
  assistant([{ type: "tool_use", id, name, input }]);
const result = (id: string, content: string, is_error = false): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content, ...(is_error ? { is_error } : {}) }],
});
/** Three later calls and results: what comes before them is "old" in the transcript. */
const later: Message[] = [1, 2, 3].flatMap((k) => [
  call(`l${k}`, { command: `ls ${k}` }),
  result(`l${k}`, "ok"),
]);

/** Where a surface cuts: the head cuts (from the start) and the tail cuts (from the end) of a text of size n. */
interface Surface {
  name: string;
  sizes: number[];
  bounds: (n: number) => number[];
  show: (text: string) => string;
}

const split = (max: number) => [Math.floor(max * 0.6), max - Math.floor(max * 0.6)];
/** `{"command":"` before a tool input's field in its JSON. */
const JSON_HEAD = 12;

const prompt = (messages: Message[], following?: Message[]) => buildUserPrompt({ messages, following });
const note = (messages: Message[], following?: Message[]) =>
  extractiveSummary({ messages, following, maxTokens: 300 });

const surfaces: Surface[] = [
  {
    name: "prompt: a recent tool input",
    sizes: [TOOL_INPUT_CHARS + 400, 2 * TOOL_INPUT_CHARS + 2000],
    bounds: (n) => {
      const [h, t] = split(TOOL_INPUT_CHARS);
      return [h! - JSON_HEAD, n + 2 - t!];
    },
    show: (t) => prompt([user("go"), call("c", { command: t }), result("c", "ok")]),
  },
  {
    name: "prompt: a recent tool input given as a string",
    sizes: [TOOL_INPUT_CHARS + 400],
    bounds: (n) => {
      const [h, t] = split(TOOL_INPUT_CHARS);
      return [h!, n - t!];
    },
    show: (t) => prompt([user("go"), call("c", t), result("c", "ok")]),
  },
  {
    name: "prompt: an old tool input's fields",
    sizes: [OLD_INPUT_CHARS + 300, 2000],
    bounds: () => [300, 80, OLD_INPUT_CHARS],
    show: (t) => prompt([user("go"), call("c", { command: t, description: t }), result("c", "ok"), ...later]),
  },
  {
    name: "prompt: a recent tool result",
    sizes: [TOOL_RESULT_CHARS + 400, 2 * TOOL_RESULT_CHARS + 2000],
    bounds: (n) => split(TOOL_RESULT_CHARS).map((c, i) => (i === 0 ? c : n - c)),
    show: (t) => prompt([user("go"), call("c", { command: "make" }), result("c", t)]),
  },
  {
    name: "prompt: an old tool result",
    sizes: [OLD_RESULT_CHARS + 300, 1500],
    bounds: (n) => split(OLD_RESULT_CHARS).map((c, i) => (i === 0 ? c : n - c)),
    show: (t) => prompt([user("go"), call("c", { command: "make" }), result("c", t, true), ...later]),
  },
  {
    name: "prompt: thinking, recent and old",
    sizes: [THINKING_CHARS + 300, 1500],
    bounds: (n) => [...split(THINKING_CHARS).map((c, i) => (i === 0 ? c : n - c)), OLD_THINKING_CHARS],
    show: (t) =>
      prompt([user("go"), assistant([{ type: "thinking", thinking: t, signature: "s" }]), ...later]) +
      prompt([user("go"), assistant([{ type: "thinking", thinking: t, signature: "s" }])]),
  },
  {
    name: "prompt: an old assistant text",
    sizes: [OLD_TEXT_CHARS + 300, 2500],
    bounds: (n) => split(OLD_TEXT_CHARS).map((c, i) => (i === 0 ? c : n - c)),
    show: (t) => prompt([user("go"), assistant([{ type: "text", text: t }]), ...later]),
  },
  {
    name: "prompt: the kept messages, by their end",
    sizes: [FOLLOWING_CHARS + 500],
    bounds: (n) => [n - FOLLOWING_CHARS, n - FOLLOWING_CHARS + 100],
    show: (t) => prompt([user("go"), assistant([{ type: "text", text: "done" }])], [user("next"), user(t)]),
  },
  {
    name: "note: a user's words and the last assistant text",
    sizes: [3000, 5000],
    bounds: (n) => [1200, n - 1200, 200, n - 200],
    show: (t) => note([user(t), assistant([{ type: "text", text: t }])]) + note([user("go")], [user(t)]),
  },
  {
    name: "note: a command, run and still running",
    sizes: [COMMAND_CHARS + 300, 1500],
    bounds: () => [COMMAND_CHARS, 120],
    show: (t) =>
      note([user("go"), call("c", { command: t }), result("c", "ok"), call("d", { command: t })]) +
      note([user("go"), call("q", { query: t }, "Search")]),
  },
  {
    name: "note: a work note",
    sizes: [NOTE_CHARS + 300],
    bounds: () => [NOTE_CHARS],
    show: (t) => note([user("go"), assistant([{ type: "text", text: t }]), ...later]),
  },
  {
    name: "note: an error result",
    sizes: [1024 + 500, 2500],
    bounds: () => [1024, ERROR_LINE_CHARS, 40],
    show: (t) => note([user("go"), call("c", { command: "make" }), result("c", t, true), ...later]),
  },
  {
    name: "report: a text by head and tail",
    sizes: [TEXT_HEAD + TEXT_TAIL + 300, 8000],
    bounds: (n) => [TEXT_HEAD, n - TEXT_TAIL],
    show: (t) => {
      const b = boundText(t);
      return `${b.text}\n${b.tail ?? ""}`;
    },
  },
];

test("every planted secret is redacted whole when the text is redacted whole", () => {
  for (const s of SECRET_SAMPLES) {
    const text = plant(s, 10, 200, false);
    const out = redactSecrets(text);
    assert.deepEqual(leakedFragments(out, s), [], `${s.kind}: ${out}`);
    assert.ok(out.includes(`[REDACTED:${s.kind}]`), `${s.kind}: ${out}`);
  }
});

const sample = fc.constantFrom(...SECRET_SAMPLES);
for (const surface of surfaces) {
  test(`no secret reaches the ${surface.name}, wherever it sits around a cut`, () => {
    fc.assert(
      fc.property(
        sample,
        fc.constantFrom(...surface.sizes),
        fc.nat(),
        fc.integer({ min: -24, max: 24 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.boolean(),
        (s: SecretSample, size, pick, nudge, where, lines) => {
          const bounds = surface.bounds(size + s.text.length);
          const bound = bounds[pick % bounds.length]!;
          // Anywhere from the secret's whole length before the bound to just after it.
          const at = Math.round(bound - where * (s.text.length + 2)) + nudge;
          const text = plant(s, at, size + s.text.length, lines);
          const out = surface.show(text);
          const leaked = leakedFragments(out, s);
          assert.deepEqual(
            leaked,
            [],
            `${s.kind} at ${at} of ${text.length} (bound ${bound}): ${leaked.join(", ")}`,
          );
        },
      ),
      { numRuns: 200 },
    );
  });
}
