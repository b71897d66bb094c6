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
