/**
 * Reading a request from the session's last one (`extend.ts`): on generated
 * histories of the three wires, whenever the fast path takes a body, the
 * history read from the last one is the history read whole (doc, list,
 * items, keys); the core gives the same outcomes with it as reading every
 * body whole, over sequences of extensions, edits, compactions and side
 * requests; and an extension is read in proportion to what it adds
 * (counted in bytes parsed and elements read, not timed).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { CODEX_SUMMARY_PREFIX } from "../../formats/import/codex.js";
import { createGuardCore } from "../core.js";
import { extendHistory, fastExtension, fastInfoOf, leanExtension } from "./extend.js";
import { listKeyOf, parseBody, readWire, readWork } from "./wires.js";
import { headOf, type WireHistory } from "./history.js";
import type { GuardOutcome, GuardWire, WireRequest } from "../types.js";

type El = Record<string, unknown>;

// ---------------------------------------------------------------- generated elements, per wire

const word = fc.constantFrom("fix", "the", "parser", "ok", "done", "é", '"q"', "a\\b", "line\nnext", "日本");
const text = fc.array(word, { minLength: 1, maxLength: 4 }).map((w) => w.join(" "));
const id = fc.constantFrom("c1", "c2", "c3", "c4");

const anthropicEl: fc.Arbitrary<El> = fc.oneof(
  text.map((t) => ({ role: "user", content: t })),
  text.map((t) => ({ role: "user", content: [{ type: "text", text: t }] })),
  fc.tuple(text, id).map(([t, i]) => ({
    role: "assistant",
    content: [
      { type: "text", text: t },
      { type: "tool_use", id: i, name: "Bash", input: { cmd: t } },
    ],
  })),
  fc.tuple(text, id).map(([t, i]) => ({
    role: "user",
    content: [{ type: "tool_result", tool_use_id: i, content: t }],
  })),
  // A tool result, then the agent's summary in the same message: read as two messages (a block range each).
  fc.tuple(text, id).map(([t, i]) => ({
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: i, content: t },
      { type: "text", text: `${CODEX_SUMMARY_PREFIX}\n${t}` },
    ],
  })),
);

const chatEl: fc.Arbitrary<El> = fc.oneof(
  text.map((t) => ({ role: "user", content: t })),
  text.map((t) => ({ role: "system", content: t })),
  fc.tuple(text, id).map(([t, i]) => ({
    role: "assistant",
    content: t,
    tool_calls: [{ id: i, type: "function", function: { name: "shell", arguments: JSON.stringify({ t }) } }],
  })),
  // Consecutive tool messages are one item: generated often, so that an extension starts inside a run.
  fc.tuple(text, id).map(([t, i]) => ({ role: "tool", tool_call_id: i, content: t })),
  fc.tuple(text, id).map(([t, i]) => ({ role: "tool", tool_call_id: i, content: t })),
);

const responsesEl: fc.Arbitrary<El> = fc.oneof(
  text.map((t) => ({ type: "message", role: "user", content: [{ type: "input_text", text: t }] })),
  text.map((t) => ({ type: "message", role: "assistant", content: [{ type: "output_text", text: t }] })),
  fc.tuple(text, id).map(([t, i]) => ({ type: "function_call", call_id: i, name: "shell", arguments: t })),
  fc.tuple(text, id).map(([t, i]) => ({ type: "function_call_output", call_id: i, output: t })),
  fc.constant({ type: "reasoning", id: "rs", summary: [], encrypted_content: "ENC" }),
);

const elementsOf: Record<GuardWire, fc.Arbitrary<El>> = {
  "anthropic-messages": anthropicEl,
  "openai-chat": chatEl,
  "openai-responses": responsesEl,
};

/** A request body: fields before and after the list (the system prompt after it, as Claude Code sends it; its text and the tools from `extra`), the list, cache markers (Anthropic) on the last element. */
function bodyOf(wire: GuardWire, list: El[], extra: { sys: string; tools: number }, spaced: boolean): Buffer {
  const marked =
    wire === "anthropic-messages" && list.length > 0
      ? [...list.slice(0, -1), withMarker(list[list.length - 1]!)]
      : list;
  const tools = Array.from({ length: extra.tools }, (_, k) => ({ name: `t${k}`, input_schema: {} }));
  const doc: El =
    wire === "openai-responses"
      ? { model: "m", input: marked, instructions: extra.sys, tools, stream: true }
      : wire === "anthropic-messages"
        ? { model: "m", messages: marked, system: [{ type: "text", text: extra.sys }], tools, stream: true }
        : { model: "m", messages: marked, tools, stream: true };
  return Buffer.from(spaced ? JSON.stringify(doc, null, 1) : JSON.stringify(doc));
}

/** An element with Claude Code's cache marker on its last block (a string content made a text block). */
function withMarker(el: El): El {
  const content =
    typeof el.content === "string" ? [{ type: "text", text: el.content }] : (el.content as El[]);
  const last = content[content.length - 1]!;
  return {
    ...el,
    content: [...content.slice(0, -1), { ...last, cache_control: { type: "ephemeral" } }],
  };
}

/** What a history is, compared whole: the doc (key order too), and every item's message, parts, raw and key. */
function shape(h: WireHistory): unknown {
  return {
    wire: h.wire,
    doc: JSON.stringify(h.doc),
    listKey: h.listKey,
    list: JSON.stringify(h.list),
    sameList: h.doc[h.listKey] === h.list,
    items: h.items.map((i) => ({
      message: i.message,
      parts: i.parts,
      raw: JSON.stringify(i.raw),
      key: i.key,
    })),
  };
}

const readWhole = (wire: GuardWire, body: Buffer) => readWire(wire, parseBody(body));

/**
 * The lean reading (a session that holds its last body and item heads, not
 * the history parsed): every item's head is the whole reading's; the items
 * from the first one it reads again on are the whole reading's; before, stubs.
 */
function checkLean(
  last: NonNullable<ReturnType<typeof fastInfoOf>>,
  body: Buffer,
  ext: NonNullable<ReturnType<typeof fastExtension>>,
  whole: WireHistory,
): void {
  const lean = leanExtension(last, last.history.items.map(headOf), body, ext);
  assert.ok(lean, "an extension the fast path takes is read from the heads and the body");
  assert.equal(lean.history.partial, true);
  assert.deepEqual(lean.history.items.map(headOf), whole.items.map(headOf));
  const stubs = lean.history.items.filter((i) => i.parts.length > 0 && i.raw.length === 0).length;
  const firstRead = lean.history.items.findIndex((i) => i.parts.length > 0 && i.raw.length > 0);
  if (firstRead >= 0) {
    const tail = (h: WireHistory) => shape({ ...h, items: h.items.slice(firstRead) }) as { items: unknown };
    assert.deepEqual(tail(lean.history).items, tail(whole).items);
    assert.equal(stubs, firstRead - lean.history.items.filter((i) => i.parts.length === 0).length);
  }
  assert.equal(lean.history.doc[lean.history.listKey], lean.history.list);
}

/** One turn after another: the fast path's reading where it applies, checked against the whole reading. */
function checkTurns(wire: GuardWire, bodies: Buffer[]): number {
  let last: ReturnType<typeof fastInfoOf>;
  let extended = 0;
  for (const body of bodies) {
    const whole = readWhole(wire, body);
    let history = whole;
    let known: Parameters<typeof fastInfoOf>[2];
    const ext = last && fastExtension(last, body);
    if (last && ext) {
      checkLean(last, body, ext, whole);
      const read = extendHistory(last, body, ext);
      assert.ok(read, "an extension the fast path takes is read from the last body");
      assert.deepEqual(shape(read.history), shape(whole));
      history = read.history;
      known = { layout: read.layout, noMarkerBefore: last.tailFrom };
      extended++;
    }
    const next = fastInfoOf(body, history, known);
    // The layout carried over is the layout scanned afresh.
    if (next) assert.deepEqual(next.layout, fastInfoOf(body, whole)!.layout);
    last = next;
  }
  return extended;
}

const turnsArb = (wire: GuardWire) =>
  fc.record({
    start: fc.array(elementsOf[wire], { maxLength: 8 }),
    turns: fc.array(
      fc.record({
        kind: fc.constantFrom("extend", "extend", "extend", "same", "edit", "drop", "outside"),
        add: fc.array(elementsOf[wire], { maxLength: 3 }),
        at: fc.nat(),
        sys: fc.constantFrom("You are an agent.", "You are an agent, v2."),
        tools: fc.integer({ min: 0, max: 2 }),
      }),
      { minLength: 1, maxLength: 8 },
    ),
    spaced: fc.boolean(),
  });

for (const wire of ["anthropic-messages", "openai-chat", "openai-responses"] as GuardWire[]) {
  test(`${wire}: a body the fast path takes reads, from the last one, to the history read whole`, () => {
    let extendedTotal = 0;
    fc.assert(
      fc.property(turnsArb(wire), ({ start, turns, spaced }) => {
        let list = start;
        let extra = { sys: "You are an agent.", tools: 1 };
        const bodies = [bodyOf(wire, list, extra, spaced)];
        for (const t of turns) {
          if (t.kind === "extend") list = [...list, ...t.add];
          else if (t.kind === "edit" && list.length > 0) {
            const k = t.at % list.length;
            list = [...list.slice(0, k), ...t.add.slice(0, 1), ...list.slice(k + 1)];
          } else if (t.kind === "drop") list = list.slice(0, list.length - 1 - (t.at % 2));
          else if (t.kind === "outside") extra = { sys: t.sys, tools: t.tools };
          bodies.push(bodyOf(wire, list, extra, spaced));
        }
        extendedTotal += checkTurns(wire, bodies);
      }),
      { numRuns: 150 },
    );
    assert.ok(extendedTotal > 100, `the fast path took extensions (${extendedTotal})`);
  });
}

test("a large body parsed an element of its list at a time is the value JSON.parse gives; broken JSON is refused alike", () => {
  const big = "x".repeat(300 * 1024);
  for (const wire of ["anthropic-messages", "openai-chat", "openai-responses"] as GuardWire[]) {
    const key = listKeyOf(wire);
    const els = [{ role: "user", content: big }, { role: "user", content: 'é "q" 日本' }, 3, null];
    for (const text of [
      JSON.stringify({ model: "m", [key]: els, after: { a: [1, 2] } }),
      JSON.stringify({ [key]: els }, null, 2),
    ]) {
      const body = Buffer.from(text);
      assert.deepEqual(JSON.stringify(parseBody(body, key)), JSON.stringify(JSON.parse(text)));
    }
    const good = JSON.stringify({ model: "m", [key]: els });
    for (const bad of [
      good.replace(`"${key}":[`, `"${key}":[,`),
      `${good} trailing`,
      good.replace(big, `${big}\\u00`),
      good.slice(0, -1),
    ])
      assert.throws(() => parseBody(Buffer.from(bad), key), /^Error: body is not JSON$/);
    // The list key twice: JSON.parse keeps the last, and so does this.
    const twice = `{"${key}":[1],"${key}":[${JSON.stringify(big)}]}`;
    assert.deepEqual(parseBody(Buffer.from(twice), key), JSON.parse(twice));
  }
});

test("bytes that are not that plain are read whole: the list key twice or escaped, trailing fields changed", () => {
  const wire: GuardWire = "anthropic-messages";
  const base = '{"model":"m","messages":[{"role":"user","content":"a"}]';
  const f = fastInfoOf(Buffer.from(`${base}}`), readWhole(wire, Buffer.from(`${base}}`)))!;
  assert.ok(f);
  // A second "messages" after the list: JSON.parse keeps it; the reading from the last body must not.
  for (const tail of [',"messages":[]}', ',"messa\\u0067es":[{"role":"user","content":"b"}]}']) {
    const body = Buffer.from(
      `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"c"}]${tail}`,
    );
    const ext = fastExtension(f, body);
    assert.ok(ext);
    assert.equal(extendHistory(f, body, ext), undefined);
  }
  // Another field after the list: read, the rest kept.
  const body = Buffer.from(
    '{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"c"}],"system":"s"}',
  );
  const read = extendHistory(f, body, fastExtension(f, body)!)!;
  assert.deepEqual(shape(read.history), shape(readWhole(wire, body)));
});

// ---------------------------------------------------------------- the core: same outcomes, less work

const SESSION = "5e0d1c2b-3a49-4f58-8e7d-6c5b4a392817";

function anthropicRequest(list: El[], sys = "You are Claude Code."): WireRequest {
  return {
    method: "POST",
    url: "/v1/messages?beta=true",
    headers: { "x-claude-code-session-id": SESSION, "anthropic-version": "2023-06-01" },
    body: bodyOf("anthropic-messages", list, { sys, tools: 2 }, false),
  };
}

function chatRequest(list: El[]): WireRequest {
  return {
    method: "POST",
    url: "/v1/chat/completions",
    headers: { "session-id": SESSION, "user-agent": "pi/1.0" },
    body: bodyOf("openai-chat", list, { sys: "", tools: 1 }, false),
  };
}

function responsesRequest(list: El[]): WireRequest {
  return {
    method: "POST",
    url: "/v1/responses",
    headers: { session_id: SESSION, originator: "codex_cli_rs" },
    body: bodyOf("openai-responses", list, { sys: "You are Codex.", tools: 1 }, false),
  };
}

const requestOf: Record<GuardWire, (list: El[]) => WireRequest> = {
  "anthropic-messages": (l) => anthropicRequest(l),
  "openai-chat": chatRequest,
  "openai-responses": responsesRequest,
};

const userEl: Record<GuardWire, (t: string) => El> = {
  "anthropic-messages": (t) => ({ role: "user", content: t }),
  "openai-chat": (t) => ({ role: "user", content: t }),
  "openai-responses": (t) => ({ type: "message", role: "user", content: [{ type: "input_text", text: t }] }),
};

/** An outcome as compared between the two cores (the verdict's time aside). */
function seen(o: GuardOutcome): unknown {
  const v = o.verdict ? { ...o.verdict, at: "" } : undefined;
  return { body: o.body.toString("utf8"), changed: o.changed, note: o.note, verdict: v, wire: o.wire };
}

for (const wire of ["anthropic-messages", "openai-chat", "openai-responses"] as GuardWire[]) {
  test(`${wire}: the core's outcomes are the same read from the last body or whole (extensions, edits, compactions, side requests)`, async () => {
    const lean0 = readWork.leanReads;
    await fc.assert(
      fc.asyncProperty(
        fc.array(elementsOf[wire], { minLength: 1, maxLength: 8 }),
        fc.array(
          fc.record({
            kind: fc.constantFrom("extend", "extend", "extend", "edit", "compact", "side"),
            add: fc.array(elementsOf[wire], { minLength: 1, maxLength: 3 }),
            at: fc.nat(),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        fc.constantFrom("repair", "audit"),
        async (start, turns, mode) => {
          // Read from the last body with its history parsed, read whole, and held lean (its body and item
          // heads alone: a compaction is judged against the body read again).
          const told: unknown[][] = [[], [], []];
          const cores = [
            { readWhole: false, maxParsedBytes: Number.MAX_SAFE_INTEGER },
            { readWhole: true },
            { readWhole: false, maxParsedBytes: 0 },
          ].map((o, k) =>
            createGuardCore({
              mode: mode as "repair" | "audit",
              ...o,
              onLate: (out) => told[k]!.push(seen(out)),
            }),
          );
          let list = [userEl[wire]("start the task"), ...start];
          const requests = [requestOf[wire](list)];
          for (const t of turns) {
            if (t.kind === "extend") list = [...list, ...t.add];
            else if (t.kind === "edit") {
              const k = t.at % list.length;
              list = [...list.slice(0, k), ...t.add.slice(0, 1), ...list.slice(k + 1)];
            } else if (t.kind === "compact")
              list = [
                list[0]!,
                userEl[wire](`${CODEX_SUMMARY_PREFIX}\nthe work so far`),
                ...t.add.slice(0, 1),
              ];
            else {
              requests.push(requestOf[wire]([userEl[wire]("a title for this")]));
              continue;
            }
            requests.push(requestOf[wire](list));
          }
          for (const r of requests) {
            const outs = await Promise.all(cores.map((c) => c.handle(r)));
            await Promise.all(cores.map((c) => c.idle()));
            assert.deepEqual(seen(outs[0]!), seen(outs[1]!));
            assert.deepEqual(seen(outs[2]!), seen(outs[1]!));
          }
          await Promise.all(cores.map((c) => c.close()));
          assert.deepEqual(told[0], told[1]);
          assert.deepEqual(told[2], told[1]);
        },
      ),
      { numRuns: 60 },
    );
    assert.ok(readWork.leanReads - lean0 > 20, `read lean ${readWork.leanReads - lean0} times`);
  });
}

test("an extension turn parses and reads only what it adds (and the tail whose cache markers moved)", async () => {
  // Its last history held parsed (`maxParsedBytes`), read whole, and (below) held lean as by default.
  const core = createGuardCore({ maxParsedBytes: Number.MAX_SAFE_INTEGER });
  const whole = createGuardCore({ readWhole: true });
  const big = "x".repeat(2_000);
  let list: El[] = [{ role: "user", content: "start the task" }];
  for (let k = 0; k < 200; k++)
    list.push(
      {
        role: "assistant",
        content: [{ type: "tool_use", id: `t${k}`, name: "Bash", input: { cmd: `step ${k}` } }],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: `t${k}`, content: `${big} ${k}` }] },
    );
  for (const c of [core, whole]) {
    await c.handle(anthropicRequest(list));
    await c.idle();
  }
  const previous = anthropicRequest(list).body.length;
  const added: El[] = [
    { role: "assistant", content: [{ type: "tool_use", id: "tn", name: "Bash", input: { cmd: "ls" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "tn", content: "a.txt" }] },
  ];
  const lastEl = list[list.length - 1]!;
  list = [...list, ...added];
  const next = anthropicRequest(list);

  const before = { ...readWork };
  const out = await core.handle(next);
  await core.idle();
  const parsed = readWork.parsedBytes - before.parsedBytes;
  const elements = readWork.readElements - before.readElements;
  assert.equal(out.deferred, true, "taken on the fast path");
  assert.equal(out.changed, false);
  // Parsed: the last element (its marker moved) and the two added; read into items: the same three.
  const own = (els: El[]) => els.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)), 0);
  const expected = own([lastEl]) + own(added.slice(0, 1)) + own([withMarker(added[1]!)]);
  assert.equal(parsed, expected);
  assert.equal(elements, 3);
  assert.ok(parsed * 100 < next.body.length, `${parsed} bytes parsed of ${next.body.length}`);

  // Read whole, the same turn parses all of it
  const w0 = { ...readWork };
  await whole.handle(next);
  await whole.idle();
  // (and, on the request path, the element whose marker moved, as the fast path checks it)
  assert.equal(readWork.parsedBytes - w0.parsedBytes, next.body.length + own([lastEl]));
  assert.equal(readWork.readElements - w0.readElements, list.length);
  assert.ok(next.body.length > previous);

  // A turn that adds nothing (the same body again) parses only the marked last element.
  const r0 = { ...readWork };
  await core.handle(anthropicRequest(list));
  await core.idle();
  assert.equal(readWork.parsedBytes - r0.parsedBytes, own([withMarker(added[1]!)]));
  assert.equal(readWork.readElements - r0.readElements, 1);

  // Held lean (its last body and item heads, not its history parsed): the same turn parses the fields
  // outside the list and the elements the fast path parses, not what the body repeats.
  const lean = createGuardCore({});
  await lean.handle(anthropicRequest(list.slice(0, -2)));
  await lean.idle();
  const l0 = { ...readWork };
  const leanOut = await lean.handle(anthropicRequest(list));
  await lean.idle();
  assert.equal(leanOut.deferred, true, "taken on the fast path");
  const leanParsed = readWork.parsedBytes - l0.parsedBytes;
  assert.ok(leanParsed * 50 < next.body.length, `${leanParsed} bytes parsed of ${next.body.length}`);
  assert.equal(readWork.readElements - l0.readElements, 3);
  assert.equal(readWork.leanReads - l0.leanReads, 1, "read from the heads and the body");
  await lean.close();
  await core.close();
  await whole.close();
});
