import { test } from "node:test";
import assert from "node:assert/strict";
import { estimateTokens } from "../src/engine/tokens.js";
import { syntheticSession } from "./synthetic.js";
import { budgetTokens } from "./peers-core.js";
import { prepareLib, Recorder, roundTrip, setupLib } from "./peers-libs.js";

// The three libraries' own entry points on one small history (the pinned peers; no network:
// pi-ai's faux provider and LangChain's FakeListChatModel answer in process).
const history = syntheticSession(80, { seed: 7 });
const budget = budgetTokens(estimateTokens(history));

for (const lib of ["compact-safe", "pi", "langchain"] as const) {
  test(`${lib}: one compaction through its own entry point, the stand-in sent the span, the result checked`, async () => {
    const rec = new Recorder();
    const prepared = await prepareLib(lib, history, budget, rec);
    const before = structuredClone(history);
    const out = await prepared.run();
    assert.equal(out.compacted, true, out.outcome);
    assert.equal(out.outcome, "summary");
    const size = rec.size();
    assert.ok(size.calls >= 1);
    assert.ok(size.chars > 1_000, `the summarizer was sent ${size.chars} chars`);
    assert.ok(size.tokens > 0 && size.tokens < size.chars);
    const checked = prepared.check();
    assert.ok(checked.result_messages !== null && checked.result_messages < history.length);
    assert.ok(checked.contract);
    if (lib === "compact-safe" || lib === "pi") assert.equal(checked.contract.reason, null);
    // LangChain's summary message opens with its own prefix, which compact-safe's validator does not
    // know as a checkpoint marker.
    else assert.match(checked.contract.reason ?? "", /missing checkpoint/);
    assert.deepEqual(history, before, "the library changed the caller's messages");
    // A second run records afresh after reset (the warm repetitions reuse the prepared library).
    rec.reset();
    await prepared.run();
    assert.equal(rec.size().chars, size.chars);
  });
}

test("roundTrip: the converters give the synthetic history back; compact-safe has none to check", async () => {
  assert.deepEqual(await roundTrip("pi", history), { ok: true, detail: null });
  assert.deepEqual(await roundTrip("langchain", history), { ok: true, detail: null });
  assert.equal(await roundTrip("compact-safe", history), null);
});

for (const lib of ["compact-safe", "pi", "langchain"] as const) {
  test(`${lib}: set up once, each prepared copy compacts on its own (the cold calls' fresh copies)`, async () => {
    const rec = new Recorder();
    const runner = await setupLib(lib, budget, rec);
    const json = JSON.stringify(history);
    const a = runner.prepare(JSON.parse(json) as typeof history);
    const b = runner.prepare(JSON.parse(json) as typeof history);
    assert.equal((await a.run()).compacted, true);
    const sent = rec.size().chars;
    rec.reset();
    assert.equal((await b.run()).compacted, true);
    assert.equal(rec.size().chars, sent);
    assert.equal(b.check().result_messages, a.check().result_messages);
    // A prepared copy that has not run has nothing to check.
    assert.deepEqual(runner.prepare(JSON.parse(json) as typeof history).check(), {
      result_messages: null,
      contract: null,
    });
  });
}
