/**
 * The rules-driven mutation test: for every block type and field that
 * `rules.ts` marks as surviving, alter it and drop it in the protected round
 * of compacted histories (generated ones and a hand-built one holding every
 * block kind), and require BOTH validators (src/contract and the independent
 * contract/validate_survival_contract.mjs) to refuse each mutation.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import type { Block, Message } from "../model/types.js";
import { BLOCK_RULES } from "./rules.js";
import { isCheckpoint } from "./classify.js";
import { validateSurvivalContract } from "./validate.js";
import { compactMessagesSafe } from "../engine/compact.js";
import { history } from "../../test/arbitraries.js";
import { repoRoot } from "../../test/support.js";

type Rec = Record<string, unknown>;

function ruleFor(type: string) {
  return BLOCK_RULES.find(
    (r) => r.type === type || (r.type.startsWith("*") && type.endsWith(r.type.slice(1))),
  );
}

/** Alterations of one field's value (never equal to it under the contract's comparisons). */
function alter(value: unknown): unknown[] {
  if (typeof value === "string") return [`${value}\u0001mutated`];
  if (typeof value === "boolean") return [!value];
  if (value !== null && typeof value === "object") return [{ ...(value as Rec), mutated: true }];
  return ["mutated"];
}

/** Every (block, field, mutation) of the region part of a replacement: after its checkpoint. */
function* mutations(replacement: readonly Message[]): Generator<{ what: string; mutated: Message[] }> {
  const cp = replacement.findIndex(isCheckpoint);
  for (let i = cp + 1; i < replacement.length; i++) {
    const m = replacement[i]!;
    for (let k = 0; k < m.content.length; k++) {
      const b = m.content[k] as Rec & Block;
      const rule = ruleFor(b.type);
      if (!rule) continue;
      for (const field of rule.fields) {
        if (!(field in b)) continue;
        // Whitespace-only text is not an instruction or an assistant text the contract protects.
        if (b.type === "text" && typeof b.text === "string" && b.text.trim() === "") continue;
        // `is_error: false` and no `is_error` mean the same to every provider.
        const variants: { how: string; value?: unknown }[] = alter(b[field]).map((value) => ({
          how: "altered",
          value,
        }));
        if (!(field === "is_error" && b[field] !== true)) variants.push({ how: "dropped" });
        // Each mutation on a deep copy, and on a copy that shares every other block object with the
        // replacement (the validator's check by identity then fails on this block alone).
        for (const v of variants)
          for (const shared of [false, true]) {
            const mutated = shared
              ? replacement.map((m) => ({ ...m, content: [...m.content] }))
              : (structuredClone(replacement) as Message[]);
            if (shared) mutated[i]!.content[k] = { ...b };
            const target = mutated[i]!.content[k] as Rec;
            if (v.how === "dropped") delete target[field];
            else target[field] = v.value;
            yield {
              what: `${b.type}.${field} ${v.how} (replacement message ${i}${shared ? ", other blocks shared" : ""})`,
              mutated,
            };
          }
      }
    }
  }
}

/** A history holding every surviving block kind in its protected round. */
function everyKind(): Message[] {
  const t = (role: Message["role"], text: string): Message => ({ role, content: [{ type: "text", text }] });
  return [
    t("user", "Explain the layout."),
    t("assistant", "The layout is: ".repeat(3000)),
    t("user", "Now inspect the build and search the docs."),
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "plan the build check", signature: "sig-1" },
        { type: "redacted_thinking", data: "opaque-redacted" },
        { type: "text", text: "Checking the build." },
        { type: "tool_use", id: "b1", name: "Bash", input: { command: "make" }, thought_signature: "ts-1" },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "b1", content: "make: error 2", is_error: true },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      ],
    },
    {
      role: "assistant",
      content: [
        {
          type: "server_tool_use",
          id: "srv1",
          name: "web_search",
          input: { query: "make error 2" },
        } as Block,
        {
          type: "web_search_tool_result",
          tool_use_id: "srv1",
          content: [{ url: "https://x.test" }],
        } as Block,
        { type: "text", text: "Make failed with error 2." },
      ],
    },
  ];
}

test("every surviving field of rules.ts, altered or dropped in the protected round, is refused by both validators", async () => {
  const mjs = (await import(
    pathToFileURL(join(repoRoot, "contract", "validate_survival_contract.mjs")).href
  )) as {
    validateSurvivalContract: (
      o: unknown,
      r: unknown,
      opts?: unknown,
    ) => { valid: boolean; reason: string | null };
  };
  const histories: Message[][] = [everyKind(), ...fc.sample(history, { seed: 8, numRuns: 60 })];
  const covered = new Set<string>();
  let tried = 0;
  let compacted = 0;
  const accepted: string[] = [];
  for (const h of histories) {
    const r = await compactMessagesSafe(h, { target: 1 });
    if (!r.ok || r.path !== "summary") continue;
    compacted++;
    assert.ok(validateSurvivalContract(h, r.replacement).valid, "the unmutated replacement is valid");
    assert.ok(mjs.validateSurvivalContract(h, r.replacement).valid, "the .mjs accepts the unmutated one");
    for (const { what, mutated } of mutations(r.replacement)) {
      tried++;
      covered.add(what.split(" ")[0]!);
      const ts = validateSurvivalContract(h, mutated);
      const js = mjs.validateSurvivalContract(h, mutated);
      if (ts.valid || js.valid) accepted.push(`${what}: ts=${ts.valid} mjs=${js.valid}`);
    }
  }
  assert.ok(compacted >= 10, `only ${compacted} histories compacted`);
  assert.deepEqual(accepted.slice(0, 10), [], `${accepted.length} of ${tried} mutations accepted`);
  // Every surviving field of every block rule was exercised at least once.
  const expected = BLOCK_RULES.flatMap((rule) =>
    rule.fields.map((f) => `${rule.type === "*_tool_result" ? "web_search_tool_result" : rule.type}.${f}`),
  );
  assert.deepEqual(
    expected.filter((e) => !covered.has(e)),
    [],
    `fields never mutated (covered: ${[...covered].sort().join(", ")})`,
  );
});

test("a replacement that keeps the round's own block objects is still refused when a block moves to another role or a copy is missing", async () => {
  const h = everyKind();
  const r = await compactMessagesSafe(h, { target: 1 });
  assert.ok(r.ok && r.path === "summary");
  assert.ok(validateSurvivalContract(h, r.replacement).valid);
  const last = r.replacement.length - 1;
  const shallow = () => r.replacement.map((m) => ({ ...m, content: [...m.content] }));
  // The last assistant text, moved into a user message of its own.
  const moved = shallow();
  const text = moved[last]!.content.pop()!;
  moved.push({ role: "user", content: [text] });
  assert.match(validateSurvivalContract(h, moved).reason ?? "", /assistant text .* missing/);
  // The thinking block, moved into a user message.
  const i = moved.findIndex((m) => m.content.some((b) => b.type === "thinking"));
  const thinking = shallow();
  const k = thinking[i]!.content.findIndex((b) => b.type === "thinking");
  const [block] = thinking[i]!.content.splice(k, 1);
  thinking.push({ role: "user", content: [block!] });
  assert.match(validateSurvivalContract(h, thinking).reason ?? "", /thinking block .* missing or altered/);
  // The round holds the same text block twice: one copy kept is not enough.
  const twice = [...h, { role: "assistant" as const, content: [h[1]!.content[0]!, h[1]!.content[0]!] }];
  const r2 = await compactMessagesSafe(twice, { target: 1 });
  assert.ok(r2.ok);
  assert.ok(validateSurvivalContract(twice, r2.replacement).valid);
  const once = r2.replacement.map((m) => ({ ...m, content: [...m.content] }));
  once[once.length - 1]!.content.pop();
  assert.equal(validateSurvivalContract(twice, once).valid, false);
});
