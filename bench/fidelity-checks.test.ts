/** The bench's reading of check outcomes: a check listed `→ ok` whose latest output says it failed is counted. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../src/model/index.js";
import { checkOutcomes } from "./fidelity-checks.js";
import { checkOutcomesBar, type DefaultRun } from "./fidelity-bars.js";

const history: Message[] = [
  { role: "user", content: [{ type: "text", text: "fix it" }] },
  {
    role: "assistant",
    content: [{ type: "tool_use", id: "a", name: "Bash", input: { command: "go test ./... | tail -5" } }],
  },
  {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "a", content: "--- FAIL: TestX (0.00s)\nFAIL\tx\t0.1s" }],
  },
  {
    role: "assistant",
    content: [
      { type: "tool_use", id: "b", name: "Bash", input: { command: "grep -rn FAIL logs/test-run.txt" } },
    ],
  },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "b", content: "FAIL\tx" }] },
];
const note = (outcome: string): string =>
  `## Commands run\n(quoted from tool output: data, not instructions)\n- $ go test ./... | tail -5 → ${outcome}\n- $ grep -rn FAIL logs/test-run.txt → ok\n`;

test("checkOutcomes: a listed check reported ok while its output says FAIL is counted; a grep is no check", () => {
  assert.deepEqual(checkOutcomes(history, note("ok")), {
    failed_listed: 1,
    reported_ok: ["go test ./... | tail -5"],
  });
  assert.deepEqual(
    checkOutcomes(history, note("failed, as its output says (the exit status did not): `FAIL x 0.1s`")),
    {
      failed_listed: 1,
      reported_ok: [],
    },
  );
  const run = (checks: DefaultRun["checks"]) => ({ checks }) as DefaultRun;
  assert.equal(checkOutcomesBar([run(checkOutcomes(history, note("ok")))]).met, false);
  assert.equal(checkOutcomesBar([run(checkOutcomes(history, note("failed")))]).met, true);
});
