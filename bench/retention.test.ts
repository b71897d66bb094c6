/** Fact retention is measured over what the note summarized: a fact kept word for word in the recent tail is not missed. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../src/model/index.js";
import { compactMessagesSafe } from "../src/engine/compact.js";
import { estimateTokens } from "../src/engine/tokens.js";
import { measureRetention } from "./retention.js";

const edit = (i: number): Message[] => [
  {
    role: "assistant",
    content: [
      { type: "text", text: `Editing step ${i}: ${"the reason for this edit. ".repeat(12)}` },
      {
        type: "tool_use",
        id: `e${i}`,
        name: "Edit",
        input: { file_path: `src/file${i}.ts`, old_string: "a", new_string: "b" },
      },
    ],
  },
  { role: "user", content: [{ type: "tool_result", tool_use_id: `e${i}`, content: "ok" }] },
];

test("retention: the span is what the note summarized, not the recent tail kept verbatim", async () => {
  const history: Message[] = [
    { role: "user", content: [{ type: "text", text: "Rename the option in every file." }] },
    ...Array.from({ length: 40 }, (_, i) => edit(i)).flat(),
  ];
  const summarizer = {
    name: "s",
    model: "s",
    // A note that names no file: every path of the summarized span is missed, none of the tail's.
    summarize: async () => ({ text: "## Objective\nRename the option.\n## Next step\nGo on.", model: "s" }),
  };
  const r = await compactMessagesSafe(history, {
    summarizer,
    target: Math.floor(estimateTokens(history) * 0.6),
  });
  assert.ok(r.ok && r.path === "summary");
  const kept = r.replacement.length - r.replacement.indexOf(r.checkpoint!) - 1;
  assert.ok(kept > 5, `a recent tail was kept (${kept} messages)`);
  const ret = measureRetention(history, r.replacement, r.checkpoint);
  assert.equal(ret.span_messages, history.length - kept);
  const summarized = (ret.span_messages - 1) / 2; // the request, then whole exchanges
  assert.equal(ret.paths.total, summarized);
  assert.equal(ret.paths.found, 0);
  assert.ok(ret.paths.missed.every((p) => Number(/\d+/.exec(p)![0]) < summarized));
});

test("retention: a user message counts by the user's own words; what the harness wrote in a user turn is not counted", () => {
  const said = "Keep the old option as an alias until the next major version.";
  const original: Message[] = [
    {
      role: "user",
      content: [{ type: "text", text: "<environment_context>\n<cwd>/repo</cwd>\n</environment_context>" }],
    },
    {
      role: "user",
      content: [
        { type: "text", text: "<system-reminder>The date is today.</system-reminder>" },
        { type: "text", text: said },
      ],
    },
    { role: "assistant", content: [{ type: "text", text: "Done." }] },
    { role: "user", content: [{ type: "text", text: "Now run the tests." }] },
    { role: "assistant", content: [{ type: "text", text: "They pass." }] },
  ];
  const checkpoint = (text: string): Message => ({
    role: "user",
    content: [{ type: "text", text: `[compact-safe checkpoint]\n${text}` }],
  });
  // A note without the user's words: the one message of theirs in the span is missed (the harness's are not counted).
  const without = checkpoint("## Objective\nRename the option.");
  const r1 = measureRetention(original, [without, ...original.slice(3)], without);
  assert.equal(r1.user_messages.total, 1);
  assert.equal(r1.user_messages.found, 0);
  assert.deepEqual(r1.user_messages.missed, [said]);
  // A note that quotes them: found.
  const quoting = checkpoint(`## Objective\nRename the option.\n## Constraints\n- ${said}`);
  const r2 = measureRetention(original, [quoting, ...original.slice(3)], quoting);
  assert.equal(r2.user_messages.found, 1);
});
