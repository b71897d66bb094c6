/**
 * The pi conversions, by property: generated compact-safe histories go to
 * pi's messages and come back equal; generated pi messages (every role pi
 * 0.73.1 stores, every block field) go to compact-safe's messages and come
 * back equal, through the native mapping (no raw copy). What pi sends the
 * model from converted messages is checked with pi's own `convertToLlm`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { convertToLlm, SessionManager } from "@mariozechner/pi-coding-agent";
import { history } from "../../test/arbitraries.js";
import type { Message } from "../model/types.js";
import { compactMessagesSafe } from "../engine/compact.js";
import { isCheckpoint } from "../contract/classify.js";
import { validateSurvivalContract } from "../contract/validate.js";
import { allText } from "../contract/classify.js";
import { fromPiMessage, fromPiMessages, planPiCompaction, toPiMessages, type PiAgentMessage } from "./pi.js";

const RUNS = Number(process.env.FC_RUNS ?? 200);

/** Every call pi sends is followed, before the next assistant turn, by its result (and every result follows its call). */
function assertPaired(llm: ReturnType<typeof convertToLlm>, what: string): void {
  const open = new Set<string>();
  const seen = new Set<string>();
  for (const m of llm) {
    if (m.role === "assistant") {
      assert.equal(open.size, 0, `${what}: calls without results before an assistant turn: ${[...open]}`);
      for (const b of m.content) {
        if (b.type !== "toolCall") continue;
        open.add(b.id);
        seen.add(b.id);
      }
    } else if (m.role === "toolResult") {
      assert.ok(seen.has(m.toolCallId), `${what}: result ${m.toolCallId} without its call`);
      open.delete(m.toolCallId);
    }
  }
}

test("property: compact-safe histories → pi messages → compact-safe messages are unchanged, and pi sends every result after its call", () => {
  fc.assert(
    fc.property(history, (h) => {
      const p = toPiMessages(h);
      assert.deepEqual(fromPiMessages(p), h);
      const llm = convertToLlm(p);
      for (const m of llm) assert.ok(["user", "assistant", "toolResult"].includes(m.role));
      // An in-flight call at the end has no result yet; every other call has its result.
      const last = h.at(-1)!;
      const inFlight = last.role === "assistant" && last.content.some((b) => b.type === "tool_use");
      assertPaired(inFlight ? llm.slice(0, -1) : llm, "converted history");
    }),
    { numRuns: RUNS },
  );
});

// ---------------------------------------------------------------- generated pi messages

const text = fc.string({ maxLength: 30 });
const sig = fc.base64String({ minLength: 4, maxLength: 24 });
const ts = fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 });
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
/** A record without its undefined fields (pi's JSON has none). */
const clean = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const textBlock = fc
  .record({ text, textSignature: opt(sig) })
  .map((b) => clean({ type: "text" as const, ...b }));
const imageBlock = fc
  .record({ data: sig, mimeType: fc.constantFrom("image/png", "image/jpeg") })
  .map((b) => ({ type: "image" as const, ...b }));
const thinkingBlock = fc.oneof(
  fc
    .record({ thinking: text, thinkingSignature: opt(sig) })
    .map((b) => clean({ type: "thinking" as const, ...b })),
  fc
    .record({ thinking: text, thinkingSignature: sig })
    .map((b) => ({ type: "thinking" as const, ...b, redacted: true })),
);
let callN = 0;
const toolCall = fc
  .record({
    name: fc.constantFrom("read", "bash", "edit"),
    arguments: fc.dictionary(fc.constantFrom("path", "command", "n"), fc.oneof(text, fc.integer())),
    thoughtSignature: opt(sig),
  })
  .map((b) => clean({ type: "toolCall" as const, id: `call_${callN++}`, ...b }));
const usage = fc
  .tuple(fc.nat(100000), fc.nat(5000), fc.nat(5000), fc.nat(5000), fc.double({ min: 0, max: 5, noNaN: true }))
  .map(([input, output, cacheRead, cacheWrite, c]) => ({
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
    cost: { input: c, output: c / 2, cacheRead: 0, cacheWrite: 0, total: c * 1.5 },
  }));

const user = fc
  .record({
    content: fc.oneof(text, fc.array(fc.oneof(textBlock, imageBlock), { maxLength: 3 })),
    timestamp: ts,
  })
  .map((m) => ({ role: "user" as const, ...m }));
const assistant = fc
  .record({
    content: fc.array(fc.oneof(textBlock, thinkingBlock, toolCall), { maxLength: 4 }),
    api: fc.constantFrom("anthropic-messages", "openai-responses", "google-generative-ai"),
    provider: fc.constantFrom("anthropic", "openai", "google"),
    model: fc.constantFrom("claude-opus-4-5", "gpt-5", "gemini-2.5-pro"),
    responseId: opt(text),
    usage,
    stopReason: fc.constantFrom("stop", "length", "toolUse", "error", "aborted"),
    errorMessage: opt(text),
    timestamp: ts,
  })
  .map((m) => clean({ role: "assistant" as const, ...m }));
const toolResult = fc
  .record({
    toolCallId: fc.constantFrom("call_1", "toolu_x", "fc_abc|item"),
    toolName: fc.constantFrom("read", "bash"),
    content: fc.array(fc.oneof(textBlock, imageBlock), { maxLength: 3 }),
    details: opt(fc.record({ exitCode: fc.integer({ min: 0, max: 2 }) })),
    isError: fc.boolean(),
    timestamp: ts,
  })
  .map((m) => clean({ role: "toolResult" as const, ...m }));
const bash = fc
  .record({
    command: text,
    output: text,
    exitCode: opt(fc.integer({ min: 0, max: 3 })),
    cancelled: fc.boolean(),
    truncated: fc.boolean(),
    fullOutputPath: opt(text),
    excludeFromContext: opt(fc.boolean()),
    timestamp: ts,
  })
  .map((m) => clean({ role: "bashExecution" as const, ...m }));
const custom = fc
  .record({
    customType: text,
    content: fc.oneof(text, fc.array(fc.oneof(textBlock, imageBlock), { maxLength: 2 })),
    display: fc.boolean(),
    details: opt(fc.record({ n: fc.integer() })),
    timestamp: ts,
  })
  .map((m) => clean({ role: "custom" as const, ...m }));
const branchSummary = fc
  .record({ summary: text, fromId: fc.string({ minLength: 8, maxLength: 8 }), timestamp: ts })
  .map((m) => ({ role: "branchSummary" as const, ...m }));
const compactionSummary = fc
  .record({ summary: text, tokensBefore: fc.nat(200000), timestamp: ts })
  .map((m) => ({ role: "compactionSummary" as const, ...m }));

const piMessages = fc.array(
  fc.oneof(user, assistant, toolResult, bash, custom, branchSummary, compactionSummary),
  { maxLength: 12 },
) as unknown as fc.Arbitrary<PiAgentMessage[]>;

test("property: pi messages → compact-safe messages → pi messages are unchanged, by the native mapping", () => {
  fc.assert(
    fc.property(piMessages, (p) => {
      const ours = fromPiMessages(p);
      assert.equal(ours.length, p.length, "one compact-safe message per pi message");
      ours.forEach((m, i) => {
        assert.equal(m.meta?.pi_message, undefined, "no raw copy needed");
        // Only a tool result's text parts (joined into one string) may need pi's content kept beside.
        if (p[i]!.role !== "toolResult")
          assert.equal(m.meta?.pi_content, undefined, "the blocks give pi's content back");
      });
      assert.deepEqual(toPiMessages(ours), p);
    }),
    { numRuns: RUNS },
  );
});

test("property: pi's ids, signatures and images land in compact-safe's own fields", () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(assistant, toolResult, user), { maxLength: 6 }), (p) => {
      const ours = fromPiMessages(p as unknown as PiAgentMessage[]);
      p.forEach((m, i) => {
        const blocks = ours[i]!.content as Record<string, unknown>[];
        if (m.role === "assistant") {
          assert.equal(ours[i]!.role, m.stopReason === "aborted" ? "assistant_interrupted" : "assistant");
          assert.equal(ours[i]!.usage?.input_tokens, m.usage.input);
          m.content.forEach((b, j) => {
            const o = blocks[j]!;
            if (b.type === "toolCall") {
              assert.deepEqual([o.type, o.id, o.name, o.input], ["tool_use", b.id, b.name, b.arguments]);
              assert.equal(o.thought_signature, b.thoughtSignature);
            } else if (b.type === "thinking" && "redacted" in b) {
              assert.deepEqual([o.type, o.data], ["redacted_thinking", b.thinkingSignature]);
            } else if (b.type === "thinking") {
              assert.deepEqual(
                [o.type, o.thinking, o.signature],
                ["thinking", b.thinking, b.thinkingSignature],
              );
            } else assert.deepEqual([o.type, o.text, o.textSignature], ["text", b.text, b.textSignature]);
          });
        } else if (m.role === "toolResult") {
          const r = blocks[0]!;
          assert.deepEqual([r.type, r.tool_use_id, r.is_error], ["tool_result", m.toolCallId, m.isError]);
          const images = m.content.filter((b) => b.type === "image") as { data: string; mimeType: string }[];
          assert.deepEqual(
            ((r.content_blocks as { image_url?: { url: string } }[] | undefined) ?? [])
              .filter((b) => b.image_url)
              .map((b) => b.image_url!.url),
            images.map((b) => `data:${b.mimeType};base64,${b.data}`),
          );
        }
      });
    }),
    { numRuns: RUNS },
  );
});

test("a compacted history converted back to pi keeps the protected round's pi messages byte for byte", async () => {
  // A pi history: three rounds of a user request, a signed call batch and its results, a reply.
  const p: Record<string, unknown>[] = [];
  for (let r = 1; r <= 3; r++) {
    p.push({ role: "user", content: [{ type: "text", text: `Round ${r}: fix module ${r}.` }], timestamp: r });
    p.push({
      role: "assistant",
      content: [
        { type: "thinking", thinking: `plan ${r}`, thinkingSignature: `sig${r}==` },
        {
          type: "toolCall",
          id: `toolu_${r}`,
          name: "read",
          arguments: { path: `m${r}.ts` },
          thoughtSignature: "ts",
        },
      ],
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-opus-4-5",
      usage: {
        input: 1000 * r,
        output: 10,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 1000 * r + 10,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: "toolUse",
      timestamp: r,
    });
    p.push({
      role: "toolResult",
      toolCallId: `toolu_${r}`,
      toolName: "read",
      content: [{ type: "text", text: `export const m${r} = ${r}; // ${"x".repeat(2000)}` }],
      details: { lines: 1 },
      isError: false,
      timestamp: r,
    });
  }
  const ours: Message[] = fromPiMessages(p as unknown as PiAgentMessage[]);
  const r = await compactMessagesSafe(ours, { target: 0 });
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.ok(validateSurvivalContract(ours, r.replacement).valid);
  const back = toPiMessages(r.replacement) as unknown as Record<string, unknown>[];
  const ci = r.replacement.findIndex(isCheckpoint);
  const region = back.slice(ci + 1);
  // The region is the last rounds' messages as pi wrote them (billed usage is cleared by a rewrite, so it
  // is compared apart).
  const strip = (m: Record<string, unknown>) => ({ ...m, usage: undefined, compactSafe: undefined });
  assert.deepEqual(region.map(strip), p.slice(p.length - region.length).map(strip));
  // Billed usage is cleared by the rewrite, in pi too; the messages themselves need no carrier.
  for (const m of region) {
    if (m.role !== "assistant") assert.equal(m.compactSafe, undefined);
    else assert.equal((m.usage as { totalTokens: number }).totalTokens, 0);
  }
  assert.deepEqual(fromPiMessages(back as unknown as PiAgentMessage[]), r.replacement);
});

test("conversions refuse what is not a message list, with one line naming the bad value's path", () => {
  const bad = (f: () => unknown, message: RegExp) =>
    assert.throws(f, (e: Error) => message.test(e.message) && !e.message.includes("\n"));
  bad(() => fromPiMessages({} as never), /^messages: expected an array of pi messages$/);
  bad(
    () => fromPiMessages([{ role: "user", content: "hi", timestamp: 1 }, 7] as never),
    /^messages\[1\]: expected a pi message/,
  );
  bad(() => fromPiMessages([{ content: "hi" }] as never), /^messages\[0\]\.role: expected a string$/);
  bad(() => fromPiMessages([{ role: "user", content: 5 }] as never), /^messages\[0\]\.content: /);
  bad(
    () =>
      toPiMessages([{ role: "user", content: [{ type: "text", text: "ok" }] }, { role: "user" }] as never),
    /^messages\[1\]/,
  );
});

test("property: on generated histories stored in pi's own session manager, the answer's cut makes pi build the checked context, which keeps the contract", async () => {
  const outcomes = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(history, async (h) => {
      const sm = SessionManager.inMemory("/nowhere");
      for (const m of toPiMessages(h)) sm.appendMessage(m as never);
      const before = sm.buildSessionContext().messages.map((m) => fromPiMessage(m, { carrier: false }));
      const plan = await planPiCompaction(sm.getBranch(), { tokensBefore: 1 });
      outcomes.set(
        plan.ok ? "ok" : plan.error.kind,
        (outcomes.get(plan.ok ? "ok" : plan.error.kind) ?? 0) + 1,
      );
      if (!plan.ok) {
        // The only refusal besides "nothing to compact": a checkpoint inside the kept suffix, which pi keeps
        // verbatim and so cannot fold into the new one.
        assert.ok(
          plan.error.kind === "nothing_to_compact" ||
            (plan.error.kind === "contract_violation" && /more than one checkpoint/.test(plan.error.message)),
          plan.error.message,
        );
        assert.ok(!plan.error.message.includes("\n"));
        return;
      }
      const c = plan.compaction;
      sm.appendCompaction(c.summary, c.firstKeptEntryId, c.tokensBefore, c.details, true);
      // pi's own projection of the compacted session, read as pi sends it.
      const after = sm.buildSessionContext().messages.map((m) => fromPiMessage(m, { carrier: false }));
      assert.equal(allText(after[0]!), allText(plan.context[0]!));
      assert.deepEqual(after.slice(1), plan.context.slice(1));
      const verdict = validateSurvivalContract(before, after);
      assert.ok(verdict.valid, verdict.reason ?? "");
    }),
    { numRuns: Math.min(RUNS, 100) },
  );
  assert.ok((outcomes.get("ok") ?? 0) > 0, JSON.stringify([...outcomes]));
});

test("the note pi gets is sized by summaryMaxTokens (2,000 by default), not by the target of 0 the summary path runs with", async () => {
  const sm = SessionManager.inMemory("/nowhere");
  const h: Message[] = [];
  for (let i = 0; i < 80; i++) {
    h.push({
      role: "user",
      content: [{ type: "text", text: `Step ${i}: port module m${i}, keep its API.` }],
    });
    h.push({
      role: "assistant",
      content: [
        { type: "text", text: `Editing src/m${i}.ts.` },
        {
          type: "tool_use",
          id: `e${i}`,
          name: "edit",
          input: { path: `src/m${i}.ts`, oldText: "a", newText: "b" },
        },
      ],
    });
    h.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `e${i}`, content: `edited src/m${i}.ts` }],
    });
  }
  for (const m of toPiMessages(h)) sm.appendMessage(m as never);
  const plan = await planPiCompaction(sm.getBranch(), { tokensBefore: 1 });
  assert.ok(plan.ok, plan.ok ? "" : plan.error.message);
  // 80 modified files alone need more than the 300-token floor a target of 0 would leave.
  assert.ok(plan.compaction.summary.length > 300 * 4 + 400, `${plan.compaction.summary.length} characters`);
  assert.match(plan.compaction.summary, /src\/m0\.ts/);
  const small = await planPiCompaction(sm.getBranch(), { tokensBefore: 1, summaryMaxTokens: 400 });
  assert.ok(small.ok && small.compaction.summary.length < plan.compaction.summary.length);
});
