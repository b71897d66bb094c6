/**
 * fast-check generators of realistic histories: plain user turns, assistant
 * text, parallel tool batches (results split across messages), signed
 * thinking, images, oversized results, prior checkpoints, branch summaries,
 * system messages and an optional in-flight call at the end.
 */
import fc from "fast-check";
import type { Block, Message } from "../src/model/types.js";
import { BRANCH_SUMMARY_MARKER, CHECKPOINT_MARKER } from "../src/contract/markers.js";

type Step =
  | { kind: "user"; text: string }
  | { kind: "assistant"; text: string; thinking?: { thinking: string; signature: string } }
  | {
      kind: "exchange";
      calls: number;
      split: boolean;
      big: boolean;
      image: boolean;
      thinking: boolean;
      text: string;
    }
  | { kind: "checkpoint"; text: string; foreign: boolean }
  | { kind: "branch"; text: string }
  | { kind: "system"; text: string };

const word = fc.constantFrom(
  "fix",
  "the",
  "login",
  "bug",
  "run",
  "tests",
  "ünïcode",
  "😀",
  "path/a.ts",
  "ok",
  "next",
);
const sentence = fc.array(word, { minLength: 1, maxLength: 8 }).map((w) => w.join(" "));

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: sentence.map((text) => ({ kind: "user" as const, text })) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("assistant" as const),
      text: sentence,
      thinking: fc.option(
        fc.record({ thinking: sentence, signature: fc.base64String({ minLength: 8, maxLength: 24 }) }),
        { nil: undefined },
      ),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("exchange" as const),
      calls: fc.integer({ min: 1, max: 3 }),
      split: fc.boolean(),
      big: fc.boolean(),
      image: fc.boolean(),
      thinking: fc.boolean(),
      text: sentence,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("checkpoint" as const), text: sentence, foreign: fc.boolean() }),
  },
  { weight: 1, arbitrary: sentence.map((text) => ({ kind: "branch" as const, text })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom("You are a coding agent.", "Follow the repo rules.")
      .map((text) => ({ kind: "system" as const, text })),
  },
);

function render(steps: Step[], inFlight: boolean): Message[] {
  const out: Message[] = [];
  let n = 0;
  for (const s of steps) {
    switch (s.kind) {
      case "user":
        out.push({ role: "user", content: [{ type: "text", text: s.text }] });
        break;
      case "assistant": {
        const content: Block[] = [];
        if (s.thinking) content.push({ type: "thinking", ...s.thinking });
        content.push({ type: "text", text: s.text });
        out.push({ role: "assistant", content });
        break;
      }
      case "exchange": {
        const ids = Array.from({ length: s.calls }, () => `call_${n++}`);
        const content: Block[] = [];
        if (s.thinking)
          content.push({ type: "thinking", thinking: `think ${ids[0]}`, signature: `sig-${ids[0]}==` });
        content.push({ type: "text", text: s.text });
        for (const id of ids)
          content.push({ type: "tool_use", id, name: "Read", input: { file_path: `src/${id}.ts` } });
        out.push({ role: "assistant", content });
        const results: Block[] = ids.map((id, i) => ({
          type: "tool_result",
          tool_use_id: id,
          content: s.big && i === 0 ? `${"lïne of output 😀\n".repeat(700)}end ${id}` : `result of ${id}`,
          ...(s.image && i === 0
            ? { content_blocks: [{ type: "image_url", image_url: { url: `data:image/png;base64,${id}` } }] }
            : {}),
        }));
        if (s.split) for (const r of results) out.push({ role: "user", content: [r] });
        else out.push({ role: "user", content: results });
        break;
      }
      case "checkpoint":
        out.push({
          role: "user",
          content: [
            {
              type: "text",
              text: s.foreign
                ? `Another language model started to solve this problem: ${s.text}`
                : `${CHECKPOINT_MARKER}\n${s.text}\n\n## Coverage\nsummary; last round kept: 1 messages (0 tool results, 0 assistant); anchors 0 chars`,
            },
          ],
        });
        break;
      case "branch":
        out.push({ role: "user", content: [{ type: "text", text: `${BRANCH_SUMMARY_MARKER}\n${s.text}` }] });
        break;
      case "system":
        out.push({ role: "system", content: [{ type: "text", text: s.text }] });
        break;
    }
  }
  if (inFlight)
    out.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `call_${n++}`, name: "Bash", input: { command: "sleep 100" } }],
    });
  return out;
}

/** A history of 1–40 steps, optionally ending with a call in flight. */
export const history: fc.Arbitrary<Message[]> = fc
  .tuple(fc.array(step, { minLength: 1, maxLength: 40 }), fc.boolean())
  .map(([steps, inFlight]) => render(steps, inFlight));
