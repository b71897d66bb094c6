import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../model/types.js";
import { compactHostStep } from "./host-step.js";

const u = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const a = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });
const history: Message[] = [
  u("Port the parser to TypeScript."),
  a("Reading the old parser. ".repeat(300)),
  u("Keep the public names."),
  a("Done: src/parser.ts."),
  u("Now run the tests."),
];

test("a host step hands the host what was validated in the host's own type", async () => {
  const step = await compactHostStep(
    history,
    { target: 200 },
    {
      name: "test messages",
      toHost: (replacement) => JSON.stringify(replacement),
      fromHost: (out) => JSON.parse(out) as Message[],
    },
  );
  assert.ok(step.ok, !step.ok ? step.error.message : "");
  assert.deepEqual(JSON.parse(step.out), step.result.replacement);
});

test("a conversion that loses what must survive is refused, naming the host's messages; nothing is handed over", async () => {
  // A lossy conversion back: the host's messages drop the latest instruction.
  const step = await compactHostStep(
    history,
    { target: 200 },
    {
      name: "test messages",
      toHost: (replacement) => replacement.slice(0, -1),
      fromHost: (out) => out,
    },
  );
  assert.equal(step.ok, false);
  assert.ok(!step.ok);
  assert.equal(step.error.kind, "contract_violation");
  assert.match(step.error.message, /^the replacement as test messages does not validate: /);
  // A conversion that throws is a refusal too, not an exception for the host.
  const thrown = await compactHostStep(
    history,
    { target: 200 },
    {
      name: "test messages",
      toHost: () => {
        throw new Error("no such part");
      },
      fromHost: (out: Message[]) => out,
    },
  );
  assert.ok(!thrown.ok && /does not validate: no such part$/.test(thrown.error.message));
});
